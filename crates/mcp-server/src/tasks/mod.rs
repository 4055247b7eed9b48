//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663;
//! <https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md>): tools that run as tasks.
//!
//! A tool registered with [`ToolDef::task_support`](crate::ToolDef::task_support) may run as
//! a task when the client declared the extension on the `tools/call` request: the call
//! returns a task handle (`resultType: "task"`) at once, the tool runs in the background, and
//! the client polls `tasks/get` for its status and, when done, its result. What the tool asks
//! the client for ([`Context::elicit`](crate::Context::elicit) and the other input methods)
//! surfaces as the task's `inputRequests`; the client's `tasks/update` answers it and the
//! tool runs again with every answer so far, exactly as a multi round-trip request is retried
//! (one handler body serves both). `tasks/cancel` fires the tool's
//! [`cancellation`](crate::Context::cancellation) token and settles the task as `cancelled`.
//! `subscriptions/listen` streams that name tasks in `taskIds` receive `notifications/tasks`.
//!
//! A tool that only runs as a task ([`TaskSupport::Required`]) refuses clients that did not
//! declare the extension with -32021. A tool that needs answers before it commits to a task
//! (the spec's MRTR-then-task composition) uses [`TaskStart::OnEscalate`] and calls
//! [`Context::escalate`](crate::Context::escalate) once it has them: until then its rounds
//! are ordinary synchronous `input_required` results.
//!
//! Security: task ids are 128 random bits, and every task is bound to the owner of the request
//! that created it ([`Tasks::owner`]); a request from another owner gets the same -32602
//! "no such task" as for an id that never existed, so ids cannot be probed. The default owner
//! ([`default_owner`]) is the principal the transport authenticated (the OAuth resource
//! server's), else a digest of the request's `Authorization` header, else the anonymous owner
//! (stdio, unauthenticated HTTP), where the id itself is the bearer secret.
//!
//! Tasks are kept in a [`TaskStore`]: [`MemoryStore`] by default, or a store shared by a
//! fleet of servers (`RedisStore`, feature `tasks-redis`), so any instance behind a load
//! balancer can answer for any task and resume it after `tasks/update`. A finished task is
//! kept for [`Tasks::ttl`] after it finished, a running one for `ttl` after its last change;
//! `ttlMs` on the wire says how long from creation that is, and only ever grows.
//!
//! ```
//! use mcp_server::tasks::{TaskSupport, Tasks};
//! use mcp_server::{Server, ToolDef};
//! use mcp_types::CallToolResult;
//!
//! let report = ToolDef::new("report", serde_json::json!({"type": "object"}), |_args, cx| async move {
//!     // Long work; `tasks/cancel` fires the token.
//!     tokio::select! {
//!         () = cx.cancellation().cancelled() => Ok(CallToolResult::error("cancelled")),
//!         () = tokio::time::sleep(std::time::Duration::from_millis(10)) => Ok(CallToolResult::text("done")),
//!     }
//! })
//! .task_support(TaskSupport::Required);
//! let server = Server::builder("reports", "1.0")
//!     .tool(report)
//!     .tasks(Tasks::in_memory().ttl(std::time::Duration::from_secs(600)))
//!     .build()?;
//! assert!(server.capabilities().extensions.as_ref().unwrap().contains_key("io.modelcontextprotocol/tasks"));
//! # Ok::<(), mcp_server::Error>(())
//! ```

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::context::Context;

mod clock;
#[cfg(feature = "tasks-redis")]
mod redis;
mod store;

pub use clock::Clock;
pub(crate) use clock::iso8601;
#[cfg(feature = "tasks-redis")]
pub use redis::RedisStore;
pub use store::{MemoryStore, StoreFuture, TaskRecord, TaskStore};

/// Whether a tool runs as a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never: the call always runs on the request (the default).
    #[default]
    Forbidden,
    /// As a task when the request declared the extension, on the request otherwise.
    Optional,
    /// Only as a task: a request that did not declare the extension gets -32021 naming it.
    Required,
}

/// When a task-capable tool becomes a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskStart {
    /// Before the handler runs: the call answers with the task handle at once (the
    /// default).
    #[default]
    Immediately,
    /// When the handler calls [`Context::escalate`](crate::Context::escalate). Until then
    /// the handler runs on the request, and what it asks for is an ordinary synchronous
    /// `input_required` round; a handler that finishes without escalating answers the call
    /// directly.
    OnEscalate,
}

/// Who may see a task, from the request that touches it.
pub type OwnerFn = Arc<dyn Fn(&Context) -> String + Send + Sync>;

/// The Tasks extension's settings: where tasks live, how long they are kept, and whose they
/// are. Install with [`ServerBuilder::tasks`](crate::ServerBuilder::tasks).
#[derive(Clone)]
pub struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) owner: OwnerFn,
    pub(crate) clock: Clock,
    pub(crate) lease: Duration,
}

mcp_types::debug_fields!(Tasks {
    ttl,
    poll_interval,
    lease
});

impl Tasks {
    /// Tasks kept in `store`.
    pub fn new(store: impl TaskStore) -> Self {
        Tasks {
            store: Arc::new(store),
            ttl: Duration::from_hours(1),
            poll_interval: Duration::from_secs(1),
            owner: Arc::new(default_owner),
            clock: Clock::system(),
            lease: Self::DEFAULT_LEASE,
        }
    }

    /// How long a run's lease lasts by default: see [`lease`](Self::lease).
    pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

    /// How many times a task is resumed after the server of its run stopped before it is
    /// failed instead: a tool that brings its server down every time is not run forever.
    pub const MAX_RESUMES: u32 = 3;

    /// How long the lease of a running task lasts (default [`DEFAULT_LEASE`](Self::DEFAULT_LEASE)).
    /// The server running the tool renews it every third of this while the run goes on;
    /// with a shared store, once it has lapsed (that server stopped), the next `tasks/get`
    /// on any server resumes the task there from its last recorded run: the tool runs again
    /// with every answer and the state recorded so far, as after `tasks/update`. A task is
    /// resumed at most [`MAX_RESUMES`](Self::MAX_RESUMES) times, then failed. A resumed run
    /// repeats what the stopped one did since its last recorded round, so on a fleet a
    /// task's tool should be idempotent over that span.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }

    /// Tasks kept in this process's memory ([`MemoryStore`], at most 10 000).
    pub fn in_memory() -> Self {
        Tasks::new(MemoryStore::default())
    }

    /// How long a task is kept after it finished, or after its last change while it runs
    /// (default one hour).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// The polling interval suggested to clients (default one second); also how often a
    /// server sharing its store looks for changes made by others.
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How a request's owner is named: tasks are visible only to requests with the owner
    /// of the request that created them (default: [`default_owner`]). This is the seam for
    /// an authenticated principal.
    #[must_use]
    pub fn owner(mut self, owner: impl Fn(&Context) -> String + Send + Sync + 'static) -> Self {
        self.owner = Arc::new(owner);
        self
    }

    /// Reads time from `clock` (for tests; the store keeps its own).
    #[must_use]
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }
}

/// The default owner of a request: `principal:` and the [`id`](mcp_jsonrpc::Principal::id)
/// of the principal the transport authenticated ([`Context::principal`], the OAuth resource
/// server's token principal for one); else `bearer:` and the SHA-256 of its `Authorization`
/// header (a credential some layer other than the transport checked; refreshing it names a
/// new owner); else the anonymous owner `""` (stdio, or HTTP without credentials, where the
/// unguessable id is the only secret).
pub fn default_owner(cx: &Context) -> String {
    if let Some(principal) = cx.principal() {
        return format!("principal:{}", principal.id());
    }
    match cx.transport().and_then(|t| t.header("authorization")) {
        Some(credential) => format!(
            "bearer:{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(Sha256::digest(credential.as_bytes()))
        ),
        None => String::new(),
    }
}

/// A new task id: 128 bits from the operating system's random source, hex.
pub(crate) fn new_id() -> Result<String, crate::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|_| crate::Error::Random)?;
    Ok(bytes.iter().fold(String::with_capacity(32), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    }))
}
