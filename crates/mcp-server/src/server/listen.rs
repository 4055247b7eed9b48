//! `subscriptions/listen` on the server side
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>).

use super::{Server, parse, to_raw};
use crate::bus::{BusEvent, Change};
use crate::limits::ListenOwner;
use mcp_jsonrpc::{ErrorObject, RequestContext};
use mcp_types::{
    SubscriptionFilter, SubscriptionsListenRequestParams, SubscriptionsListenResult,
    SubscriptionsListenResultMetaObject, method,
};
use serde_json::Value;
use serde_json::value::RawValue;

impl Server {
    /// `subscriptions/listen` (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>): the
    /// acknowledgement first, then the changes the client opted into, each tagged with the
    /// subscription id; the result only when the server closes the stream.
    pub(super) async fn listen(
        &self,
        params: &str,
        rpc: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let raw = params;
        let params: SubscriptionsListenRequestParams = parse(params)?;
        // Held until the stream ends, however it ends.
        let limits = &self.inner.limits;
        let (owner, limit) = match super::principal_of(&rpc) {
            Some(principal) => (
                ListenOwner::Principal(principal.id().into()),
                limits.listen_streams_per_principal,
            ),
            None => (ListenOwner::Anonymous, limits.anonymous_listen_streams),
        };
        let _slot = self.inner.listen_streams.open(owner, limit)?;
        #[cfg(feature = "metrics")]
        let _open = crate::metrics::Open::new(crate::metrics::LISTEN_STREAMS);
        let mut tasks = self.watch_tasks(raw, &params.meta, &rpc).await?;
        let caps = &self.inner.capabilities;
        let asked = &params.notifications;
        let mut honoured = SubscriptionFilter::new();
        honoured.tools_list_changed = asked
            .tools_list_changed
            .filter(|&on| on && caps.tools.is_some());
        honoured.prompts_list_changed = asked
            .prompts_list_changed
            .filter(|&on| on && caps.prompts.is_some());
        honoured.resources_list_changed = asked
            .resources_list_changed
            .filter(|&on| on && caps.resources.is_some());
        // A resource the principal may not read is not watched for it either: its updates
        // would tell what the scope keeps from it (the acknowledgement leaves it out).
        let principal = super::principal_of(&rpc);
        honoured.resource_subscriptions = asked
            .resource_subscriptions
            .as_ref()
            .filter(|_| caps.resources.is_some())
            .map(|uris| {
                uris.iter()
                    .filter(|uri| principal.is_none_or(|p| p.permits(method::RESOURCES_READ, uri)))
                    .cloned()
                    .collect()
            });
        let id = rpc.id().clone();
        let tag = serde_json::json!({ "io.modelcontextprotocol/subscriptionId": id });
        let mut changes = self.inner.changes.subscribe();
        let mut agreed = serde_json::to_value(&honoured).unwrap_or_default();
        if let Some((_, ids)) = &tasks {
            agreed["taskIds"] = serde_json::json!(ids);
        }
        let ack = serde_json::json!({ "notifications": agreed, "_meta": tag });
        rpc.notify(method::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED, Some(&ack))
            .await
            .map_err(|e| ErrorObject::internal(e.to_string()))?;
        loop {
            let change = tokio::select! {
                () = rpc.cancellation().cancelled() => return Err(ErrorObject::internal("cancelled")),
                notes = async {
                    match &mut tasks {
                        Some((watch, _)) => self.next_task_change(watch, &tag).await,
                        None => std::future::pending().await,
                    }
                } => {
                    for note in notes {
                        if rpc.notify(mcp_types::tasks::method::NOTIFICATIONS_TASKS, Some(&note)).await.is_err() {
                            return Err(ErrorObject::internal("the stream closed"));
                        }
                    }
                    continue;
                }
                () = self.inner.shutdown.cancelled() => break,
                event = changes.recv() => event,
            };
            let wanted: Vec<(&str, Value)> = match change {
                Some(BusEvent::Change(Change::ToolsListChanged))
                    if honoured.tools_list_changed == Some(true) =>
                {
                    vec![(
                        method::NOTIFICATIONS_TOOLS_LIST_CHANGED,
                        serde_json::json!({ "_meta": tag }),
                    )]
                }
                Some(BusEvent::Change(Change::PromptsListChanged))
                    if honoured.prompts_list_changed == Some(true) =>
                {
                    vec![(
                        method::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
                        serde_json::json!({ "_meta": tag }),
                    )]
                }
                Some(BusEvent::Change(Change::ResourcesListChanged))
                    if honoured.resources_list_changed == Some(true) =>
                {
                    vec![(
                        method::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
                        serde_json::json!({ "_meta": tag }),
                    )]
                }
                Some(BusEvent::Change(Change::ResourceUpdated { uri }))
                    if honoured
                        .resource_subscriptions
                        .as_ref()
                        .is_some_and(|subs| subs.iter().any(|s| uri.starts_with(s.as_str()))) =>
                {
                    vec![(
                        method::NOTIFICATIONS_RESOURCES_UPDATED,
                        serde_json::json!({ "uri": uri, "_meta": tag }),
                    )]
                }
                // The listener may have missed changes (it fell behind, or the bus lost
                // touch with the other instances): it hears that everything it follows
                // changed, which is always safe to act on.
                Some(BusEvent::Resync) => resync(&honoured, &tag),
                None => break,
                Some(_) => Vec::new(),
            };
            for (method, params) in wanted {
                if rpc.notify(method, Some(&params)).await.is_err() {
                    return Err(ErrorObject::internal("the stream closed"));
                }
            }
        }
        let mut meta = SubscriptionsListenResultMetaObject::new(id);
        meta.server_info = Some(self.inner.info.clone());
        to_raw(&SubscriptionsListenResult::new(meta))
    }
}

/// What a resync sends a listener: every list-changed notification it subscribed to, then a
/// `resources/updated` for each resource it watches, each tagged with its subscription.
fn resync(honoured: &SubscriptionFilter, tag: &Value) -> Vec<(&'static str, Value)> {
    let lists = [
        (
            honoured.tools_list_changed,
            method::NOTIFICATIONS_TOOLS_LIST_CHANGED,
        ),
        (
            honoured.prompts_list_changed,
            method::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
        ),
        (
            honoured.resources_list_changed,
            method::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
        ),
    ]
    .into_iter()
    .filter(|(on, _)| *on == Some(true))
    .map(|(_, m)| (m, serde_json::json!({ "_meta": tag })));
    let updates = honoured.resource_subscriptions.iter().flatten().map(|uri| {
        (
            method::NOTIFICATIONS_RESOURCES_UPDATED,
            serde_json::json!({ "uri": uri, "_meta": tag }),
        )
    });
    lists.chain(updates).collect()
}
