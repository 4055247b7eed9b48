//! [`RedisChangeBus`] (feature `change-bus-redis`): a change bus shared by a fleet of
//! servers through a Redis pub/sub channel, so that a listener on one instance hears what
//! another changed.
//!
//! Each bus has a random instance id. What this instance changes goes to its own
//! subscribers at once, then to the channel, through a bounded queue and a task that
//! publishes on a connection of its own; what arrives on the channel from other instances
//! goes to the subscribers, and this instance's own messages coming back are ignored. A
//! dedicated pub/sub connection, watched with a `PING` after each quiet
//! [`health_check`](RedisChangeBusBuilder::health_check) interval, follows the channel.
//!
//! **Degraded mode.** While Redis cannot be reached, each instance's listeners still hear
//! that instance's changes (which is all they would hear without a shared bus), and the
//! loss is logged at `warn`. Both connections are tried again with a growing, jittered
//! backoff. Once the subscription is back every subscriber gets a
//! [`BusEvent::Resync`]: it may have missed other instances' changes. Once the publishing
//! connection is back after changes could not be published (or were dropped because the
//! queue was full, or too long to publish), the bus publishes a `resync` message, which
//! makes every other instance resync its subscribers too.
//!
//! **Trust.** Anything that can publish on the channel can make listeners hear changes
//! (and so list and read again), and nothing more: a message is at most
//! [`max_message_bytes`](RedisChangeBusBuilder::max_message_bytes) long, read strictly, and
//! one that is not exactly a message of this version is dropped with a warning (at most
//! one a second, with the count of those not logged). The Redis client reads a whole
//! message before the bound is checked, so Redis's own `proto-max-bulk-len` (512 MB by
//! default) is what bounds that buffer: give the channel to the fleet only. A URI passes
//! through as the string it was.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;

use super::wire;
use super::{BusEvent, Change, ChangeBus, InProcessBus, Subscription};
use crate::Error;
use tasks::{Follower, Link, Publisher};

mod tasks;

/// A [`ChangeBus`] shared through a Redis pub/sub channel (feature `change-bus-redis`).
///
/// Cheap to clone: clones share one bus, whose two connections and tasks stop when the
/// last clone is dropped. Install it with
/// [`ServerBuilder::change_bus`](crate::ServerBuilder::change_bus), one bus per server.
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_server::Error> {
/// use mcp_server::Server;
/// use mcp_server::bus::RedisChangeBus;
///
/// let bus = RedisChangeBus::builder("redis://127.0.0.1:6379/")
///     .channel("prod:mcp:changes")
///     .connect()
///     .await?;
/// let server = Server::builder("fleet", "1.0")
///     .enable(true, true, true)
///     .change_bus(bus)
///     .build()?;
/// // A listener on any instance of the fleet hears this.
/// server.resource_updated("file:///shared/notes.txt");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisChangeBus {
    shared: Arc<Shared>,
}

struct Shared {
    id: String,
    channel: String,
    local: InProcessBus,
    outgoing: mpsc::Sender<BusEvent>,
    max_message_bytes: usize,
    /// Set when a change of this instance did not reach the channel: the publisher then
    /// publishes a resync once it can.
    lost: Arc<AtomicBool>,
    connected: Arc<AtomicBool>,
    /// The two tasks, stopped with the last clone.
    tasks: [tokio::task::AbortHandle; 2],
}

impl Drop for Shared {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl std::fmt::Debug for RedisChangeBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisChangeBus")
            .field("id", &self.shared.id)
            .field("channel", &self.shared.channel)
            .field("connected", &self.is_connected())
            .finish_non_exhaustive()
    }
}

/// Settings of a [`RedisChangeBus`], then [`connect`](Self::connect).
#[derive(Debug, Clone)]
#[must_use]
pub struct RedisChangeBusBuilder {
    url: String,
    channel: String,
    capacity: usize,
    max_message_bytes: usize,
    publish_queue: usize,
    timeout: Duration,
    backoff: (Duration, Duration),
    health_check: Duration,
}

impl RedisChangeBus {
    /// The channel used by default: `mcp:changes`.
    pub const DEFAULT_CHANNEL: &'static str = "mcp:changes";

    /// Starts configuring a bus on the Redis at `url` (`redis://host:port/db`; `rediss://`
    /// with TLS is not compiled in).
    pub fn builder(url: impl Into<String>) -> RedisChangeBusBuilder {
        RedisChangeBusBuilder {
            url: url.into(),
            channel: Self::DEFAULT_CHANNEL.to_owned(),
            capacity: InProcessBus::DEFAULT_CAPACITY,
            max_message_bytes: wire::DEFAULT_MAX_MESSAGE_BYTES,
            publish_queue: 1024,
            timeout: Duration::from_secs(5),
            backoff: (Duration::from_millis(100), Duration::from_secs(5)),
            health_check: Duration::from_secs(15),
        }
    }

    /// Connects with every setting at its default (see [`RedisChangeBusBuilder`]).
    ///
    /// # Errors
    /// As [`RedisChangeBusBuilder::connect`].
    pub async fn connect(url: impl Into<String>) -> Result<Self, Error> {
        Self::builder(url).connect().await
    }

    /// This instance's random id, which its messages carry (32 lowercase hex digits).
    pub fn instance_id(&self) -> &str {
        &self.shared.id
    }

    /// The channel it publishes on and follows.
    pub fn channel(&self) -> &str {
        &self.shared.channel
    }

    /// Whether the subscription to the channel is up now: `false` while the bus runs in
    /// its degraded mode (module docs), hearing this instance's changes only.
    pub fn is_connected(&self) -> bool {
        self.shared.connected.load(Ordering::SeqCst)
    }
}

impl RedisChangeBusBuilder {
    /// Sets the channel (default [`RedisChangeBus::DEFAULT_CHANNEL`]); the instances of one
    /// fleet share it, and another fleet on the same Redis takes another.
    pub fn channel(mut self, channel: impl Into<String>) -> Self {
        self.channel = channel.into();
        self
    }

    /// Sets how many events the bus holds for its slowest subscriber in this process
    /// (default 64; see [`InProcessBus::with_capacity`]).
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// Sets the longest message read from the channel, and written to it (default 64 KiB,
    /// at least 256 bytes). A longer one read is dropped with a warning; a change whose
    /// message would be longer (a very long URI) reaches this instance's subscribers and is
    /// published as a `resync`.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes.max(256);
        self
    }

    /// Sets how many changes may wait to be published (default 1024, at least 1). Past it
    /// a change reaches this instance's subscribers only, and a `resync` is published
    /// once the queue has room.
    pub fn publish_queue(mut self, changes: usize) -> Self {
        self.publish_queue = changes.max(1);
        self
    }

    /// Sets how long connecting, subscribing, a `PUBLISH` or a health-check `PING` may take
    /// (default 5 s, at least 10 ms); past it the connection is taken as lost.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(FLOOR);
        self
    }

    /// Sets the wait before reconnecting: `min` after the first failure, doubled after
    /// each failure in a row up to `max`, each wait cut by up to half at random so that a
    /// fleet does not reconnect in step (default 100 ms to 5 s; `min` at least 10 ms, so
    /// that a Redis that refuses at once is not called in a loop, and `max` at least
    /// `min`).
    pub fn reconnect_backoff(mut self, min: Duration, max: Duration) -> Self {
        let min = min.max(FLOOR);
        self.backoff = (min, max.max(min));
        self
    }

    /// Sets how long the subscription may stay quiet before a `PING` checks it (default
    /// 15 s, at least 10 ms): a connection cut off without a word (a network partition) is
    /// found within this plus the [`timeout`](Self::timeout).
    pub fn health_check(mut self, interval: Duration) -> Self {
        self.health_check = interval.max(FLOOR);
        self
    }

    /// Connects and subscribes: a change another instance publishes after this returns
    /// reaches this instance's subscribers. Later losses of Redis are recovered from (see
    /// the module docs); this first connection is not retried, so that a wrong URL or an
    /// unreachable Redis is reported at start.
    ///
    /// Needs a tokio runtime with time enabled, where it spawns the bus's two tasks.
    ///
    /// # Errors
    /// [`Error::ChangeBus`] when the URL is invalid or the subscription cannot be made
    /// within the timeout; [`Error::Random`] when the instance id cannot be drawn.
    pub async fn connect(self) -> Result<RedisChangeBus, Error> {
        let client = redis::Client::open(self.url.as_str()).map_err(bus_error)?;
        let id = wire::new_id().ok_or(Error::Random)?;
        let link = Link {
            client,
            channel: self.channel,
            timeout: self.timeout,
            backoff: self.backoff,
        };
        let (sink, stream) = link.subscribe().await.map_err(bus_error)?;
        let local = InProcessBus::with_capacity(self.capacity);
        let lost = Arc::new(AtomicBool::new(false));
        let connected = Arc::new(AtomicBool::new(true));
        let (outgoing, queue) = mpsc::channel(self.publish_queue);
        let follower = Follower {
            link: link.clone(),
            id: id.clone(),
            local: local.clone(),
            connected: Arc::clone(&connected),
            max_message_bytes: self.max_message_bytes,
            health_check: self.health_check,
        };
        let publisher = Publisher {
            link: link.clone(),
            id: id.clone(),
            queue,
            lost: Arc::clone(&lost),
            connection: None,
        };
        let tasks = [
            tokio::spawn(follower.run(sink, stream)).abort_handle(),
            tokio::spawn(publisher.run()).abort_handle(),
        ];
        Ok(RedisChangeBus {
            shared: Arc::new(Shared {
                id,
                channel: link.channel,
                local,
                outgoing,
                max_message_bytes: self.max_message_bytes,
                lost,
                connected,
                tasks,
            }),
        })
    }
}

/// The shortest timeout, backoff and health-check interval: shorter ones would make the
/// tasks spin.
const FLOOR: Duration = Duration::from_millis(10);

fn bus_error(e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::ChangeBus(Box::new(e))
}

impl ChangeBus for RedisChangeBus {
    fn publish(&self, change: Change) {
        let shared = &*self.shared;
        shared.local.publish(change.clone());
        let mut event = BusEvent::Change(change);
        // A message's length is known once it is written. A change too long to publish is
        // one the others would refuse: they are told to resync instead.
        if matches!(event, BusEvent::Change(Change::ResourceUpdated { .. }))
            && wire::encode(&shared.id, &event).len() > shared.max_message_bytes
        {
            tracing::warn!(
                limit = shared.max_message_bytes,
                "a resources/updated is too long to publish on the change bus; the other \
                 instances are told to resync instead"
            );
            shared.lost.store(true, Ordering::SeqCst);
            event = BusEvent::Resync;
        }
        if let Err(mpsc::error::TrySendError::Full(_)) = shared.outgoing.try_send(event)
            && !shared.lost.swap(true, Ordering::SeqCst)
        {
            tracing::warn!(
                "the change bus's publish queue is full: changes reach this instance's \
                 listeners only, and the others are told to resync once it drains"
            );
        }
    }

    fn subscribe(&self) -> Subscription {
        self.shared.local.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::{BusEvent, Change, ChangeBus, InProcessBus, RedisChangeBus, Shared, wire};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;
    use tokio::sync::mpsc;

    #[test]
    fn the_settings_have_their_defaults_and_floors() {
        let builder = RedisChangeBus::builder("redis://127.0.0.1/");
        assert_eq!(builder.channel, "mcp:changes");
        assert_eq!(builder.capacity, 64);
        assert_eq!(builder.max_message_bytes, 65_536);
        assert_eq!(builder.publish_queue, 1024);
        assert_eq!(builder.timeout, Duration::from_secs(5));
        assert_eq!(
            builder.backoff,
            (Duration::from_millis(100), Duration::from_secs(5))
        );
        assert_eq!(builder.health_check, Duration::from_secs(15));
        let builder = builder
            .max_message_bytes(0)
            .publish_queue(0)
            .reconnect_backoff(Duration::from_secs(2), Duration::from_secs(1));
        assert_eq!(builder.max_message_bytes, 256);
        assert_eq!(builder.publish_queue, 1);
        assert_eq!(
            builder.backoff,
            (Duration::from_secs(2), Duration::from_secs(2))
        );
        let ms = Duration::from_millis;
        let builder = builder
            .timeout(Duration::ZERO)
            .health_check(ms(9))
            .reconnect_backoff(Duration::ZERO, Duration::ZERO);
        assert_eq!(
            (builder.timeout, builder.health_check, builder.backoff),
            (ms(10), ms(10), (ms(10), ms(10)))
        );
        let builder = builder
            .timeout(ms(11))
            .health_check(ms(10))
            .reconnect_backoff(ms(10), ms(11));
        assert_eq!(
            (builder.timeout, builder.health_check, builder.backoff),
            (ms(11), ms(10), (ms(10), ms(11)))
        );
    }

    /// A bus with no Redis behind it: its publish queue is handed back to the test, which
    /// plays the publisher.
    fn detached(
        queue: usize,
        max_message_bytes: usize,
    ) -> (RedisChangeBus, mpsc::Receiver<BusEvent>) {
        let (outgoing, queue) = mpsc::channel(queue);
        let idle = || tokio::spawn(std::future::pending::<()>()).abort_handle();
        let bus = RedisChangeBus {
            shared: Arc::new(Shared {
                id: wire::new_id().unwrap(),
                channel: "test".to_owned(),
                local: InProcessBus::new(),
                outgoing,
                max_message_bytes,
                lost: Arc::new(AtomicBool::new(false)),
                connected: Arc::new(AtomicBool::new(true)),
                tasks: [idle(), idle()],
            }),
        };
        (bus, queue)
    }

    fn lost(bus: &RedisChangeBus) -> bool {
        bus.shared.lost.load(Ordering::SeqCst)
    }

    #[tokio::test]
    async fn a_change_past_the_publish_queue_reaches_local_subscribers_and_asks_for_a_resync() {
        let (bus, mut queue) = detached(2, wire::DEFAULT_MAX_MESSAGE_BYTES);
        let mut local = bus.subscribe();
        bus.publish(Change::ToolsListChanged);
        bus.publish(Change::PromptsListChanged);
        assert!(!lost(&bus), "at the queue's length nothing is lost");
        bus.publish(Change::ResourcesListChanged);
        assert!(lost(&bus), "one past it is, and the publisher will say so");
        for change in [
            Change::ToolsListChanged,
            Change::PromptsListChanged,
            Change::ResourcesListChanged,
        ] {
            assert_eq!(local.recv().await, Some(BusEvent::Change(change)));
        }
        assert_eq!(
            queue.recv().await,
            Some(BusEvent::Change(Change::ToolsListChanged))
        );
        assert_eq!(
            queue.recv().await,
            Some(BusEvent::Change(Change::PromptsListChanged))
        );
        assert!(queue.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_change_too_long_to_publish_reaches_local_subscribers_and_a_resync_goes_instead() {
        let max = 1024;
        let (bus, mut queue) = detached(8, max);
        let mut local = bus.subscribe();
        let framing = wire::encode(
            bus.instance_id(),
            &BusEvent::Change(Change::ResourceUpdated { uri: String::new() }),
        )
        .len();
        let at = "u".repeat(max - framing);
        bus.publish(Change::ResourceUpdated { uri: at.clone() });
        assert!(!lost(&bus));
        assert_eq!(
            queue.recv().await,
            Some(BusEvent::Change(Change::ResourceUpdated {
                uri: at.clone()
            }))
        );
        let past = format!("{at}u");
        bus.publish(Change::ResourceUpdated { uri: past.clone() });
        assert!(lost(&bus));
        assert_eq!(queue.recv().await, Some(BusEvent::Resync));
        for uri in [at, past] {
            assert_eq!(
                local.recv().await,
                Some(BusEvent::Change(Change::ResourceUpdated { uri }))
            );
        }
    }

    #[tokio::test]
    async fn dropping_the_last_clone_stops_the_tasks() {
        let (bus, _queue) = detached(1, 1024);
        let tasks = bus.shared.tasks.clone();
        let clone = bus.clone();
        drop(bus);
        assert!(tasks.iter().all(|t| !t.is_finished()));
        drop(clone);
        tokio::task::yield_now().await;
        assert!(tasks.iter().all(tokio::task::AbortHandle::is_finished));
    }
}
