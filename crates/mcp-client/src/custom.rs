//! Seams for crates that carry this client's requests another way.
//!
//! The client core speaks only revision 2026-07-28, but it is transport-neutral: a crate
//! that adapts another transport or another protocol revision (`mcp-legacy` does both)
//! plugs in here without the core knowing what it adapts.
//!
//! - [`CustomTransport`] carries each request (already built: `_meta`, MRTR fields) and
//!   each subscription, and returns results in this revision's shape. The client keeps
//!   doing everything else: typed methods, the MRTR loop, the cache, cursors.
//! - [`InputHandlers`](crate::InputHandlers) (from
//!   [`ClientBuilder::input_handlers`](crate::ClientBuilder::input_handlers)) lets such a
//!   transport answer a server's questions with the user's handlers, whatever form the
//!   questions arrive in.
//! - [`ListenRouter`] lets a caller that owns an engine connection's handler hand the
//!   connection's notifications to the client's subscriptions
//!   ([`ClientBuilder::connect_peer`](crate::ClientBuilder::connect_peer)).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use mcp_jsonrpc::{ErrorObject, Handler, Notification, Peer, Request, RequestContext};
use mcp_types::RequestId;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::Error;
use crate::cache::Cache;
use crate::listen::{ListenEvent, Router};

/// A boxed, sendable future, as [`CustomTransport`]'s methods return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Carries a client's requests and subscriptions
/// ([`ClientBuilder::connect_custom`](crate::ClientBuilder::connect_custom)).
///
/// Every method takes what the client built for revision 2026-07-28 and must answer in
/// that revision's shape; what happens on the wire is the implementation's business.
pub trait CustomTransport: Send + Sync + 'static {
    /// Sends one request. `params` holds the request's `_meta` (protocol version,
    /// capabilities, client info, progress token); `options` its timeout and progress
    /// callback. The result is the JSON-RPC result, or [`Error::Protocol`] for a
    /// JSON-RPC error. Dropping the future cancels the request.
    fn request(
        &self,
        method: &str,
        params: Value,
        options: mcp_jsonrpc::RequestOptions,
    ) -> BoxFuture<Result<Box<RawValue>, Error>>;

    /// Carries one `subscriptions/listen` subscription (`params` is the listen request's
    /// params: `_meta` and the `notifications` filter): sends the acknowledgement and then
    /// each change to `events`, and returns when the subscription ends. The future is
    /// dropped when the user drops the subscription.
    fn listen(&self, params: Value, events: EventSink) -> BoxFuture<()>;

    /// Ends the connection, giving the server `grace` to finish
    /// ([`Client::shutdown`](crate::Client::shutdown)).
    fn shutdown(&self, grace: Duration) -> BoxFuture<()>;
}

/// Where a [`CustomTransport`] sends one subscription's events. A bounded channel: an
/// event the consumer has no room for is dropped (each one only says "refetch"). Sending
/// also evicts what the event makes stale from the client's cache.
#[derive(Debug, Clone)]
pub struct EventSink {
    pub(crate) tx: mpsc::Sender<ListenEvent>,
    pub(crate) cache: Arc<Cache>,
}

impl EventSink {
    /// Delivers `event`; `false` if the consumer is gone or behind (the event is dropped).
    pub fn send(&self, event: ListenEvent) -> bool {
        self.cache.invalidate(&event);
        self.tx.try_send(event).is_ok()
    }

    /// Completes once the consumer has dropped its subscription.
    ///
    /// Cancel safety: cancel-safe.
    pub async fn closed(&self) {
        self.tx.closed().await;
    }

    /// Whether the consumer dropped its subscription.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// The client's notification router for an engine connection whose handler someone else
/// owns ([`ClientBuilder::connect_peer`](crate::ClientBuilder::connect_peer)): that handler
/// passes each notification to [`route`](Self::route), which delivers the ones tagged
/// with a subscription id to that subscription. It is also a complete engine
/// [`Handler`] that refuses every server request.
#[derive(Debug, Clone, Default)]
pub struct ListenRouter(pub(crate) Router);

impl ListenRouter {
    /// Delivers a subscription's notification to it (and evicts what it makes stale).
    pub fn route(&self, notification: &Notification) {
        self.0.route(notification);
    }

    /// Routes the notifications tagged with `id` (a `subscriptions/listen` request's id,
    /// which the server tags them with) to `sink`: for a [`CustomTransport`] that sends the
    /// listen request itself over an engine connection it owns.
    pub fn register(&self, id: RequestId, sink: &EventSink) {
        self.0.register(id, 0, sink.tx.clone());
    }

    /// Stops routing the notifications tagged with `id`.
    pub fn unregister(&self, id: &RequestId) {
        self.0.unregister(id);
    }
}

impl Handler for ListenRouter {
    async fn request(
        &self,
        request: Request,
        cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        self.0.request(request, cx).await
    }

    fn notification(&self, notification: Notification, peer: &Peer) {
        self.0.notification(notification, peer);
    }
}
