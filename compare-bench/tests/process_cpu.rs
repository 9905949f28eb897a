//! CPU time of a process tree, as the latency scenario reads a server's, and the per-pair
//! figures made from it.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use compare_bench::cpu::{parse_cpu, tree_cpu};
use compare_bench::cpu_use::CpuUse;
use compare_bench::record::Record;

/// A dash loop long enough to take several clock ticks (10 ms each) on a loaded machine.
const BURN: &str = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done";

/// A child burns CPU in a child of its own that ends (reaped, its time moves to the child's
/// `cutime`), then in itself, then waits. Its tree counts both; its own time only the second;
/// and this process's tree, read before and after, grew by at least the child's whole tree.
#[test]
fn a_tree_counts_live_and_reaped_descendants() {
    let before = tree_cpu(std::process::id()).expect("this process's tree");
    let mut child = Command::new("sh")
        .args([
            "-c",
            &format!("sh -c '{BURN}'; {BURN}; echo burnt; sleep 30"),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn sh");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("the child's stdout");
    BufReader::new(stdout).read_line(&mut line).expect("read");
    assert_eq!(line.trim(), "burnt");

    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).expect("stat");
    let own = parse_cpu(&stat, 100).expect("the child's own time");
    let tree = tree_cpu(child.id()).expect("the child's tree");
    let after = tree_cpu(std::process::id()).expect("this process's tree");
    child.kill().expect("kill");
    child.wait().expect("reap");

    assert!(
        own >= Duration::from_millis(50),
        "the child burnt only {own:?}"
    );
    assert!(
        tree >= own + Duration::from_millis(50),
        "the reaped grandchild's time is missing: tree {tree:?}, the child alone {own:?}"
    );
    assert!(
        after - before >= tree,
        "this process's tree grew by {:?}, less than its child's tree {tree:?}",
        after - before
    );
    assert_eq!(tree_cpu(u32::MAX), None, "no such process");
}

/// Two rounds add up; a side unread in any round stays unread; per pair is in microseconds.
#[test]
fn cpu_use_adds_rounds_and_divides_by_pairs() {
    let reading = |client, server| CpuUse { client, server };
    let first = reading(Some(2.0), Some(5.0)).since(reading(Some(1.0), Some(4.0)));
    assert_eq!(first, reading(Some(1.0), Some(1.0)));
    let mut total = None;
    CpuUse::merge(&mut total, first);
    CpuUse::merge(&mut total, reading(Some(0.5), Some(1.0)));
    let total = total.expect("two rounds");
    assert_eq!(total, reading(Some(1.5), Some(2.0)));

    let record = total.per_pair(Record::new("latency", "x", "redis"), 10_000);
    assert_eq!(record.number("client_cpu_us_per_pair"), Some(150.0));
    assert_eq!(record.number("server_cpu_us_per_pair"), Some(200.0));

    let mut partial = None;
    CpuUse::merge(&mut partial, reading(Some(1.0), Some(1.0)));
    CpuUse::merge(&mut partial, reading(Some(1.0), None));
    let record = partial
        .expect("two rounds")
        .per_pair(Record::new("latency", "x", "sqlite"), 10);
    assert_eq!(record.number("server_cpu_us_per_pair"), None);
    assert_eq!(record.number("client_cpu_us_per_pair"), Some(200_000.0));
}
