//! How long a park asks the server to wait, on servers that wait fractions of a second
//! (MariaDB) and on those that wait whole seconds (MySQL).

use std::time::Duration;

/// Added to a park's time before a server that waits whole seconds rounds it down: a park of
/// [`PARK_AT_MOST`](super::PARK_AT_MOST) less the moments spent getting to it still waits a whole second.
const WHOLE_SECOND_SLACK: Duration = Duration::from_millis(20);

/// The seconds a park of `sleep` asks the server to wait: `sleep` itself where `GET_LOCK`
/// waits fractions of a second (MariaDB), else whole seconds, rounded down. MySQL rounds a
/// fraction to the nearest second, so a park of 0.4 s would return at once (and the waiter
/// park again and again until its time is up) and one of 0.6 s wait past its time. `None`
/// when `whole` leaves nothing to wait: the waiter waits on the client instead.
pub(crate) fn park_seconds(sleep: Duration, whole: bool) -> Option<f64> {
    if !whole {
        return Some(sleep.as_secs_f64());
    }
    let seconds = (sleep + WHOLE_SECOND_SLACK).as_secs();
    (seconds > 0).then_some(seconds as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_second_parks_round_down_and_never_past_their_time() {
        let ms = Duration::from_millis;
        assert_eq!(park_seconds(ms(400), false), Some(0.4));
        assert_eq!(park_seconds(ms(400), true), None);
        assert_eq!(park_seconds(ms(600), true), None);
        assert_eq!(park_seconds(ms(995), true), Some(1.0));
        assert_eq!(park_seconds(ms(1000), true), Some(1.0));
        assert_eq!(park_seconds(ms(1900), true), Some(1.0));
    }
}
