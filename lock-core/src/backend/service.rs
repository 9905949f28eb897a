//! The options every lock service shares, from its builder or its URL.

use std::time::Duration;

use crate::url::LockUrl;
use crate::{AcquireOptions, Result};

/// Settings every backend's builder takes, by method (see [`ServiceBuilder`]) or as URL
/// parameters of the same name: `connect_timeout`, `operation_timeout`, and the defaults of
/// acquisitions made with [`DistributedLockExt`](crate::DistributedLockExt)'s conveniences:
/// `lease`, `wait`, `clock_drift`, `at_risk`, `max_hold`, `owner_label`. A builder method
/// overrides the URL.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServiceOptions {
    connect_timeout: Option<Duration>,
    operation_timeout: Option<Duration>,
    lease: Option<Duration>,
    wait: Option<Duration>,
    clock_drift: Option<f64>,
    at_risk: Option<f64>,
    max_hold: Option<Duration>,
    owner_label: Option<String>,
}

/// [`ServiceOptions`] resolved against a URL and the defaults.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Service {
    /// How long opening a connection or session may take.
    pub connect_timeout: Duration,
    /// How long one request may take once connected.
    pub operation_timeout: Duration,
    /// The options acquisitions start from.
    pub defaults: AcquireOptions,
}

impl ServiceOptions {
    /// The URL parameters these options read.
    pub const KEYS: [&'static str; 8] = [
        "connect_timeout",
        "operation_timeout",
        "lease",
        "wait",
        "clock_drift",
        "at_risk",
        "max_hold",
        "owner_label",
    ];

    /// The default connect and operation timeout.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

    /// The longest connect or operation timeout: a longer one (up to `Duration::MAX`) means
    /// "no limit" and is taken as this day, so that no driver's millisecond arithmetic
    /// overflows.
    pub const MAX_TIMEOUT: Duration = AcquireOptions::MAX_LEASE;

    /// Takes these options' parameters from `url`, fills in what the builder did not set and
    /// the defaults, and validates the result.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a malformed value, a
    /// zero timeout or acquisition options out of range. A timeout above
    /// [`MAX_TIMEOUT`](Self::MAX_TIMEOUT) is not an error: it is capped.
    pub fn resolve(&self, url: &mut LockUrl) -> Result<Service> {
        let connect_timeout = self
            .connect_timeout
            .or(url.take_duration("connect_timeout")?);
        let operation_timeout = self
            .operation_timeout
            .or(url.take_duration("operation_timeout")?);
        let mut defaults = AcquireOptions::default();
        if let Some(lease) = self.lease.or(url.take_duration("lease")?) {
            defaults.lease = lease;
        }
        if let Some(wait) = self.wait.or(url.take_duration("wait")?) {
            defaults.wait = Some(wait);
        }
        if let Some(drift) = self
            .clock_drift
            .or(url.take_parsed("clock_drift", "a share such as 0.01")?)
        {
            defaults.clock_drift = drift;
        }
        if let Some(share) = self
            .at_risk
            .or(url.take_parsed("at_risk", "a share such as 0.33")?)
        {
            defaults.at_risk = share;
        }
        if let Some(max_hold) = self.max_hold.or(url.take_duration("max_hold")?) {
            defaults.max_hold = Some(max_hold);
        }
        if let Some(label) = self.owner_label.clone().or(url.take("owner_label")) {
            defaults.owner_label = label.into();
        }
        defaults
            .validate()
            .map_err(|error| url.invalid(error.message()))?;
        let timeout = |what: &str, value: Option<Duration>| match value {
            Some(zero) if zero.is_zero() => Err(url.invalid(format!(
                "{what} is zero: every operation would fail at once"
            ))),
            value => Ok(value
                .unwrap_or(Self::DEFAULT_TIMEOUT)
                .min(Self::MAX_TIMEOUT)),
        };
        Ok(Service {
            connect_timeout: timeout("connect_timeout", connect_timeout)?,
            operation_timeout: timeout("operation_timeout", operation_timeout)?,
            defaults,
        })
    }
}

/// The builder methods every backend's builder shares: they set [`ServiceOptions`].
///
/// ```
/// use std::time::Duration;
/// use lock_core::ServiceBuilder;
/// # use lock_core::backend::ServiceOptions;
/// # #[derive(Default)] struct MyBuilder(ServiceOptions);
/// # impl ServiceBuilder for MyBuilder {
/// #     fn service_options(&mut self) -> &mut ServiceOptions { &mut self.0 }
/// # }
/// let builder = MyBuilder::default()
///     .connect_timeout(Duration::from_secs(2))
///     .lease(Duration::from_secs(10));
/// ```
pub trait ServiceBuilder: Sized {
    /// The options this builder keeps.
    fn service_options(&mut self) -> &mut ServiceOptions;

    /// How long opening a connection or session may take before `Unavailable` (default 5 s;
    /// anything above a day means no limit and is capped at a day).
    #[must_use]
    fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.service_options().connect_timeout = Some(timeout);
        self
    }

    /// How long one request may take before `Unavailable` (default 5 s; anything above a day
    /// means no limit and is capped at a day).
    #[must_use]
    fn operation_timeout(mut self, timeout: Duration) -> Self {
        self.service_options().operation_timeout = Some(timeout);
        self
    }

    /// The lease of acquisitions that do not set one (default 30 s).
    #[must_use]
    fn lease(mut self, lease: Duration) -> Self {
        self.service_options().lease = Some(lease);
        self
    }

    /// How long acquisitions that do not say wait (default: without limit).
    #[must_use]
    fn wait(mut self, wait: Duration) -> Self {
        self.service_options().wait = Some(wait);
        self
    }

    /// The share of each lease assumed lost to clock drift (default 0.01; see
    /// [`AcquireOptions::clock_drift`]).
    #[must_use]
    fn clock_drift(mut self, share: f64) -> Self {
        self.service_options().clock_drift = Some(share);
        self
    }

    /// The share of the lease below which a hold is at risk (default 1/3; see
    /// [`AcquireOptions::at_risk`]).
    #[must_use]
    fn at_risk(mut self, share: f64) -> Self {
        self.service_options().at_risk = Some(share);
        self
    }

    /// The longest any hold may last, renewals included (default: no bound; see
    /// [`AcquireOptions::max_hold`]).
    #[must_use]
    fn max_hold(mut self, max_hold: Duration) -> Self {
        self.service_options().max_hold = Some(max_hold);
        self
    }

    /// The label holds carry for operators (default `HOST:PID`; see
    /// [`AcquireOptions::owner_label`]).
    #[must_use]
    fn owner_label(mut self, label: impl Into<String>) -> Self {
        self.service_options().owner_label = Some(label.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Builder(ServiceOptions);

    impl ServiceBuilder for Builder {
        fn service_options(&mut self) -> &mut ServiceOptions {
            &mut self.0
        }
    }

    #[test]
    fn builder_overrides_url_which_overrides_defaults() {
        let mut url = LockUrl::parse("x://h?connect_timeout=2s&lease=10s&wait=1s&at_risk=0.25")
            .expect("valid");
        let options = Builder(ServiceOptions::default())
            .connect_timeout(Duration::from_millis(250))
            .0;
        let service = options.resolve(&mut url).expect("valid");
        url.finish(&ServiceOptions::KEYS).expect("all taken");
        assert_eq!(service.connect_timeout, Duration::from_millis(250));
        assert_eq!(service.operation_timeout, ServiceOptions::DEFAULT_TIMEOUT);
        assert_eq!(service.defaults.lease, Duration::from_secs(10));
        assert_eq!(service.defaults.wait, Some(Duration::from_secs(1)));
        assert!((service.defaults.at_risk - 0.25).abs() < f64::EPSILON);
    }

    #[test]
    fn bad_values_are_invalid_input_about_the_url() {
        for query in [
            "connect_timeout=0s",
            "lease=1ms",
            &format!("lease={}ms", u64::MAX),
            "clock_drift=2",
            "wait=5",
        ] {
            let mut url = LockUrl::parse(&format!("x://h?{query}")).expect("valid");
            let error = ServiceOptions::default()
                .resolve(&mut url)
                .expect_err(query);
            assert!(
                error
                    .to_string()
                    .starts_with("invalid input: invalid x URL"),
                "{error}"
            );
        }
        let mut url = LockUrl::parse(&format!("x://h?wait={}ms", u64::MAX)).expect("valid");
        let service = ServiceOptions::default()
            .resolve(&mut url)
            .expect("a huge wait is forever");
        assert_eq!(service.defaults.wait, Some(Duration::from_millis(u64::MAX)));
    }

    #[test]
    fn timeouts_beyond_a_day_are_capped_at_a_day() {
        let huge = format!("{}ms", u64::MAX);
        let query = format!("connect_timeout={huge}&operation_timeout=25h");
        let mut url = LockUrl::parse(&format!("x://h?{query}")).expect("valid");
        let service = ServiceOptions::default().resolve(&mut url).expect("valid");
        assert_eq!(service.connect_timeout, ServiceOptions::MAX_TIMEOUT);
        assert_eq!(service.operation_timeout, ServiceOptions::MAX_TIMEOUT);
        let options = Builder(ServiceOptions::default())
            .operation_timeout(Duration::MAX)
            .0;
        let mut url = LockUrl::parse("x://h").expect("valid");
        let service = options.resolve(&mut url).expect("valid");
        assert_eq!(service.operation_timeout, ServiceOptions::MAX_TIMEOUT);
    }
}
