//! The client against a scripted server: version negotiation and `resultType` rules.

mod support;

use mcp_client::{Client, Error};
use mcp_types::CallToolResult;
use serde_json::{Value, json};
use support::script::Script;
use tokio::task::JoinHandle;

/// The client over the stdio line framing, and the scripted server's end.
fn connect() -> (Client, Script, mcp_jsonrpc::Connection) {
    support::script::connect(Client::builder("client", "1.0"))
}

/// A `tools/call` of `t` on its way: the call, the scripted server's end, and the request
/// it received.
async fn tool_call() -> (
    JoinHandle<Result<CallToolResult, Error>>,
    Script,
    Value,
    mcp_jsonrpc::Connection,
) {
    let (client, mut server, conn) = connect();
    let call =
        tokio::spawn(async move { client.call_tool("t", mcp_types::JsonObject::new()).await });
    let request = server.request().await;
    (call, server, request, conn)
}

#[tokio::test]
async fn every_request_carries_meta() {
    let (client, mut server, _conn) = connect();
    let call = tokio::spawn(async move { client.list_tools(None).await });
    let request = server.request().await;
    let meta = &request["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"],
        json!({"name": "client", "version": "1.0"})
    );
    server.reply_result(&request, json!({"tools": []})).await;
    // No resultType: an earlier-revision server's result, read as complete.
    assert!(call.await.unwrap().unwrap().tools.is_empty());
}

#[tokio::test]
async fn no_common_version_is_a_clear_error() {
    let (client, mut server, _conn) = connect();
    let call = tokio::spawn(async move { client.discover().await });
    let request = server.request().await;
    server
        .reply(
            &request,
            json!({"error": {"code": -32022, "message": "unsupported",
            "data": {"supported": ["2099-01-01"], "requested": "2026-07-28"}}}),
        )
        .await;
    match call.await.unwrap() {
        Err(Error::VersionMismatch { ours, theirs }) => {
            assert_eq!(
                (ours, theirs),
                (vec!["2026-07-28".to_owned()], vec!["2099-01-01".to_owned()])
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_unknown_result_type_is_an_error() {
    let (call, mut server, request, _conn) = tool_call().await;
    server
        .reply_result(&request, json!({"resultType": "task", "task": {}}))
        .await;
    assert!(matches!(call.await.unwrap(), Err(Error::UnknownResultType(t)) if t == "task"));
}

/// Answers `request` with `input_required` carrying `state` (and no questions): the
/// client's retry.
async fn retry_after_input_required(server: &mut Script, request: &Value, state: &str) -> Value {
    server
        .reply_result(
            request,
            json!({"resultType": "input_required", "requestState": state}),
        )
        .await;
    server.request().await
}

#[tokio::test]
async fn a_retry_echoes_the_request_state_exactly_with_a_new_id() {
    let (call, mut server, first, _conn) = tool_call().await;
    let retry = retry_after_input_required(&mut server, &first, "opaque+/=state").await;
    assert_ne!(retry["id"], first["id"], "a retry is a new request");
    assert_eq!(retry["params"]["requestState"], "opaque+/=state");
    assert!(
        retry["params"].get("inputResponses").is_none(),
        "nothing was asked"
    );
    server
        .reply_result(&retry, json!({"resultType": "complete", "content": []}))
        .await;
    assert!(call.await.unwrap().unwrap().content.is_empty());
}

#[tokio::test]
async fn a_question_without_a_handler_is_an_error() {
    let (call, mut server, first, _conn) = tool_call().await;
    server
        .reply_result(
            &first,
            json!({"resultType": "input_required",
            "inputRequests": {"r": {"method": "roots/list", "params": {}}}}),
        )
        .await;
    assert!(
        matches!(call.await.unwrap(), Err(Error::NoHandler { method }) if method == "roots/list")
    );
}

#[tokio::test]
async fn results_with_a_ttl_are_served_from_the_cache() {
    let (client, mut server, _conn) = connect();
    let first = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools(None).await }
    });
    let request = server.request().await;
    server
        .reply_result(
            &request,
            json!({"resultType": "complete", "tools": [], "ttlMs": 60_000, "cacheScope": "public"}),
        )
        .await;
    first.await.unwrap().unwrap();
    // The scripted server answers nothing more: a second list only completes from the cache.
    let second =
        tokio::time::timeout(std::time::Duration::from_secs(5), client.list_tools(None)).await;
    assert!(
        second
            .expect("served without the server")
            .unwrap()
            .tools
            .is_empty()
    );

    // An input_required result is never stored, and neither is the retry's result.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.read_resource("file:///x").await }
    });
    let read = server.request().await;
    let retry = retry_after_input_required(&mut server, &read, "s").await;
    server.reply_result(&retry, json!({"resultType": "complete", "contents": [], "ttlMs": 60_000, "cacheScope": "public"})).await;
    call.await.unwrap().unwrap();
    let again = tokio::spawn(async move { client.read_resource("file:///x").await });
    let fresh = server.request().await;
    assert_eq!(
        fresh["method"], "resources/read",
        "the retry's result was not cached"
    );
    server
        .reply_result(&fresh, json!({"resultType": "complete", "contents": []}))
        .await;
    again.await.unwrap().unwrap();
}

#[tokio::test]
async fn trace_context_travels_in_meta() {
    let (client, mut server, _conn) = connect();
    let options = mcp_client::CallOptions::default().trace(
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        Some("k=v".into()),
    );
    let call = tokio::spawn(async move {
        client
            .call_tool_with("t", mcp_types::JsonObject::new(), &options)
            .await
    });
    let request = server.request().await;
    assert_eq!(
        request["params"]["_meta"]["traceparent"],
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    );
    assert_eq!(request["params"]["_meta"]["tracestate"], "k=v");
    server
        .reply_result(&request, json!({"resultType": "complete", "content": []}))
        .await;
    call.await.unwrap().unwrap();
}
