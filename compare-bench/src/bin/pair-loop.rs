//! The workload `scripts/client-instructions` counts under callgrind: one system's uncontended
//! acquire+release pairs, back to back, on the servers `compare-bench` starts.
//!
//! `pair-loop --list` prints the systems, one per line: `INDEX<TAB>BACKEND<TAB>ROLE<TAB>SYSTEM`
//! (every uncontended system of the backends that have a floor). `pair-loop INDEX PAIRS` runs
//! system `INDEX` for [`WARMUP`] pairs and then `PAIRS` more. The two runs of a system differ
//! only by their pair counts, so the difference of their instruction counts is what the extra
//! pairs cost the client.

use compare_bench::BenchResult;
use compare_bench::scenarios::{Kind, all_kinds, client, fresh_name};
use compare_bench::servers::Servers;

/// The backends whose systems include a floor.
const BACKENDS: [&str; 4] = ["postgres", "mysql", "redis", "zookeeper"];

/// Pairs before the counted ones: connections opened, statements prepared, scripts loaded.
const WARMUP: usize = 20;

fn systems() -> Vec<Kind> {
    all_kinds()
        .into_iter()
        .filter(|kind| kind.uncontended() && BACKENDS.contains(&kind.backend()))
        .collect()
}

fn main() -> BenchResult<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let systems = systems();
    match args.as_slice() {
        [list] if list == "--list" => {
            for (index, kind) in systems.iter().enumerate() {
                let (backend, role, system) = (kind.backend(), kind.role(), kind.system());
                println!("{index}\t{backend}\t{role}\t{system}");
            }
            Ok(())
        }
        [index, pairs] => {
            let kind = *systems
                .get(index.parse::<usize>()?)
                .ok_or("no such system; see pair-loop --list")?;
            run(kind, pairs.parse()?)
        }
        _ => Err("usage: pair-loop --list | pair-loop INDEX PAIRS".into()),
    }
}

/// Runs `kind`'s client for the warm-up and `pairs` pairs, on a runtime like `compare-bench`'s.
fn run(kind: Kind, pairs: usize) -> BenchResult<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let servers = Servers::start()?;
    runtime.block_on(async {
        let lock = client(kind, &servers, &fresh_name("pair-loop")).await?;
        for _ in 0..WARMUP + pairs {
            lock.acquire().await?.release().await?;
        }
        Ok(())
    })
}
