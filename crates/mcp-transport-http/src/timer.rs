//! hyper's header read timeout on one tokio timer per connection.
//!
//! hyper asks its [`Timer`] for a new sleep at the start of every request head
//! ([`HttpServerConfig::header_read_timeout`](crate::HttpServerConfig::header_read_timeout))
//! and drops it once the head is read. With `hyper_util`'s `TokioTimer` each of those is a
//! tokio `Sleep` of its own: made, entered in the runtime's timer wheel and taken out of it
//! again for every request. Here a connection has one tokio `Sleep`, made at its first
//! head, and each head's sleep only moves its deadline: a later deadline is an atomic store
//! in tokio (the wheel entry stays where it was and, when it comes due early, is filed
//! again for the rest), so a request pays for a boxed deadline and a lock that nothing else
//! contends. Measured with callgrind, that saves a little of every small call's work; most
//! of what the timeout costs a call is in hyper's own connection code, which this leaves
//! as is.
//!
//! The timeout's meaning does not change: a head not complete within the timeout of the
//! moment hyper started waiting for it gets hyper's `408` and the connection closes. A
//! connection `h1.rs` hands over in the middle of a head gives the timer that head's
//! deadline, which hyper's first sleep does not pass: the head's timeout runs once, from
//! when it was first awaited, whichever parser finishes it.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::{Sleep, Timer};

/// The timer of one connection: every sleep it hands out shares one tokio `Sleep`.
///
/// hyper keeps at most one header read sleep of a connection at a time, so the shared
/// `Sleep` is never asked for two deadlines at once; if it were, each poll would move it
/// to the polling sleep's deadline and the other sleep would be woken late, never early.
#[derive(Clone, Default)]
pub(crate) struct ConnectionTimer {
    clock: Arc<Mutex<Clock>>,
}

#[derive(Default)]
struct Clock {
    /// The connection's tokio `Sleep`, made on the first poll (inside the connection's
    /// runtime, whose timer it then uses).
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The latest deadline of the first sleep handed out (the head `h1.rs` began to read
    /// and handed over, whose header read timeout is running already): taken by that
    /// sleep.
    first: Option<tokio::time::Instant>,
}

impl ConnectionTimer {
    /// A timer whose first sleep ends by `first` at the latest, when given.
    pub(crate) fn new(first: Option<tokio::time::Instant>) -> Self {
        ConnectionTimer {
            clock: Arc::new(Mutex::new(Clock { sleep: None, first })),
        }
    }
}

impl Timer for ConnectionTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(self.now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        let mut at = tokio::time::Instant::from_std(deadline);
        let first = self
            .clock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .first
            .take();
        if let Some(first) = first {
            at = at.min(first);
        }
        Box::pin(Deadline {
            at,
            clock: Arc::clone(&self.clock),
        })
    }

    /// tokio's clock, so that a runtime with paused time (tests) moves it.
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }
}

/// One head's sleep: done once the connection's clock reaches `at`.
struct Deadline {
    at: tokio::time::Instant,
    clock: Arc<Mutex<Clock>>,
}

impl Future for Deadline {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let at = self.at;
        let mut clock = self.clock.lock().unwrap_or_else(PoisonError::into_inner);
        let sleep = clock
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
        if sleep.deadline() != at {
            sleep.as_mut().reset(at);
        }
        sleep.as_mut().poll(cx)
    }
}

impl Sleep for Deadline {}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn each_sleep_ends_at_its_own_deadline() {
        let timer = ConnectionTimer::default();
        let start = tokio::time::Instant::now();
        timer.sleep(Duration::from_secs(3)).await;
        assert_eq!(start.elapsed(), Duration::from_secs(3));
        // A later deadline on the same tokio sleep, after it fired.
        timer.sleep(Duration::from_secs(5)).await;
        assert_eq!(start.elapsed(), Duration::from_secs(8));
        // A sleep dropped unfinished leaves the shared sleep at its deadline; the next
        // sleep, earlier or later, still ends at its own.
        let started = tokio::time::Instant::now();
        let mut dropped = timer.sleep(Duration::from_secs(10));
        assert!(futures_poll_once(dropped.as_mut()).is_pending());
        drop(dropped);
        timer.sleep(Duration::from_secs(2)).await;
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        let later = tokio::time::Instant::now();
        timer.sleep(Duration::from_secs(20)).await;
        assert_eq!(later.elapsed(), Duration::from_secs(20));
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_sleep_ends_by_the_deadline_given_and_the_next_ones_do_not() {
        let start = tokio::time::Instant::now();
        let timer = ConnectionTimer::new(Some(start + Duration::from_secs(2)));
        timer.sleep(Duration::from_secs(10)).await;
        assert_eq!(start.elapsed(), Duration::from_secs(2));
        let next = tokio::time::Instant::now();
        timer.sleep(Duration::from_secs(10)).await;
        assert_eq!(next.elapsed(), Duration::from_secs(10));
        // An earlier deadline of its own stays.
        let timer =
            ConnectionTimer::new(Some(tokio::time::Instant::now() + Duration::from_secs(9)));
        let started = tokio::time::Instant::now();
        timer.sleep(Duration::from_secs(1)).await;
        assert_eq!(started.elapsed(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_sleep_past_its_deadline_is_done_at_once() {
        let timer = ConnectionTimer::default();
        let mut sleep = timer.sleep_until(timer.now());
        assert!(futures_poll_once(sleep.as_mut()).is_ready());
    }

    fn futures_poll_once(sleep: Pin<&mut dyn Sleep>) -> Poll<()> {
        let waker = std::task::Waker::noop();
        sleep.poll(&mut Context::from_waker(waker))
    }
}
