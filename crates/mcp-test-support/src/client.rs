//! Helpers that drive a `mcp_client::Client`.

use std::sync::Arc;

use mcp_client::{CallOptions, Client, ClientBuilder, Error};
use mcp_jsonrpc::{Connection, Handler, Peer, PeerConfig};
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

/// A client made by `builder`, connected through an in-memory pipe (`capacity` frames each
/// way) to a peer serving `handler` (a `mcp_server::Server`, say): the client, its
/// connection and the server's, which must outlive the test's calls.
pub fn connect_in_memory<H: Handler>(
    handler: H,
    builder: ClientBuilder,
    capacity: usize,
) -> (Client, Connection, Connection) {
    let ((a_read, a_write), (b_read, b_write)) = mcp_jsonrpc::memory::pair(capacity);
    let (_peer, server_conn) = Peer::connect(b_read, b_write, handler, PeerConfig::default());
    let (client, client_conn) = builder.connect(a_read, a_write, PeerConfig::default());
    (client, client_conn, server_conn)
}
