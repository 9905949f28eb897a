//! Options for one acquisition.

use std::sync::Arc;
use std::time::Duration;

use crate::owner_label::{default_owner_label, validate_owner_label};
use crate::{Backoff, Error, Result};

/// How one acquisition behaves: how long to wait, the lease, renewal, polling backoff, and how
/// far the local clock is trusted.
///
/// Built with [`AcquireOptions::builder`]; [`AcquireOptions::default`] waits without limit,
/// holds a 30 s lease and renews it while the guard lives. A service's defaults (see
/// [`DistributedLock::default_options`](crate::DistributedLock::default_options)) may differ.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use lock_core::AcquireOptions;
///
/// let options = AcquireOptions::builder()
///     .wait(Duration::from_secs(5))
///     .lease(Duration::from_secs(10))
///     .build()?;
/// assert_eq!(options.wait, Some(Duration::from_secs(5)));
/// # Ok::<(), lock_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct AcquireOptions {
    /// How long to wait while the lock is held elsewhere: `None` (or `Some(Duration::MAX)`)
    /// waits without limit, `Some(Duration::ZERO)` tries once.
    pub wait: Option<Duration>,
    /// The lease: how long the backend keeps the lock for a holder that stops renewing (a crashed
    /// process), from [`MIN_LEASE`](Self::MIN_LEASE) to [`MAX_LEASE`](Self::MAX_LEASE).
    /// ZooKeeper ignores it: its lease is the session.
    pub lease: Duration,
    /// Whether a background task renews the lease at about a third of its length while the
    /// guard lives. Without renewal the hold ends, and the lost signal fires, when the lease runs
    /// out.
    pub auto_renew: bool,
    /// Delays between attempts for backends that poll while waiting.
    pub backoff: Backoff,
    /// The share of every lease assumed lost to clock drift: the holder treats its lease as
    /// ending `lease * clock_drift` before the server does, so its lost signal fires first even
    /// if its clock runs that much slower than the server's. Default 0.01 (1 %, far beyond what
    /// NTP-disciplined clocks drift); at most 0.5. The lease is also cut by the
    /// [signal allowance](Self::signal_allowance), which no setting removes.
    pub clock_drift: f64,
    /// The share of the lease below which a hold whose renewals are failing or late is
    /// [at risk](crate::LockGuard::at_risk): time to stop work that must not outlive the hold.
    /// Default 1/3; more than 0 and at most 0.5.
    pub at_risk: f64,
    /// The longest a hold may last, renewals included: renewal stops short of it and the lost
    /// signal fires on schedule (the hold is then released), so a stuck holder cannot keep
    /// the lock for ever. `None` (or any value above [`MAX_LEASE`](Self::MAX_LEASE)): no bound.
    pub max_hold: Option<Duration>,
    /// Who holds, for operators: stored with the hold and shown by
    /// [`inspect`](crate::DistributedLock::inspect). Defaults to `HOST:PID`; at most 128
    /// printable bytes.
    pub owner_label: Arc<str>,
}

impl AcquireOptions {
    /// The shortest accepted lease.
    pub const MIN_LEASE: Duration = Duration::from_millis(100);

    /// The longest accepted lease: a crashed holder blocks others for at most this long.
    pub const MAX_LEASE: Duration = Duration::from_secs(24 * 3600);

    /// The default lease.
    pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

    /// The most of a lease set aside, beside the clock drift share, for the holder's own
    /// delays (see [`signal_allowance`](Self::signal_allowance)).
    pub const SIGNAL_ALLOWANCE: Duration = Duration::from_millis(50);

    /// The default [`clock_drift`](Self::clock_drift).
    pub const DEFAULT_CLOCK_DRIFT: f64 = 0.01;

    /// The default [`at_risk`](Self::at_risk).
    pub const DEFAULT_AT_RISK: f64 = 1.0 / 3.0;

    /// A builder starting from the defaults.
    pub fn builder() -> AcquireOptionsBuilder {
        AcquireOptionsBuilder {
            options: Self::default(),
        }
    }

    /// A builder starting from these options: to change a few of a service's
    /// [defaults](crate::DistributedLock::default_options) (its URL's `lease`, `clock_drift`,
    /// ...) rather than starting from the library's.
    pub fn to_builder(&self) -> AcquireOptionsBuilder {
        AcquireOptionsBuilder {
            options: self.clone(),
        }
    }

    /// These options with `wait` replaced.
    #[must_use]
    pub fn with_wait(mut self, wait: Option<Duration>) -> Self {
        self.wait = wait;
        self
    }

    /// Checks the invariants the builder enforces, for options changed after building.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) naming the bad option.
    pub fn validate(&self) -> Result<()> {
        if self.lease < Self::MIN_LEASE {
            return Err(Error::invalid_input(format!(
                "lease {:?} is shorter than the minimum {:?}: renewals could not keep up",
                self.lease,
                Self::MIN_LEASE
            )));
        }
        if self.lease > Self::MAX_LEASE {
            return Err(Error::invalid_input(format!(
                "lease {:?} is longer than the maximum {:?}: a crashed holder would block \
                 the lock that long; hold longer by keeping a shorter lease renewed",
                self.lease,
                Self::MAX_LEASE
            )));
        }
        if !(0.0..=0.5).contains(&self.clock_drift) {
            return Err(Error::invalid_input(format!(
                "clock drift {} is not a share from 0 to 0.5 of the lease",
                self.clock_drift
            )));
        }
        if !(self.at_risk > 0.0 && self.at_risk <= 0.5) {
            return Err(Error::invalid_input(format!(
                "at-risk share {} is not more than 0 and at most 0.5 of the lease",
                self.at_risk
            )));
        }
        if let Some(max_hold) = self.max_hold
            && max_hold < Self::MIN_LEASE
        {
            return Err(Error::invalid_input(format!(
                "max_hold {max_hold:?} is shorter than the minimum lease {:?}",
                Self::MIN_LEASE
            )));
        }
        validate_owner_label(&self.owner_label)
    }

    /// The bound on a hold's age, if any: a `max_hold` beyond [`MAX_LEASE`](Self::MAX_LEASE)
    /// is no bound, as a wait of `Duration::MAX` is no limit.
    pub fn hold_limit(&self) -> Option<Duration> {
        self.max_hold.filter(|limit| *limit <= Self::MAX_LEASE)
    }

    /// The time set aside in a lease of `length` for the holder's own delays: a timer that
    /// fires late, a process held off the CPU by a loaded host. The lost signal fires this
    /// much earlier, beside the clock drift margin, so a holder delayed that long still learns
    /// of the loss before the server can grant the lock elsewhere. It is
    /// [`SIGNAL_ALLOWANCE`](Self::SIGNAL_ALLOWANCE), or a twentieth of a lease shorter than 1 s,
    /// whose drift share alone would be a few milliseconds.
    pub fn signal_allowance(length: Duration) -> Duration {
        Self::SIGNAL_ALLOWANCE.min(length / 20)
    }

    /// The time assumed lost to clock drift in a lease of `length`.
    pub fn drift_margin(&self, length: Duration) -> Duration {
        length.mul_f64(self.clock_drift)
    }
}

impl Default for AcquireOptions {
    fn default() -> Self {
        Self {
            wait: None,
            lease: Self::DEFAULT_LEASE,
            auto_renew: true,
            backoff: Backoff::default(),
            clock_drift: Self::DEFAULT_CLOCK_DRIFT,
            at_risk: Self::DEFAULT_AT_RISK,
            max_hold: None,
            owner_label: default_owner_label(),
        }
    }
}

/// Builds [`AcquireOptions`], validating them in [`build`](AcquireOptionsBuilder::build).
#[derive(Clone, Debug)]
pub struct AcquireOptionsBuilder {
    options: AcquireOptions,
}

impl AcquireOptionsBuilder {
    /// Waits at most `wait` while the lock is held elsewhere (`Duration::ZERO`: try once).
    #[must_use]
    pub fn wait(mut self, wait: Duration) -> Self {
        self.options.wait = Some(wait);
        self
    }

    /// Waits without limit (the default).
    #[must_use]
    pub fn wait_forever(mut self) -> Self {
        self.options.wait = None;
        self
    }

    /// Sets the lease length.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.options.lease = lease;
        self
    }

    /// Turns background lease renewal on (the default) or off.
    #[must_use]
    pub fn auto_renew(mut self, auto_renew: bool) -> Self {
        self.options.auto_renew = auto_renew;
        self
    }

    /// Sets the polling backoff.
    #[must_use]
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.options.backoff = backoff;
        self
    }

    /// Sets [`clock_drift`](AcquireOptions::clock_drift).
    #[must_use]
    pub fn clock_drift(mut self, share: f64) -> Self {
        self.options.clock_drift = share;
        self
    }

    /// Sets [`at_risk`](AcquireOptions::at_risk).
    #[must_use]
    pub fn at_risk(mut self, share: f64) -> Self {
        self.options.at_risk = share;
        self
    }

    /// Sets [`max_hold`](AcquireOptions::max_hold).
    #[must_use]
    pub fn max_hold(mut self, max_hold: Duration) -> Self {
        self.options.max_hold = Some(max_hold);
        self
    }

    /// Sets [`owner_label`](AcquireOptions::owner_label).
    #[must_use]
    pub fn owner_label(mut self, label: impl Into<Arc<str>>) -> Self {
        self.options.owner_label = label.into();
        self
    }

    /// Validates and returns the options.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) if the lease is outside
    /// [`MIN_LEASE`](AcquireOptions::MIN_LEASE)..=[`MAX_LEASE`](AcquireOptions::MAX_LEASE),
    /// a share is out of range, `max_hold` is below the minimum lease or the owner label is
    /// empty, too long or not printable.
    pub fn build(self) -> Result<AcquireOptions> {
        self.options.validate()?;
        Ok(self.options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn builder_sets_every_field() {
        let backoff = Backoff::exponential(Duration::from_millis(1), Duration::from_millis(2));
        let backoff = backoff.expect("valid backoff");
        let options = AcquireOptions::builder()
            .wait(Duration::from_secs(3))
            .lease(Duration::from_secs(4))
            .auto_renew(false)
            .backoff(backoff)
            .build()
            .expect("valid options");
        assert_eq!(options.wait, Some(Duration::from_secs(3)));
        assert_eq!(options.lease, Duration::from_secs(4));
        assert!(!options.auto_renew);
        assert_eq!(options.backoff, backoff);
    }

    #[test]
    fn out_of_range_options_are_invalid_input_naming_the_option() {
        let cases = [
            (
                AcquireOptions::builder().lease(Duration::from_millis(5)),
                "lease",
            ),
            (AcquireOptions::builder().lease(Duration::MAX), "maximum"),
            (AcquireOptions::builder().clock_drift(0.6), "clock drift"),
            (
                AcquireOptions::builder().clock_drift(f64::NAN),
                "clock drift",
            ),
            (AcquireOptions::builder().at_risk(0.0), "at-risk"),
            (
                AcquireOptions::builder().max_hold(Duration::from_millis(1)),
                "max_hold",
            ),
            (AcquireOptions::builder().owner_label(""), "owner label"),
            (AcquireOptions::builder().owner_label("a\nb"), "owner label"),
        ];
        for (builder, word) in cases {
            let error = builder.build().expect_err("accepted");
            assert_eq!(error.kind(), ErrorKind::InvalidInput);
            assert!(error.to_string().contains(word), "{error}");
        }
        let forever = AcquireOptions::builder().wait(Duration::MAX).build();
        assert!(forever.is_ok(), "a wait of Duration::MAX means forever");
    }
}
