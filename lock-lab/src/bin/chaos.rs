//! `chaos [--trials N] [--out DIR] [--only TEXT]`: runs every fault scenario against every
//! backend it applies to, N trials each (default 20), and writes `DIR/chaos.md` (a markdown
//! table with the command and machine load) and `DIR/chaos.jsonl` (one JSON object per cell).
//! `--only` keeps the cells whose "scenario backend" contains TEXT.

use std::fmt::Write as _;
use std::path::PathBuf;

use lock_lab::chaos::{Runner, Scenario, markdown_table};

type Failure = Box<dyn std::error::Error>;

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut trials, mut out, mut only) = (20usize, PathBuf::from("."), String::new());
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--trials" => trials = value.parse()?,
            "--out" => out = PathBuf::from(value),
            "--only" => only.clone_from(value),
            _ => {
                return Err(format!(
                    "unknown option {flag}; usage: chaos [--trials N] [--out DIR] [--only TEXT]"
                )
                .into());
            }
        }
    }
    std::fs::create_dir_all(&out)?;
    let load_before = load();
    let started = std::time::Instant::now();
    let lockrun = std::env::current_exe()?.with_file_name("lockrun");
    let lockrun = lockrun.is_file().then_some(lockrun);
    let mut runner = Runner::new(lock_lab::holder::beside_current_exe("lock-holder"), lockrun);
    let mut cells = Vec::new();
    for scenario in Scenario::ALL {
        for &backend in scenario.backends() {
            if !format!("{} {}", scenario.id(), backend.id()).contains(&only) {
                continue;
            }
            eprintln!(
                "chaos: {} x {} ({trials} trials)",
                scenario.id(),
                backend.id()
            );
            let cell = runner.run_cell(scenario, backend, trials).await;
            eprintln!("{}", cell.json());
            cells.push(cell);
        }
    }
    let mut header = String::new();
    writeln!(header, "# Chaos suite results\n")?;
    writeln!(
        header,
        "Command: `chaos {}` (the runner `scripts/chaos` builds and starts)  ",
        args.join(" ")
    )?;
    writeln!(
        header,
        "Load average before: {load_before}; after: {}  ",
        load()
    )?;
    writeln!(
        header,
        "Wall time: {:.0} s\n",
        started.elapsed().as_secs_f64()
    )?;
    let markdown = format!("{header}{}", markdown_table(&cells));
    std::fs::write(out.join("chaos.md"), &markdown)?;
    let lines: Vec<String> = cells.iter().map(|cell| cell.json()).collect();
    std::fs::write(out.join("chaos.jsonl"), lines.join("\n") + "\n")?;
    println!("{markdown}");
    Ok(())
}

/// `/proc/loadavg`'s three load averages.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_owned())
}
