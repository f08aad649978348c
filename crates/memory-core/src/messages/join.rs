//! Running a turn's tool calls concurrently without an async runtime: a join of boxed futures
//! and a future that turns a panic into `None`.

use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// A boxed, sendable future.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A future whose panic is caught: `Some(output)`, or `None` when polling it panicked (it is
/// then dropped and never polled again).
pub(crate) struct Caught<'a, T> {
    inner: Option<BoxFuture<'a, T>>,
}

impl<'a, T> Caught<'a, T> {
    pub(crate) fn new(inner: BoxFuture<'a, T>) -> Self {
        Caught { inner: Some(inner) }
    }
}

impl<T> Future for Caught<'_, T> {
    type Output = Option<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        // The future is dropped after a panic, so no broken state is observed again.
        match catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => {
                self.inner = None;
                Poll::Ready(Some(output))
            }
            Err(_) => {
                self.inner = None;
                Poll::Ready(None)
            }
        }
    }
}

/// Polls every future until all are done; the outputs are in the futures' order.
pub(crate) async fn join_all<T>(futures: Vec<BoxFuture<'_, T>>) -> Vec<T> {
    let mut slots: Vec<Slot<'_, T>> = futures.into_iter().map(Slot::Running).collect();
    poll_fn(move |cx| {
        let mut running = false;
        for slot in &mut slots {
            if let Slot::Running(future) = slot {
                match future.as_mut().poll(cx) {
                    Poll::Ready(output) => *slot = Slot::Done(output),
                    Poll::Pending => running = true,
                }
            }
        }
        if running {
            return Poll::Pending;
        }
        let outputs = std::mem::take(&mut slots)
            .into_iter()
            .filter_map(|slot| match slot {
                Slot::Done(output) => Some(output),
                Slot::Running(_) => None,
            })
            .collect();
        Poll::Ready(outputs)
    })
    .await
}

enum Slot<'a, T> {
    Running(BoxFuture<'a, T>),
    Done(T),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn outputs_keep_the_order_and_panics_become_none() {
        let slow: BoxFuture<'_, Option<u32>> = Box::pin(Caught::new(Box::pin(async {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            1
        })));
        let boom: BoxFuture<'_, Option<u32>> = Box::pin(Caught::new(Box::pin(async {
            tokio::task::yield_now().await;
            panic!("boom")
        })));
        let fast: BoxFuture<'_, Option<u32>> = Box::pin(Caught::new(Box::pin(async { 3 })));
        assert_eq!(
            join_all(vec![slow, boom, fast]).await,
            [Some(1), None, Some(3)]
        );
    }
}
