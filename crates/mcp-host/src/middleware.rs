//! Hooks around every tool call: before (approve, reject) and after (audit, with timing).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_types::{CallToolResult, JsonObject, ToolAnnotations};

/// A boxed, sendable future (the hooks' return type).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a hook sees of a call about to run (or that ran).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CallInfo {
    /// The vendor's call id.
    pub call_id: String,
    /// The model-visible name.
    pub name: String,
    /// The server's name in the host.
    pub server: String,
    /// The tool's own name on its server.
    pub tool: String,
    /// The arguments the model sent.
    pub arguments: JsonObject,
    /// The tool's annotations (server hints, untrusted).
    pub annotations: Option<ToolAnnotations>,
    /// Whether the policy requires approval for this call.
    pub requires_approval: bool,
}

/// A before-hook's decision.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Verdict {
    /// Run the call (and the next hooks).
    Continue,
    /// Do not run it; the model gets this result instead.
    Reject(Box<CallToolResult>),
}

/// Runs before and after each call the host makes. Hooks run in the order they were
/// added; a call rejected by one hook does not reach the later ones or the server, but
/// every hook's `after` sees its result.
pub trait Middleware: Send + Sync {
    /// Before the call. The default lets it run.
    fn before<'a>(&'a self, call: &'a CallInfo) -> BoxFuture<'a, Verdict> {
        let _ = call;
        Box::pin(async { Verdict::Continue })
    }

    /// After the call, with its result and how long it took (from the first hook to the
    /// result).
    fn after<'a>(
        &'a self,
        call: &'a CallInfo,
        result: &'a CallToolResult,
        elapsed: Duration,
    ) -> BoxFuture<'a, ()> {
        let _ = (call, result, elapsed);
        Box::pin(async {})
    }
}

/// Decides whether a call that needs approval may run (asks a person, typically).
/// Any `Fn(CallInfo) -> impl Future<Output = bool>` is an approver.
pub trait Approver: Send + Sync {
    /// True to let the call run.
    fn approve(&self, call: CallInfo) -> BoxFuture<'static, bool>;
}

impl<F, Fut> Approver for F
where
    F: Fn(CallInfo) -> Fut + Send + Sync,
    Fut: Future<Output = bool> + Send + 'static,
{
    fn approve(&self, call: CallInfo) -> BoxFuture<'static, bool> {
        Box::pin(self(call))
    }
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AuditEntry {
    /// The call.
    pub call: CallInfo,
    /// Whether the result was an error.
    pub is_error: bool,
    /// How long it took.
    pub elapsed: Duration,
}

/// A middleware that logs every call through `tracing` (target `mcp_host::audit`) and
/// keeps the most recent ones (default 1000) in memory.
///
/// ```
/// let audit = mcp_host::AuditLog::new();
/// let view = audit.clone(); // give one to the host, read the other
/// assert!(view.entries().is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct AuditLog {
    entries: Arc<Mutex<VecDeque<AuditEntry>>>,
    capacity: usize,
}

impl Default for AuditLog {
    fn default() -> Self {
        AuditLog::with_capacity(1000)
    }
}

impl AuditLog {
    /// A log that keeps the last 1000 calls.
    pub fn new() -> Self {
        AuditLog::default()
    }

    /// A log that keeps the last `capacity` calls.
    pub fn with_capacity(capacity: usize) -> Self {
        AuditLog {
            entries: Arc::default(),
            capacity,
        }
    }

    /// The calls kept, oldest first.
    pub fn entries(&self) -> Vec<AuditEntry> {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }
}

impl Middleware for AuditLog {
    fn after<'a>(
        &'a self,
        call: &'a CallInfo,
        result: &'a CallToolResult,
        elapsed: Duration,
    ) -> BoxFuture<'a, ()> {
        let is_error = result.is_error == Some(true);
        tracing::info!(
            target: "mcp_host::audit",
            call_id = %call.call_id,
            server = %call.server,
            tool = %call.tool,
            is_error,
            elapsed_ms = elapsed.as_secs_f64() * 1000.0,
            "tool call"
        );
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if self.capacity > 0 {
            if entries.len() == self.capacity {
                entries.pop_front();
            }
            entries.push_back(AuditEntry {
                call: call.clone(),
                is_error,
                elapsed,
            });
        }
        drop(entries);
        Box::pin(async {})
    }
}
