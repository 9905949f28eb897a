//! Apache Curator's recipes, run in a JVM from `java/CuratorBench.java` (InterProcessMutex),
//! `java/CuratorShared.java` (InterProcessSemaphoreV2, InterProcessReadWriteLock) and
//! `java/CuratorElection.java` (LeaderLatch), compiled with `javac` at run time against
//! Debian's jars in `/usr/share/java`.

use std::path::Path;
use std::time::Duration;

use lock_lab::curator::CuratorProgram;

use crate::BenchResult;
use crate::contend::Outcome;
use crate::peers::curator_session::CuratorSession;
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
        Self::compile_program("CuratorBench")
    }

    /// Compiles `java/<program>.java`.
    ///
    /// # Errors
    ///
    /// As [`compile`](Self::compile).
    pub fn compile_program(program: &str) -> BenchResult<Self> {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("java/{program}.java"));
        Ok(Self(CuratorProgram::compile(&source)?))
    }

    /// Starts `CuratorBench` as a session for locks under `path` on `hosts` (`host:port`); it
    /// warms up with 300 uncontended pairs before it reads its first request. The session keeps
    /// the compiled classes for the program's life.
    ///
    /// # Errors
    ///
    /// Java could not be started.
    pub fn session(self, hosts: &str, path: &str) -> BenchResult<CuratorSession> {
        let mut command = self.0.command("512m");
        command.args([hosts, path]);
        CuratorSession::start(command, self)
    }

    /// Runs `CuratorShared`'s loop in `mode` (`semaphore`, `rw`) with `clients` sessions for
    /// `seconds`; the outcome's `overlaps` are its violations (a sixth permit holder, a
    /// writer with company).
    ///
    /// # Errors
    ///
    /// The JVM failed or printed something unexpected.
    pub fn run_shared(
        &self,
        hosts: &str,
        path: &str,
        seconds: f64,
        (mode, clients): (&str, usize),
    ) -> BenchResult<Outcome> {
        let args = [
            hosts,
            path,
            &seconds.to_string(),
            mode,
            &clients.to_string(),
        ];
        let output = self.output(&args)?;
        let mut outcomes = parse_output(&output)?;
        let (_, outcome) = outcomes.pop().ok_or("CuratorShared printed no result")?;
        Ok(outcome)
    }

    /// `java <program> ARGS...`, to be spawned.
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        let mut command = self.0.command("256m");
        command.args(args);
        command
    }

    /// The program's standard output with `args`.
    fn output(&self, args: &[&str]) -> BenchResult<String> {
        let output = self.0.command("512m").args(args).output()?;
        if !output.status.success() {
            return Err(format!(
                "Curator program failed: {}",
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
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
