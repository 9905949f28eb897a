//! What `status`, `list` and `break` print for people: short lines and a small table.

use std::time::{SystemTime, UNIX_EPOCH};

use distlock::{Leader, LockName, LockStatus};

/// The first second humantime cannot format (year 10000).
const YEAR_10000: u64 = 253_402_300_800;

/// `time` in RFC 3339, UTC, to the millisecond; `None` outside the years 1970 to 9999.
pub(crate) fn rfc3339(time: SystemTime) -> Option<String> {
    let since_epoch = time.duration_since(UNIX_EPOCH).ok()?;
    (since_epoch.as_secs() < YEAR_10000).then(|| humantime::format_rfc3339_millis(time).to_string())
}

/// The holders of `name` as a table, or a line saying it is free.
pub(crate) fn status(name: &LockName, status: &LockStatus) -> String {
    if status.holders.is_empty() {
        return match status.waiters {
            0 => format!("{name} is free: nobody holds it or waits for it"),
            waiters => format!("{name} is free; {waiters} waiting to acquire it"),
        };
    }
    let mut rows = vec![[
        "OWNER".to_owned(),
        "TOKEN".to_owned(),
        "GRANTED (UTC)".to_owned(),
        "LEASE LEFT".to_owned(),
    ]];
    for holder in &status.holders {
        rows.push([
            holder.owner_label.clone(),
            holder.fencing_token.to_string(),
            holder.granted_at.and_then(rfc3339).unwrap_or_else(unknown),
            holder
                .lease_left
                .map(|left| format!("{:.1}s", left.as_secs_f64()))
                .unwrap_or_else(unknown),
        ]);
    }
    let widths: Vec<usize> = (0..4)
        .map(|column| {
            let width = rows.iter().map(|row| row[column].chars().count()).max();
            width.unwrap_or_default()
        })
        .collect();
    let mut out = format!("{name} is held; {} waiting", status.waiters);
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push('\n');
        out.push_str(cells.join("  ").trim_end());
    }
    out
}

/// What the server does not say.
fn unknown() -> String {
    "-".to_owned()
}

/// The held names, one a line.
pub(crate) fn list(names: &[LockName]) -> String {
    let names: Vec<&str> = names.iter().map(LockName::as_str).collect();
    names.join("\n")
}

/// Why `list` printed nothing.
pub(crate) fn none_held(prefix: &str) -> String {
    if prefix.is_empty() {
        "no lock is held".to_owned()
    } else {
        format!("no held lock's name starts with {prefix:?}")
    }
}

/// Who leads: `NAME: led by VALUE (epoch E, term T)`.
pub(crate) fn leader(name: &LockName, leader: &Leader) -> String {
    let term = leader.term.map_or_else(unknown, |term| term.to_string());
    format!(
        "{name}: led by {} (epoch {}, term {term})",
        leader.value, leader.epoch
    )
}

/// What `break` did when the token held the lock.
pub(crate) fn broken(name: &LockName, fencing_token: u64) -> String {
    format!(
        "released {name} (fencing token {fencing_token}); its holder learns it lost the lock \
         at its next renewal"
    )
}

/// What `break` says when the token no longer held the lock.
pub(crate) fn not_broken(name: &LockName, fencing_token: u64) -> String {
    format!("fencing token {fencing_token} does not hold {name}; nothing was changed")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use distlock::HolderInfo;

    use super::*;

    #[test]
    fn a_status_table_lines_up_and_a_free_lock_says_so() {
        let name = LockName::new("jobs/nightly").expect("name");
        let granted = UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        let holder = HolderInfo::new("web-1:4242", 17)
            .granted_at(granted)
            .lease_left(Duration::from_millis(28_460));
        let shown = status(&name, &LockStatus::new(vec![holder], 2));
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[0], "jobs/nightly is held; 2 waiting");
        assert_eq!(
            lines[1],
            "OWNER       TOKEN  GRANTED (UTC)             LEASE LEFT"
        );
        assert_eq!(
            lines[2],
            "web-1:4242  17     2023-11-14T22:13:20.123Z  28.5s"
        );
        let free = status(&name, &LockStatus::default());
        assert_eq!(
            free,
            "jobs/nightly is free: nobody holds it or waits for it"
        );
    }

    #[test]
    fn times_humantime_cannot_format_are_unknown() {
        assert_eq!(rfc3339(UNIX_EPOCH - Duration::from_secs(1)), None);
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(YEAR_10000)), None);
        assert_eq!(
            rfc3339(UNIX_EPOCH).as_deref(),
            Some("1970-01-01T00:00:00.000Z")
        );
    }
}
