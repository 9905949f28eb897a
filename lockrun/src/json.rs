//! What `status`, `list`, `leader` and `break` print with `--json`: one JSON value, with field names
//! scripts can rely on.

use distlock::{HolderInfo, Leader, LockName, LockStatus};
use serde_json::{Value, json};

use crate::text::rfc3339;

/// `{"name", "holders": [{"owner_label", "fencing_token", "granted_at", "lease_left_ms"}],
/// "waiters"}`; `granted_at` is RFC 3339 UTC, and it and `lease_left_ms` are `null` where the
/// server does not say.
pub(crate) fn status(name: &LockName, status: &LockStatus) -> String {
    let holders: Vec<Value> = status.holders.iter().map(holder).collect();
    json!({
        "name": name.as_str(),
        "holders": holders,
        "waiters": status.waiters,
    })
    .to_string()
}

fn holder(holder: &HolderInfo) -> Value {
    json!({
        "owner_label": holder.owner_label,
        "fencing_token": holder.fencing_token,
        "granted_at": holder.granted_at.and_then(rfc3339),
        "lease_left_ms": holder
            .lease_left
            .map(|left| u64::try_from(left.as_millis()).unwrap_or(u64::MAX)),
    })
}

/// The held names, as an array of strings.
pub(crate) fn list(names: &[LockName]) -> String {
    let names: Vec<&str> = names.iter().map(LockName::as_str).collect();
    json!(names).to_string()
}

/// `{"name", "leader": {"value", "epoch", "term"}}`; `leader` is `null` while nobody leads,
/// `term` `null` where the store does not count terms.
pub(crate) fn leader(name: &LockName, leader: Option<&Leader>) -> String {
    let leader = leader.map(|leader| {
        json!({
            "value": leader.value,
            "epoch": leader.epoch,
            "term": leader.term,
        })
    });
    json!({ "name": name.as_str(), "leader": leader }).to_string()
}

/// `{"name", "fencing_token", "released"}`.
pub(crate) fn broken(name: &LockName, fencing_token: u64, released: bool) -> String {
    json!({
        "name": name.as_str(),
        "fencing_token": fencing_token,
        "released": released,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn fields_keep_their_names_and_unknowns_are_null() {
        let name = LockName::new("a \"quoted\" name").expect("name");
        let known = HolderInfo::new("host:1", 5)
            .granted_at(UNIX_EPOCH + Duration::from_secs(60))
            .lease_left(Duration::from_micros(2_500_900));
        let unknown = HolderInfo::new("zk-holder", 6);
        let shown = status(&name, &LockStatus::new(vec![known, unknown], 3));
        let parsed: Value = serde_json::from_str(&shown).expect("valid JSON");
        assert_eq!(
            parsed,
            json!({
                "name": "a \"quoted\" name",
                "holders": [
                    {"owner_label": "host:1", "fencing_token": 5,
                     "granted_at": "1970-01-01T00:01:00.000Z", "lease_left_ms": 2500},
                    {"owner_label": "zk-holder", "fencing_token": 6,
                     "granted_at": null, "lease_left_ms": null},
                ],
                "waiters": 3,
            })
        );
        assert_eq!(
            list(std::slice::from_ref(&name)),
            r#"["a \"quoted\" name"]"#
        );
        let shown: Value = serde_json::from_str(&broken(&name, 9, false)).expect("valid JSON");
        assert_eq!(
            shown,
            json!({"name": "a \"quoted\" name", "fencing_token": 9, "released": false})
        );
    }
}
