//! Console sessions: made only at sign-in, kept in the server's memory, keyed by a random id
//! that is the only thing the browser holds (an `HttpOnly`, `SameSite=Strict` cookie). The
//! API key's secret is never stored: a session records the key's id, as the API records it
//! for a request.
//!
//! Anonymous visitors hold nothing on the server: the CSRF token of the sign-in form (and of
//! every form on a server without keys) is stateless, the time it was made and an HMAC of it
//! under a secret of this process ([`Sessions::anonymous_token`]). Sign-in attempts are
//! limited per client address ([`SignInLimiter`]), in bounded memory.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, header};
use sha2::{Digest, Sha256};

/// The cookie holding the session id.
pub(crate) const COOKIE: &str = "memory_console";

/// A session unused for this long is forgotten (signed out).
const IDLE: Duration = Duration::from_secs(8 * 3600);
/// A session older than this is forgotten, however busy.
const LIFETIME: Duration = Duration::from_secs(24 * 3600);
/// Most sessions kept; past it the least recently used go first. Only a sign-in with a key
/// of the key file makes one.
const MAX_SESSIONS: usize = 10_000;
/// How long an anonymous form's token is accepted.
const ANONYMOUS_TOKEN_LIFETIME: Duration = Duration::from_secs(4 * 3600);
/// Sign-in attempts allowed per client address in one [`SIGN_IN_WINDOW`].
pub(crate) const SIGN_IN_ATTEMPTS: u32 = 10;
/// The window of [`SIGN_IN_ATTEMPTS`].
pub(crate) const SIGN_IN_WINDOW: Duration = Duration::from_secs(60);
/// Most client addresses the sign-in limiter remembers at once.
const MAX_LIMITED_ADDRESSES: usize = 4_096;

/// One browser's session.
#[derive(Clone)]
pub(crate) struct Session {
    /// The random id in the cookie.
    pub(crate) id: String,
    /// The token every state-changing form of this session carries.
    pub(crate) csrf: String,
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
            .field("api_key_id", &self.api_key_id)
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

/// The sessions of one server, the secret of its anonymous tokens and its sign-in limiter.
#[derive(Clone)]
pub(crate) struct Sessions {
    by_id: Arc<Mutex<HashMap<String, Session>>>,
    /// The HMAC key of anonymous tokens (`None`: no randomness when the server started; then
    /// no anonymous token is made or accepted).
    secret: Option<Arc<[u8; 32]>>,
    /// Sign-in attempts per client address.
    pub(crate) limiter: SignInLimiter,
}

impl Default for Sessions {
    fn default() -> Self {
        let mut key = [0u8; 32];
        let secret = match getrandom::fill(&mut key) {
            Ok(()) => Some(Arc::new(key)),
            Err(e) => {
                tracing::error!(error = %e, "no randomness for the console's token secret");
                None
            }
        };
        Sessions {
            by_id: Arc::default(),
            secret,
            limiter: SignInLimiter::default(),
        }
    }
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
fn hmac_sha256(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    let mut inner = Sha256::new();
    let mut outer = Sha256::new();
    let (mut ipad, mut opad) = ([0x36u8; 64], [0x5cu8; 64]);
    for (i, k) in key.iter().enumerate() {
        ipad[i] ^= k;
        opad[i] ^= k;
    }
    inner.update(ipad);
    inner.update(message);
    outer.update(opad);
    outer.update(inner.finalize());
    outer.finalize().into()
}

fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Sign-in attempts per client address: at most [`SIGN_IN_ATTEMPTS`] in each
/// [`SIGN_IN_WINDOW`], remembering at most [`MAX_LIMITED_ADDRESSES`] addresses (past it,
/// expired windows go first, then the oldest).
#[derive(Clone, Default)]
pub(crate) struct SignInLimiter {
    by_address: Arc<Mutex<HashMap<IpAddr, (Instant, u32)>>>,
}

impl std::fmt::Debug for SignInLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInLimiter").finish_non_exhaustive()
    }
}

impl SignInLimiter {
    /// Counts an attempt from `address`: `Ok` if it is within the limit, else `Err` with how
    /// long until the address may try again.
    pub(crate) fn attempt(&self, address: IpAddr) -> Result<(), Duration> {
        let now = Instant::now();
        let mut map = self.by_address.lock().unwrap_or_else(|e| e.into_inner());
        if !map.contains_key(&address) && map.len() >= MAX_LIMITED_ADDRESSES {
            map.retain(|_, (start, _)| now.duration_since(*start) < SIGN_IN_WINDOW);
            if map.len() >= MAX_LIMITED_ADDRESSES
                && let Some(oldest) = map
                    .iter()
                    .min_by_key(|(_, (start, _))| *start)
                    .map(|(a, _)| *a)
            {
                map.remove(&oldest);
            }
        }
        let entry = map.entry(address).or_insert((now, 0));
        if now.duration_since(entry.0) >= SIGN_IN_WINDOW {
            *entry = (now, 0);
        }
        if entry.1 >= SIGN_IN_ATTEMPTS {
            return Err(SIGN_IN_WINDOW.saturating_sub(now.duration_since(entry.0)));
        }
        entry.1 += 1;
        Ok(())
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.by_address.lock().unwrap().len()
    }
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

    /// A token for an anonymous visitor's forms (the sign-in form; every form on a server
    /// without keys): `SECONDS.HMAC`, the time it was made and an HMAC of it under this
    /// server's secret. Nothing is kept; [`anonymous_token_ok`](Self::anonymous_token_ok)
    /// checks it. `None` without a secret.
    pub(crate) fn anonymous_token(&self) -> Option<String> {
        let key = self.secret.as_deref()?;
        let t = unix_seconds().to_string();
        let mac = hmac_sha256(key, format!("memory-console-csrf:{t}").as_bytes());
        Some(format!("{t}.{}", hex_of(&mac)))
    }

    /// Whether `token` is an [`anonymous_token`](Self::anonymous_token) of this server made
    /// at most [`ANONYMOUS_TOKEN_LIFETIME`] ago.
    pub(crate) fn anonymous_token_ok(&self, token: &str) -> bool {
        let Some(key) = self.secret.as_deref() else {
            return false;
        };
        let Some((t, mac)) = token.split_once('.') else {
            return false;
        };
        let Ok(made) = t.parse::<u64>() else {
            return false;
        };
        let now = unix_seconds();
        if made > now + 60 || now.saturating_sub(made) > ANONYMOUS_TOKEN_LIFETIME.as_secs() {
            return false;
        }
        let expected = hmac_sha256(key, format!("memory-console-csrf:{t}").as_bytes());
        same(mac, &hex_of(&expected))
    }

    /// How many sessions exist.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// A new session (new id, new CSRF token): only a sign-in makes one.
    ///
    /// # Errors
    /// No randomness for its id.
    pub(crate) fn create(
        &self,
        api_key_id: Option<String>,
        workspace: Option<String>,
    ) -> Result<Session, getrandom::Error> {
        let now = Instant::now();
        let session = Session {
            id: random_token()?,
            csrf: random_token()?,
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

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // RFC 4231 test case 2 uses a short key; HMAC pads any key under 64 bytes with
        // zeros, so the same key zero-padded to 32 bytes gives the same MAC.
        let mut key = [0u8; 32];
        key[..4].copy_from_slice(b"Jefe");
        assert_eq!(
            hex_of(&hmac_sha256(&key, b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn anonymous_tokens_are_checked_without_state() {
        let sessions = Sessions::default();
        let t = sessions.anonymous_token().unwrap();
        assert!(sessions.anonymous_token_ok(&t));
        assert_eq!(sessions.len(), 0);
        assert!(
            !Sessions::default().anonymous_token_ok(&t),
            "another server's token"
        );
        let (time, mac) = t.split_once('.').unwrap();
        let old = (time.parse::<u64>().unwrap() - 5 * 3600).to_string();
        assert!(!sessions.anonymous_token_ok(&format!("{old}.{mac}")));
        assert!(!sessions.anonymous_token_ok("garbage"));
    }

    #[test]
    fn the_limiter_counts_per_address_in_bounded_memory() {
        let limiter = SignInLimiter::default();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        for _ in 0..SIGN_IN_ATTEMPTS {
            assert!(limiter.attempt(a).is_ok());
        }
        assert!(limiter.attempt(a).is_err());
        assert!(limiter.attempt("10.0.0.2".parse().unwrap()).is_ok());
        for i in 0..(MAX_LIMITED_ADDRESSES as u32 + 100) {
            let _ = limiter.attempt(IpAddr::from(std::net::Ipv4Addr::from(0x0b00_0000 + i)));
        }
        assert!(limiter.len() <= MAX_LIMITED_ADDRESSES);
    }

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
        let s = sessions.create(Some("apikey_1".into()), None).unwrap();
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
