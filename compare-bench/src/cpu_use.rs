//! The CPU time a latency round costs: its client's (this process, where every system's client
//! runs) and its server's (the server process with every process it started). Beside a floor
//! doing the same server work, it shows whether a gap is the server's work or the client's.

use crate::cpu::{process_cpu, tree_cpu};
use crate::record::Record;

/// CPU seconds, a reading or the difference of two; `None` where there is nothing to read: a
/// server this run did not spawn, or one running inside the client (SQLite, memory).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuUse {
    /// This process's user + system time.
    pub client: Option<f64>,
    /// The server's user + system time, its descendants' included.
    pub server: Option<f64>,
}

impl CpuUse {
    /// The readings now, of this process and of the server process `server`.
    pub fn now(server: Option<u32>) -> Self {
        Self {
            client: process_cpu().map(|cpu| cpu.as_secs_f64()),
            server: server.and_then(tree_cpu).map(|cpu| cpu.as_secs_f64()),
        }
    }

    /// What was used between the reading `before` and this one.
    #[must_use]
    pub fn since(self, before: Self) -> Self {
        let minus = |now: Option<f64>, then: Option<f64>| Some(now? - then?);
        Self {
            client: minus(self.client, before.client),
            server: minus(self.server, before.server),
        }
    }

    /// Adds a round's use to the rounds before it (`into` is `None` before the first): a side
    /// that one round could not read stays unread.
    pub fn merge(into: &mut Option<Self>, round: Self) {
        let plus = |a: Option<f64>, b: Option<f64>| Some(a? + b?);
        *into = Some(match *into {
            None => round,
            Some(total) => Self {
                client: plus(total.client, round.client),
                server: plus(total.server, round.server),
            },
        });
    }

    /// `record` with the microseconds of CPU per pair of each side that was read, over `pairs`.
    pub fn per_pair(self, record: Record, pairs: usize) -> Record {
        let per_pair = |seconds: f64| (seconds * 1e6 / pairs.max(1) as f64 * 10.0).round() / 10.0;
        let record = match self.client {
            Some(client) => record.with("client_cpu_us_per_pair", per_pair(client)),
            None => record,
        };
        match self.server {
            Some(server) => record.with("server_cpu_us_per_pair", per_pair(server)),
            None => record,
        }
    }
}
