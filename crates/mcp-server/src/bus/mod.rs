//! The change bus: how a [`Server`](crate::Server) hears of the changes its
//! `subscriptions/listen` streams report, its own and, in a fleet, those made on the other
//! instances.
//!
//! Every `add_tool`, `remove_prompt`, `add_resource`, `resource_updated`… publishes a
//! [`Change`] on the server's bus, and every listen stream holds a [`Subscription`] to it.
//! The default bus, [`InProcessBus`], is a broadcast channel inside the process: a listener
//! hears what its own server changed. A fleet of servers behind a load balancer installs a
//! shared bus with [`ServerBuilder::change_bus`](crate::ServerBuilder::change_bus), so that
//! a listener connected to one instance hears a tool added on another: `RedisChangeBus`
//! (feature `change-bus-redis`) is one, and any type implementing [`ChangeBus`] is another.
//!
//! A subscription yields changes and, apart from them, [`BusEvent::Resync`]: "you may have
//! missed changes", after it fell behind or after the bus lost its link to the other
//! instances for a while. A listen stream answers it by sending every list-changed
//! notification it subscribed to and a `resources/updated` for each resource it watches,
//! which a client can always act on safely (it lists or reads again), so nothing is missed
//! in silence.
//!
//! ```
//! use mcp_server::Server;
//! use mcp_server::bus::{BusEvent, Change, ChangeBus, InProcessBus};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! // A handle kept by the caller shares the server's bus: it sees what the server
//! // publishes, and can tell every listener to resynchronise.
//! let bus = InProcessBus::with_capacity(256);
//! let server = Server::builder("fleet-member", "1.0")
//!     .enable(true, false, true)
//!     .change_bus(bus.clone())
//!     .build()
//!     .unwrap();
//! let mut changes = bus.subscribe();
//! server.resource_updated("file:///notes.txt");
//! assert_eq!(
//!     changes.recv().await,
//!     Some(BusEvent::Change(Change::ResourceUpdated { uri: "file:///notes.txt".into() }))
//! );
//! bus.resync();
//! assert_eq!(changes.recv().await, Some(BusEvent::Resync));
//! # }
//! ```

use std::sync::Arc;

use tokio::sync::broadcast;

#[cfg(feature = "change-bus-redis")]
mod redis;
#[cfg(any(feature = "change-bus-redis", test))]
mod wire;

#[cfg(feature = "change-bus-redis")]
pub use redis::{RedisChangeBus, RedisChangeBusBuilder};

/// Something that changed in a server, as its listeners hear it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Change {
    /// A tool was added, replaced or removed (`notifications/tools/list_changed`).
    ToolsListChanged,
    /// A prompt was added, replaced or removed (`notifications/prompts/list_changed`).
    PromptsListChanged,
    /// A resource or a resource template was added, replaced or removed
    /// (`notifications/resources/list_changed`).
    ResourcesListChanged,
    /// The resource at `uri` changed (`notifications/resources/updated`, to the listeners
    /// that watch it).
    ResourceUpdated {
        /// The resource's URI, as the server named it.
        uri: String,
    },
}

/// What a [`Subscription`] yields.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BusEvent {
    /// A change, published after the subscription began.
    Change(Change),
    /// Changes may have been missed: the subscriber fell behind, or the bus was cut off
    /// from the other instances for a while. Whoever acts on changes should act as if
    /// everything it follows changed.
    Resync,
}

/// A bus that carries [`Change`]s to every listener of a server, and in a fleet to the
/// other servers' listeners too.
///
/// Installed with [`ServerBuilder::change_bus`](crate::ServerBuilder::change_bus); the
/// default is an [`InProcessBus`]. The trait is object safe: the server keeps the bus as an
/// `Arc<dyn ChangeBus>` (except an [`InProcessBus`], which it keeps as it is).
///
/// A bus of one's own fans its changes out through an [`InProcessBus`], which is what makes
/// a [`Subscription`]: it [`publish`](InProcessBus::publish)es there what this server
/// changes and what arrives from the others, and calls
/// [`resync`](InProcessBus::resync) when it may have missed some.
pub trait ChangeBus: Send + Sync + 'static {
    /// Publishes a change this server made. It must reach this process's subscribers at
    /// once, whatever happens to the link to other instances, and must not block: it is
    /// called with the server's registry just changed, from synchronous code.
    fn publish(&self, change: Change);

    /// Subscribes to every change published after this call, this server's and, for a
    /// shared bus, the other instances'.
    fn subscribe(&self) -> Subscription;
}

impl<B: ChangeBus + ?Sized> ChangeBus for Arc<B> {
    fn publish(&self, change: Change) {
        (**self).publish(change);
    }

    fn subscribe(&self) -> Subscription {
        (**self).subscribe()
    }
}

/// A subscription to a [`ChangeBus`]: the changes published after it began, and a
/// [`BusEvent::Resync`] when some may have been missed.
#[derive(Debug)]
pub struct Subscription {
    events: broadcast::Receiver<BusEvent>,
}

impl Subscription {
    /// The next event, or `None` once the bus is gone. A subscriber that fell more than the
    /// bus's capacity behind gets [`BusEvent::Resync`], then the changes the bus still
    /// holds.
    ///
    /// Cancel safe: in a `select!`, an event is never lost when another branch wins.
    pub async fn recv(&mut self) -> Option<BusEvent> {
        match self.events.recv().await {
            Ok(event) => Some(event),
            Err(broadcast::error::RecvError::Lagged(_)) => Some(BusEvent::Resync),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}

/// The default bus: a broadcast channel inside the process, so listeners hear the changes
/// of their own server only.
///
/// Clones share one channel. It holds the last [`capacity`](Self::with_capacity) events
/// (64 by default) for the slowest subscriber; one that falls further behind gets a
/// [`BusEvent::Resync`] in place of what it missed, never a wait for the publisher.
#[derive(Debug, Clone)]
pub struct InProcessBus {
    events: broadcast::Sender<BusEvent>,
}

impl InProcessBus {
    /// How many events the bus holds for its slowest subscriber by default.
    pub const DEFAULT_CAPACITY: usize = 64;

    /// A bus of the default capacity (64).
    pub fn new() -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY)
    }

    /// A bus that holds `capacity` events for its slowest subscriber, rounded up to a power
    /// of two (the broadcast channel's ring), and at least 1. A subscriber that falls
    /// further behind gets a [`BusEvent::Resync`].
    pub fn with_capacity(capacity: usize) -> Self {
        InProcessBus {
            events: broadcast::channel(capacity.max(1)).0,
        }
    }

    /// Publishes `change` to every subscriber (nobody hearing it is no error).
    pub fn publish(&self, change: Change) {
        let _ = self.events.send(BusEvent::Change(change));
    }

    /// Tells every subscriber that it may have missed changes.
    pub fn resync(&self) {
        let _ = self.events.send(BusEvent::Resync);
    }

    /// Subscribes to every event sent after this call.
    pub fn subscribe(&self) -> Subscription {
        Subscription {
            events: self.events.subscribe(),
        }
    }
}

impl Default for InProcessBus {
    fn default() -> Self {
        Self::new()
    }
}

impl ChangeBus for InProcessBus {
    fn publish(&self, change: Change) {
        InProcessBus::publish(self, change);
    }

    fn subscribe(&self) -> Subscription {
        InProcessBus::subscribe(self)
    }
}

/// The bus a server holds: the default one as it is, so that a server that keeps it pays
/// no dynamic call, or one installed by the builder.
#[derive(Clone)]
pub(crate) enum Bus {
    InProcess(InProcessBus),
    Installed(Arc<dyn ChangeBus>),
}

impl Bus {
    /// `bus` as the server keeps it: an [`InProcessBus`] as it is.
    pub(crate) fn from_installed(bus: impl ChangeBus) -> Self {
        let any: &dyn std::any::Any = &bus;
        match any.downcast_ref::<InProcessBus>() {
            Some(local) => Bus::InProcess(local.clone()),
            None => Bus::Installed(Arc::new(bus)),
        }
    }

    pub(crate) fn publish(&self, change: Change) {
        match self {
            Bus::InProcess(bus) => bus.publish(change),
            Bus::Installed(bus) => bus.publish(change),
        }
    }

    pub(crate) fn subscribe(&self) -> Subscription {
        match self {
            Bus::InProcess(bus) => bus.subscribe(),
            Bus::Installed(bus) => bus.subscribe(),
        }
    }
}

impl Default for Bus {
    fn default() -> Self {
        Bus::InProcess(InProcessBus::new())
    }
}

#[cfg(test)]
mod tests {
    use super::{Bus, BusEvent, Change, ChangeBus, InProcessBus, Subscription};
    use std::sync::Arc;

    fn tools() -> BusEvent {
        BusEvent::Change(Change::ToolsListChanged)
    }

    /// Whatever `subscription` has ready now, without waiting.
    fn ready(subscription: &mut Subscription) -> Vec<BusEvent> {
        let mut events = Vec::new();
        while let Some(Some(event)) = futures_now(subscription.recv()) {
            events.push(event);
        }
        events
    }

    /// The output of `future` if it is ready on its first poll.
    fn futures_now<F: std::future::Future>(future: F) -> Option<F::Output> {
        let mut future = std::pin::pin!(future);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match future.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(output) => Some(output),
            std::task::Poll::Pending => None,
        }
    }

    #[test]
    fn a_subscriber_at_the_capacity_misses_nothing_and_one_past_it_gets_a_resync() {
        let bus = InProcessBus::new();
        assert_eq!(InProcessBus::DEFAULT_CAPACITY, 64);
        let mut at = bus.subscribe();
        for _ in 0..64 {
            bus.publish(Change::ToolsListChanged);
        }
        assert_eq!(ready(&mut at), vec![tools(); 64], "64 held, no resync");

        let mut past = bus.subscribe();
        for _ in 0..65 {
            bus.publish(Change::ToolsListChanged);
        }
        let events = ready(&mut past);
        assert_eq!(events[0], BusEvent::Resync, "the lag is reported first");
        assert_eq!(
            events[1..],
            vec![tools(); 64],
            "then what the bus still holds"
        );
    }

    #[test]
    fn a_chosen_capacity_is_kept_and_at_least_one() {
        let bus = InProcessBus::with_capacity(4);
        let mut subscription = bus.subscribe();
        for _ in 0..5 {
            bus.publish(Change::PromptsListChanged);
        }
        assert_eq!(ready(&mut subscription)[0], BusEvent::Resync);

        let bus = InProcessBus::with_capacity(0);
        let mut subscription = bus.subscribe();
        bus.publish(Change::ResourcesListChanged);
        assert_eq!(
            ready(&mut subscription),
            [BusEvent::Change(Change::ResourcesListChanged)]
        );
    }

    #[test]
    fn resync_reaches_every_subscriber_and_only_later_changes_are_heard() {
        let bus = InProcessBus::new();
        bus.publish(Change::ToolsListChanged);
        let (mut a, mut b) = (bus.subscribe(), bus.subscribe());
        bus.resync();
        bus.publish(Change::ResourceUpdated { uri: "x:y".into() });
        let expected = [
            BusEvent::Resync,
            BusEvent::Change(Change::ResourceUpdated { uri: "x:y".into() }),
        ];
        assert_eq!(ready(&mut a), expected);
        assert_eq!(ready(&mut b), expected);
    }

    #[test]
    fn a_subscription_ends_when_the_bus_is_gone() {
        let bus = InProcessBus::new();
        let mut subscription = bus.subscribe();
        drop(bus);
        assert_eq!(futures_now(subscription.recv()), Some(None));
    }

    /// A bus of one's own around an [`InProcessBus`], counting what it publishes.
    struct Counting(InProcessBus, std::sync::atomic::AtomicUsize);

    impl ChangeBus for Counting {
        fn publish(&self, change: Change) {
            self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.0.publish(change);
        }
        fn subscribe(&self) -> Subscription {
            self.0.subscribe()
        }
    }

    #[test]
    fn an_in_process_bus_is_kept_as_it_is_and_any_other_behind_the_trait() {
        assert!(matches!(
            Bus::from_installed(InProcessBus::new()),
            Bus::InProcess(_)
        ));
        let counting = Arc::new(Counting(InProcessBus::new(), 0.into()));
        let bus = Bus::from_installed(Arc::clone(&counting));
        assert!(matches!(bus, Bus::Installed(_)));
        let mut subscription = bus.subscribe();
        bus.publish(Change::ToolsListChanged);
        assert_eq!(ready(&mut subscription), [tools()]);
        assert_eq!(counting.1.load(std::sync::atomic::Ordering::SeqCst), 1);
        // The trait is object safe.
        let _: Box<dyn ChangeBus> = Box::new(InProcessBus::new());
    }
}
