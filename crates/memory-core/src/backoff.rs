//! The pause between two attempts of an edit that lost a race ([`pause_before_retry`]).
//!
//! Without a pause, writers that conflict retry in lock step: each round one of them wins and
//! the others read, recompute and collide again at once, so under steady contention one unlucky
//! writer can lose every round until its retries run out. A short random pause that grows with
//! each lost round (exponential backoff with full jitter) spreads the writers apart.
//!
//! The pause is timed by a short-lived thread rather than a runtime's timer, so the tool keeps
//! working on any executor, and on a tokio runtime built without its time driver.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// The longest pause before any one retry.
const MAX_PAUSE: Duration = Duration::from_millis(50);

/// Waits a random time in `[0, min(2^lost_rounds ms, 50 ms)]` before the next attempt.
///
/// `lost_rounds` counts the conflicts so far (1 after the first). The first retry waits at most
/// 2 ms, so a single collision costs almost nothing.
pub(crate) async fn pause_before_retry(lost_rounds: u32) {
    let ceiling_micros = pause_ceiling(lost_rounds).as_micros() as u64;
    let micros = random_u64() % (ceiling_micros + 1);
    Pause::new(Duration::from_micros(micros)).await;
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

/// A future that becomes ready once `duration` has passed, woken by a helper thread.
struct Pause {
    duration: Duration,
    shared: Option<Arc<Shared>>,
}

struct Shared {
    done: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Pause {
    fn new(duration: Duration) -> Self {
        Pause {
            duration,
            shared: None,
        }
    }
}

impl Future for Pause {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.duration.is_zero() {
            return Poll::Ready(());
        }
        let duration = self.duration;
        let shared = self.shared.get_or_insert_with(|| {
            let shared = Arc::new(Shared {
                done: AtomicBool::new(false),
                waker: Mutex::new(None),
            });
            let for_thread = shared.clone();
            let started = std::thread::Builder::new()
                .name("memory-retry-pause".into())
                .spawn(move || {
                    std::thread::sleep(duration);
                    for_thread.done.store(true, Ordering::Release);
                    let waker = for_thread.waker.lock().ok().and_then(|mut w| w.take());
                    if let Some(waker) = waker {
                        waker.wake();
                    }
                });
            if started.is_err() {
                // No thread to time the pause: retry at once rather than fail the edit.
                shared.done.store(true, Ordering::Release);
            }
            shared
        });
        if let Ok(mut waker) = shared.waker.lock() {
            *waker = Some(cx.waker().clone());
        }
        // Checked after storing the waker, so a wake between the two is not lost.
        if shared.done.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

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
        let mut pause = std::pin::pin!(Pause::new(Duration::from_millis(5)));
        while pause.as_mut().poll(&mut cx).is_pending() {
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
