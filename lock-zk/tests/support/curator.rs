//! Apache Curator's InterProcessMutex in a JVM, compiled from `java/CuratorLock.java`.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use lock_testkit::curator::CuratorProgram;

/// The compiled program.
#[derive(Debug)]
pub(crate) struct Curator(CuratorProgram);

impl Curator {
    /// Compiles the program; `None` (a loud skip) when Java or Curator is missing and
    /// `LOCK_TEST_REQUIRE` is unset.
    pub(crate) fn compile() -> Option<Self> {
        let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("java/CuratorLock.java");
        lock_testkit::require(CuratorProgram::compile(&source)).map(Self)
    }

    /// `java CuratorLock ARGS...` with piped stdin and stdout.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = self.0.command("256m");
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        command
    }
}
