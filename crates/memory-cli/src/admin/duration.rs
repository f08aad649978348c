//! Durations written as `30d`, `12h`, `90m`, `45s`, `2w` or combined (`1d12h`).

use std::time::Duration;

/// Parses a duration for `--older-than`: one or more `{number}{unit}` pairs, units `s`, `m`,
/// `h`, `d` (24 hours) and `w` (7 days).
pub(crate) fn parse_duration(raw: &str) -> Result<Duration, String> {
    let usage = || {
        format!(
            "invalid duration `{raw}`: use a number and a unit (s, m, h, d, w), e.g. 30d, 12h, 90m or 1d12h"
        )
    };
    let text = raw.trim();
    if text.is_empty() {
        return Err(usage());
    }
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(usage());
        }
        // All digits: the only way to fail is a number too large for the clock.
        let number: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("duration `{raw}` is too long"))?;
        let mut chars = rest[digits..].chars();
        let unit = match chars.next() {
            Some('s') => 1,
            Some('m') => 60,
            Some('h') => 3_600,
            Some('d') => 86_400,
            Some('w') => 604_800,
            _ => return Err(usage()),
        };
        total = number
            .checked_mul(unit)
            .and_then(|secs| total.checked_add(secs))
            .ok_or_else(|| format!("duration `{raw}` is too long"))?;
        rest = chars.as_str();
    }
    Ok(Duration::from_secs(total))
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
