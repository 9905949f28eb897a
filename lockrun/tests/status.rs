//! `lockrun status` and `lockrun list` against locks held by another lockrun and by this
//! process, on one SQLite file.

use std::time::{Duration, SystemTime};

use distlock::DistributedLockExt;
use lock_testkit::scaled;
use serde_json::json;

mod support;

use support::admin::{Holder, describe, parsed, stdout};
use support::{admin_command, lockrun_admin, signal, sqlite_url};

#[test]
fn status_shows_the_holding_lockruns_label_and_token_then_a_free_lock() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let mut holder = Holder::start(&url, "admin/status", "nightly on test-host", dir.path());
    let token = holder.token;

    let text = lockrun_admin(&["status", "--url", &url, "admin/status"]);
    assert_eq!(text.status.code(), Some(0), "{}", describe(&text));
    let shown = stdout(&text);
    assert!(shown.contains("admin/status is held; 0 waiting"), "{shown}");
    let row = shown.lines().nth(2).unwrap_or_default();
    assert!(row.starts_with("nightly on test-host"), "{shown}");
    assert!(
        row.split_whitespace().any(|cell| cell == token.to_string()),
        "{shown}"
    );

    // The URL from the environment, as the run mode takes it.
    let as_json = admin_command(&["status", "--json", "admin/status"])
        .env("LOCKRUN_URL", &url)
        .output()
        .expect("run lockrun");
    assert_eq!(as_json.status.code(), Some(0), "{}", describe(&as_json));
    let status = parsed(&as_json);
    assert_eq!(status["name"], "admin/status", "{status}");
    assert_eq!(status["waiters"], 0, "{status}");
    let holders = status["holders"].as_array().expect("holders");
    assert_eq!(holders.len(), 1, "{status}");
    assert_eq!(
        holders[0]["owner_label"], "nightly on test-host",
        "{status}"
    );
    assert_eq!(holders[0]["fencing_token"], token, "{status}");
    let lease_left = holders[0]["lease_left_ms"].as_u64().expect("lease_left_ms");
    assert!(lease_left > 0 && lease_left <= 3000, "{status}");
    let granted = holders[0]["granted_at"].as_str().expect("granted_at");
    assert!(granted.ends_with('Z'), "not UTC: {granted}");
    let granted = humantime::parse_rfc3339(granted).expect("RFC 3339");
    let age = SystemTime::now()
        .duration_since(granted)
        .unwrap_or_default();
    assert!(age < scaled(Duration::from_secs(60)), "granted {age:?} ago");

    // The command ends; its lockrun releases the lock.
    signal(&holder.pid, "-KILL");
    let _ = holder.wait();
    let free = lockrun_admin(&["status", "--url", &url, "admin/status"]);
    assert_eq!(free.status.code(), Some(0), "{}", describe(&free));
    assert!(stdout(&free).contains("is free"), "{}", describe(&free));
    let free = lockrun_admin(&["status", "--url", &url, "--json", "admin/status"]);
    assert_eq!(
        parsed(&free),
        json!({"name": "admin/status", "holders": [], "waiters": 0})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_shows_the_held_names_under_a_prefix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let locks = distlock::connect(&url).await.expect("connect");
    let released = locks.acquire("jobs/released").await.expect("hold");
    released.release().await.expect("release");
    let mut held = Vec::new();
    for name in ["jobs/b/c", "jobs/a", "other/x"] {
        held.push(locks.acquire(name).await.expect("hold"));
    }
    let list = |args: &[&str]| {
        let args: Vec<String> = ["list", "--url", url.as_str()]
            .iter()
            .chain(args)
            .map(|arg| (*arg).to_owned())
            .collect();
        async move {
            let run = move || lockrun_admin(&args.iter().map(String::as_str).collect::<Vec<_>>());
            tokio::task::spawn_blocking(run).await.expect("join")
        }
    };

    let text = list(&["jobs/"]).await;
    assert_eq!(text.status.code(), Some(0), "{}", describe(&text));
    assert_eq!(stdout(&text), "jobs/a\njobs/b/c\n");
    let as_json = list(&["--json", "jobs/"]).await;
    assert_eq!(parsed(&as_json), json!(["jobs/a", "jobs/b/c"]));
    let everything = list(&["--json"]).await;
    assert_eq!(
        parsed(&everything),
        json!(["jobs/a", "jobs/b/c", "other/x"])
    );
    let none = list(&["nothing/"]).await;
    assert_eq!(none.status.code(), Some(0), "{}", describe(&none));
    assert!(none.stdout.is_empty(), "{}", describe(&none));
    assert_eq!(parsed(&list(&["--json", "nothing/"]).await), json!([]));

    for guard in held {
        guard.release().await.expect("release");
    }
}
