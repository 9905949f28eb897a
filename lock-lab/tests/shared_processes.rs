//! Permits and read-write holds with real concurrency: 32 tasks in 4 processes (8 each) take
//! holds of one name; every hold's interval, recorded from inside it, is merged across the
//! processes. A 5-permit semaphore has exactly 5 holders at its fullest; readers overlap and a
//! writer never has company.

use std::path::Path;
use std::time::Duration;

use lock_lab::claimants::{self, ClaimMix, ClaimPlan};
use lock_testkit::intervals::{HoldInterval, occupancy};
use lock_testkit::require;
use lock_testkit::servers::{MariaDbServer, PostgresServer, RedisServer, ZkServer};

const PROCESSES: usize = 4;
const TASKS: usize = 8;
const ROUNDS: usize = 6;
const PERMITS: u32 = 5;

fn holder() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_lock-holder"))
}

/// Every process's holds of one name under `mix`.
fn holds_of(url: &str, mix: ClaimMix, hold: Duration) -> Vec<HoldInterval> {
    let plan = ClaimPlan {
        url: url.to_owned(),
        name: format!(
            "shared/{}/{:016x}",
            mix.spec().replace(':', "-"),
            rand::random::<u64>()
        ),
        mix,
        tasks: TASKS,
        rounds: ROUNDS,
        hold,
    };
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| claimants::start(holder(), &plan))
        .collect();
    let holds: Vec<HoldInterval> = children.into_iter().flat_map(claimants::finish).collect();
    assert_eq!(holds.len(), PROCESSES * TASKS * ROUNDS, "holds reported");
    holds
}

/// The semaphore admits exactly its permits at its fullest: never more, and all of them used.
fn assert_semaphore_counts(url: &str) {
    let holds = holds_of(url, ClaimMix::Permits(PERMITS), Duration::from_millis(40));
    let seen = occupancy(&holds);
    assert_eq!(
        seen.max_holders,
        PERMITS as usize,
        "most permits held at once by {} tasks in {PROCESSES} processes",
        PROCESSES * TASKS
    );
}

/// Readers overlap; a writer is always alone.
fn assert_read_write_counts(url: &str) {
    let holds = holds_of(
        url,
        ClaimMix::ReadWrite { write_percent: 10 },
        Duration::from_millis(20),
    );
    let writes = holds.iter().filter(|hold| hold.exclusive).count();
    assert!(writes > 0, "no write holds among {}", holds.len());
    let seen = occupancy(&holds);
    assert_eq!(seen.exclusive_overlaps, 0, "a writer had company: {seen:?}");
    assert!(seen.max_shared >= 2, "readers never overlapped: {seen:?}");
}

#[test]
fn redis_permits_and_read_write_holds_count_across_processes() {
    let Some(server) = require(RedisServer::start()) else {
        return;
    };
    assert_semaphore_counts(&server.url());
    assert_read_write_counts(&server.url());
}

/// The same through grants a replica must acknowledge (`WAIT` after every grant).
#[test]
fn replicated_redis_permits_and_read_write_holds_count_across_processes() {
    let Some(master) = require(RedisServer::start()) else {
        return;
    };
    let Some(_replica) = require(RedisServer::start_replica_of(&master)) else {
        return;
    };
    let url = format!("{}?wait_replicas=1&wait_timeout=2s", master.url());
    assert_semaphore_counts(&url);
    assert_read_write_counts(&url);
}

#[test]
fn zookeeper_permits_and_read_write_holds_count_across_processes() {
    let Some(server) = require(ZkServer::start()) else {
        return;
    };
    assert_semaphore_counts(&server.url());
    assert_read_write_counts(&server.url());
}

#[test]
fn postgres_permits_and_read_write_holds_count_across_processes() {
    let Some(server) = require(PostgresServer::start()) else {
        return;
    };
    assert_semaphore_counts(&server.url());
    assert_read_write_counts(&server.url());
}

#[test]
fn mariadb_permits_and_read_write_holds_count_across_processes() {
    let Some(server) = require(MariaDbServer::start()) else {
        return;
    };
    assert_semaphore_counts(&server.url());
    assert_read_write_counts(&server.url());
}

#[test]
fn sqlite_permits_and_read_write_holds_count_across_processes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("shared.db").display());
    assert_semaphore_counts(&url);
    assert_read_write_counts(&url);
}
