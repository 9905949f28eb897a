//! CPU time of a process tree, as a server's is read: the server process and every process it
//! started.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use compare_bench::cpu::{parse_cpu, tree_cpu};

/// A dash loop long enough to take several clock ticks (10 ms each) on a loaded machine.
const BURN: &str = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done";

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
