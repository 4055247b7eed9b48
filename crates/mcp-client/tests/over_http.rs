//! The client over Streamable HTTP against this workspace's server on 127.0.0.1.

mod support;

use std::sync::Arc;

use mcp_client::{CallOptions, Client, ListenEvent};
use mcp_server::{Server, ToolDef};
use mcp_test_support::tools;
use mcp_transport_http::{HttpClientConfig, HttpServer, HttpServerConfig};
use mcp_types::{
    CallToolResult, ContentBlock, ElicitRequestFormParams, ElicitRequestParams, ElicitResult,
    ElicitResultAction, OrderedMap,
};
use serde_json::json;

fn server() -> Server {
    Server::builder("http-server", "1")
        .tool(ToolDef::new(
            "region",
            json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}, "required": ["region"]}),
            |args, cx| async move {
                let header = cx.transport().and_then(|t| t.header("mcp-param-region")).unwrap_or("none").to_owned();
                Ok(CallToolResult::text(format!("{} via {header}", args["region"].as_str().unwrap_or_default())))
            },
        ))
        .tool(tools::slow())
        .tool(ToolDef::new("ask", json!({"type": "object"}), |_, cx| async move {
            let form: ElicitRequestFormParams = serde_json::from_value(json!({
                "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
            }))?;
            let answer = cx.elicit("name", ElicitRequestParams::ElicitRequestForm(form))?;
            Ok(CallToolResult::text(format!("{:?}", answer.action)))
        }))
        .build()
        .unwrap()
}

async fn start(server: Server) -> mcp_transport_http::RunningServer {
    // The `Mcp-Param-*` checks come from the server's tools, with no wiring.
    let config = HttpServerConfig::default();
    HttpServer::bind("127.0.0.1:0".parse().unwrap(), server, config)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_client_speaks_streamable_http() {
    let server = server();
    let running = start(server.clone()).await;
    let client = Client::builder("client", "1")
        .on_elicit(|_| async {
            let mut result = ElicitResult::new(ElicitResultAction::Accept);
            result.content = Some(OrderedMap::new());
            Ok(result)
        })
        .connect_http(running.url(), HttpClientConfig::default())
        .unwrap();

    assert_eq!(
        client.discover().await.unwrap().supported_versions,
        ["2026-07-28"]
    );
    let tools = client.list_tools_all().await.unwrap();
    assert_eq!(tools.len(), 3);

    // The argument the tool annotates travels in Mcp-Param-Region too, and the server
    // checked it against the body.
    let region = client
        .call_tool(
            "region",
            json!({"region": "eu-west"}).as_object().unwrap().clone(),
        )
        .await
        .unwrap();
    assert!(
        matches!(&region.content[0], ContentBlock::TextContent(t) if t.text == "eu-west via eu-west"),
        "{region:?}"
    );

    // Progress arrives on the request's SSE stream while the call runs.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let options = CallOptions::default().progress({
        let seen = Arc::clone(&seen);
        move |p| seen.lock().unwrap().push(p.progress.as_f64().unwrap())
    });
    client
        .call_tool_with("slow", mcp_types::JsonObject::new(), &options)
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);

    // MRTR over HTTP: each round is its own POST.
    let asked = client
        .call_tool("ask", mcp_types::JsonObject::new())
        .await
        .unwrap();
    assert!(matches!(&asked.content[0], ContentBlock::TextContent(t) if t.text == "Accept"));

    let unknown = client
        .call_tool("missing", mcp_types::JsonObject::new())
        .await
        .unwrap_err();
    assert_eq!(unknown.protocol().map(|e| e.code.0), Some(-32602));

    // A subscription is a held-open SSE stream.
    let mut filter = mcp_types::SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    let mut events = client.listen(filter).await.unwrap();
    assert!(matches!(
        events.next().await,
        Some(ListenEvent::Acknowledged(_))
    ));
    server.remove_tool("slow");
    assert_eq!(events.next().await, Some(ListenEvent::ToolsListChanged));
    server.close_subscriptions();
    assert_eq!(events.next().await, None);
    running.shutdown(std::time::Duration::from_secs(1)).await;
}

#[tokio::test]
async fn tools_with_invalid_header_annotations_are_dropped() {
    // A raw server is not needed: a scripted reply through the engine suffices, but over
    // HTTP the check runs on the listed tools, so serve a list with one bad tool.
    struct BadList;
    impl mcp_jsonrpc::Handler for BadList {
        async fn request(
            &self,
            _request: mcp_jsonrpc::Request,
            _cx: mcp_jsonrpc::RequestContext,
        ) -> Result<Box<serde_json::value::RawValue>, mcp_jsonrpc::ErrorObject> {
            Ok(serde_json::value::to_raw_value(&json!({"resultType": "complete", "tools": [
                {"name": "good", "inputSchema": {"type": "object"}},
                {"name": "bad", "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}}
            ]}))
            .unwrap())
        }
    }
    let running = HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        BadList,
        HttpServerConfig::default(),
    )
    .await
    .unwrap();
    let client = Client::builder("client", "1")
        .connect_http(running.url(), HttpClientConfig::default())
        .unwrap();
    let tools = client.list_tools(None).await.unwrap().tools;
    assert_eq!(
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["good"]
    );
    running.shutdown(std::time::Duration::from_secs(1)).await;
}

/// A scripted HTTP server: each request takes the next reply from the script (`None`: an
/// SSE stream that breaks before the response) and is reported by its body.
async fn scripted(
    replies: Vec<Option<serde_json::Value>>,
) -> (
    String,
    tokio::sync::mpsc::UnboundedReceiver<support::http::Seen>,
) {
    let mut replies = replies.into_iter();
    support::http::serve(move |seen| match replies.next().flatten() {
        None => support::http::Reply::Close(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n: about to break\n\n".to_vec(),
        ),
        Some(result) => support::http::json(
            &json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": result}),
        ),
    })
    .await
}

#[tokio::test]
async fn a_broken_stream_is_reissued_only_when_the_request_is_retry_safe() {
    let (url, mut seen) = scripted(vec![
        None,
        Some(json!({"resultType": "complete", "tools": []})),
        None,
    ])
    .await;
    let client = Client::builder("client", "1")
        .connect_http(&url, HttpClientConfig::default())
        .unwrap();

    // tools/list is safe to repeat: re-issued with a new id.
    assert!(client.list_tools(None).await.unwrap().tools.is_empty());
    let (first, second) = (
        seen.recv().await.unwrap().body,
        seen.recv().await.unwrap().body,
    );
    assert_eq!(
        (first["method"].clone(), second["method"].clone()),
        (json!("tools/list"), json!("tools/list"))
    );
    assert_ne!(
        first["id"], second["id"],
        "a re-issued request has a new id"
    );

    // A tool call with no read-only or idempotent hint is not re-sent.
    let err = client
        .call_tool("launch", mcp_types::JsonObject::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, mcp_client::Error::MayHaveRun { method } if method == "tools/call"),
        "{err}"
    );
    assert_eq!(seen.recv().await.unwrap().body["method"], "tools/call");
    assert!(seen.try_recv().is_err(), "sent once");
}

/// Over HTTP a call's timeout runs from the request to its response, and each progress
/// notification on the request's stream starts it again: a call that reports progress
/// more often than its timeout outlives it, one that goes quiet for longer fails with
/// `Error::Timeout`, whether its reply's head came (an SSE stream) or not (a JSON reply).
#[tokio::test]
async fn progress_moves_an_http_calls_deadline() {
    let server = Server::builder("timing", "1")
        .tool(ToolDef::new(
            "ticking",
            json!({"type": "object"}),
            |_, cx| async move {
                for step in 1..=4 {
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    cx.progress(f64::from(step), Some(4.0), None).await;
                }
                Ok(CallToolResult::text("ticked"))
            },
        ))
        .tool(ToolDef::new(
            "stalling",
            json!({"type": "object"}),
            |_, cx| async move {
                cx.progress(1.0, Some(2.0), None).await;
                tokio::time::sleep(std::time::Duration::from_mins(1)).await;
                Ok(CallToolResult::text("late"))
            },
        ))
        .tool(ToolDef::new(
            "silent",
            json!({"type": "object"}),
            |_, _| async move {
                tokio::time::sleep(std::time::Duration::from_mins(1)).await;
                Ok(CallToolResult::text("late"))
            },
        ))
        .build()
        .unwrap();
    let running = start(server).await;
    let client = Client::builder("client", "1")
        .connect_http(running.url(), HttpClientConfig::default())
        .unwrap();
    // Real time (the server is on a real socket), so margins of whole seconds: the suite
    // runs on two loaded cores. Progress comes every second against a 3 s timeout; the
    // quiet tools stay quiet for a minute.
    let timeout = std::time::Duration::from_secs(3);
    let options = CallOptions::default().timeout(timeout).progress(|_| {});

    // 4 s in all, never 3 s without progress.
    let ticked = client
        .call_tool_with("ticking", mcp_types::JsonObject::new(), &options)
        .await
        .unwrap();
    assert_eq!(ticked.content[0], ContentBlock::text("ticked"));

    for tool in ["stalling", "silent"] {
        let started = std::time::Instant::now();
        let error = client
            .call_tool_with(tool, mcp_types::JsonObject::new(), &options)
            .await
            .unwrap_err();
        assert!(
            matches!(&error, mcp_client::Error::Timeout { method, .. } if method == "tools/call"),
            "{tool}: {error:?}"
        );
        // Not before the timeout; and not the minute-long reply either, which would be a
        // result, not this error.
        let took = started.elapsed();
        assert!(took >= timeout, "{tool}: {took:?}");
    }
    running.shutdown(std::time::Duration::from_secs(1)).await;
}
