//! One report section per scenario: a sentence on the seed claim, a chart and a table.

use std::collections::BTreeMap;
use std::path::Path;

use crate::BenchResult;
use crate::chart::{self, Series};
use crate::record::Record;
use crate::scenarios::{Kind, REDIS_CLUSTER};

use super::coordination;
use super::{cell, ms, num, of, table};

type Section = fn(&Path, &[Record]) -> BenchResult<String>;

/// The scenario sections, in report order, with their scenario ids and titles.
pub(super) const ALL: [(&str, &str, Section); 9] = [
    ("latency", "1. Latency (uncontended)", latency),
    ("contention", "2. Contention sweep", contention),
    ("waiting", "3. Cost of waiting", coordination::waiting),
    ("herd", "4. Herd effect", coordination::herd),
    ("crash", "5. Crash recovery", coordination::crash),
    ("failover", "6. Failover safety", coordination::failover),
    ("many", "7. Many locks", super::many::many),
    (
        "shared",
        "8. Semaphores and read-write locks",
        super::shared::shared,
    ),
    ("election", "9. Leader failover", super::election::election),
];

pub(super) fn ours() -> String {
    Kind::Distlock("redis").system()
}

/// "confirmed" or "refuted", as the numbers say.
pub(super) fn verdict(holds: bool) -> &'static str {
    if holds { "confirmed" } else { "refuted here" }
}

pub(super) fn label(r: &Record) -> String {
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
    for backend in crate::scenarios::SWEPT_BACKENDS {
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
        "## Headline: distlock per backend\n\n{}\n{}",
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
        ),
        cluster_note(records)
    )
}

/// What the `redis-cluster` rows are, when the run has any.
fn cluster_note(records: &[Record]) -> String {
    if !records.iter().any(|r| r.backend == REDIS_CLUSTER) {
        return String::new();
    }
    format!(
        "`{REDIS_CLUSTER}`: distlock through `redis+cluster://` on a Redis Cluster of {} primaries \
         with {} replica each, on loopback; each lock's keys share one slot, so a lock lives on one \
         shard.\n\n",
        crate::servers::CLUSTER_PRIMARIES,
        crate::servers::CLUSTER_REPLICAS
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
                r.text("role").unwrap_or("").to_owned(),
                r.backend.clone(),
                num(r.ops_per_s),
                ms(r.p50_us),
                ms(r.p99_us),
                ms(r.max_us),
                cell(r, "client_cpu_us_per_pair"),
                cell(r, "server_cpu_us_per_pair"),
            ]
        })
        .collect();
    let fastest = runs
        .iter()
        .filter(|r| r.backend != "memory" && !r.text("role").unwrap_or("").starts_with("floor"))
        .max_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s));
    let sentence = fastest.map_or(String::new(), |r| {
        format!(
            "Fastest networked lock here: {} at {} pairs/s. A floor is the same server work as a \
             lock (the writes or statements one pair needs) from the simplest client, with no lock \
             semantics around it: what no lock on that server can beat. ",
            label(r),
            num(r.ops_per_s)
        )
    });
    Ok(format!(
        "## 1. Latency (uncontended)\n\n{sentence}One client, acquire+release back to back after an untimed \
         warm-up; p50/p99/max are pair times. CPU per pair is the user + system time of \
         the client (this process; n/a for Curator, a JVM of its own) and of the server (its process \
         and every process it started, such as PostgreSQL's backends; n/a for a server run \
         elsewhere or inside the client) over the timed rounds. The server's includes its \
         background work (PostgreSQL's checkpoints and autovacuum, ZooKeeper's JVM), which lands in \
         whichever round it falls: compare a system with its floor, not to the microsecond. \
         Rounds take turns over the systems, each backend's side by side and every other round \
         in reverse order; a missed goal's explanation gives distlock's share of its floor round \
         by round too (`round_pairs_per_s` in the results).\n\n![latency](latency.svg)\n\n{}\n",
        table(
            &[
                "system",
                "role",
                "backend",
                "pairs/s",
                "pair p50 ms",
                "pair p99 ms",
                "max ms",
                "client CPU µs/pair",
                "server CPU µs/pair"
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
    let ours = ours();
    let at32 = |backend: &str| get(records, "contention", &ours, backend, 32);
    let sentence = match (
        at32("redis"),
        at32("postgres"),
        at32("mysql"),
        at32("zookeeper"),
    ) {
        (Some(redis), Some(pg), Some(my), Some(zk)) => format!(
            "At 32 clients distlock takes {} pairs/s on Redis, {} on ZooKeeper, {} on PostgreSQL and {} on \
             MariaDB, with p99 waits of {}, {}, {} and {} ms: that the database locks bottleneck is {}; \
             that Redis takes the most concurrency is {}. ",
            num(redis.ops_per_s),
            num(zk.ops_per_s),
            num(pg.ops_per_s),
            num(my.ops_per_s),
            ms(redis.p99_us),
            ms(zk.p99_us),
            ms(pg.p99_us),
            ms(my.p99_us),
            verdict(pg.ops_per_s.max(my.ops_per_s) < redis.ops_per_s),
            verdict(redis.ops_per_s >= zk.ops_per_s.max(pg.ops_per_s).max(my.ops_per_s))
        ),
        _ => String::new(),
    };
    Ok(format!(
        "## 2. Contention sweep\n\n{sentence}Seed claims: databases bottleneck under contention; Redis takes high concurrency. \
         Each client has its own connection or session. Wait = from asking to grant; fairness = fewest..most grants \
         per client; handoffs = grants whose previous holder was another client. An unfair lock lets a \
         client that just released take the lock again at once: its pairs/s are high and most of its \
         waits tiny, while the fairness column shows clients that got almost nothing.\n\n\
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
