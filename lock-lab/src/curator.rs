//! Java programs using Apache Curator, compiled at run time against Debian's jars, for
//! interoperability tests and benchmarks beside the JVM's reference lock recipe.

use std::path::Path;
use std::process::Command;

use lock_testkit::ServerError;
use lock_testkit::servers::find_binary;

/// Where Debian's `libcurator-recipes-java` and `zookeeper` packages put their jars.
const JAVA_LIBS: &str = "/usr/share/java";

/// Jars a Curator client needs (those present are used).
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

/// One compiled Java program and its classpath; the classes live as long as this value.
#[derive(Debug)]
pub struct CuratorProgram {
    _classes: tempfile::TempDir,
    classpath: String,
    main: String,
}

impl CuratorProgram {
    /// Compiles `source`, a Java file whose public class is named like the file, against
    /// Curator and ZooKeeper.
    ///
    /// # Errors
    ///
    /// [`ServerError::Missing`] when `java`, `javac` or Curator's jars are not installed (run
    /// `scripts/install-servers`); [`ServerError::Failed`] when `javac` fails.
    pub fn compile(source: &Path) -> Result<Self, ServerError> {
        let missing = |binary: &str| ServerError::Missing {
            server: "curator",
            binary: binary.to_owned(),
        };
        for tool in ["java", "javac"] {
            find_binary(tool, &[]).ok_or_else(|| missing(tool))?;
        }
        let base = Path::new(JAVA_LIBS);
        if !base.join("curator-recipes.jar").is_file() {
            return Err(missing("/usr/share/java/curator-recipes.jar"));
        }
        let failed = |reason: String| ServerError::Failed {
            server: "curator",
            reason,
        };
        let main = source
            .file_stem()
            .and_then(|stem| stem.to_str())
            .ok_or_else(|| failed(format!("{} has no class name", source.display())))?
            .to_owned();
        let jars: Vec<String> = JARS
            .iter()
            .map(|jar| base.join(jar))
            .filter(|jar| jar.is_file())
            .map(|jar| jar.display().to_string())
            .collect();
        let classes = tempfile::tempdir().map_err(|e| failed(format!("temp dir: {e}")))?;
        let status = Command::new("javac")
            .args(["-nowarn", "-d"])
            .arg(classes.path())
            .arg("-cp")
            .arg(jars.join(":"))
            .arg(source)
            .status()
            .map_err(|e| failed(format!("javac: {e}")))?;
        if !status.success() {
            return Err(failed(format!("javac failed on {}", source.display())));
        }
        let classpath = format!("{}:{}", classes.path().display(), jars.join(":"));
        Ok(Self {
            _classes: classes,
            classpath,
            main,
        })
    }

    /// `java -Xmx<heap> -cp <classpath> <Main>`: add the program's arguments and run it.
    pub fn command(&self, heap: &str) -> Command {
        let mut command = Command::new("java");
        command
            .arg(format!("-Xmx{heap}"))
            .arg("-cp")
            .arg(&self.classpath)
            .arg(&self.main);
        command
    }
}
