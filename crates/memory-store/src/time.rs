//! [`Timestamp`]: microseconds since the Unix epoch, written as RFC 3339 in UTC.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in time with microsecond precision (UTC).
///
/// `Display` and serde write RFC 3339 with six fractional digits and `Z`
/// (`2026-01-02T03:04:05.000006Z`); [`FromStr`] and serde read any RFC 3339 date-time (an offset
/// or `Z`; no offset counts as UTC, as Python's naive `isoformat()` does).
///
/// ```
/// use memory_store::Timestamp;
///
/// let t: Timestamp = "2026-01-02T03:04:05.5+01:00".parse().unwrap();
/// assert_eq!(t.to_string(), "2026-01-02T02:04:05.500000Z");
/// assert!("2026-13-01T00:00:00Z".parse::<Timestamp>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

static LAST: AtomicI64 = AtomicI64::new(0);

impl Timestamp {
    /// From microseconds since 1970-01-01T00:00:00Z.
    pub const fn from_micros(micros: i64) -> Self {
        Timestamp(micros)
    }

    /// Microseconds since 1970-01-01T00:00:00Z.
    pub const fn as_micros(self) -> i64 {
        self.0
    }

    /// The current time, strictly later than every earlier call in this process (so versions
    /// written one after the other never share a `created_at`, even within a microsecond).
    pub fn now() -> Self {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        let mut prev = LAST.load(Ordering::Relaxed);
        loop {
            let next = wall.max(prev.saturating_add(1));
            match LAST.compare_exchange_weak(prev, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Timestamp(next),
                Err(seen) => prev = seen,
            }
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01 (`civil_from_days`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl Timestamp {
    /// The same instant as a [`SystemTime`].
    pub fn to_system_time(self) -> SystemTime {
        let micros = Duration::from_micros(self.0.unsigned_abs());
        if self.0 >= 0 {
            UNIX_EPOCH + micros
        } else {
            UNIX_EPOCH - micros
        }
    }

    /// RFC 3339 in whole seconds (`2026-01-02T03:04:05Z`), for listings people read.
    ///
    /// ```
    /// use memory_store::Timestamp;
    ///
    /// let t: Timestamp = "2026-01-02T03:04:05.9Z".parse().unwrap();
    /// assert_eq!(t.to_rfc3339_seconds(), "2026-01-02T03:04:05Z");
    /// ```
    pub fn to_rfc3339_seconds(self) -> String {
        let (date_time, _) = self.parts();
        format!("{date_time}Z")
    }

    /// `YYYY-MM-DDTHH:MM:SS` and the microseconds past it.
    fn parts(self) -> (String, i64) {
        let secs = self.0.div_euclid(1_000_000);
        let micros = self.0.rem_euclid(1_000_000);
        let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
        let rem = secs.rem_euclid(86_400);
        let date_time = format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        );
        (date_time, micros)
    }
}

/// Microseconds are kept; finer parts of the time are dropped.
impl From<SystemTime> for Timestamp {
    fn from(time: SystemTime) -> Self {
        let micros = |d: Duration| i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
        match time.duration_since(UNIX_EPOCH) {
            Ok(after) => Timestamp(micros(after)),
            Err(before) => Timestamp(-micros(before.duration())),
        }
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (date_time, micros) = self.parts();
        write!(f, "{date_time}.{micros:06}Z")
    }
}

/// A string that is not an RFC 3339 date-time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an RFC 3339 date-time (like 2026-01-02T03:04:05Z)")]
pub struct TimestampError(String);

impl FromStr for Timestamp {
    type Err = TimestampError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s).ok_or_else(|| TimestampError(s.chars().take(64).collect()))
    }
}

fn digits(s: &[u8], at: usize, n: usize) -> Option<i64> {
    let part = s.get(at..at + n)?;
    part.iter().try_fold(0i64, |acc, b| {
        b.is_ascii_digit().then(|| acc * 10 + i64::from(b - b'0'))
    })
}

fn parse(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let (y, mo, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let (h, mi, se) = if b.len() == 10 {
        (0, 0, 0)
    } else {
        if !matches!(b.get(10), Some(b'T' | b't' | b' ')) || b.get(13) != Some(&b':') {
            return None;
        }
        let h = digits(b, 11, 2)?;
        let mi = digits(b, 14, 2)?;
        if b.get(16) != Some(&b':') {
            return None;
        }
        (h, mi, digits(b, 17, 2)?)
    };
    let days_in_month = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => return None,
    };
    if d < 1 || d > days_in_month || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut i = if b.len() == 10 { 10 } else { 19 };
    let mut micros = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 6 {
                micros = micros * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        let n = i - start;
        if n == 0 {
            return None;
        }
        for _ in n..6 {
            micros *= 10;
        }
    }
    let offset = match &b[i..] {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), rest @ ..] if rest.len() == 5 && rest[2] == b':' => {
            let oh = digits(rest, 0, 2)?;
            let om = digits(rest, 3, 2)?;
            if oh > 23 || om > 59 {
                return None;
            }
            let o = oh * 3600 + om * 60;
            if *sign == b'+' { o } else { -o }
        }
        _ => return None,
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se.min(59) - offset;
    Some(Timestamp(secs * 1_000_000 + micros))
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_offsets() {
        for s in [
            "1970-01-01T00:00:00.000000Z",
            "2000-02-29T23:59:59.999999Z",
            "2026-07-22T12:00:00.000001Z",
            "1969-12-31T23:59:59.500000Z",
        ] {
            let t: Timestamp = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
        let a: Timestamp = "2026-01-01T00:00:00+00:00".parse().unwrap();
        let b: Timestamp = "2025-12-31T19:00:00-05:00".parse().unwrap();
        let c: Timestamp = "2026-01-01T00:00:00".parse().unwrap();
        let d: Timestamp = "2026-01-01".parse().unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a, d);
        for bad in [
            "",
            "2026",
            "2026-02-30T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00+0100",
            "x026-01-01",
        ] {
            assert!(bad.parse::<Timestamp>().is_err(), "{bad}");
        }
    }

    #[test]
    fn system_times_and_whole_seconds() {
        for secs in [0, 951_782_400, 1_709_210_096, 4_102_444_799] {
            let time = UNIX_EPOCH + Duration::from_secs(secs);
            let t = Timestamp::from(time);
            assert_eq!(t.to_system_time(), time);
            let again: Timestamp = t.to_rfc3339_seconds().parse().unwrap();
            assert_eq!(again, t, "{secs}");
        }
        let at = |secs: u64| Timestamp::from(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0).to_rfc3339_seconds(), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400).to_rfc3339_seconds(), "2000-02-29T00:00:00Z");
        assert_eq!(
            at(1_709_210_096).to_rfc3339_seconds(),
            "2024-02-29T12:34:56Z"
        );
        let before = Timestamp::from(UNIX_EPOCH - Duration::from_millis(1500));
        assert_eq!(before.to_string(), "1969-12-31T23:59:58.500000Z");
        assert_eq!(
            before.to_system_time(),
            UNIX_EPOCH - Duration::from_millis(1500)
        );
        let parsed: Timestamp = "2024-02-29t14:34:56.250+02:00".parse().unwrap();
        assert_eq!(
            parsed.to_system_time(),
            UNIX_EPOCH + Duration::from_secs(1_709_210_096) + Duration::from_millis(250)
        );
    }

    #[test]
    fn now_is_strictly_increasing() {
        let mut last = Timestamp::now();
        for _ in 0..1000 {
            let t = Timestamp::now();
            assert!(t > last);
            last = t;
        }
    }
}
