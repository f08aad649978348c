//! [`RetryPolicy`], and the waits a server asks for (`retry-after`).

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

use super::header;

/// When and how often a failed request is tried again.
///
/// Retried: statuses 429, 500, 502, 503, 504 and 529, connection errors and timeouts (and any
/// answer carrying `x-should-retry: true`; `x-should-retry: false` stops retries). The wait
/// before retry `n` (0-based) is `initial_backoff * 2^n`, at most `max_backoff`, less a random
/// jitter of up to a quarter; a `retry-after-ms` or `retry-after` header (in seconds or as an
/// HTTP date) of more than zero and at most `max_retry_after` is used instead. A header of
/// zero, or a date already past, uses the backoff, as in the official SDKs (a retry at once
/// would meet the same overload). A retry whose wait would bring the request's waits past
/// `max_total_wait` is not made: the last error is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How many times a request is tried again after the first try (default 2).
    pub max_retries: u32,
    /// The first wait (default 500 ms).
    pub initial_backoff: Duration,
    /// The longest computed wait (default 8 s).
    pub max_backoff: Duration,
    /// The longest server-asked wait honoured (default 60 s); longer ones use the backoff, and
    /// so do waits of zero (`retry-after: 0`, a date already past).
    pub max_retry_after: Duration,
    /// The most one request waits between its tries, in all (default 2 minutes).
    pub max_total_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
            max_total_wait: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The computed wait before retry `retry` (0-based), jitter included.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(31));
        let base = self
            .initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff);
        base.mul_f64(1.0 - 0.25 * fastrand::f64())
    }
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds, or an HTTP date: the time
/// from `now` until then, zero for a date already past).
pub(super) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let parse = |name, scale: f64| {
        header(headers, name)
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| Duration::from_secs_f64(v * scale))
    };
    parse("retry-after-ms", 0.001)
        .or_else(|| parse("retry-after", 1.0))
        .or_else(|| {
            let date = http_date(header(headers, "retry-after")?)?;
            Some(date.duration_since(now).unwrap_or(Duration::ZERO))
        })
}

/// An HTTP date in its preferred form (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37
/// GMT`); `None` for anything else.
pub(super) fn http_date(text: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = text.split_ascii_whitespace().collect();
    let [weekday, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    if !weekday.ends_with(',') || day.len() != 2 || year.len() != 4 {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)? as i64 + 1;
    let day: i64 = day.parse().ok()?;
    let year: i64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|n| n.parse::<i64>().ok());
    let (Some(Some(h)), Some(Some(m)), Some(Some(sec)), None) =
        (hms.next(), hms.next(), hms.next(), hms.next())
    else {
        return None;
    };
    if !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 || h < 0 || m < 0 || sec < 0 {
        return None;
    }
    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days * 86_400 + h * 3_600 + m * 60 + sec).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}
