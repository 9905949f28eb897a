//! Counting the commands a server ran, from `INFO commandstats`.

use std::collections::BTreeMap;

use lock_testkit::servers::RedisServer;

/// `cmdstat_<name>:calls=N,...` lines of `INFO commandstats`: calls per command name.
pub fn command_calls(server: &RedisServer) -> BTreeMap<String, u64> {
    let info = server
        .command("INFO commandstats")
        .expect("INFO commandstats");
    info.lines()
        .filter_map(|line| {
            let (name, rest) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest
                .strip_prefix("calls=")?
                .split(',')
                .next()?
                .parse()
                .ok()?;
            Some((name.to_owned(), calls))
        })
        .collect()
}
