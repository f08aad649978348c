//! [`HistoryOptions`]: whether a store keeps history, for how long, and whose changes it records.

use std::time::{Duration, SystemTime};

use crate::options::{OptionsError, StoreOptions};

/// How a store keeps its files' earlier versions: the store options `history=on|off`
/// (default `on`), `history_days=N` (default 30, as the hosted memory stores keep versions)
/// and `history_max=N` (revisions kept per file, newest first; default: every revision within
/// the days), and `history_session=ID` (the session recorded with each change; the `memory`
/// program sets it from `--session-id`).
///
/// Every backend takes them with [`HistoryOptions::take_from`] and lists
/// [`HistoryOptions::KEYS`] among the options it accepts.
///
/// ```
/// use memory_core::history::HistoryOptions;
/// use memory_core::options::StoreOptions;
/// let mut options = StoreOptions::from_pairs([("history_max", "3"), ("sync", "none")]);
/// let history = HistoryOptions::take_from(&mut options).unwrap();
/// assert!(history.enabled);
/// assert_eq!(history.max_per_file, Some(3));
/// assert_eq!(options.get("sync"), Some("none"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryOptions {
    /// Whether changes are recorded at all (`history=off` turns it off; nothing is kept and
    /// the history methods answer [`Error::HistoryOff`](crate::Error::HistoryOff)).
    pub enabled: bool,
    /// How long a past revision is kept after it was replaced (`history_days`); `None` keeps
    /// them for ever (`history_days=0`).
    pub keep_for: Option<Duration>,
    /// How many revisions of one file are kept, newest first, the current one included
    /// (`history_max`); `None` keeps every revision within [`keep_for`](Self::keep_for).
    pub max_per_file: Option<u64>,
    /// The session each change is recorded under (`history_session`), if any.
    pub session: Option<String>,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            enabled: true,
            keep_for: Some(Self::DEFAULT_KEEP_FOR),
            max_per_file: None,
            session: None,
        }
    }
}

impl HistoryOptions {
    /// The store options these are read from.
    pub const KEYS: [&'static str; 4] =
        ["history", "history_days", "history_max", "history_session"];

    /// How long past revisions are kept unless `history_days` says otherwise: 30 days.
    pub const DEFAULT_KEEP_FOR: Duration = Duration::from_secs(30 * 86_400);

    /// The longest session id `history_session` takes, in bytes.
    pub const MAX_SESSION_BYTES: usize = 128;

    /// History off: nothing recorded.
    pub fn off() -> Self {
        HistoryOptions {
            enabled: false,
            ..Self::default()
        }
    }

    /// These options recording changes under `session`.
    pub fn with_session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// These options keeping at most `max` revisions per file.
    pub fn with_max_per_file(mut self, max: u64) -> Self {
        self.max_per_file = Some(max);
        self
    }

    /// Takes `history`, `history_days`, `history_max` and `history_session` out of `options`
    /// (the defaults for those not given).
    ///
    /// # Errors
    /// [`OptionsError::InvalidValue`] for `history` other than `on`/`off` (or `true`/`false`),
    /// a `history_days` or `history_max` that is not a whole number (`history_max` at least
    /// 1), or a `history_session` that is empty, longer than 128 bytes or holds anything but
    /// letters, digits, `-`, `_` and `.`.
    pub fn take_from(options: &mut StoreOptions) -> Result<HistoryOptions, OptionsError> {
        let mut history = HistoryOptions::default();
        if let Some(value) = options.take("history") {
            history.enabled = match value.as_str() {
                "on" | "true" | "1" | "yes" => true,
                "off" | "false" | "0" | "no" => false,
                _ => {
                    return Err(OptionsError::InvalidValue {
                        key: "history".into(),
                        value,
                        expected: "on or off",
                    });
                }
            };
        }
        if let Some(days) = options.take_parsed::<u64>("history_days", "a whole number of days")? {
            history.keep_for = match days {
                0 => None,
                days => Some(Duration::from_secs(days.saturating_mul(86_400))),
            };
        }
        if let Some(value) = options.take("history_max") {
            match value.parse::<u64>() {
                Ok(max) if max >= 1 => history.max_per_file = Some(max),
                _ => {
                    return Err(OptionsError::InvalidValue {
                        key: "history_max".into(),
                        value,
                        expected: "a whole number of versions, at least 1",
                    });
                }
            }
        }
        if let Some(session) = options.take("history_session") {
            if !Self::is_valid_session(&session) {
                return Err(OptionsError::InvalidValue {
                    key: "history_session".into(),
                    value: session,
                    expected: "1 to 128 letters, digits, `-`, `_` or `.`",
                });
            }
            history.session = Some(session);
        }
        Ok(history)
    }

    /// Whether `session` can be recorded: 1 to 128 bytes of ASCII letters, digits, `-`, `_`
    /// and `.` (it is printed by `memory log` and kept in file and key names nowhere).
    pub fn is_valid_session(session: &str) -> bool {
        !session.is_empty()
            && session.len() <= Self::MAX_SESSION_BYTES
            && session
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    }

    /// The moment before which past revisions are dropped, seen at `now`; `None` when they are
    /// kept for ever.
    pub fn cutoff(&self, now: SystemTime) -> Option<SystemTime> {
        self.keep_for.and_then(|keep| now.checked_sub(keep))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_keep_thirty_days_of_every_revision() {
        let history = HistoryOptions::take_from(&mut StoreOptions::new()).unwrap();
        assert_eq!(history, HistoryOptions::default());
        assert!(history.enabled);
        assert_eq!(history.keep_for, Some(Duration::from_secs(30 * 86_400)));
        assert_eq!(history.max_per_file, None);
    }

    #[test]
    fn options_are_read_and_checked() {
        let mut options = StoreOptions::from_pairs([
            ("history", "off"),
            ("history_days", "0"),
            ("history_max", "3"),
            ("history_session", "sess_01-a.b"),
        ]);
        let history = HistoryOptions::take_from(&mut options).unwrap();
        assert!(options.is_empty());
        assert!(!history.enabled);
        assert_eq!(history.keep_for, None);
        assert_eq!(history.max_per_file, Some(3));
        assert_eq!(history.session.as_deref(), Some("sess_01-a.b"));

        for (key, value) in [
            ("history", "maybe"),
            ("history_days", "-1"),
            ("history_max", "0"),
            ("history_max", "x"),
            ("history_session", ""),
            ("history_session", "a b"),
        ] {
            let mut options = StoreOptions::from_pairs([(key, value)]);
            let e = HistoryOptions::take_from(&mut options).unwrap_err();
            assert!(
                matches!(&e, OptionsError::InvalidValue { key: k, .. } if k == key),
                "{key}={value}: {e}"
            );
        }
        let long = "s".repeat(HistoryOptions::MAX_SESSION_BYTES + 1);
        assert!(!HistoryOptions::is_valid_session(&long));
    }
}
