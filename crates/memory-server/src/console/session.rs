//! Console sessions: kept in the server's memory, keyed by a random id that is the only
//! thing the browser holds (an `HttpOnly`, `SameSite=Strict` cookie). The API key's secret is
//! never stored: a session records the key's id, as the API records it for a request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};

/// The cookie holding the session id.
pub(crate) const COOKIE: &str = "memory_console";

/// A session unused for this long is forgotten (signed out).
const IDLE: Duration = Duration::from_secs(8 * 3600);
/// A session older than this is forgotten, however busy.
const LIFETIME: Duration = Duration::from_secs(24 * 3600);
/// Most sessions kept; past it the least recently used go first.
const MAX_SESSIONS: usize = 10_000;

/// One browser's session.
#[derive(Clone)]
pub(crate) struct Session {
    /// The random id in the cookie.
    pub(crate) id: String,
    /// The token every state-changing form of this session carries.
    pub(crate) csrf: String,
    /// Whether the console may be used: signed in with a key, or the server has no keys.
    pub(crate) signed_in: bool,
    /// The id of the key it signed in with (`None` on a server without keys).
    pub(crate) api_key_id: Option<String>,
    /// The workspace it acts in, chosen at sign-in (`None`: the default workspace).
    pub(crate) workspace: Option<String>,
    created: Instant,
    used: Instant,
}

/// How many sessions, never their ids.
impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("count", &self.lock().len())
            .finish()
    }
}

/// Without the id and the token (they are bearer secrets).
impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("signed_in", &self.signed_in)
            .field("api_key_id", &self.api_key_id)
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

/// The sessions of one server.
#[derive(Clone, Default)]
pub(crate) struct Sessions {
    by_id: Arc<Mutex<HashMap<String, Session>>>,
}

/// 32 random characters of 64 (192 bits), URL-safe.
///
/// # Errors
/// The operating system's random number generator failed (no session is made then).
pub(crate) fn random_token() -> Result<String, getrandom::Error> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % 64]))
        .collect())
}

/// Whether `a` and `b` are equal, in time that depends only on their lengths.
pub(crate) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The session id the request's cookie names, if any.
pub(crate) fn cookie_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned())
}

/// The `Set-Cookie` value for session `id`.
pub(crate) fn set_cookie(id: &str) -> String {
    format!("{COOKIE}={id}; Path=/console; HttpOnly; SameSite=Strict")
}

/// The `Set-Cookie` value that removes the cookie.
pub(crate) fn clear_cookie() -> String {
    format!("{COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0")
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // A panic while holding the lock leaves a consistent map (every change is one call).
        self.by_id.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The live session `id`, marked as used now.
    pub(crate) fn get(&self, id: &str) -> Option<Session> {
        let mut map = self.lock();
        let now = Instant::now();
        let session = map.get_mut(id)?;
        if now.duration_since(session.used) > IDLE || now.duration_since(session.created) > LIFETIME
        {
            map.remove(id);
            return None;
        }
        session.used = now;
        Some(session.clone())
    }

    /// A new session (new id, new CSRF token).
    ///
    /// # Errors
    /// No randomness for its id.
    pub(crate) fn create(
        &self,
        signed_in: bool,
        api_key_id: Option<String>,
        workspace: Option<String>,
    ) -> Result<Session, getrandom::Error> {
        let now = Instant::now();
        let session = Session {
            id: random_token()?,
            csrf: random_token()?,
            signed_in,
            api_key_id,
            workspace,
            created: now,
            used: now,
        };
        let mut map = self.lock();
        if map.len() >= MAX_SESSIONS {
            map.retain(|_, s| {
                now.duration_since(s.used) <= IDLE && now.duration_since(s.created) <= LIFETIME
            });
            while map.len() >= MAX_SESSIONS {
                let Some(oldest) = map.values().min_by_key(|s| s.used).map(|s| s.id.clone()) else {
                    break;
                };
                map.remove(&oldest);
            }
        }
        map.insert(session.id.clone(), session.clone());
        Ok(session)
    }

    /// Forgets session `id`.
    pub(crate) fn remove(&self, id: &str) {
        self.lock().remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_url_safe() {
        let (a, b) = (random_token().unwrap(), random_token().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
    }

    #[test]
    fn compares_whole_strings() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "ab"));
    }

    #[test]
    fn reads_the_cookie_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            "a=1; memory_console=xyz; b=2".parse().unwrap(),
        );
        assert_eq!(cookie_of(&h).as_deref(), Some("xyz"));
    }

    #[test]
    fn sessions_are_kept_and_forgotten() {
        let sessions = Sessions::default();
        let s = sessions
            .create(true, Some("apikey_1".into()), None)
            .unwrap();
        assert_eq!(
            sessions.get(&s.id).unwrap().api_key_id.as_deref(),
            Some("apikey_1")
        );
        let shown = format!("{:?} {:?}", s, sessions);
        assert!(
            !shown.contains(&s.id) && !shown.contains(&s.csrf),
            "{shown}"
        );
        sessions.remove(&s.id);
        assert!(sessions.get(&s.id).is_none());
    }
}
