//! `notifications/tasks` on a `subscriptions/listen` stream whose filter names tasks
//! (`notifications.taskIds`, Tasks extension, "Task Status Notifications").
//!
//! Only the tasks the listener owns are agreed to (the acknowledgement lists them); each
//! change to one of them is sent as the task `tasks/get` would return at that moment, and a
//! task leaves the watch once it is terminal. Changes made by this server arrive through the
//! engine's change feed; with a shared store, changes made by other servers are found by
//! polling the watched tasks every poll interval.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_jsonrpc::{ErrorObject, RequestContext};
use mcp_types::RequestMetaObject;
use mcp_types::tasks::{EXTENSION_ID, TaskStatusNotificationParams};
use serde_json::Value;
use tokio::sync::broadcast;

use super::tasks::TaskEngine;
use super::{Server, invalid, missing_extension};
use crate::context::Context;

/// The tasks one listen stream watches, with the last revision it sent of each.
pub(super) struct TaskWatch {
    engine: Arc<TaskEngine>,
    owner: String,
    seen: HashMap<String, u64>,
    changes: broadcast::Receiver<String>,
    poll: Option<tokio::time::Interval>,
}

/// The extension's member of the filter.
#[derive(serde::Deserialize)]
struct Filter {
    notifications: Option<mcp_types::tasks::TaskSubscription>,
}

impl Server {
    /// The watch a listen request asks for, if its filter names tasks: `None` without
    /// `taskIds` (or without the extension installed), -32021 if the request did not
    /// declare the extension. The ids the listener may see come back too, for the
    /// acknowledgement.
    pub(super) async fn watch_tasks(
        &self,
        params: &str,
        meta: &RequestMetaObject,
        rpc: &RequestContext,
    ) -> Result<Option<(TaskWatch, Vec<String>)>, ErrorObject> {
        let Some(engine) = self.inner.tasks.clone() else {
            return Ok(None);
        };
        if !params.contains("taskIds") {
            return Ok(None);
        }
        let Filter { notifications } =
            serde_json::from_str(params).map_err(|e| invalid(format!("invalid params: {e}")))?;
        let Some(ids) = notifications.and_then(|n| n.task_ids) else {
            return Ok(None);
        };
        let declared = meta
            .client_capabilities
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(EXTENSION_ID));
        if !declared {
            return Err(missing_extension(EXTENSION_ID));
        }
        let cx = Context::new(rpc.clone(), meta.clone(), None, None);
        let owner = (engine.config.owner)(&cx);
        let changes = engine.changes.subscribe();
        let mut seen = HashMap::new();
        let mut agreed = Vec::new();
        for id in ids.into_iter().take(256) {
            if seen.contains_key(&id) {
                continue;
            }
            if let Ok(record) = self.load(&engine, &id, &owner).await {
                // Only changes after the subscription are sent.
                seen.insert(id.clone(), record.revision);
                agreed.push(id);
            }
        }
        let poll = engine.config.store.is_shared().then(|| {
            let mut poll = tokio::time::interval(engine.config.poll_interval);
            poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            poll
        });
        Ok(Some((
            TaskWatch {
                engine,
                owner,
                seen,
                changes,
                poll,
            },
            agreed,
        )))
    }

    /// Waits for the next change to a watched task and returns the notifications' params
    /// (never returns while nothing is watched).
    pub(super) async fn next_task_change(&self, watch: &mut TaskWatch, tag: &Value) -> Vec<Value> {
        loop {
            if watch.seen.is_empty() {
                std::future::pending::<()>().await;
            }
            let ids: Vec<String> = tokio::select! {
                changed = watch.changes.recv() => match changed {
                    Ok(id) if watch.seen.contains_key(&id) => vec![id],
                    Ok(_) => continue,
                    // Fell behind: look at every watched task.
                    Err(broadcast::error::RecvError::Lagged(_)) => watch.seen.keys().cloned().collect(),
                    Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
                },
                _ = async { match &mut watch.poll { Some(p) => p.tick().await, None => std::future::pending().await } } => {
                    watch.seen.keys().cloned().collect()
                }
            };
            let mut notes = Vec::new();
            for id in ids {
                let Ok(record) = self.load(&watch.engine, &id, &watch.owner).await else {
                    watch.seen.remove(&id);
                    continue;
                };
                if watch.seen.get(&id).is_some_and(|&r| r >= record.revision) {
                    continue;
                }
                watch.seen.insert(id.clone(), record.revision);
                let mut params = TaskStatusNotificationParams::new(Self::detailed(&record));
                params.meta = tag.as_object().cloned();
                if record.status.is_terminal() {
                    watch.seen.remove(&id);
                }
                notes.push(serde_json::to_value(&params).unwrap_or_default());
            }
            if !notes.is_empty() {
                return notes;
            }
        }
    }
}
