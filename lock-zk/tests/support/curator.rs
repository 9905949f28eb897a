//! Apache Curator's InterProcessMutex in a JVM, compiled from `java/CuratorLock.java`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Jars the Curator program needs, from Debian's packages in `/usr/share/java`.
const JARS: &[&str] = &[
    "curator-recipes.jar",
    "curator-framework.jar",
    "curator-client.jar",
    "guava.jar",
    "failureaccess.jar",
    "zookeeper.jar",
    "zookeeper-jute.jar",
    "slf4j-api.jar",
    "slf4j-nop.jar",
    "audience-annotations.jar",
    "commons-io.jar",
];

/// The compiled program and its classpath (the temp dir lives as long as this value).
#[derive(Debug)]
pub(crate) struct Curator {
    _dir: tempfile::TempDir,
    classpath: String,
}

impl Curator {
    /// Compiles the program; `None` (a loud skip) when Java or Curator is missing and
    /// `LOCK_TEST_REQUIRE` is unset.
    pub(crate) fn compile() -> Option<Self> {
        let base = Path::new("/usr/share/java");
        let missing = ["java", "javac"]
            .into_iter()
            .find(|tool| !on_path(tool))
            .map(str::to_owned)
            .or_else(|| {
                (!base.join("curator-recipes.jar").is_file()).then(|| "curator-recipes.jar".into())
            });
        if let Some(missing) = missing {
            assert!(
                !lock_testkit::servers_required(),
                "{missing} is missing and LOCK_TEST_REQUIRE is set: run scripts/install-servers"
            );
            eprintln!("SKIPPED: {missing} is missing; the Curator interop check did not run");
            return None;
        }
        let jars: Vec<String> = JARS
            .iter()
            .map(|jar| base.join(jar))
            .filter(|jar| jar.is_file())
            .map(|jar| jar.display().to_string())
            .collect();
        let dir = tempfile::tempdir().expect("temp dir for the Curator program");
        let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("java/CuratorLock.java");
        let status = Command::new("javac")
            .args(["-nowarn", "-d"])
            .arg(dir.path())
            .arg("-cp")
            .arg(jars.join(":"))
            .arg(&source)
            .status()
            .expect("run javac");
        assert!(status.success(), "javac failed on {}", source.display());
        let classpath = format!("{}:{}", dir.path().display(), jars.join(":"));
        Some(Self {
            _dir: dir,
            classpath,
        })
    }

    /// `java CuratorLock ARGS...` with piped stdin and stdout.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("java");
        command
            .args(["-Xmx256m", "-cp"])
            .arg(&self.classpath)
            .arg("CuratorLock")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        command
    }
}

fn on_path(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| dir.join(tool).is_file())
}
