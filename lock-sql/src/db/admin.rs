//! What operators read and do, per dialect behind one call: inspect a lock, list held names,
//! force a hold to end by its fencing token.

use std::time::{Duration, SystemTime};

use lock_core::{HolderInfo, LockStatus};

use super::{Db, fence};
use crate::error::SqlError;

/// The escape character of the LIKE patterns [`like_prefix`] makes.
pub(crate) const LIKE_ESCAPE: char = '!';

impl Db {
    /// The live hold on `name`, if any, and how many live waiter entries it has.
    pub(crate) async fn inspect(&self, name: &str) -> Result<LockStatus, SqlError> {
        dispatch!(self, db => db.inspect(name).await)
    }

    /// The held names matching the LIKE `pattern` (see [`like_prefix`]), in no given order.
    /// Where LIKE ignores case (SQLite) it may match more than the prefix: callers check it.
    pub(crate) async fn list(&self, pattern: &str) -> Result<Vec<String>, SqlError> {
        dispatch!(self, db => db.list(pattern).await)
    }

    /// Ends the live hold on `name` if its fencing counter is `fence`; `true` when it did.
    /// PostgreSQL notifies waiters in the same statement; the caller wakes local ones.
    pub(crate) async fn force_release(&self, name: &str, fence: i64) -> Result<bool, SqlError> {
        dispatch!(self, db => db.force_release(name, fence).await)
    }
}

/// A LIKE pattern, with [`LIKE_ESCAPE`] as its escape character, that matches the strings
/// starting with `prefix`.
pub(crate) fn like_prefix(prefix: &str) -> String {
    let mut pattern = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '%' | '_') || c == LIKE_ESCAPE {
            pattern.push(LIKE_ESCAPE);
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// The live holder an inspect row shows: its label (`None` for a hold taken by a version that
/// did not record one, shown as empty), fencing counter, grant time and lease left, both
/// counted in `unit`s by the database clock, the grant time since 1970.
pub(crate) fn holder(
    label: Option<String>,
    counter: i64,
    granted: Option<i64>,
    left: Option<i64>,
    unit: Duration,
) -> Result<HolderInfo, SqlError> {
    let mut holder = HolderInfo::new(label.unwrap_or_default(), fence(counter)?);
    if let Some(since_1970) = granted.and_then(|units| since(units, unit)) {
        holder = holder.granted_at(SystemTime::UNIX_EPOCH + since_1970);
    }
    if let Some(left) = left.and_then(|units| since(units, unit)) {
        holder = holder.lease_left(left);
    }
    Ok(holder)
}

/// A waiter count read from the database.
pub(crate) fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// `units` of `unit` as a duration; `None` when negative.
fn since(units: i64, unit: Duration) -> Option<Duration> {
    let units = u64::try_from(units).ok()?;
    let nanos = u128::from(units).checked_mul(unit.as_nanos())?;
    let secs = u64::try_from(nanos / 1_000_000_000).ok()?;
    let subsec = u32::try_from(nanos % 1_000_000_000).ok()?;
    Some(Duration::new(secs, subsec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_escape_like_wildcards_and_the_escape_character() {
        assert_eq!(like_prefix(""), "%");
        assert_eq!(like_prefix("jobs/"), "jobs/%");
        assert_eq!(like_prefix("a%b_c!d"), "a!%b!_c!!d%");
        assert_eq!(like_prefix("ünï\\"), "ünï\\%");
    }

    #[test]
    fn holders_convert_database_units() {
        let micro = Duration::from_micros(1);
        let shown = holder(Some("web:1".into()), 7, Some(1_500_000), Some(2_000), micro);
        let shown = shown.expect("valid row");
        assert_eq!(shown.owner_label, "web:1");
        assert_eq!(shown.fencing_token, 7);
        let granted = SystemTime::UNIX_EPOCH + Duration::from_millis(1500);
        assert_eq!(shown.granted_at, Some(granted));
        assert_eq!(shown.lease_left, Some(Duration::from_millis(2)));
        let old = holder(None, 1, None, Some(5), Duration::from_millis(1)).expect("valid row");
        assert_eq!((old.owner_label.as_str(), old.granted_at), ("", None));
        assert!(holder(None, -1, None, None, micro).is_err());
        assert_eq!(count(-3), 0);
    }
}
