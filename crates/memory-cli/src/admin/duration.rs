//! Durations written as `30d`, `12h`, `90m`, `45s`, `250ms`, `2w` or combined (`1d12h`), for
//! the flags of every command: memory-core's one grammar with the program's messages.

use std::time::Duration;

use memory_core::options::DurationError;

/// Parses a duration given to a `memory` flag, in the project's one grammar
/// ([`memory_core::options::parse_duration`]: `250ms`, `30s`, `90m`, `12h`, `30d`, `2w`,
/// `1d12h`), with a message that says what to write.
pub(crate) fn parse_duration(raw: &str) -> Result<Duration, String> {
    match memory_core::options::parse_duration(raw.trim()) {
        Ok(duration) => Ok(duration),
        Err(DurationError::TooLong) => Err(format!("duration `{raw}` is too long")),
        Err(DurationError::Invalid) => Err(format!(
            "invalid duration `{raw}`: use a number and a unit (ms, s, m, h, d, w), e.g. 30d, \
             12h, 90m, 250ms or 1d12h"
        )),
    }
}

/// [`parse_duration`], refusing zero (a timeout of nothing).
pub(crate) fn parse_positive_duration(raw: &str) -> Result<Duration, String> {
    let duration = parse_duration(raw)?;
    if duration.is_zero() {
        return Err(format!("`{raw}` must be longer than zero"));
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_combinations() {
        let secs = |raw| parse_duration(raw).map(|d| d.as_secs());
        assert_eq!(secs("30d"), Ok(30 * 86_400));
        assert_eq!(secs("12h"), Ok(12 * 3_600));
        assert_eq!(secs("90m"), Ok(5_400));
        assert_eq!(secs("45s"), Ok(45));
        assert_eq!(secs("2w"), Ok(14 * 86_400));
        assert_eq!(secs("1d12h"), Ok(86_400 + 12 * 3_600));
        assert_eq!(secs("0s"), Ok(0));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_positive_duration("0s").is_err());
        assert_eq!(parse_positive_duration("2m"), Ok(Duration::from_secs(120)));
    }

    #[test]
    fn refused() {
        for raw in ["", "30", "d", "30x", "-1d", "1.5h", "30 d", "1d1"] {
            assert!(parse_duration(raw).is_err(), "{raw}");
        }
        assert!(
            parse_duration("99999999999999999999s")
                .unwrap_err()
                .contains("too long")
        );
        assert!(
            parse_duration("99999999999999w")
                .unwrap_err()
                .contains("too long")
        );
    }
}
