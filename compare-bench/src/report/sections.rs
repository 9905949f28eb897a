//! One report section per scenario: a sentence on the seed claim, a chart and a table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::BenchResult;
use crate::chart::{self, Series};
use crate::record::Record;
use crate::scenarios::Kind;

use super::{ms, num, of, table};

type Section = fn(&Path, &[Record]) -> BenchResult<String>;

/// The scenario sections, in report order, with their scenario ids and titles.
pub(super) const ALL: [(&str, &str, Section); 7] = [
    ("latency", "1. Latency (uncontended)", latency),
    ("contention", "2. Contention sweep", contention),
    ("waiting", "3. Cost of waiting", waiting),
    ("herd", "4. Herd effect", herd),
    ("crash", "5. Crash recovery", crash),
    ("failover", "6. Failover safety", failover),
    ("many", "7. Many locks", many),
];

fn ours() -> String {
    Kind::Distlock("redis").system()
}

fn label(r: &Record) -> String {
    format!("{} / {}", r.system, r.backend)
}

fn get<'a>(
    records: &'a [Record],
    scenario: &str,
    system: &str,
    backend: &str,
    clients: usize,
) -> Option<&'a Record> {
    records.iter().find(|r| {
        r.scenario == scenario && r.system == system && r.backend == backend && r.clients == clients
    })
}

/// The headline table: distlock per backend.
pub(super) fn headline(records: &[Record]) -> String {
    let ours = ours();
    let mut rows = Vec::new();
    for backend in crate::scenarios::BACKENDS {
        let Some(latency) = get(records, "latency", &ours, backend, 1) else {
            continue;
        };
        let contended = get(records, "contention", &ours, backend, 32);
        let crash = records
            .iter()
            .find(|r| r.scenario == "crash" && r.backend == backend);
        rows.push(vec![
            backend.to_owned(),
            num(latency.ops_per_s),
            ms(latency.p50_us),
            ms(latency.p99_us),
            contended.map_or("-".into(), |r| num(r.ops_per_s)),
            contended.map_or("-".into(), |r| ms(r.p99_us)),
            crash.map_or("-".into(), |r| {
                format!("{} ({})", ms(r.p50_us), r.text("setting").unwrap_or(""))
            }),
        ]);
    }
    format!(
        "## Headline: distlock per backend\n\n{}\n",
        table(
            &[
                "backend",
                "uncontended pairs/s",
                "pair p50 ms",
                "pair p99 ms",
                "32 clients pairs/s",
                "32 clients p99 wait ms",
                "crash recovery ms (shortest setting)"
            ],
            &rows
        )
    )
}

/// The overlap summary over every contended run.
pub(super) fn overlaps(records: &[Record]) -> String {
    let contended: Vec<&Record> = records
        .iter()
        .filter(|r| matches!(r.scenario.as_str(), "latency" | "contention" | "herd"))
        .collect();
    let total: u64 = contended.iter().map(|r| r.overlaps).sum();
    let mut by_system: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for r in &contended {
        let entry = by_system.entry(label(r)).or_default();
        entry.0 += r.ops;
        entry.1 += r.overlaps;
    }
    let rows: Vec<Vec<String>> = by_system
        .into_iter()
        .map(|(system, (ops, overlaps))| vec![system, ops.to_string(), overlaps.to_string()])
        .collect();
    format!(
        "## Overlaps\n\nEvery critical section of every run passes an in-process overlap detector \
         (an entry while another holder is inside counts one). Total over {} runs: **{total}**.\n\n{}\n",
        contended.len(),
        table(&["system / backend", "grants checked", "overlaps"], &rows)
    )
}

fn latency(out: &Path, records: &[Record]) -> BenchResult<String> {
    let runs = of(records, "latency");
    let bars: Vec<(String, f64)> = runs.iter().map(|r| (label(r), r.ops_per_s)).collect();
    chart::bars(
        &out.join("latency.svg"),
        "Uncontended acquire+release pairs/s (log)",
        "pairs/s",
        &bars,
        true,
    )?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.system.clone(),
                r.backend.clone(),
                num(r.ops_per_s),
                ms(r.p50_us),
                ms(r.p99_us),
                ms(r.max_us),
            ]
        })
        .collect();
    let fastest = runs
        .iter()
        .filter(|r| r.backend != "memory")
        .max_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s));
    let sentence = fastest.map_or(String::new(), |r| {
        format!(
            "Fastest networked lock here: {} at {} pairs/s. ",
            label(r),
            num(r.ops_per_s)
        )
    });
    Ok(format!(
        "## 1. Latency (uncontended)\n\n{sentence}Seed claim: ZooKeeper is for coordination at modest rates while Redis \
         takes high rates; the pairs/s below put a number on it for one client.\n\n![latency](latency.svg)\n\n{}\n",
        table(
            &[
                "system",
                "backend",
                "pairs/s",
                "pair p50 ms",
                "pair p99 ms",
                "max ms"
            ],
            &rows
        )
    ))
}

fn contention(out: &Path, records: &[Record]) -> BenchResult<String> {
    let runs = of(records, "contention");
    let mut throughput: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut p99: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for r in &runs {
        throughput
            .entry(label(r))
            .or_default()
            .push((r.clients as f64, r.ops_per_s));
        p99.entry(label(r))
            .or_default()
            .push((r.clients as f64, r.p99_us / 1e3));
    }
    let series =
        |map: BTreeMap<String, Vec<(f64, f64)>>| -> Vec<Series> { map.into_iter().collect() };
    chart::lines(
        &out.join("contention_throughput.svg"),
        "Contention: pairs/s by clients (log-log)",
        "clients",
        "pairs/s",
        &series(throughput),
    )?;
    chart::lines(
        &out.join("contention_p99.svg"),
        "Contention: p99 acquire wait by clients (log-log)",
        "clients",
        "p99 wait ms",
        &series(p99),
    )?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.system.clone(),
                r.backend.clone(),
                r.clients.to_string(),
                num(r.ops_per_s),
                ms(r.p50_us),
                ms(r.p99_us),
                ms(r.max_us),
                format!(
                    "{}..{}",
                    r.number("fewest").unwrap_or(0.0),
                    r.number("most").unwrap_or(0.0)
                ),
                r.handoffs.to_string(),
                r.overlaps.to_string(),
            ]
        })
        .collect();
    Ok(format!(
        "## 2. Contention sweep\n\nSeed claims: databases bottleneck under contention; Redis takes high concurrency. \
         Each client has its own connection or session. Wait = from asking to grant; fairness = fewest..most grants \
         per client; handoffs = grants whose previous holder was another client.\n\n\
         ![throughput](contention_throughput.svg)\n\n![p99](contention_p99.svg)\n\n{}\n",
        table(
            &[
                "system",
                "backend",
                "clients",
                "pairs/s",
                "wait p50 ms",
                "wait p99 ms",
                "wait max ms",
                "fairness",
                "handoffs",
                "overlaps"
            ],
            &rows
        )
    ))
}

fn waiting(out: &Path, records: &[Record]) -> BenchResult<String> {
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

fn herd(out: &Path, records: &[Record]) -> BenchResult<String> {
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
    Ok(format!(
        "## 4. Herd effect\n\nSeed claim: watching one node makes every release wake every waiter; watching the \
         predecessor wakes one. Each run has one holder plus the waiters, 1 ms critical sections; wake-ups are watch \
         notifications the clients received, packets are ZooKeeper's `mntr` packets received per release; latency \
         is handoff (release to the next grant).\n\n![herd](herd.svg)\n\n{}\n",
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

fn crash(out: &Path, records: &[Record]) -> BenchResult<String> {
    let runs = of(records, "crash");
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
         session expiry) while Redis waits for the TTL. Measured: both wait for a timer the user chooses, the session \
         timeout or the lease; the lock comes back about that long after the crash.\n\n![crash](crash.svg)\n\n{}\n",
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

fn failover(out: &Path, records: &[Record]) -> BenchResult<String> {
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
                num(r.number("first_granted").unwrap_or(f64::NAN)),
                num(r.number("second_holders").unwrap_or(f64::NAN)),
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
            num(r.number("second_holders").unwrap_or(f64::NAN)),
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

fn many(out: &Path, records: &[Record]) -> BenchResult<String> {
    let runs = of(records, "many");
    let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for r in &runs {
        lines
            .entry(r.backend.clone())
            .or_default()
            .push((r.clients.max(1) as f64 * r.ops as f64, r.ops_per_s));
    }
    chart::lines(
        &out.join("many.svg"),
        "Many locks: acquisitions/s by locks held (log-log)",
        "locks held",
        "acquisitions/s",
        &lines.into_iter().collect::<Vec<_>>(),
    )?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.backend.clone(),
                r.ops.to_string(),
                num(r.ops_per_s),
                r.number("bytes_per_lock").map_or("n/a".into(), num),
                r.text("memory_source").unwrap_or("not measured").to_owned(),
            ]
        })
        .collect();
    Ok(format!(
        "## 7. Many locks\n\nOne client holds N distinct names at once ({} acquisitions in flight). Memory per held \
         lock = (reading while held - reading before) / N.\n\n![many](many.svg)\n\n{}\n",
        runs.first()
            .and_then(|r| r.number("parallel"))
            .map_or("16".into(), num),
        table(
            &[
                "backend",
                "locks held",
                "acquisitions/s",
                "bytes per lock",
                "memory source"
            ],
            &rows
        )
    ))
}
