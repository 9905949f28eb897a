//! What a backend can do, as plain flags.

/// What a backend guarantees. Docs print these; the conformance suite gates cases on them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Capabilities {
    /// Grants carry a fencing token that strictly increases per lock name.
    pub fencing: bool,
    /// The guard's lost signal fires when the backend stops vouching for the hold.
    pub lost_detection: bool,
    /// The hold is a lease that a background task renews, and `extend` works.
    pub lease_renewal: bool,
    /// Waiters are granted the lock in arrival order.
    pub fair_fifo: bool,
    /// The server wakes waiters on release (no polling).
    pub server_side_wait: bool,
    /// The backend itself lets one holder re-acquire a lock it holds. Independent of this,
    /// nested `with_lock` on one name in one task always re-enters.
    pub reentrant: bool,
    /// Counting semaphores: [`Claim::Permit`](crate::Claim::Permit).
    pub semaphore: bool,
    /// Read-write locks: [`Claim::Read`](crate::Claim::Read) and
    /// [`Claim::Write`](crate::Claim::Write).
    pub rw_lock: bool,
    /// Leader elections: [`DistributedLock::campaign_with`](crate::DistributedLock::campaign_with)
    /// and what [`ElectionExt`](crate::ElectionExt) builds on it.
    pub election: bool,
}

impl Capabilities {
    /// No capability at all; add them with the `with_*` methods.
    pub const NONE: Self = Self {
        fencing: false,
        lost_detection: false,
        lease_renewal: false,
        fair_fifo: false,
        server_side_wait: false,
        reentrant: false,
        semaphore: false,
        rw_lock: false,
        election: false,
    };

    /// Adds [`fencing`](Self::fencing).
    #[must_use]
    pub const fn with_fencing(mut self) -> Self {
        self.fencing = true;
        self
    }

    /// Adds [`lost_detection`](Self::lost_detection).
    #[must_use]
    pub const fn with_lost_detection(mut self) -> Self {
        self.lost_detection = true;
        self
    }

    /// Adds [`lease_renewal`](Self::lease_renewal).
    #[must_use]
    pub const fn with_lease_renewal(mut self) -> Self {
        self.lease_renewal = true;
        self
    }

    /// Adds [`fair_fifo`](Self::fair_fifo).
    #[must_use]
    pub const fn with_fair_fifo(mut self) -> Self {
        self.fair_fifo = true;
        self
    }

    /// Adds [`server_side_wait`](Self::server_side_wait).
    #[must_use]
    pub const fn with_server_side_wait(mut self) -> Self {
        self.server_side_wait = true;
        self
    }

    /// Adds [`reentrant`](Self::reentrant).
    #[must_use]
    pub const fn with_reentrant(mut self) -> Self {
        self.reentrant = true;
        self
    }

    /// Adds [`semaphore`](Self::semaphore).
    #[must_use]
    pub const fn with_semaphore(mut self) -> Self {
        self.semaphore = true;
        self
    }

    /// Adds [`rw_lock`](Self::rw_lock).
    #[must_use]
    pub const fn with_rw_lock(mut self) -> Self {
        self.rw_lock = true;
        self
    }

    /// Adds [`election`](Self::election).
    #[must_use]
    pub const fn with_election(mut self) -> Self {
        self.election = true;
        self
    }
}
