//! The tools `--soak-tools` adds for `cargo xtask soak` (`docs/RELIABILITY.md`, Load and
//! soak), off by default:
//!
//! - `barrier` (`group`, `size`, `text`): answers `text` once `size` calls of `group` are
//!   in the server at the same time, so a load whose every call completes proves that
//!   many were in flight at once. A group that does not fill within 60 s fails its calls
//!   with a tool error naming how many arrived. At most 1024 groups wait at once.
//! - `wait` (`ms`, `text`): answers `text` after `ms` milliseconds (at most 60 000), or
//!   stops when cancelled: a call that is in flight long enough to be cancelled.
//! - `stats`: the server's own counters as JSON text: the tokio tasks alive in its
//!   runtimes (the main one and every connection thread's) and the open legacy HTTP
//!   sessions, so a soak can see leaks from outside.
//! - `increment` and the resource `soak://counter`: `increment` adds one to the counter
//!   and tells the resource's subscribers, for the soak's listens.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use mcp_server::{ResourceDef, Server, ServerBuilder, ToolDef, ToolError};
use mcp_types::{CallToolResult, EmbeddedResourceResource, TextResourceContents};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::watch;

/// How long a `barrier` group may take to fill.
const BARRIER_TIMEOUT: Duration = Duration::from_mins(1);
/// How many `barrier` groups may wait at once.
const MAX_GROUPS: usize = 1024;

#[derive(Deserialize, schemars::JsonSchema)]
struct Barrier {
    /// The group's name; calls with the same name wait for each other.
    #[schemars(length(min = 1, max = 64))]
    group: String,
    /// How many calls of the group must be in the server at once.
    #[schemars(range(min = 1, max = 100_000))]
    size: u32,
    /// The text to answer with.
    text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Wait {
    /// How long to wait, in milliseconds.
    #[schemars(range(max = 60_000))]
    ms: u32,
    /// The text to answer with.
    text: String,
}

/// One waiting group: the arrivals so far, and how many calls still hold it.
struct Group {
    arrived: watch::Sender<u32>,
    holders: u32,
}

#[derive(Default)]
struct Groups(Mutex<HashMap<String, Group>>);

impl Groups {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Group>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a call in; gives the watch on the group's arrivals.
    fn join(&self, group: &str) -> Result<watch::Receiver<u32>, ToolError> {
        let mut groups = self.lock();
        if !groups.contains_key(group) && groups.len() >= MAX_GROUPS {
            return Err(ToolError::failed("too many barrier groups are waiting"));
        }
        let entry = groups.entry(group.to_owned()).or_insert_with(|| Group {
            arrived: watch::Sender::new(0),
            holders: 0,
        });
        entry.holders += 1;
        entry.arrived.send_modify(|n| *n += 1);
        Ok(entry.arrived.subscribe())
    }

    /// Counts a call out; the last one out removes the group.
    fn leave(&self, group: &str) {
        let mut groups = self.lock();
        if let Some(entry) = groups.get_mut(group) {
            entry.holders -= 1;
            if entry.holders == 0 {
                groups.remove(group);
            }
        }
    }
}

/// Leaves the group however the call ends (answered, timed out, cancelled).
struct Leave<'a> {
    groups: &'a Groups,
    group: &'a str,
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.groups.leave(self.group);
    }
}

/// Counters the `stats` tool reads once the HTTP endpoint exists: the open legacy
/// sessions, and the tasks alive on every runtime (without it, the runtime the call runs
/// on).
#[derive(Default)]
pub(crate) struct Probes {
    pub(crate) sessions: OnceLock<Box<dyn Fn() -> usize + Send + Sync>>,
    pub(crate) tasks: OnceLock<Box<dyn Fn() -> usize + Send + Sync>>,
}

/// The URI of the counter that `increment` changes.
const COUNTER: &str = "soak://counter";

/// The counter of `increment`, and the server that tells its subscribers of a change once
/// it is built ([`Counter::attach`]).
#[derive(Clone, Default)]
pub(crate) struct Counter {
    value: Arc<AtomicI64>,
    server: Arc<OnceLock<Server>>,
}

impl Counter {
    /// Gives `increment` the built server, whose subscribers it notifies.
    pub(crate) fn attach(&self, server: &Server) {
        let _ = self.server.set(server.clone());
    }
}

/// Registers the soak tools. `probes` gives the open legacy HTTP sessions once the
/// endpoint exists (over stdio it stays empty); `counter` is `increment`'s.
pub(crate) fn register(
    builder: ServerBuilder,
    probes: Arc<Probes>,
    counter: &Counter,
) -> ServerBuilder {
    let groups = Arc::new(Groups::default());
    let (incremented, read) = (counter.clone(), counter.clone());
    builder
        .tool(
            ToolDef::new(
                "increment",
                json!({"type": "object", "properties": {}}),
                move |_args, _cx| {
                    let counter = incremented.clone();
                    async move {
                        let now = counter.value.fetch_add(1, Ordering::Relaxed) + 1;
                        if let Some(server) = counter.server.get() {
                            server.resource_updated(COUNTER);
                        }
                        Ok(CallToolResult::text(now.to_string()))
                    }
                },
            )
            .description("Adds one to soak://counter and notifies its subscribers"),
        )
        .resource(
            ResourceDef::new(COUNTER, "counter", move |uri, _cx| {
                let value = Arc::clone(&read.value);
                async move {
                    Ok(vec![EmbeddedResourceResource::TextResourceContents(
                        TextResourceContents::new(value.load(Ordering::Relaxed).to_string(), uri),
                    )])
                }
            })
            .description("A number that the increment tool changes")
            .mime_type("text/plain"),
        )
        .tool(
            ToolDef::typed("barrier", move |args: Barrier, cx| {
                let groups = Arc::clone(&groups);
                async move {
                    let mut arrived = groups.join(&args.group)?;
                    let _leave = Leave {
                        groups: &groups,
                        group: &args.group,
                    };
                    let filled = async {
                        tokio::time::timeout(BARRIER_TIMEOUT, arrived.wait_for(|n| *n >= args.size))
                            .await
                            .is_ok_and(|filled| filled.is_ok())
                    };
                    let filled = tokio::select! {
                        filled = filled => filled,
                        () = cx.cancellation().cancelled() => {
                            return Err(ToolError::failed("cancelled"));
                        }
                    };
                    if filled {
                        Ok(CallToolResult::text(args.text))
                    } else {
                        Err(ToolError::failed(format!(
                            "barrier {}: {} of {} calls arrived within {} s",
                            args.group,
                            *arrived.borrow(),
                            args.size,
                            BARRIER_TIMEOUT.as_secs()
                        )))
                    }
                }
            })
            .description("Answers once `size` calls of `group` are in at once (soak)"),
        )
        .tool(
            ToolDef::typed("wait", |args: Wait, cx| async move {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(u64::from(args.ms))) => {
                        Ok(CallToolResult::text(args.text))
                    }
                    () = cx.cancellation().cancelled() => Err(ToolError::failed("cancelled")),
                }
            })
            .description("Answers `text` after `ms` milliseconds (soak)"),
        )
        .tool(
            ToolDef::new(
                "stats",
                json!({"type": "object", "properties": {}}),
                move |_args, _cx| {
                    let probes = Arc::clone(&probes);
                    async move {
                        let tasks = probes.tasks.get().map_or_else(
                            || {
                                tokio::runtime::Handle::current()
                                    .metrics()
                                    .num_alive_tasks()
                            },
                            |count| count(),
                        );
                        let sessions = probes.sessions.get().map(|count| count());
                        Ok(CallToolResult::text(
                            json!({"alive_tasks": tasks, "legacy_sessions": sessions}).to_string(),
                        ))
                    }
                },
            )
            .description("The server's tasks and legacy sessions, as JSON (soak)"),
        )
}
