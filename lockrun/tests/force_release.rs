//! `lockrun break`: a stale token changes nothing; the current one frees the lock and the
//! holding lockrun stops its command.

use std::time::{Duration, Instant};

use lock_testkit::scaled;
use serde_json::json;

mod support;

use support::admin::{Holder, describe, parsed, stdout};
use support::{alive, lockrun, lockrun_admin, signal, sqlite_url};

#[test]
fn break_with_a_stale_token_changes_nothing_and_with_the_current_one_stops_the_holder() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sqlite_url(dir.path());
    let earlier = lockrun(
        &url,
        "admin/break",
        &[],
        &["sh", "-c", "echo $LOCK_FENCING_TOKEN"],
    )
    .output()
    .expect("run lockrun");
    assert_eq!(earlier.status.code(), Some(0), "{}", describe(&earlier));
    let stale = stdout(&earlier).trim().to_owned();
    let mut holder = Holder::start(&url, "admin/break", "to be broken", dir.path());
    let (token, pid) = (holder.token, holder.pid.clone());

    let refused = lockrun_admin(&["break", "--url", &url, "admin/break", &stale]);
    assert_eq!(refused.status.code(), Some(3), "{}", describe(&refused));
    assert!(refused.stdout.is_empty(), "{}", describe(&refused));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("nothing was changed"),
        "{}",
        describe(&refused)
    );
    let refused = lockrun_admin(&["break", "--url", &url, "--json", "admin/break", &stale]);
    assert_eq!(refused.status.code(), Some(3), "{}", describe(&refused));
    let stale: u64 = stale.parse().expect("a token");
    assert_eq!(
        parsed(&refused),
        json!({"name": "admin/break", "fencing_token": stale, "released": false})
    );
    let status = lockrun_admin(&["status", "--url", &url, "--json", "admin/break"]);
    assert_eq!(parsed(&status)["holders"][0]["fencing_token"], token);
    assert!(alive(&pid), "a stale token stopped the holder's command");

    let broken = lockrun_admin(&[
        "break",
        "--url",
        &url,
        "--json",
        "admin/break",
        &token.to_string(),
    ]);
    assert_eq!(broken.status.code(), Some(0), "{}", describe(&broken));
    assert_eq!(
        parsed(&broken),
        json!({"name": "admin/break", "fencing_token": token, "released": true})
    );
    // The holder notices at its next renewal (every second with a 3 s lease).
    let broken_at = Instant::now();
    let holder = holder.wait();
    let command_alive = alive(&pid);
    signal(&pid, "-KILL");
    assert_eq!(holder.status.code(), Some(76), "{}", describe(&holder));
    assert!(
        !command_alive,
        "the holder's command outlived the broken hold"
    );
    assert!(
        broken_at.elapsed() < scaled(Duration::from_secs(10)),
        "the holder took {:?} to stop",
        broken_at.elapsed()
    );
    let next = lockrun(&url, "admin/break", &["--wait", "5s"], &["true"])
        .output()
        .expect("run lockrun");
    assert_eq!(next.status.code(), Some(0), "{}", describe(&next));
}
