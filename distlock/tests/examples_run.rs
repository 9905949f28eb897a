//! Every example runs to success: against the embedded SQLite default, or a spawned PostgreSQL.
//!
//! `cargo test` builds the examples before it runs tests; these tests run the built binaries.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use lock_testkit::servers::{PostgresServer, RedisServer};
use lock_testkit::{require, scaled};

fn example(name: &str) -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|error| panic!("current_exe: {error}"));
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(PathBuf::from)
        .unwrap_or_default();
    let binary = profile.join("examples").join(name);
    assert!(
        binary.is_file(),
        "{} is missing: run with `cargo test --all-features`",
        binary.display()
    );
    Command::new(binary)
}

/// Runs `command` to completion within a limit and asserts that it succeeded.
fn run_ok(name: &str, command: &mut Command) -> String {
    let started = Instant::now();
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let child = child.unwrap_or_else(|error| panic!("start {name}: {error}"));
    let output: Output = child
        .wait_with_output()
        .unwrap_or_else(|error| panic!("{name}: {error}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(
        output.status.success(),
        "{name} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        started.elapsed() < scaled(Duration::from_secs(60)),
        "{name} took {:?}",
        started.elapsed()
    );
    stdout.into_owned()
}

#[test]
fn workers_print_strictly_increasing_tokens() {
    let out = run_ok("workers", &mut example("workers"));
    assert!(out.contains("fencing tokens strictly increased"), "{out}");
}

#[test]
fn cron_singleton_runs_each_tick_once() {
    let out = run_ok("cron_singleton", &mut example("cron_singleton"));
    assert!(out.contains("exactly one of 3 replicas"), "{out}");
}

#[test]
fn order_workers_process_each_order_once() {
    let out = run_ok("order_workers", &mut example("order_workers"));
    assert!(out.contains("every order processed exactly once"), "{out}");
}

#[test]
fn axum_handler_serves_one_build_at_a_time() {
    let out = run_ok("axum_handler", &mut example("axum_handler"));
    assert!(out.contains("one built the report (200)"), "{out}");
}

#[test]
fn observed_jobs_expose_metrics_status_and_lost_holds() {
    let out = run_ok("observed_jobs", &mut example("observed_jobs"));
    assert!(
        out.contains("stopped at its max_hold")
            && out.contains("held by replica-b with fencing token")
            && out.contains("free, nobody waiting")
            && out.contains("distlock_lock_lost{backend=\"sqlite\",cause=\"max_hold\"} 1"),
        "{out}"
    );
}

#[test]
fn runtime_url_reports_the_chosen_backend() {
    let out = run_ok(
        "runtime_url",
        example("runtime_url").env_remove("DISTLOCK_URL"),
    );
    assert!(
        out.contains("backend \"sqlite\"") && out.contains("with_lock returned 42"),
        "{out}"
    );
}

#[test]
fn fenced_postgres_rejects_the_stale_write() {
    let Some(server) = require(PostgresServer::start()) else {
        return;
    };
    let out = run_ok(
        "fenced_postgres",
        example("fenced_postgres").env("DATABASE_URL", server.url()),
    );
    assert!(
        out.contains("late write with token") && out.contains("balance is 200"),
        "{out}"
    );
}

#[test]
fn rate_limited_api_never_exceeds_its_permits_on_redis() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let out = run_ok(
        "rate_limited_api",
        example("rate_limited_api").env("DISTLOCK_URL", server.url()),
    );
    assert!(
        out.contains("at most 3 calls in flight at once (peak 3)"),
        "{out}"
    );
}

#[test]
fn cache_rebuild_never_shows_a_half_built_cache_on_redis() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let out = run_ok(
        "cache_rebuild",
        example("cache_rebuild").env("DISTLOCK_URL", server.url()),
    );
    assert!(out.contains("no reader saw a half-built cache"), "{out}");
}

#[test]
fn elected_replicas_hand_the_job_over_on_redis() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    let out = run_ok(
        "elected_replicas",
        example("elected_replicas").env("DISTLOCK_URL", server.url()),
    );
    assert!(
        out.contains("by 2 leaders, epochs rising: true, refused: 0"),
        "{out}"
    );
}

#[test]
fn elected_replicas_hand_the_job_over_on_sqlite() {
    let out = run_ok("elected_replicas", &mut example("elected_replicas"));
    assert!(
        out.contains("by 2 leaders, epochs rising: true, refused: 0"),
        "{out}"
    );
}
