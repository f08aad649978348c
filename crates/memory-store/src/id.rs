//! Identifiers: a prefix and 24 characters of `[0-9A-Za-z]`, time-ordered.
//!
//! The first 10 characters are the creation time (microseconds since the epoch) in base 62 with
//! the alphabet in ASCII order, so comparing ids as strings compares their creation times; the
//! last 14 are random.

use crate::Timestamp;

const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const TIME_CHARS: usize = 10;
const RANDOM_CHARS: usize = 14;

/// Prefix of memory store ids.
pub const STORE_PREFIX: &str = "memstore_";
/// Prefix of memory ids.
pub const MEMORY_PREFIX: &str = "mem_";
/// Prefix of memory version ids.
pub const VERSION_PREFIX: &str = "memver_";

/// A new id `prefix` + 24 characters whose first ten encode `at`.
pub(crate) fn new_id(prefix: &str, at: Timestamp) -> String {
    let mut out = String::with_capacity(prefix.len() + TIME_CHARS + RANDOM_CHARS);
    out.push_str(prefix);
    let mut t = u64::try_from(at.as_micros()).unwrap_or(0);
    let mut time = [b'0'; TIME_CHARS];
    for slot in time.iter_mut().rev() {
        *slot = ALPHABET[(t % 62) as usize];
        t /= 62;
    }
    out.extend(time.iter().map(|&b| char::from(b)));
    let mut random = [0u8; RANDOM_CHARS];
    if getrandom::fill(&mut random).is_err() {
        // No OS randomness: fall back to the clock's low bits, still unique within a process
        // because `Timestamp::now` never repeats.
        random
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = (at.as_micros() >> (i % 8)) as u8);
    }
    // 256 is not a multiple of 62; the slight bias does not matter for uniqueness.
    out.extend(
        random
            .iter()
            .map(|&b| char::from(ALPHABET[usize::from(b) % 62])),
    );
    out
}

/// Whether `id` has the shape of an id with `prefix` (used to answer 404 early, without a query).
pub(crate) fn looks_like(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix).is_some_and(|rest| {
        !rest.is_empty() && rest.len() <= 64 && rest.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_and_order() {
        let a = new_id(STORE_PREFIX, Timestamp::from_micros(1_700_000_000_000_000));
        let b = new_id(STORE_PREFIX, Timestamp::from_micros(1_700_000_000_000_001));
        assert_eq!(a.len(), STORE_PREFIX.len() + 24);
        assert!(looks_like(&a, STORE_PREFIX));
        assert!(a < b);
        assert_ne!(
            new_id(MEMORY_PREFIX, Timestamp::from_micros(5)),
            new_id(MEMORY_PREFIX, Timestamp::from_micros(5))
        );
        assert!(!looks_like("mem_", MEMORY_PREFIX));
        assert!(!looks_like("mem_a/b", MEMORY_PREFIX));
        assert!(!looks_like("memver_abc", MEMORY_PREFIX));
    }
}
