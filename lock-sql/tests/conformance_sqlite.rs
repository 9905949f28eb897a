//! The conformance suite and the SQL cases on a SQLite file.

mod support;

#[path = "sqlite/handoff.rs"]
mod handoff;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use lock_core::{DistributedLockExt, ErrorKind};
use lock_testkit::ConformanceTarget;
use support::SqlTarget;

/// One database file for the whole test binary, in a directory removed when the process exits
/// normally (statics are never dropped, so the path is kept in a leaked `TempDir`).
fn db_path() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("locks.db");
        std::mem::forget(dir);
        path
    })
}

fn url() -> String {
    format!("sqlite://{}", db_path().display())
}

async fn sqlite() -> Option<Arc<dyn ConformanceTarget>> {
    Some(SqlTarget::shared(url()))
}

lock_testkit::conformance_tests!(sqlite());

support::sql_cases!(Some(SqlTarget::plain(url())));

/// `sqlite::memory:` works, each service gets a private database, and a missing file is
/// created.
#[tokio::test]
async fn memory_and_new_files_work() {
    let memory = lock_sql::SqlLock::builder("sqlite::memory:")
        .connect()
        .await
        .expect("memory");
    let other = lock_sql::SqlLock::builder("sqlite::memory:")
        .connect()
        .await
        .expect("memory");
    let held = memory.try_acquire("job").await.expect("try").expect("free");
    let elsewhere = other.try_acquire("job").await.expect("try");
    assert!(
        elsewhere.is_some(),
        "two in-memory services share a database"
    );
    held.release().await.expect("release");
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("fresh.db");
    let lock = lock_sql::SqlLock::builder(&format!("sqlite://{}", file.display()))
        .connect()
        .await
        .expect("new file");
    assert!(file.is_file(), "the database file was not created");
    lock.try_acquire("job")
        .await
        .expect("try")
        .expect("free")
        .release()
        .await
        .expect("release");
}

/// Unknown schemes, bad parameters and a pool larger than one for `sqlite::memory:` fail with
/// `InvalidInput` before any I/O.
#[tokio::test]
async fn bad_urls_are_invalid_input() {
    for url in [
        "oracle://h/db",
        "sqlite:locks.db?pool_size=zero",
        "sqlite:locks.db?lock_unknown=1",
        "sqlite::memory:?pool_size=2",
        "postgres://u:secret@127.0.0.1:1/db?table=1bad",
        "mysql://u@127.0.0.1:1/db?connect_timeout=0s",
    ] {
        let error = lock_sql::SqlLock::builder(url)
            .connect()
            .await
            .expect_err(url);
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{url}: {error}");
        assert!(!error.to_string().contains("secret"), "{error}");
    }
}

/// Debug output never shows the password.
#[tokio::test]
async fn debug_output_hides_passwords() {
    let builder =
        lock_sql::SqlLock::builder("postgres://user:hunter2@127.0.0.1:1/db?password=also");
    let shown = format!("{builder:?}");
    assert!(
        !shown.contains("hunter2") && !shown.contains("also"),
        "{shown}"
    );
    let lock = builder.connect_lazy().expect("lazy");
    let shown = format!("{lock:?}");
    assert!(
        !shown.contains("hunter2") && !shown.contains("also"),
        "{shown}"
    );
    assert!(shown.contains("user"), "{shown}");
}
