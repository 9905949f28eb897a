//! CPU time of processes, from `/proc/PID/stat`: this process's own, and a server's with every
//! process it started (PostgreSQL's backends; a JVM's threads count with their process).

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

/// User + system CPU time this process has used so far (`None` off Linux).
pub fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_cpu(&stat, clock_ticks())
}

/// User + system CPU time used so far by process `root` and its descendants, the live ones
/// and those that ended (a reaped child's time is in its parent's `cutime`/`cstime`). `None`
/// when `root` is not running, or off Linux.
pub fn tree_cpu(root: u32) -> Option<Duration> {
    let mut stats: HashMap<u32, Stat> = HashMap::new();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // A process may end between the listing and the read: it is then no longer counted
        // itself, and its time is its parent's once reaped.
        if let Some(stat) = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|line| parse_stat(&line))
        {
            stats.insert(pid, stat);
        }
    }
    stats.get(&root)?;
    let mut total = 0;
    let mut frontier = vec![root];
    while let Some(pid) = frontier.pop() {
        if let Some(stat) = stats.remove(&pid) {
            total += stat.ticks;
            frontier.extend(
                stats
                    .iter()
                    .filter(|(_, s)| s.parent == pid)
                    .map(|(p, _)| *p),
            );
        }
    }
    Some(Duration::from_secs_f64(total as f64 / clock_ticks() as f64))
}

/// utime + stime (fields 14 and 15) of a `/proc/PID/stat` line, at `ticks` per second.
pub fn parse_cpu(stat: &str, ticks: u64) -> Option<Duration> {
    let fields = fields_after_name(stat)?;
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Duration::from_secs_f64(
        (utime + stime) as f64 / ticks as f64,
    ))
}

/// What [`tree_cpu`] needs of a process: its parent, and its own and its reaped children's
/// CPU ticks (fields 14 to 17).
struct Stat {
    parent: u32,
    ticks: u64,
}

fn parse_stat(line: &str) -> Option<Stat> {
    let fields = fields_after_name(line)?;
    let tick = |index: usize| fields.get(index)?.parse::<u64>().ok();
    Some(Stat {
        parent: fields.get(1)?.parse().ok()?,
        ticks: tick(11)? + tick(12)? + tick(13)? + tick(14)?,
    })
}

/// The fields from the state (field 3) on: the command name (field 2) may hold spaces and
/// parentheses, so they are counted after its last closing parenthesis.
fn fields_after_name(line: &str) -> Option<Vec<&str>> {
    Some(line[line.rfind(')')? + 1..].split_whitespace().collect())
}

/// Clock ticks per second (`getconf CLK_TCK`, asked once).
fn clock_ticks() -> u64 {
    static TICKS: OnceLock<u64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|out| String::from_utf8_lossy(&out.stdout).trim().parse().ok())
            .unwrap_or(100)
    })
}
