//! Apache Curator's InterProcessMutex, run in a JVM from `java/CuratorBench.java`, compiled with
//! `javac` at run time against Debian's jars in `/usr/share/java`.

use std::path::Path;
use std::time::Duration;

use lock_lab::curator::CuratorProgram;

use crate::BenchResult;
use crate::contend::Outcome;
use crate::stats::Sample;

/// The compiled program.
#[derive(Debug)]
pub struct Curator(CuratorProgram);

impl Curator {
    /// Compiles the program.
    ///
    /// # Errors
    ///
    /// Java, javac or Curator's jars are missing, or javac fails.
    pub fn compile() -> BenchResult<Self> {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("java/CuratorBench.java");
        Ok(Self(CuratorProgram::compile(&source)?))
    }

    /// Runs the contention loop for each client count for `seconds` on `hosts` (`host:port`),
    /// returning one outcome per count.
    ///
    /// # Errors
    ///
    /// The JVM failed or printed something unexpected.
    pub fn run(
        &self,
        hosts: &str,
        path: &str,
        seconds: f64,
        counts: &[usize],
    ) -> BenchResult<Vec<(usize, Outcome)>> {
        let counts: Vec<String> = counts.iter().map(usize::to_string).collect();
        let output = self
            .0
            .command("512m")
            .args([hosts, path, &seconds.to_string(), &counts.join(",")])
            .output()?;
        if !output.status.success() {
            return Err(format!(
                "CuratorBench failed: {}",
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
        parse_output(&String::from_utf8_lossy(&output.stdout))
    }
}

/// Parses the program's `begin`/`s`/`end` lines.
///
/// # Errors
///
/// A malformed line.
pub fn parse_output(text: &str) -> BenchResult<Vec<(usize, Outcome)>> {
    let mut results = Vec::new();
    let mut samples = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            ["begin", _] => samples = Vec::new(),
            ["s", client, wait, pair, previous, gap] => {
                let previous: i64 = previous.parse()?;
                let gap: i64 = gap.parse()?;
                samples.push(Sample {
                    client: client.parse()?,
                    wait: Duration::from_nanos(wait.parse()?),
                    pair: Duration::from_nanos(pair.parse()?),
                    previous: usize::try_from(previous).ok(),
                    gap: u64::try_from(gap).ok().map(Duration::from_nanos),
                });
            }
            ["end", clients, overlaps, seconds] => results.push((
                clients.parse()?,
                Outcome {
                    samples: std::mem::take(&mut samples),
                    seconds: seconds.parse()?,
                    overlaps: overlaps.parse()?,
                },
            )),
            _ => {}
        }
    }
    Ok(results)
}
