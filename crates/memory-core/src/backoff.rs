//! The pause between two attempts of an edit that lost a race ([`pause_before_retry`]).
//!
//! Without a pause, writers that conflict retry in lock step: each round one of them wins and
//! the others read, recompute and collide again at once, so under steady contention one unlucky
//! writer can lose every round until its retries run out. A short random pause that grows with
//! each lost round (exponential backoff with full jitter) spreads the writers apart.
//!
//! The pause is timed by `futures-timer` (one shared timer thread for every pause) rather than
//! a runtime's timer, so the tool keeps working on any executor, and on a tokio runtime built
//! without its time driver.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use futures_timer::Delay;

/// The longest pause before any one retry.
const MAX_PAUSE: Duration = Duration::from_millis(50);

/// Waits a random time in `[0, min(2^lost_rounds ms, 50 ms)]` before the next attempt.
///
/// `lost_rounds` counts the conflicts so far (1 after the first). The first retry waits at most
/// 2 ms, so a single collision costs almost nothing.
pub(crate) async fn pause_before_retry(lost_rounds: u32) {
    let ceiling_micros = pause_ceiling(lost_rounds).as_micros() as u64;
    let micros = random_u64() % (ceiling_micros + 1);
    pause(Duration::from_micros(micros)).await;
}

/// The longest pause after `lost_rounds` conflicts: 2 ms, 4 ms, 8 ms, ... up to 50 ms.
fn pause_ceiling(lost_rounds: u32) -> Duration {
    Duration::from_millis(1u64 << lost_rounds.min(16)).min(MAX_PAUSE)
}

/// A random number from the standard library's per-process random hash keys: enough to
/// de-correlate writers, with no random-number dependency.
fn random_u64() -> u64 {
    RandomState::new().build_hasher().finish()
}

/// Waits `duration` on the shared timer; a zero pause does not touch the timer at all.
async fn pause(duration: Duration) {
    if !duration.is_zero() {
        Delay::new(duration).await;
    }
}

#[cfg(test)]
mod tests {
    use std::task::{Context, Waker};
    use std::time::Instant;

    use super::*;

    #[tokio::test]
    async fn a_pause_ends_and_stays_under_its_ceiling() {
        for lost_rounds in [0, 1, 5, 40] {
            let started = Instant::now();
            pause_before_retry(lost_rounds).await;
            // Generous: only that the pause ends, not how precisely (shared machines).
            assert!(started.elapsed() < Duration::from_secs(5));
        }
    }

    #[test]
    fn a_pause_works_without_any_runtime() {
        let started = Instant::now();
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut waiting = std::pin::pin!(pause(Duration::from_millis(5)));
        while waiting.as_mut().poll(&mut cx).is_pending() {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(started.elapsed() >= Duration::from_millis(5));
    }

    #[test]
    fn the_ceiling_doubles_up_to_its_cap() {
        let ms = |n| pause_ceiling(n).as_millis();
        assert_eq!((ms(1), ms(2), ms(5)), (2, 4, 32));
        assert_eq!((ms(6), ms(64), ms(u32::MAX)), (50, 50, 50));
    }

    #[test]
    fn random_numbers_differ() {
        let draws: std::collections::HashSet<u64> = (0..16).map(|_| random_u64()).collect();
        assert!(draws.len() > 1);
    }
}
