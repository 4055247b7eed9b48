//! Where the notifications tied to one inbound request go ([`NotificationSink`]), and the
//! lazily made channel the HTTP transport hands its handlers ([`LazyChannel`]).
//!
//! The progress and logging notifications a handler sends while it runs belong to its
//! request: over stdio they go out on the connection, over Streamable HTTP on the
//! request's own SSE stream (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Waker};

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::mpsc;

use crate::error::Error;
use crate::message::encode_notification;
use crate::peer::Peer;

/// Where the notifications tied to one request go: the connection (stdio and other
/// duplex transports), or a channel the transport drains (an HTTP response stream).
#[derive(Debug, Clone)]
pub struct NotificationSink(SinkKind);

#[derive(Debug, Clone)]
enum SinkKind {
    Peer(Peer),
    Channel(mpsc::Sender<Bytes>),
    Lazy(Arc<LazyChannel>),
}

/// A request's notification channel that is made only when its handler sends the first
/// notification ([`NotificationSink::lazy`]). Most requests send none, and a tokio channel
/// is two allocations (about 1.6 KB with its first block of slots) and the work of
/// making and dropping them on every request.
///
/// The transport holds it beside the handler: [`poll_receiver`](Self::poll_receiver)
/// hands over the receiving half once the channel exists, and [`close`](Self::close) ends
/// it (a notification sent after that fails as one sent to a closed response stream does).
/// Dropping the receiving half closes the channel as usual; its sending half lives in the
/// slot, so the receiver sees the end once the slot and every sink made from it are gone.
///
/// ```
/// use std::sync::Arc;
/// use mcp_jsonrpc::{LazyChannel, NotificationSink};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let slot = Arc::new(LazyChannel::new(8));
/// let sink = NotificationSink::lazy(Arc::clone(&slot));
/// sink.notify::<()>("notifications/message", None).await.unwrap();
/// let mut events = slot.close().expect("the first notification made the channel");
/// assert!(events.try_recv().is_ok());
/// drop(events);
/// assert!(sink.notify::<()>("notifications/message", None).await.is_err());
/// # });
/// ```
#[derive(Debug)]
pub struct LazyChannel {
    capacity: usize,
    /// Set once, under `state`'s lock, when the first notification makes the channel.
    sender: OnceLock<mpsc::Sender<Bytes>>,
    state: Mutex<LazyState>,
}

#[derive(Debug, Default)]
struct LazyState {
    /// The transport gave up on the events: no channel may be made any more.
    closed: bool,
    /// The receiving half, from the channel's making until the transport takes it.
    receiver: Option<mpsc::Receiver<Bytes>>,
    /// The transport's task, woken when the channel is made.
    waker: Option<Waker>,
}

impl LazyChannel {
    /// A slot for a channel of `capacity` frames (at least one), not made yet.
    pub fn new(capacity: usize) -> Self {
        LazyChannel {
            capacity: capacity.max(1),
            sender: OnceLock::new(),
            state: Mutex::new(LazyState::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, LazyState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The receiving half, once a notification has made the channel (once only: later
    /// calls return `None`). Until then `None`, and the task of `cx` is woken when the
    /// channel is made.
    pub fn poll_receiver(&self, cx: &mut Context<'_>) -> Option<mpsc::Receiver<Bytes>> {
        let mut state = self.lock();
        if let Some(receiver) = state.receiver.take() {
            return Some(receiver);
        }
        if self.sender.get().is_none() && !state.closed {
            match &mut state.waker {
                Some(waker) => waker.clone_from(cx.waker()),
                slot @ None => *slot = Some(cx.waker().clone()),
            }
        }
        None
    }

    /// Closes the slot: a notification not sent yet fails from now on if it would have
    /// made the channel. Returns the receiving half if the channel was made and not taken,
    /// with the frames sent so far (dropping it closes the channel).
    pub fn close(&self) -> Option<mpsc::Receiver<Bytes>> {
        let mut state = self.lock();
        state.closed = true;
        state.waker = None;
        state.receiver.take()
    }

    /// The sending half, made with the channel by the first caller; `None` once closed
    /// before that.
    fn sender(&self) -> Option<&mpsc::Sender<Bytes>> {
        if let Some(sender) = self.sender.get() {
            return Some(sender);
        }
        let mut state = self.lock();
        if let Some(sender) = self.sender.get() {
            return Some(sender);
        }
        if state.closed {
            return None;
        }
        let (tx, rx) = mpsc::channel(self.capacity);
        state.receiver = Some(rx);
        let waker = state.waker.take();
        let sender = self.sender.get_or_init(|| tx);
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        Some(sender)
    }
}

impl NotificationSink {
    /// A sink that hands encoded notification frames to `tx`; the receiving side writes
    /// them out (for HTTP, as events of the request's SSE stream). Sending waits while the
    /// channel is full, so a slow reader slows the handler rather than growing memory.
    pub fn channel(tx: mpsc::Sender<Bytes>) -> Self {
        NotificationSink(SinkKind::Channel(tx))
    }

    /// The sink of a request that arrived on `peer`'s connection.
    pub(crate) fn peer(peer: Peer) -> Self {
        NotificationSink(SinkKind::Peer(peer))
    }

    /// A sink whose channel `slot` makes at the first notification ([`LazyChannel`]).
    pub fn lazy(slot: Arc<LazyChannel>) -> Self {
        NotificationSink(SinkKind::Lazy(slot))
    }

    /// Sends a notification.
    pub async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<(), Error> {
        let tx = match &self.0 {
            SinkKind::Peer(peer) => return peer.notify(method, params).await,
            SinkKind::Channel(tx) => Some(tx),
            SinkKind::Lazy(slot) => slot.sender(),
        };
        let closed = || Error::Closed(Some("the request's response stream closed".to_owned()));
        let tx = tx.ok_or_else(closed)?;
        let frame = encode_notification(method, params).map_err(|source| Error::Encode {
            method: method.to_owned(),
            source,
        })?;
        tx.send(frame).await.map_err(|_| closed())
    }
}
