//! One JVM running `java/CuratorBench.java` for a whole scenario: every round's request goes to
//! the same process, so Curator's JIT stays as warm from round to round as the Rust systems'
//! code does in the benchmark's own process.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::BenchResult;
use crate::contend::Outcome;
use crate::peers::curator::{Curator, parse_output};

/// The running program; it ends when the session drops (its standard input closes).
#[derive(Debug)]
pub struct CuratorSession {
    child: Child,
    requests: Option<ChildStdin>,
    answers: BufReader<ChildStdout>,
    /// The compiled classes, which the JVM loads from while it runs.
    _program: Curator,
}

impl CuratorSession {
    /// Spawns `command` (`program` with its arguments) with its input and output piped.
    ///
    /// # Errors
    ///
    /// Java could not be started.
    pub(crate) fn start(mut command: Command, program: Curator) -> BenchResult<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let (Some(requests), Some(answers)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("the Curator program's pipes were not opened".into());
        };
        Ok(Self {
            child,
            requests: Some(requests),
            answers: BufReader::new(answers),
            _program: program,
        })
    }

    /// Runs the contention loop at each client count of `counts`, uncounted for `warmup`, then
    /// for `seconds`: one outcome per count.
    ///
    /// # Errors
    ///
    /// The program ended before it answered (its error is on the benchmark's standard error),
    /// or printed something unexpected.
    pub fn run(
        &mut self,
        (warmup, seconds): (f64, f64),
        counts: &[usize],
    ) -> BenchResult<Vec<(usize, Outcome)>> {
        let counts: Vec<String> = counts.iter().map(usize::to_string).collect();
        let requests = self
            .requests
            .as_mut()
            .ok_or("the Curator program's input is closed")?;
        writeln!(requests, "{seconds} {} {warmup}", counts.join(","))?;
        requests.flush()?;
        let mut answer = String::new();
        loop {
            let mut line = String::new();
            if self.answers.read_line(&mut line)? == 0 {
                return Err("the Curator program ended before it answered".into());
            }
            if line.trim_end() == "done" {
                return parse_output(&answer);
            }
            answer.push_str(&line);
        }
    }
}

impl Drop for CuratorSession {
    fn drop(&mut self) {
        // Closing its input ends the program's request loop, and so the program.
        drop(self.requests.take());
        if self.child.wait().is_err() {
            let _ = self.child.kill();
        }
    }
}
