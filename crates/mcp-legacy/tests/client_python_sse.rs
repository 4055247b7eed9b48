//! The dual-era client against a legacy HTTP+SSE server (the 2024-11-05 transport) built
//! with the Python SDK (`mcp` 2.3.0, pinned in `interop/requirements.txt`;
//! `tests/peers/py-sse-server.py`): the modern probe and the Streamable HTTP `initialize`
//! both fail, the `endpoint` event of a GET names the POST URL, and every answer,
//! including the server's `elicitation/create` request and progress, arrives on the GET
//! stream. `tests/peers/setup.sh` installs the peers once per test binary.

#![cfg(all(feature = "stdio", feature = "http"))]

mod peers_common;
use peers_common::{peers_dir, setup};

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{CallOptions, Client};
use mcp_legacy::client::{Connector, Transport};
use mcp_test_support::{Killed, first_text as text, free_port, spawn_ready, tool_names};
use mcp_transport_http::HttpClientConfig;
use mcp_types::{ElicitResult, ElicitResultAction, Era, JsonObject};
use serde_json::json;

fn start() -> (Killed, u16) {
    let port = free_port();
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/.venv/bin/python");
    let server = spawn_ready(
        Command::new(python)
            .arg(peers_dir().join("py-sse-server.py"))
            .arg(port.to_string()),
        |line| line.contains("Uvicorn running on"),
        Duration::from_mins(1),
        "the Python SSE server",
    );
    (server, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_http_sse_server() {
    setup();
    let (_server, port) = start();
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let recorded = Arc::clone(&asked);
    let builder = Client::builder("dual-era-test", "1.0.0").on_elicit(move |params| {
        let recorded = Arc::clone(&recorded);
        async move {
            let params = serde_json::to_value(&params).unwrap();
            recorded
                .lock()
                .unwrap()
                .push(params["message"].as_str().unwrap_or_default().to_owned());
            let mut result = ElicitResult::new(ElicitResultAction::Accept);
            result.content = serde_json::from_value(json!({"name": "Grace"})).ok();
            Ok(result)
        }
    });
    let url = format!("http://127.0.0.1:{port}/sse");
    let connection = Connector::new(builder)
        .connect_http(&url, HttpClientConfig::default())
        .await
        .unwrap();
    assert_eq!(connection.verdict.era, Era::Legacy);
    assert_eq!(connection.verdict.transport, Transport::HttpSse);
    let client = &connection.client;

    let discovered = serde_json::to_value(client.discover().await.unwrap()).unwrap();
    assert_eq!(
        discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "py-sse"
    );
    let tools = tool_names(&client.list_tools_all().await.unwrap());
    assert_eq!(tools, ["add", "ask", "slow"]);
    let mut args = JsonObject::new();
    args.insert("a".into(), json!(2));
    args.insert("b".into(), json!(3));
    assert_eq!(text(&client.call_tool("add", args).await.unwrap()), "5");

    // The server's elicitation/create arrives on the GET stream; our answer is POSTed to
    // the endpoint.
    let asked_result = client.call_tool("ask", JsonObject::new()).await.unwrap();
    assert_eq!(text(&asked_result), "Hello, Grace!");
    assert_eq!(*asked.lock().unwrap(), ["What is your name?"]);

    // Progress notifications reach the call's callback.
    let progress: Arc<Mutex<Vec<f64>>> = Arc::default();
    let seen = Arc::clone(&progress);
    let options = CallOptions::default().progress(move |p| {
        seen.lock()
            .unwrap()
            .push(p.progress.as_f64().unwrap_or(-1.0));
    });
    let slow = client
        .call_tool_with("slow", JsonObject::new(), &options)
        .await
        .unwrap();
    assert_eq!(text(&slow), "finished");
    assert_eq!(*progress.lock().unwrap(), [1.0, 2.0]);

    let read = serde_json::to_value(client.read_resource("test://hello").await.unwrap()).unwrap();
    assert_eq!(read["contents"][0]["text"], "Hello, world!");
    let mut name = mcp_types::OrderedMap::new();
    name.insert("name".to_owned(), "Ada".to_owned());
    let prompt = serde_json::to_value(client.get_prompt("greet", name).await.unwrap()).unwrap();
    assert_eq!(prompt["messages"][0]["content"]["text"], "Hello, Ada!");
    client.shutdown(Duration::from_secs(2)).await;
}
