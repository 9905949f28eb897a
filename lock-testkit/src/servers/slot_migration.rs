//! Moving one hash slot, keys and all, from one cluster primary to another: the steps
//! `redis-cli --cluster reshard` takes, for a single slot.

use std::time::{Duration, Instant};

use super::resp::{Reply, call};

/// How long the keys of one slot may take to move.
const LIMIT: Duration = Duration::from_secs(30);

/// A primary taking part in a migration.
#[derive(Debug)]
pub(crate) struct Endpoint {
    /// Its client port.
    pub(crate) port: u16,
    /// Its node id (`CLUSTER MYID`).
    pub(crate) id: String,
}

/// Moves `slot` from `source` to `target`: marks it importing on the target and migrating on
/// the source, `MIGRATE`s its keys 100 at a time until none is left, then assigns it to the
/// target on the target, the source and each of `others` (the remaining primaries' ports), in
/// that order. Replicas learn the new owner from their primaries. Returns how many keys were
/// moved.
///
/// # Errors
///
/// The failed step's command and its error, or keys still in the slot after 30 s.
pub(crate) fn migrate(
    slot: u16,
    source: &Endpoint,
    target: &Endpoint,
    others: &[u16],
) -> Result<usize, String> {
    let slot = slot.to_string();
    run(
        target.port,
        &["CLUSTER", "SETSLOT", &slot, "IMPORTING", &source.id],
    )?;
    run(
        source.port,
        &["CLUSTER", "SETSLOT", &slot, "MIGRATING", &target.id],
    )?;
    let moved = move_keys(&slot, source.port, target.port)?;
    for port in [target.port, source.port].iter().chain(others) {
        run(*port, &["CLUSTER", "SETSLOT", &slot, "NODE", &target.id])?;
    }
    Ok(moved)
}

/// `MIGRATE`s the keys of `slot` from `source` to `target` until `source` lists none.
fn move_keys(slot: &str, source: u16, target: u16) -> Result<usize, String> {
    let deadline = Instant::now() + LIMIT;
    let target = target.to_string();
    let mut moved = 0;
    loop {
        let listed = run(source, &["CLUSTER", "GETKEYSINSLOT", slot, "100"])?;
        let keys: Vec<&[u8]> = listed
            .items()
            .iter()
            .filter_map(|key| match key {
                Reply::Bulk(Some(key)) => Some(key.as_slice()),
                _ => None,
            })
            .collect();
        if keys.is_empty() {
            return Ok(moved);
        }
        if Instant::now() > deadline {
            return Err(format!(
                "slot {slot} still holds {} keys after {LIMIT:?}",
                keys.len()
            ));
        }
        let mut args: Vec<&[u8]> = ["MIGRATE", "127.0.0.1", &target, "", "0", "5000", "KEYS"]
            .iter()
            .map(|arg| arg.as_bytes())
            .collect();
        args.extend(&keys);
        // `+NOKEY` when every key expired in between: nothing to move, not a failure.
        run(source, &args)?;
        moved += keys.len();
    }
}

/// Sends `args` to `port`, failing with the command and its error.
fn run<A: AsRef<[u8]>>(port: u16, args: &[A]) -> Result<Reply, String> {
    let shown = || {
        let words: Vec<String> = args
            .iter()
            .take(5)
            .map(|arg| String::from_utf8_lossy(arg.as_ref()).into_owned())
            .collect();
        format!("{} (port {port})", words.join(" "))
    };
    call(port, args)
        .map_err(|error| format!("{}: {error}", shown()))?
        .ok()
        .map_err(|error| format!("{}: {error}", shown()))
}
