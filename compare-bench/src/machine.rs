//! The machine and the versions a run was measured with, for the report's header.

use std::process::Command;

use serde_json::{Map, Value, json};

/// Facts about the host, read at the start of a run.
pub fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name")?.split_once(':'))
        .map(|(_, model)| model.trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory_kib: u64 = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    json!({
        "nproc": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "cpu_model": model,
        "memory_gib": (memory_kib as f64 / 1024.0 / 1024.0 * 10.0).round() / 10.0,
        "load_average_at_start": load.join(" "),
        "kernel": std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim(),
    })
}

fn first_line(program: &str, args: &[&str]) -> String {
    match Command::new(program).args(args).output() {
        Ok(out) => {
            let text = if out.stdout.is_empty() {
                out.stderr
            } else {
                out.stdout
            };
            String::from_utf8_lossy(&text)
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned()
        }
        Err(_) => "not installed".to_owned(),
    }
}

/// A Debian package's installed version.
pub fn package_version(package: &str) -> String {
    first_line("dpkg-query", &["-W", "-f=${Version}", package])
}

/// Versions of the servers, the JVM, Curator and the Rust crates of this build.
pub fn versions() -> Value {
    let postgres = std::fs::read_dir("/usr/lib/postgresql")
        .ok()
        .and_then(|mut dirs| dirs.next())
        .and_then(Result::ok)
        .map(|dir| {
            first_line(
                &dir.path().join("bin/postgres").display().to_string(),
                &["--version"],
            )
        })
        .unwrap_or_else(|| "not installed".to_owned());
    let mut crates = Map::new();
    for name in [
        "redis",
        "sqlx",
        "zookeeper-client",
        "tokio",
        "rslock",
        "criterion",
        "plotters",
    ] {
        crates.insert(
            name.to_owned(),
            Value::from(crate_versions(name).join(", ")),
        );
    }
    json!({
        "redis_server": first_line("redis-server", &["--version"]),
        "zookeeper": package_version("zookeeper"),
        "postgresql": postgres,
        "mariadb": first_line("mariadbd", &["--version"]),
        "java": first_line("java", &["-version"]),
        "curator": package_version("libcurator-recipes-java"),
        "rustc": first_line("rustc", &["--version"]),
        "distlock": env!("CARGO_PKG_VERSION"),
        "crates": crates,
    })
}

/// The versions of crate `name` in the workspace's Cargo.lock, as built.
pub fn crate_versions(name: &str) -> Vec<String> {
    let lock = include_str!("../../Cargo.lock");
    let mut versions = Vec::new();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == format!("name = \"{name}\"") {
            if let Some(version) = lines
                .next()
                .and_then(|v| v.strip_prefix("version = \""))
                .and_then(|v| v.strip_suffix('"'))
            {
                versions.push(version.to_owned());
            }
        }
    }
    versions
}
