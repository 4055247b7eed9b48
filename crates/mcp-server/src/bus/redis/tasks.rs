//! The two tasks of a [`RedisChangeBus`](super::RedisChangeBus): the follower, which reads
//! the channel on its pub/sub connection and delivers what other instances publish, and
//! the publisher, which publishes this instance's changes on a connection of its own; with
//! what they share (the way to Redis, the reconnection backoff).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::StreamExt as _;
use redis::AsyncConnectionConfig;
use redis::aio::{MultiplexedConnection, PubSubSink, PubSubStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::bus::wire;
use crate::bus::{BusEvent, InProcessBus};

/// How to reach the channel, shared by both tasks.
#[derive(Clone)]
pub(super) struct Link {
    pub(super) client: redis::Client,
    pub(super) channel: String,
    pub(super) timeout: Duration,
    pub(super) backoff: (Duration, Duration),
}

impl Link {
    /// A pub/sub connection subscribed to the channel (the subscription confirmed).
    pub(super) async fn subscribe(&self) -> Result<(PubSubSink, PubSubStream), redis::RedisError> {
        let subscribing = async {
            let (mut sink, stream) = self.client.get_async_pubsub().await?.split();
            sink.subscribe(&self.channel).await?;
            Ok((sink, stream))
        };
        tokio::time::timeout(self.timeout, subscribing)
            .await
            .unwrap_or_else(|_| Err(timed_out("subscribing")))
    }
}

fn timed_out(what: &'static str) -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} took too long"),
    ))
}

/// The wait before the next reconnection: doubled after each failure in a row, reset
/// after a success, each wait cut by up to half at random.
struct Backoff {
    min: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    fn new((min, max): (Duration, Duration)) -> Self {
        Backoff {
            min,
            max,
            next: min,
        }
    }

    fn next(&mut self) -> Duration {
        let wait = self.next;
        self.next = self.next.saturating_mul(2).min(self.max);
        let mut bytes = [0u8; 2];
        // Without randomness the wait is the whole of it, which is still a backoff; so is
        // a wait too long to scale (days), which is then cut by nothing.
        let cut = getrandom::fill(&mut bytes).map_or(0, |()| u16::from_le_bytes(bytes));
        let cut = (wait / 2)
            .checked_mul(u32::from(cut))
            .map_or(Duration::ZERO, |d| d / u32::from(u16::MAX));
        wait.saturating_sub(cut)
    }

    fn reset(&mut self) {
        self.next = self.min;
    }
}

/// Counts refused messages and lets at most one warning a second through.
#[derive(Default)]
struct Refusals {
    last_warning: Option<Instant>,
    unlogged: u64,
}

impl Refusals {
    /// Logs that a message was refused for `reason`, which may quote the message: it is
    /// cut to 200 characters and logged escaped, so that a message cannot forge log lines.
    fn refused(&mut self, reason: &str) {
        let now = Instant::now();
        if self
            .last_warning
            .is_some_and(|last| now.duration_since(last) < Duration::from_secs(1))
        {
            self.unlogged += 1;
            return;
        }
        let reason: String = reason.chars().take(200).collect();
        tracing::warn!(
            ?reason,
            not_logged_since_last = self.unlogged,
            "dropped a message on the change bus's channel"
        );
        self.last_warning = Some(now);
        self.unlogged = 0;
    }
}

/// The task that follows the channel.
pub(super) struct Follower {
    pub(super) link: Link,
    pub(super) id: String,
    pub(super) local: InProcessBus,
    pub(super) connected: Arc<AtomicBool>,
    pub(super) max_message_bytes: usize,
    pub(super) health_check: Duration,
}

impl Follower {
    pub(super) async fn run(self, mut sink: PubSubSink, mut stream: PubSubStream) {
        let mut backoff = Backoff::new(self.link.backoff);
        let mut refusals = Refusals::default();
        loop {
            let lost = self.follow(&mut sink, &mut stream, &mut refusals).await;
            self.connected.store(false, Ordering::SeqCst);
            tracing::warn!(
                channel = %self.link.channel,
                reason = %lost,
                "lost the change bus's Redis subscription: listeners hear this instance's \
                 changes only until it is back"
            );
            (sink, stream) = loop {
                tokio::time::sleep(backoff.next()).await;
                match self.link.subscribe().await {
                    Ok(subscribed) => break subscribed,
                    Err(e) => {
                        tracing::debug!(error = %e, "cannot resubscribe to the change bus yet");
                    }
                }
            };
            backoff.reset();
            self.connected.store(true, Ordering::SeqCst);
            tracing::info!(
                channel = %self.link.channel,
                "the change bus's Redis subscription is back: every listener resyncs"
            );
            // Only once subscribed: a change published between a resync and the
            // subscription would be missed.
            self.local.resync();
        }
    }

    /// Delivers the channel's messages until the connection is lost; why it was.
    async fn follow(
        &self,
        sink: &mut PubSubSink,
        stream: &mut PubSubStream,
        refusals: &mut Refusals,
    ) -> String {
        loop {
            let message = tokio::select! {
                message = stream.next() => message,
                () = tokio::time::sleep(self.health_check) => {
                    match tokio::time::timeout(self.link.timeout, sink.ping::<redis::Value>()).await {
                        Ok(Ok(_)) => continue,
                        Ok(Err(e)) => return format!("PING failed: {e}"),
                        Err(_) => return "no answer to PING".to_owned(),
                    }
                }
            };
            let Some(message) = message else {
                return "the connection closed".to_owned();
            };
            match wire::decode(message.get_payload_bytes(), self.max_message_bytes) {
                Ok(message) if message.from == self.id => {}
                Ok(message) => {
                    #[cfg(feature = "metrics")]
                    crate::metrics::bus_lag(message.sent_ms);
                    match message.event {
                        BusEvent::Change(change) => self.local.publish(change),
                        BusEvent::Resync => self.local.resync(),
                    }
                }
                Err(reason) => refusals.refused(&reason),
            }
        }
    }
}

/// The task that publishes this instance's changes.
pub(super) struct Publisher {
    pub(super) link: Link,
    pub(super) id: String,
    pub(super) queue: mpsc::Receiver<BusEvent>,
    pub(super) lost: Arc<AtomicBool>,
    pub(super) connection: Option<MultiplexedConnection>,
}

impl Publisher {
    pub(super) async fn run(mut self) {
        let mut backoff = Backoff::new(self.link.backoff);
        // Whether Redis was found unreachable since the last message published: logged
        // once when it happens and once when it is over, not at every retry.
        let mut down = false;
        // Ends when the bus is dropped (the queue's sender with it).
        while let Some(mut next) = self.queue.recv().await {
            loop {
                if self.connection.is_none() {
                    match self.connect().await {
                        Ok(connection) => self.connection = Some(connection),
                        Err(e) => {
                            self.failed("cannot connect", &e, &mut down);
                            tokio::time::sleep(backoff.next()).await;
                            continue;
                        }
                    }
                }
                if self.lost.swap(false, Ordering::SeqCst) {
                    // What waits is covered by the resync: it goes in their place.
                    while self.queue.try_recv().is_ok() {}
                    next = BusEvent::Resync;
                }
                match self.send(&next).await {
                    Ok(()) => break,
                    Err(e) => {
                        self.connection = None;
                        self.failed("cannot publish", &e, &mut down);
                        tokio::time::sleep(backoff.next()).await;
                    }
                }
            }
            backoff.reset();
            if std::mem::take(&mut down) {
                tracing::info!(
                    channel = %self.link.channel,
                    "the change bus publishes again: the other instances were told to resync"
                );
            }
        }
    }

    /// Marks the change lost (a resync will stand for it), and logs the outage when it
    /// begins.
    fn failed(&self, what: &str, error: &redis::RedisError, down: &mut bool) {
        self.lost.store(true, Ordering::SeqCst);
        if !std::mem::replace(down, true) {
            tracing::warn!(
                channel = %self.link.channel,
                %error,
                "{what} on the change bus: listeners on other instances miss this \
                 instance's changes until Redis is back, then resync"
            );
        }
    }

    async fn connect(&self) -> Result<MultiplexedConnection, redis::RedisError> {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.link.timeout))
            .set_response_timeout(Some(self.link.timeout));
        tokio::time::timeout(
            self.link.timeout,
            self.link
                .client
                .get_multiplexed_async_connection_with_config(&config),
        )
        .await
        .unwrap_or_else(|_| Err(timed_out("connecting")))
    }

    async fn send(&mut self, event: &BusEvent) -> Result<(), redis::RedisError> {
        let Some(connection) = &mut self.connection else {
            return Err(timed_out("connecting"));
        };
        let message = wire::encode(&self.id, event);
        let mut command = redis::cmd("PUBLISH");
        command.arg(&self.link.channel).arg(message);
        tokio::time::timeout(self.link.timeout, command.query_async::<i64>(connection))
            .await
            .unwrap_or_else(|_| Err(timed_out("publishing")))
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::Backoff;
    use std::time::Duration;

    #[test]
    fn the_backoff_doubles_to_its_maximum_with_jitter_and_resets() {
        let ms = Duration::from_millis;
        let mut backoff = Backoff::new((ms(100), ms(700)));
        for full in [100, 200, 400, 700, 700] {
            let wait = backoff.next();
            assert!(
                ms(full / 2) <= wait && wait <= ms(full),
                "{wait:?} within [{}, {full}] ms",
                full / 2
            );
        }
        backoff.reset();
        assert!(backoff.next() <= ms(100));
        // However long the settings, the arithmetic never overflows.
        let mut backoff = Backoff::new((Duration::MAX / 3, Duration::MAX));
        for _ in 0..4 {
            assert!(backoff.next() >= Duration::MAX / 6);
        }
    }
}
