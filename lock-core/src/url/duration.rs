//! The one duration syntax of URL parameters: a whole number and a unit.

use std::time::Duration;

/// Parses `250ms`, `5s`, `2m` or `1h`. A bare number is refused: its unit would be a guess.
///
/// The error text says what is wrong and shows the right form; callers prefix the parameter.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    if number.is_empty() {
        return Err(format!("{text:?} is not a duration: write 250ms, 5s or 2m"));
    }
    let Ok(number) = number.parse::<u64>() else {
        return Err(format!("{text:?} is too large a number"));
    };
    match unit {
        "ms" => Ok(Duration::from_millis(number)),
        "s" => Ok(Duration::from_secs(number)),
        "m" => Ok(Duration::from_secs(number.saturating_mul(60))),
        "h" => Ok(Duration::from_secs(number.saturating_mul(3600))),
        "" => Err(format!(
            "{text:?} has no unit: write {number}ms, {number}s or {number}m"
        )),
        _ => Err(format!(
            "{text:?} has an unknown unit {unit:?}: write 250ms, 5s, 2m or 1h"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_required_and_read() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        let huge = format!("{}ms", u64::MAX);
        assert_eq!(parse_duration(&huge), Ok(Duration::from_millis(u64::MAX)));
        let bare = parse_duration("250").expect_err("bare number accepted");
        assert!(bare.contains("no unit") && bare.contains("250ms"), "{bare}");
        for bad in ["", "ms", "5 s", "5sec", "-1s", "1.5s"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} accepted");
        }
    }
}
