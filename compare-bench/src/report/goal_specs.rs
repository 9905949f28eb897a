//! The performance goals as data: which rows each compares, the ratio it asks for, and the floor
//! that explains a miss. They match rows the way `bench-goals.py` does, by backend, scenario,
//! client count and words of the system name, so the names of the systems are part of the
//! contract (`create+delete floor`, `GET_LOCK`, ...).

/// Which rows of one backend a goal reads.
#[derive(Debug, Clone, Copy)]
pub struct Pick {
    /// The scenario id.
    pub scenario: &'static str,
    /// The client count.
    pub clients: usize,
    /// The system name contains one of these (lowercase).
    pub words: &'static [&'static str],
    /// For the many-locks scenario: the number of held locks (0: any row).
    pub held: u64,
}

/// What a goal compares.
#[derive(Debug, Clone, Copy)]
pub enum Measure {
    /// Acquire+release pairs per second.
    PairsPerSecond,
    /// p99 of the acquire wait.
    P99Wait,
    /// Grants that went to another client than the last holder, per grant.
    HandoffShare,
    /// A scenario-specific number of the record.
    Number(&'static str),
}

/// One goal.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The backend of every row it reads.
    pub backend: &'static str,
    /// What it asks, in words.
    pub goal: &'static str,
    /// distlock's row.
    pub ours: Pick,
    /// The row it is compared with; `None`: [`Spec::want`] bounds distlock's own figure.
    pub theirs: Option<Pick>,
    /// The figure compared.
    pub measure: Measure,
    /// The ratio (or figure) asked for.
    pub want: f64,
    /// `true`: at least [`Spec::want`]; `false`: at most.
    pub at_least: bool,
    /// The floor that explains a miss: the same server work from the simplest client.
    pub floor: Option<Pick>,
    /// The bare wake-up the design's handoff rests on, with no lock work around it (one
    /// `pg_notify` or `PUBLISH` per handoff to a client that listens): when even it falls short
    /// of the goal, no handoff woken that way reaches the goal.
    pub mechanism: Option<Pick>,
    /// The least lock that hands out fencing tokens the way distlock does on this server (one
    /// write of the lock row per grant, or one script that counts the fence beside its `SET`),
    /// woken the same way: when it falls short of the goal, no lock that fences this way
    /// reaches it; when it reaches it, distlock's further work is the gap.
    pub fenced: Option<Pick>,
}

impl Spec {
    /// This goal, with `mechanism` as the bare wake-up that bounds its design.
    const fn woken_by(mut self, mechanism: Pick) -> Self {
        self.mechanism = Some(mechanism);
        self
    }

    /// This goal, with `fenced` as the least lock that fences the way distlock does.
    const fn fenced_by(mut self, fenced: Pick) -> Self {
        self.fenced = Some(fenced);
        self
    }
}

const fn row(scenario: &'static str, clients: usize, words: &'static [&'static str]) -> Pick {
    Pick {
        scenario,
        clients,
        words,
        held: 0,
    }
}

const DISTLOCK: &[&str] = &["distlock"];
const OURS_1: Pick = row("latency", 1, DISTLOCK);
const OURS_32: Pick = row("contention", 32, DISTLOCK);

const REDIS_FLOOR: Pick = row("latency", 1, &["set nx"]);
/// The least Redis lock that fences the way distlock does: it serves waiters in arrival order
/// (a grant reads the queue, a release too) and floors each fence at the server clock, so that
/// fences keep rising across a failover. The least fenced locks that do neither (`SET NX PX`
/// and an `INCR`) are reported beside it, for what dropping that safety would buy.
const REDIS_FENCED_FLOOR: Pick = row("latency", 1, &["fifo-fenced floor"]);
/// distlock's own Redis scripts from a bare client: the server work of distlock's pair.
const REDIS_SCRIPT_FLOOR: Pick = row("latency", 1, &["acquire.lua"]);
/// distlock's own Redis scripts from 32 bare clients, each waiting on an inbox of its own: the
/// server work of distlock's queue and handoff.
const REDIS_SCRIPT_QUEUE_FLOOR: Pick = row("contention", 32, &["acquire.lua"]);
const ZK_FLOOR: Pick = row("latency", 1, &["create+delete floor"]);
/// distlock's uncontended pair from a bare session: a create and a delete of the node distlock
/// writes (sequential, `_c_<uuid>-` name, owner label), the server work of distlock's pair.
const ZK_NODE_FLOOR: Pick = row("latency", 1, &["labelled node floor"]);
/// The same recipe from 32 bare sessions, each watching the node ahead of its own: the server
/// work of a queue's handoffs (a delete, its watch event, the next create and listing).
const ZK_RECIPE_QUEUE_FLOOR: Pick = row("contention", 32, &["recipe floor"]);
/// distlock's own PostgreSQL statements from a bare client: the server work of distlock's pair.
/// Its release was `release.sql` in runs before `release_alone.sql` existed, and its first try
/// `acquire_first.sql` in runs before `acquire_free.sql` did, `acquire_free.sql` in runs before
/// `acquire_row.sql` did, and `acquire_row.sql` in runs before `take_row.sql` did.
const PG_STATEMENT_FLOOR: Pick = row("latency", 1, PG_STATEMENTS);
/// The least fenced PostgreSQL lock: the `INSERT`/`DELETE` floor whose insert also takes the
/// next value of a sequence as the fence.
const PG_FENCED_FLOOR: Pick = row("latency", 1, &["least-fenced floor"]);
/// The same statements from 32 bare clients that wait in line as distlock's acquisitions do (a
/// waiter entry with grant terms, a listener that hears the grant): the server work of
/// distlock's contended grants, served in arrival order.
const PG_STATEMENT_LINE_FLOOR: Pick = row("contention", 32, PG_STATEMENTS);
/// The PostgreSQL statement floor's name, in this run or an earlier one.
const PG_STATEMENTS: &[&str] = &[
    "take_row.sql/release",
    "acquire_row.sql/release",
    "acquire_free.sql/release",
    "acquire_first.sql/release",
];
/// distlock's own MySQL/MariaDB statements from a bare client: the server work of its pair.
/// The PostgreSQL floor has the same file names: the backend tells them apart.
const MYSQL_STATEMENT_FLOOR: Pick = row("latency", 1, &["release.sql floor"]);
/// The same statements from 32 bare clients that wait in line as distlock's acquisitions do
/// (a waiter entry, then a parked connection that the release interrupts): the server work of
/// distlock's contended grants, served in arrival order.
const MYSQL_STATEMENT_LINE_FLOOR: Pick = row("contention", 32, &["release.sql floor"]);
/// One `KILL QUERY` per handoff to 32 clients that each park a connection of their own.
const MYSQL_KILL_FLOOR: Pick = row("contention", 32, &["kill query handoff floor"]);
/// The same, with one `UPDATE` of the lock row per grant: the least a fenced table lock does.
const MYSQL_FENCED_FLOOR: Pick = row("contention", 32, &["least-fenced floor"]);
/// That floor with one client: one `UPDATE` to take the lock row, one to free it.
const MYSQL_FENCED_PAIR_FLOOR: Pick = row("latency", 1, &["least-fenced floor"]);
/// One `pg_notify` per handoff to 32 clients that each listen on a connection of their own.
const PG_NOTIFY_FLOOR: Pick = row("contention", 32, &["pg_notify handoff floor"]);
/// One `PUBLISH` per handoff to 32 clients that each subscribe to a channel of their own.
const REDIS_PUBLISH_FLOOR: Pick = row("contention", 32, &["publish handoff floor"]);

/// The many-locks row of 100,000 held locks.
pub const HELD_100K: Pick = Pick {
    scenario: "many",
    clients: 1,
    words: DISTLOCK,
    held: 100_000,
};

const fn versus(
    backend: &'static str,
    goal: &'static str,
    (ours, theirs): (Pick, Pick),
    measure: Measure,
    want: f64,
    floor: Pick,
) -> Spec {
    Spec {
        backend,
        goal,
        ours,
        theirs: Some(theirs),
        measure,
        want,
        at_least: !matches!(measure, Measure::P99Wait),
        floor: Some(floor),
        mechanism: None,
        fenced: None,
    }
}

const fn bound(
    backend: &'static str,
    goal: &'static str,
    ours: Pick,
    measure: Measure,
    want: f64,
    at_least: bool,
) -> Spec {
    Spec {
        backend,
        goal,
        ours,
        theirs: None,
        measure,
        want,
        at_least,
        floor: None,
        mechanism: None,
        fenced: None,
    }
}

const PAIRS: Measure = Measure::PairsPerSecond;
const MEMORY: Measure = Measure::Number("client_bytes_per_lock");
const RENEWALS: Measure = Measure::Number("round_trips_per_renewal_period");

/// Every goal, in report order.
pub const SPECS: [Spec; 21] = [
    versus(
        "redis",
        "Redis uncontended >= 1.0x the hand-written SET NX PX + EVALSHA",
        (OURS_1, REDIS_FLOOR),
        PAIRS,
        1.0,
        REDIS_SCRIPT_FLOOR,
    )
    .fenced_by(REDIS_FENCED_FLOOR),
    versus(
        "redis",
        "Redis uncontended >= 1.15x rslock",
        (OURS_1, row("latency", 1, &["rslock"])),
        PAIRS,
        1.15,
        REDIS_SCRIPT_FLOOR,
    )
    .fenced_by(REDIS_FENCED_FLOOR),
    versus(
        "redis",
        "Redis 32 clients (FIFO) >= 0.8x rslock's pairs/s",
        (OURS_32, row("contention", 32, &["rslock"])),
        PAIRS,
        0.8,
        REDIS_SCRIPT_QUEUE_FLOOR,
    )
    .woken_by(REDIS_PUBLISH_FLOOR),
    versus(
        "redis",
        "Redis 32 clients p99 wait <= 0.1x rslock's",
        (OURS_32, row("contention", 32, &["rslock"])),
        Measure::P99Wait,
        0.1,
        REDIS_SCRIPT_QUEUE_FLOOR,
    ),
    bound(
        "redis",
        "Redis 32 clients: handoffs >= 95 % of grants (strict FIFO)",
        OURS_32,
        Measure::HandoffShare,
        0.95,
        true,
    ),
    versus(
        "zookeeper",
        "ZooKeeper uncontended >= 0.9x the create+delete floor",
        (OURS_1, ZK_FLOOR),
        PAIRS,
        0.9,
        // Uncontended, a lone hold's next create skips the listing: a create and a delete of
        // distlock's node.
        ZK_NODE_FLOOR,
    ),
    versus(
        "zookeeper",
        "ZooKeeper uncontended >= 1.3x Curator",
        (OURS_1, row("latency", 1, &["curator"])),
        PAIRS,
        1.3,
        ZK_NODE_FLOOR,
    ),
    versus(
        "zookeeper",
        "ZooKeeper 32 clients >= 1.5x Curator",
        (OURS_32, row("contention", 32, &["curator"])),
        PAIRS,
        1.5,
        ZK_RECIPE_QUEUE_FLOOR,
    ),
    versus(
        "postgres",
        "PostgreSQL uncontended >= 1.0x the hand-written row lock",
        (OURS_1, row("latency", 1, &["insert", "row"])),
        PAIRS,
        1.0,
        PG_STATEMENT_FLOOR,
    )
    .fenced_by(PG_FENCED_FLOOR),
    versus(
        "postgres",
        "PostgreSQL 32 clients (FIFO) >= 3x the polling row lock",
        (OURS_32, row("contention", 32, &["insert", "row"])),
        PAIRS,
        3.0,
        PG_STATEMENT_LINE_FLOOR,
    )
    .woken_by(PG_NOTIFY_FLOOR),
    versus(
        "postgres",
        "PostgreSQL 32 clients (FIFO) >= 0.5x pg_advisory_lock",
        (OURS_32, row("contention", 32, &["advisory"])),
        PAIRS,
        0.5,
        PG_STATEMENT_LINE_FLOOR,
    )
    .woken_by(PG_NOTIFY_FLOOR),
    bound(
        "postgres",
        "PostgreSQL 32 clients: handoffs >= 95 % of grants (strict FIFO)",
        OURS_32,
        Measure::HandoffShare,
        0.95,
        true,
    ),
    versus(
        "mysql",
        "MySQL/MariaDB uncontended >= 0.5x GET_LOCK",
        (OURS_1, row("latency", 1, &["get_lock"])),
        PAIRS,
        0.5,
        MYSQL_STATEMENT_FLOOR,
    )
    .fenced_by(MYSQL_FENCED_PAIR_FLOOR),
    versus(
        "mysql",
        "MySQL/MariaDB 32 clients >= 0.5x GET_LOCK",
        (OURS_32, row("contention", 32, &["get_lock"])),
        PAIRS,
        0.5,
        MYSQL_STATEMENT_LINE_FLOOR,
    )
    .woken_by(MYSQL_KILL_FLOOR)
    .fenced_by(MYSQL_FENCED_FLOOR),
    bound(
        "redis",
        "Redis, 100,000 held locks: client memory <= 1 KiB per lock",
        HELD_100K,
        MEMORY,
        1024.0,
        false,
    ),
    bound(
        "zookeeper",
        "ZooKeeper, 100,000 held locks: client memory <= 1 KiB per lock",
        HELD_100K,
        MEMORY,
        1024.0,
        false,
    ),
    bound(
        "postgres",
        "PostgreSQL, 100,000 held locks: client memory <= 1 KiB per lock",
        HELD_100K,
        MEMORY,
        1024.0,
        false,
    ),
    bound(
        "mysql",
        "MySQL/MariaDB, 100,000 held locks: client memory <= 1 KiB per lock",
        HELD_100K,
        MEMORY,
        1024.0,
        false,
    ),
    bound(
        "redis",
        "Redis, 100,000 held locks: <= 1 round trip per renewal period",
        HELD_100K,
        RENEWALS,
        1.0,
        false,
    ),
    bound(
        "postgres",
        "PostgreSQL, 100,000 held locks: <= 1 round trip per renewal period",
        HELD_100K,
        RENEWALS,
        1.0,
        false,
    ),
    bound(
        "mysql",
        "MySQL/MariaDB, 100,000 held locks: <= 1 round trip per renewal period",
        HELD_100K,
        RENEWALS,
        1.0,
        false,
    ),
];
