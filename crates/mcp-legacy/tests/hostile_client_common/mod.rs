//! What the hostile-server suites of the dual-era client share
//! (`hostile_client_sse.rs` and `hostile_client_stdio/`): the client under attack, with a
//! `roots` handler that counts how many server requests it answers at once, and the two
//! calls a case makes. The rules: <https://modelcontextprotocol.io/specification/2025-11-25/client/roots> and the same page of
//! 2024-11-05.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::{CallOptions, Client, ClientBuilder, Error};
use serde_json::json;

/// The timeout of a call whose response must never be recognised.
pub(crate) const SHORT: Duration = Duration::from_millis(150);

/// Server requests the roots handler is answering now.
static ROOTS_NOW: AtomicUsize = AtomicUsize::new(0);
/// The most server requests the roots handler answered at once.
pub(crate) static ROOTS_MOST: AtomicUsize = AtomicUsize::new(0);

/// The client: it declares `roots`, with a handler that takes `delay` (so that a burst of
/// server requests meets the client's bound), and neither sampling nor elicitation.
pub(crate) fn builder(delay: Duration) -> ClientBuilder {
    Client::builder("hostile", "1")
        .timeout(Duration::from_secs(20))
        .on_roots(move || async move {
            let now = ROOTS_NOW.fetch_add(1, Ordering::SeqCst) + 1;
            ROOTS_MOST.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(delay).await;
            ROOTS_NOW.fetch_sub(1, Ordering::SeqCst);
            let root = serde_json::from_value(json!({"uri": "file:///work"}))
                .map_err(|e| e.to_string())?;
            Ok(mcp_types::ListRootsResult::new(vec![root]))
        })
}

/// What the call of a case is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ask {
    /// `tools/list` (the client's 20 s timeout).
    List,
    /// `tools/call` with a [`SHORT`] timeout, for a response that must not be recognised.
    Short,
}

/// Makes the case's call.
pub(crate) async fn run(client: &Client, ask: Ask) -> Result<(), Error> {
    match ask {
        Ask::List => client.list_tools(None).await.map(|_| ()),
        Ask::Short => client
            .call_tool_with(
                "t",
                mcp_types::JsonObject::new(),
                &CallOptions::default().timeout(SHORT),
            )
            .await
            .map(|_| ()),
    }
}
