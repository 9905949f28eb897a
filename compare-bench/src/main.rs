//! The scenario runner: `compare-bench [--quick] [--out DIR] [--only a,b] [--backends x,y]`
//! starts (or finds) the servers, runs the scenarios and writes `report.md`, `results.jsonl` and
//! SVG charts.
//! `--report-from results.jsonl` writes the report again from an earlier run's results.

use std::path::PathBuf;
use std::time::Instant;

use compare_bench::scenarios::{self, Ctx};
use compare_bench::servers::Servers;
use compare_bench::{BenchResult, machine, report};
use serde_json::json;

/// Command-line options.
struct Options {
    quick: bool,
    out: PathBuf,
    only: Option<Vec<String>>,
    /// Latency and contention: only the systems on these backends.
    backends: Option<Vec<String>>,
    command: String,
    /// Re-render the report from this `results.jsonl` instead of measuring.
    report_from: Option<PathBuf>,
}

fn options() -> BenchResult<Options> {
    let mut options = Options {
        quick: false,
        out: PathBuf::from("docs/results"),
        only: None,
        backends: None,
        command: std::env::var("COMPARE_COMMAND").unwrap_or_else(|_| "compare-bench".to_owned()),
        report_from: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--report-from" => {
                options.report_from = Some(PathBuf::from(args.next().ok_or("--report-from needs a results.jsonl")?));
            }
            "--out" => options.out = PathBuf::from(args.next().ok_or("--out needs a directory")?),
            "--only" => {
                let list = args.next().ok_or("--only needs a list")?;
                options.only = Some(list.split(',').map(str::to_owned).collect());
            }
            "--backends" => {
                let list = args.next().ok_or("--backends needs a list")?;
                options.backends = Some(list.split(',').map(str::to_owned).collect());
            }
            other => return Err(format!("unknown argument {other:?}; usage: compare-bench [--quick] [--out DIR] [--only latency,contention,waiting,herd,crash,failover,many,shared,election] [--backends memory,sqlite,postgres,mysql,redis,redis-cluster,zookeeper] [--report-from results.jsonl]").into()),
        }
    }
    Ok(options)
}

fn utc_now() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_default()
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> BenchResult<()> {
    let options = options()?;
    if let Some(results) = &options.report_from {
        report::rewrite(&options.out, results)?;
        eprintln!(
            "compare-bench: rewrote the report in {} from {}",
            options.out.display(),
            results.display()
        );
        return Ok(());
    }
    #[cfg(feature = "metrics")]
    let _metrics = metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder()?;
    let started = Instant::now();
    let machine = machine::machine();
    let started_utc = utc_now();
    eprintln!("compare-bench: starting servers");
    let servers = Servers::start()?;
    let versions = machine::versions();
    let mut ctx = Ctx {
        servers,
        quick: options.quick,
        records: Vec::new(),
        skipped: Vec::new(),
        backends: options.backends.clone(),
    };
    let wanted = |id: &str| {
        options
            .only
            .as_ref()
            .is_none_or(|only| only.iter().any(|o| o == id))
    };
    let swept = wanted(scenarios::latency::ID) || wanted(scenarios::contention::ID);
    if swept && ctx.wants(scenarios::REDIS_CLUSTER) {
        eprintln!("compare-bench: starting a Redis Cluster");
        if let Err(error) = ctx.servers.start_redis_cluster() {
            // Named as distlock's, so the run fails at the end like any backend of ours.
            ctx.skip(format!("distlock on {}: {error}", scenarios::REDIS_CLUSTER));
        }
    }
    type Scenario = for<'a> fn(
        &'a mut Ctx,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = BenchResult<()>> + 'a>,
    >;
    let all: [(&str, Scenario); 9] = [
        (scenarios::latency::ID, |c| {
            Box::pin(scenarios::latency::run(c))
        }),
        (scenarios::contention::ID, |c| {
            Box::pin(scenarios::contention::run(c))
        }),
        (scenarios::waiting::ID, |c| {
            Box::pin(scenarios::waiting::run(c))
        }),
        (scenarios::herd::ID, |c| Box::pin(scenarios::herd::run(c))),
        (scenarios::crash::ID, |c| Box::pin(scenarios::crash::run(c))),
        (scenarios::failover::ID, |c| {
            Box::pin(scenarios::failover::run(c))
        }),
        (scenarios::many::ID, |c| Box::pin(scenarios::many::run(c))),
        (scenarios::shared::ID, |c| {
            Box::pin(scenarios::shared::run(c))
        }),
        (scenarios::election::ID, |c| {
            Box::pin(scenarios::election::run(c))
        }),
    ];
    for (id, scenario) in all {
        if !wanted(id) {
            continue;
        }
        let at = Instant::now();
        eprintln!("compare-bench: scenario {id}");
        if let Err(error) = scenario(&mut ctx).await {
            ctx.skip(format!("{id}: {error}"));
        }
        eprintln!(
            "compare-bench: scenario {id} took {:.1} s",
            at.elapsed().as_secs_f64()
        );
    }
    let header = json!({
        "header": true,
        "started_utc": started_utc,
        "command": options.command,
        "machine": machine,
        "versions": versions,
        "parameters": scenarios::parameters(options.quick),
        "total_seconds": (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
    });
    let run = report::Run {
        header: &header,
        records: &ctx.records,
        skipped: &ctx.skipped,
        command: &options.command,
    };
    report::write(&options.out, &run)?;
    eprintln!(
        "compare-bench: wrote {} ({} results) in {:.0} s",
        options.out.display(),
        ctx.records.len(),
        started.elapsed().as_secs_f64()
    );
    // A peer may be missing (no Java, say); distlock itself must always run.
    let own: Vec<&String> = ctx
        .skipped
        .iter()
        .filter(|s| s.contains("distlock"))
        .collect();
    if !own.is_empty() {
        return Err(format!("distlock itself could not run: {own:?}").into());
    }
    Ok(())
}
