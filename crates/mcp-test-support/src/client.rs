//! Helpers that drive a `mcp_client::Client`.

use std::sync::Arc;

use mcp_client::{CallOptions, Client, Error};
use mcp_types::{CallToolResult, JsonObject};
use tokio::task::JoinHandle;

/// Calls `tool` (no arguments) with `options` on a task of its own, so that the test can
/// act while the call runs: the call's outcome.
pub fn spawn_call(
    client: &Arc<Client>,
    tool: &'static str,
    options: CallOptions,
) -> JoinHandle<Result<CallToolResult, Error>> {
    let client = Arc::clone(client);
    tokio::spawn(async move {
        client
            .call_tool_with(tool, JsonObject::new(), &options)
            .await
    })
}
