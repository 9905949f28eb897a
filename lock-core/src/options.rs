//! Options for one acquisition.

use std::time::Duration;

use crate::{Backoff, Error, Result};

/// How one acquisition behaves: how long to wait, the lease, renewal and polling backoff.
///
/// Built with [`AcquireOptions::builder`]; [`AcquireOptions::default`] waits without limit,
/// holds a 30 s lease and renews it while the guard lives.
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
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AcquireOptions {
    /// How long to wait while the lock is held elsewhere: `None` waits without limit,
    /// `Some(Duration::ZERO)` tries once.
    pub wait: Option<Duration>,
    /// The lease: how long the backend keeps the lock for a holder that stops renewing (a crashed
    /// process). ZooKeeper ignores it: its lease is the session.
    pub lease: Duration,
    /// Whether a background task renews the lease at about a third of its length while the
    /// guard lives. Without renewal the hold ends, and the lost signal fires, when the lease runs
    /// out.
    pub auto_renew: bool,
    /// Delays between attempts for backends that poll while waiting.
    pub backoff: Backoff,
}

impl AcquireOptions {
    /// The shortest accepted lease.
    pub const MIN_LEASE: Duration = Duration::from_millis(100);

    /// The default lease.
    pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

    /// A builder starting from the defaults.
    pub fn builder() -> AcquireOptionsBuilder {
        AcquireOptionsBuilder {
            options: Self::default(),
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
        Ok(())
    }
}

impl Default for AcquireOptions {
    fn default() -> Self {
        Self {
            wait: None,
            lease: Self::DEFAULT_LEASE,
            auto_renew: true,
            backoff: Backoff::default(),
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

    /// Validates and returns the options.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) if the lease is shorter than
    /// [`AcquireOptions::MIN_LEASE`].
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
    fn too_short_lease_is_invalid_input_naming_the_option() {
        let error = AcquireOptions::builder()
            .lease(Duration::from_millis(5))
            .build();
        let error = error.expect_err("5 ms lease accepted");
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(error.to_string().contains("lease"), "{error}");
    }
}
