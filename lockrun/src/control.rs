//! The line protocol between lockrun and its supervisor, over a Unix socket, and the shared
//! monotonic clock that lets both name the same instant.

use std::time::Duration;

use rustix::time::{ClockId, clock_gettime};

/// What lockrun tells the supervisor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// Stop the command group at this `CLOCK_MONOTONIC` instant (nanoseconds) unless a later
    /// order moves it: the hold's stop deadline (see `crate::deadline`), moved with every
    /// renewal.
    StopAt(u64),
    /// Stop the command group now.
    Stop,
}

/// What the supervisor tells lockrun.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Report {
    /// The command runs, as process (and process group) `pid`.
    Started(i32),
    /// The command exited by itself with this lockrun status.
    Exited(u8),
    /// The supervisor stopped the command group (an order, a deadline, or lockrun's death).
    Stopped,
}

impl Order {
    pub(crate) fn line(self) -> String {
        match self {
            Order::StopAt(at) => format!("stop-at {at}\n"),
            Order::Stop => "stop\n".to_owned(),
        }
    }

    pub(crate) fn parse(line: &str) -> Option<Self> {
        match line.trim().split_once(' ') {
            Some(("stop-at", at)) => at.parse().ok().map(Order::StopAt),
            None if line.trim() == "stop" => Some(Order::Stop),
            _ => None,
        }
    }
}

impl Report {
    pub(crate) fn line(self) -> String {
        match self {
            Report::Started(pid) => format!("started {pid}\n"),
            Report::Exited(status) => format!("exited {status}\n"),
            Report::Stopped => "stopped\n".to_owned(),
        }
    }

    pub(crate) fn parse(line: &str) -> Option<Self> {
        match line.trim().split_once(' ') {
            Some(("started", pid)) => pid.parse().ok().map(Report::Started),
            Some(("exited", status)) => status.parse().ok().map(Report::Exited),
            None if line.trim() == "stopped" => Some(Report::Stopped),
            _ => None,
        }
    }
}

/// `CLOCK_MONOTONIC` now, in nanoseconds: the clock tokio's `Instant` reads, shared by every
/// process on the machine.
pub(crate) fn monotonic_ns() -> u64 {
    let now = clock_gettime(ClockId::Monotonic);
    u64::try_from(now.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(now.tv_nsec).unwrap_or(0)
}

/// The monotonic instant `instant` names, in nanoseconds.
pub(crate) fn to_monotonic_ns(instant: tokio::time::Instant) -> u64 {
    let now = tokio::time::Instant::now();
    let base = monotonic_ns();
    if instant >= now {
        base.saturating_add(u64::try_from((instant - now).as_nanos()).unwrap_or(u64::MAX))
    } else {
        base.saturating_sub(u64::try_from((now - instant).as_nanos()).unwrap_or(u64::MAX))
    }
}

/// How long from now until monotonic instant `at_ns` (zero if past).
pub(crate) fn until_monotonic_ns(at_ns: u64) -> Duration {
    Duration::from_nanos(at_ns.saturating_sub(monotonic_ns()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        for order in [Order::StopAt(42), Order::Stop] {
            assert_eq!(Order::parse(&order.line()), Some(order));
        }
        for report in [Report::Started(7), Report::Exited(3), Report::Stopped] {
            assert_eq!(Report::parse(&report.line()), Some(report));
        }
        assert_eq!(Order::parse("nonsense"), None);
    }

    #[tokio::test]
    async fn instants_map_to_the_shared_clock() {
        let later = tokio::time::Instant::now() + Duration::from_secs(1);
        let delay = until_monotonic_ns(to_monotonic_ns(later));
        assert!(
            delay > Duration::from_millis(990) && delay <= Duration::from_secs(1),
            "{delay:?}"
        );
    }
}
