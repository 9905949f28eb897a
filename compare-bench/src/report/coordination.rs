//! Report sections on waiting and failure: cost of waiting, herd effect, crash recovery,
//! failover safety.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::BenchResult;
use crate::chart;
use crate::record::Record;
use crate::scenarios::Kind;

use super::sections::{label, ours, verdict};
use super::{ms, num, of, table};

pub(super) fn waiting(out: &Path, records: &[Record]) -> BenchResult<String> {
    let runs = of(records, "waiting");
    let bars: Vec<(String, f64)> = runs
        .iter()
        .map(|r| {
            (
                label(r),
                r.number("server_requests_per_s_waiting")
                    .unwrap_or(0.0)
                    .max(0.01),
            )
        })
        .collect();
    chart::bars(
        &out.join("waiting.svg"),
        "Server requests/s while waiters wait on a held lock (log)",
        "requests/s",
        &bars,
        true,
    )?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.system.clone(),
                r.backend.clone(),
                r.clients.to_string(),
                r.text("request_unit").unwrap_or("").to_owned(),
                num(r
                    .number("server_requests_per_s_waiting")
                    .unwrap_or(f64::NAN)),
                num(r.number("requests_per_waiter_per_s").unwrap_or(f64::NAN)),
                num(r.number("client_cpu_percent").unwrap_or(f64::NAN)),
                num(r.number("requests_per_release").unwrap_or(f64::NAN)),
                num(r.number("server_counter_per_s_waiting").unwrap_or(f64::NAN)),
            ]
        })
        .collect();
    let ours = ours();
    let pick = |system: &str, backend: &str| {
        runs.iter()
            .find(|r| r.system == system && r.backend == backend)
            .and_then(|r| r.number("server_requests_per_s_waiting"))
    };
    let sentence = match (
        pick(&ours, "redis"),
        pick(&Kind::RedisPoll(1).system(), "redis"),
        pick(&ours, "zookeeper"),
    ) {
        (Some(ours_redis), Some(poll), Some(zk)) => format!(
            "A polling Redis client at 1 ms costs {} commands/s while it waits; distlock's pub/sub waiters cost {} and \
             ZooKeeper's watches {} packets/s (session pings). This confirms \"Redis must keep trying\" for polling \
             clients and refutes it for a pub/sub design. ",
            num(poll),
            num(ours_redis),
            num(zk)
        ),
        _ => String::new(),
    };
    Ok(format!(
        "## 3. Cost of waiting\n\n{sentence}Counters are server-side (units per row); client CPU is this process's \
         utime+stime over the window, as a percentage of one core. Redis requests are the commands clients \
         sent, counted with `MONITOR`; the last column is the server's own counter (for Redis `INFO \
         commandstats`, which also counts every command a Lua script runs). Requests per release are counted while the \
         waiters drain (each takes the lock once), including the grants' own commands.\n\n![waiting](waiting.svg)\n\n{}\n",
        table(
            &[
                "system",
                "backend",
                "waiters",
                "unit",
                "requests/s waiting",
                "per waiter per s",
                "client CPU %",
                "requests per release",
                "server counter/s waiting"
            ],
            &rows
        )
    ))
}

pub(super) fn herd(out: &Path, records: &[Record]) -> BenchResult<String> {
    let runs = of(records, "herd");
    let mut wake: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for r in &runs {
        wake.entry(r.system.clone()).or_default().push((
            r.clients as f64,
            r.number("wakeups_per_release").unwrap_or(0.0).max(0.01),
        ));
    }
    chart::lines(
        &out.join("herd.svg"),
        "Wake-ups per release by waiters (log-log)",
        "waiters",
        "wake-ups per release",
        &wake.into_iter().collect::<Vec<_>>(),
    )?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.system.clone(),
                r.clients.to_string(),
                r.ops.to_string(),
                num(r.number("wakeups_per_release").unwrap_or(f64::NAN)),
                num(r.number("packets_per_release").unwrap_or(f64::NAN)),
                ms(r.p50_us),
                ms(r.p99_us),
                r.overlaps.to_string(),
            ]
        })
        .collect();
    let largest = runs.iter().map(|r| r.clients).max().unwrap_or(0);
    let foil = runs
        .iter()
        .find(|r| r.clients == largest && r.system.starts_with("herd foil"));
    let pred = runs
        .iter()
        .find(|r| r.clients == largest && !r.system.starts_with("herd foil"));
    let sentence = match (foil, pred) {
        (Some(foil), Some(pred)) => format!(
            "At {largest} waiters every release woke {} waiters of the foil and {} of the predecessor-watch \
             recipe ({} vs {} ZooKeeper packets per release; handoff p50 {} vs {} ms): {}. ",
            num(foil.number("wakeups_per_release").unwrap_or(f64::NAN)),
            num(pred.number("wakeups_per_release").unwrap_or(f64::NAN)),
            num(foil.number("packets_per_release").unwrap_or(f64::NAN)),
            num(pred.number("packets_per_release").unwrap_or(f64::NAN)),
            ms(foil.p50_us),
            ms(pred.p50_us),
            verdict(
                foil.number("wakeups_per_release").unwrap_or(0.0)
                    > 2.0 * pred.number("wakeups_per_release").unwrap_or(f64::MAX)
            )
        ),
        _ => String::new(),
    };
    Ok(format!(
        "## 4. Herd effect\n\n{sentence}Seed claim: watching one node makes every release wake every waiter; watching the \
         predecessor wakes one. Each run has one holder plus the waiters, 1 ms critical sections; wake-ups are watch \
         notifications the clients received, packets are ZooKeeper's `mntr` packets received, both per release \
         over the whole run (the waiters still in line at the window's end drain after it, and count); releases \
         and latency are the window's; latency is handoff (release to the next grant).\n\n![herd](herd.svg)\n\n{}\n",
        table(
            &[
                "recipe",
                "waiters",
                "releases",
                "wake-ups per release",
                "packets per release",
                "handoff p50 ms",
                "handoff p99 ms",
                "overlaps"
            ],
            &rows
        )
    ))
}

pub(super) fn crash(out: &Path, records: &[Record]) -> BenchResult<String> {
    let runs = of(records, "crash");
    let mut sentence = String::new();
    for r in &runs {
        let _ = write!(
            sentence,
            "{} at {}: back after {} ms. ",
            r.backend,
            r.text("setting").unwrap_or(""),
            num(r.p50_us / 1e3)
        );
    }
    let zk_waits = runs
        .iter()
        .filter(|r| r.backend == "zookeeper")
        .all(|r| r.p50_us / 1e3 >= 0.5 * r.number("setting_ms").unwrap_or(f64::MAX));
    let _ = write!(
        sentence,
        "ZooKeeper's release on a crash is automatic but {} for the session timeout, as the leased \
         backends wait for their lease: the contrast the claim draws is {}. ",
        if zk_waits { "waits" } else { "does not wait" },
        if zk_waits {
            "refuted (both wait for a timer the user sets)"
        } else {
            "confirmed"
        }
    );
    let bars: Vec<(String, f64)> = runs
        .iter()
        .map(|r| {
            (
                format!("{} {}", r.backend, r.text("setting").unwrap_or("")),
                r.p50_us / 1e3,
            )
        })
        .collect();
    chart::bars(
        &out.join("crash.svg"),
        "Crash recovery: SIGKILL to next grant (median ms)",
        "ms",
        &bars,
        false,
    )?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.backend.clone(),
                r.text("setting").unwrap_or("").to_owned(),
                r.ops.to_string(),
                ms(r.p50_us),
                ms(r.max_us),
            ]
        })
        .collect();
    Ok(format!(
        "## 5. Crash recovery\n\nSeed claim: ZooKeeper frees a crashed holder's lock by itself (ephemeral node, on \
         session expiry) while Redis waits for the TTL. {sentence}The waiter queues while the holder is alive \
         and the holder is killed about 300 ms after its grant, so a lease ends that much sooner after the \
         kill than its length.\n\n![crash](crash.svg)\n\n{}\n",
        table(
            &[
                "backend",
                "setting",
                "trials",
                "recovery p50 ms",
                "recovery max ms"
            ],
            &rows
        )
    ))
}

pub(super) fn failover(out: &Path, records: &[Record]) -> BenchResult<String> {
    let runs = of(records, "failover");
    let bars: Vec<(String, f64)> = runs
        .iter()
        .map(|r| {
            (
                format!("{} {}", r.backend, r.text("setting").unwrap_or("")),
                r.number("second_holders").unwrap_or(0.0),
            )
        })
        .collect();
    chart::bars(
        &out.join("failover.svg"),
        "Failover: trials that granted a second holder",
        "trials",
        &bars,
        false,
    )?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.backend.clone(),
                r.text("setting").unwrap_or("").to_owned(),
                r.text("fault").unwrap_or("").to_owned(),
                r.ops.to_string(),
                r.number("first_granted").unwrap_or(f64::NAN).to_string(),
                r.number("second_holders").unwrap_or(f64::NAN).to_string(),
            ]
        })
        .collect();
    let mut sentence = String::new();
    for r in &runs {
        let _ = write!(
            sentence,
            "{} ({}): {} of {} trials granted a second holder. ",
            r.backend,
            r.text("setting").unwrap_or(""),
            r.number("second_holders").unwrap_or(f64::NAN),
            r.ops
        );
    }
    Ok(format!(
        "## 6. Failover safety\n\nSeed claim: Redis can lose a lock in a master failover with asynchronous \
         replication; ZooKeeper stays consistent. {sentence}With `WAIT`, a grant no replica acknowledged is refused \
         (first_granted counts the grants the first client got).\n\n![failover](failover.svg)\n\n{}\n",
        table(
            &[
                "backend",
                "setting",
                "fault",
                "trials",
                "first granted",
                "second holders"
            ],
            &rows
        )
    ))
}
