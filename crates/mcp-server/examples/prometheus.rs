//! A server's metrics in the Prometheus text format (feature `metrics`): the
//! Prometheus exporter of the `metrics` ecosystem installed as the recorder, a few
//! requests served, and what a scrape of `/metrics` would read printed on stdout.
//!
//! ```sh
//! cargo run -p mcp-server --features metrics --example prometheus
//! ```
//!
//! A real server serves `handle.render()` on an HTTP route of its own (or lets the
//! exporter's `http-listener` feature do it), next to its MCP endpoint.

use mcp_client::Client;
use mcp_server::{Server, ToolDef};
use mcp_types::CallToolResult;
use metrics_exporter_prometheus::PrometheusBuilder;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let handle = PrometheusBuilder::new().install_recorder()?;

    let server = Server::builder("metered", "1.0.0")
        .tool(ToolDef::new(
            "echo",
            serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            |args, _cx| async move {
                Ok(CallToolResult::text(
                    args["text"].as_str().unwrap_or_default(),
                ))
            },
        ))
        .build()?;
    // A client over an in-memory pipe, as a transport would connect one.
    let ((a_read, a_write), (b_read, b_write)) = mcp_jsonrpc::memory::pair(16);
    let config = mcp_jsonrpc::PeerConfig::default();
    let (_peer, _server_conn) = mcp_jsonrpc::Peer::connect(b_read, b_write, server, config.clone());
    let (client, _client_conn) =
        Client::builder("scraper", "1.0.0").connect(a_read, a_write, config);

    client.list_tools(None).await?;
    for text in ["one", "two", "three"] {
        client
            .call_tool("echo", serde_json::json!({ "text": text }))
            .await?;
    }
    // A method nobody serves: counted as an error, under `other`.
    let _ = client.complete(serde_json::json!({})).await;

    print!("{}", handle.render());
    Ok(())
}
