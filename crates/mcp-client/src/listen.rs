//! `subscriptions/listen` on the client side (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>).
//!
//! The server tags every message of a subscription with
//! `_meta["io.modelcontextprotocol/subscriptionId"]`, the listen request's id. The client's
//! engine handler ([`Router`]) sends each tagged notification to the subscription it
//! belongs to; a subscription is a bounded channel, so a consumer that stops reading loses
//! change notifications (each of which only says "refetch") rather than growing memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_jsonrpc::{ErrorObject, Handler, Notification, Peer, Request, RequestContext};
use mcp_types::{RequestId, SubscriptionFilter, method};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How many notifications a subscription holds for a consumer that is slow to read.
pub(crate) const SUBSCRIPTION_BUFFER: usize = 64;

/// What a subscription reports.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ListenEvent {
    /// The server's acknowledgement: the subset of the filter it honours.
    Acknowledged(SubscriptionFilter),
    /// The tool list changed: list the tools again.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// A subscribed resource (or one below it) changed.
    ResourceUpdated(String),
    /// A watched task changed (Tasks extension, `notifications/tasks`): the task as
    /// `tasks/get` would return it.
    Task(Box<mcp_types::tasks::DetailedTask>),
}

/// Subscription routes: a listen request's id → the subscription (its token, which tells
/// apart two subscriptions that reused one id on two connections, and its channel).
type Routes = Arc<Mutex<HashMap<RequestId, (u64, mpsc::Sender<ListenEvent>)>>>;

/// The client's engine handler: servers send no requests in 2026-07-28, and the
/// notifications that belong to a subscription are routed to it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Router {
    routes: Routes,
    cache: Arc<crate::cache::Cache>,
    /// Where the connection's log messages go (set once, when the client is assembled).
    logs: Arc<std::sync::OnceLock<crate::logs::LogSink>>,
}

impl Router {
    pub(crate) fn cache(&self) -> Arc<crate::cache::Cache> {
        Arc::clone(&self.cache)
    }

    /// Sends the connection's log messages to `logs` (the first call wins).
    pub(crate) fn set_logs(&self, logs: crate::logs::LogSink) {
        let _ = self.logs.set(logs);
    }

    pub(crate) fn register(&self, id: RequestId, token: u64, tx: mpsc::Sender<ListenEvent>) {
        self.routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, (token, tx));
    }

    /// Removes the route of `id` if it still belongs to the subscription `token` (after a
    /// restart another subscription may have been given the same id).
    pub(crate) fn unregister_if(&self, id: &RequestId, token: u64) {
        let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        if routes.get(id).is_some_and(|(owner, _)| *owner == token) {
            routes.remove(id);
        }
    }

    pub(crate) fn unregister(&self, id: &RequestId) {
        self.routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }
}

/// The event a subscription notification stands for.
#[cfg(feature = "http")]
pub(crate) fn event_of(notification: &Notification) -> Option<ListenEvent> {
    let params = notification
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())?;
    event(notification, &params)
}

fn event(notification: &Notification, params: &Value) -> Option<ListenEvent> {
    Some(match notification.method.as_str() {
        method::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED => ListenEvent::Acknowledged(
            serde_json::from_value(params.get("notifications")?.clone()).ok()?,
        ),
        method::NOTIFICATIONS_TOOLS_LIST_CHANGED => ListenEvent::ToolsListChanged,
        method::NOTIFICATIONS_PROMPTS_LIST_CHANGED => ListenEvent::PromptsListChanged,
        method::NOTIFICATIONS_RESOURCES_LIST_CHANGED => ListenEvent::ResourcesListChanged,
        method::NOTIFICATIONS_RESOURCES_UPDATED => {
            ListenEvent::ResourceUpdated(params.get("uri")?.as_str()?.to_owned())
        }
        mcp_types::tasks::method::NOTIFICATIONS_TASKS => {
            ListenEvent::Task(Box::new(serde_json::from_value(params.clone()).ok()?))
        }
        _ => return None,
    })
}

impl Handler for Router {
    async fn request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        // Servers of this revision never send requests.
        Err(ErrorObject::method_not_found(&request.method))
    }

    fn notification(&self, notification: Notification, _peer: &Peer) {
        self.route(&notification);
    }
}

impl Router {
    /// Sends a subscription's notification to it (and evicts what it makes stale).
    pub(crate) fn route(&self, notification: &Notification) {
        let Some(params) = notification
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
        else {
            return;
        };
        if notification.method == method::NOTIFICATIONS_MESSAGE {
            // A log message, request-scoped: it belongs to no subscription.
            if let Some(logs) = self.logs.get() {
                logs.deliver_json(&params);
            }
            return;
        }
        if notification.method == method::NOTIFICATIONS_CANCELLED {
            // The server ends a subscription with notifications/cancelled naming it.
            if let Some(id) = params
                .get("requestId")
                .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
            {
                self.unregister(&id);
            }
            return;
        }
        let Some(id) = params
            .pointer("/_meta/io.modelcontextprotocol~1subscriptionId")
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
        else {
            tracing::debug!(method = %notification.method, "notification outside any subscription");
            return;
        };
        let Some(event) = event(notification, &params) else {
            return;
        };
        self.cache.invalidate(&event);
        let sender = self
            .routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .map(|(_, tx)| tx.clone());
        if let Some(sender) = sender
            && sender.try_send(event).is_err()
        {
            tracing::warn!(%id, "subscription consumer is behind; a change notification was dropped");
        }
    }
}

/// An open subscription. Dropping it ends the subscription (over stdio the server hears
/// `notifications/cancelled`).
#[derive(Debug)]
pub struct Subscription {
    /// The current listen request's id (a re-subscription after a restart changes it).
    pub(crate) current: Arc<Mutex<Option<RequestId>>>,
    /// Tells this subscription's routes from others'.
    pub(crate) token: u64,
    pub(crate) events: mpsc::Receiver<ListenEvent>,
    pub(crate) request: JoinHandle<()>,
    pub(crate) router: Router,
}

impl Subscription {
    /// The id of the listen request that carries the subscription now (for stdio; HTTP
    /// subscriptions have no id the client needs).
    pub fn id(&self) -> Option<RequestId> {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The next event; `None` once the server closed the subscription.
    pub async fn next(&mut self) -> Option<ListenEvent> {
        self.events.recv().await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(id) = self
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            self.router.unregister_if(&id, self.token);
        }
        self.request.abort();
    }
}
