//! The dual-era server on one connection (the engine's in-memory duplex, as stdio would
//! carry it): the first message picks the era, a legacy session is served by the same
//! modern handlers, and a modern connection passes through untouched.

use std::time::Duration;

use mcp_jsonrpc::PeerConfig;
use mcp_legacy::server::DualEra;
use mcp_server::{ResourceDef, Server, ToolDef};
use mcp_test_support::MemoryWire;
use mcp_test_support::tools;
use mcp_types::{
    CallToolResult, ElicitRequestFormParams, ElicitRequestParams, EmbeddedResourceResource,
    LoggingLevel, TextResourceContents,
};
use serde_json::{Value, json};

fn server() -> Server {
    Server::builder("dual", "2.0.0")
        .instructions("Both eras")
        .tool(tools::echo(""))
        .tool(ToolDef::new(
            "chatty",
            json!({"type": "object"}),
            |_args, cx| async move {
                cx.log(LoggingLevel::Info, json!("info line")).await;
                Ok(CallToolResult::text("done"))
            },
        ))
        .tool(ToolDef::new(
            "ask",
            json!({"type": "object"}),
            |_args, cx| async move {
                let form: ElicitRequestFormParams = serde_json::from_value(json!({
                    "message": "Your view?",
                    "requestedSchema": {"type": "object", "properties": {"view": {"type": "string"}}}
                }))?;
                if cx.state().is_none() {
                    cx.set_state(json!({"round": 1}));
                }
                let answer = cx.elicit("view", ElicitRequestParams::ElicitRequestForm(form))?;
                let view = answer.content.as_ref().and_then(|c| c.get("view")).cloned();
                Ok(CallToolResult::text(format!(
                    "state {} view {view:?}",
                    cx.state().cloned().unwrap_or_default()
                )))
            },
        ))
        .resource(ResourceDef::new("test://here", "here", |uri, _cx| async move {
            Ok(vec![EmbeddedResourceResource::TextResourceContents(
                TextResourceContents::new("here", uri),
            )])
        }))
        .build()
        .unwrap()
}

/// The dual-era `handler` on one end of an in-memory duplex, and the bare other end.
fn start(handler: DualEra<Server>) -> (MemoryWire, mcp_jsonrpc::Connection) {
    let (wire, (read, write)) = MemoryWire::pair(64, Duration::from_secs(10));
    let (_peer, conn) = handler.connect(read, write, PeerConfig::default());
    (wire, conn)
}

fn initialize(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {"sampling": {}},
        "clientInfo": {"name": "old-client", "version": "0.9"}
    })
}

#[tokio::test]
async fn initialize_first_makes_a_legacy_session_served_by_the_same_handlers() {
    let (mut wire, _conn) = start(DualEra::new(server()));
    let init = wire.result("initialize", initialize("2025-06-18")).await;
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(init["serverInfo"]["name"], "dual");
    assert_eq!(init["serverInfo"]["version"], "2.0.0");
    assert_eq!(init["instructions"], "Both eras");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true, "{init}");
    assert!(init["capabilities"].get("extensions").is_none());
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    let tools = wire.result("tools/list", json!({})).await;
    let names: Vec<_> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("echo"), json!("chatty"), json!("ask")]);
    for modern_only in ["resultType", "ttlMs", "cacheScope"] {
        assert!(tools.get(modern_only).is_none(), "{modern_only} in {tools}");
    }
    let called = wire
        .result(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(called["content"][0]["text"], "hi");
    assert!(called.get("resultType").is_none());
    assert_eq!(wire.result("ping", json!({})).await, json!({}));

    // Logs reach the session only once it asked for them.
    let (notes, _) = wire
        .call("tools/call", json!({"name": "chatty", "arguments": {}}))
        .await;
    assert!(notes.is_empty(), "{notes:?}");
    wire.result("logging/setLevel", json!({"level": "info"}))
        .await;
    let (notes, response) = wire
        .call("tools/call", json!({"name": "chatty", "arguments": {}}))
        .await;
    assert_eq!(response["result"]["content"][0]["text"], "done");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["method"], "notifications/message");
    assert_eq!(notes[0]["params"]["data"], "info line");

    // Unknown tools keep the core's error; a second initialize is refused.
    let unknown = wire
        .error("tools/call", json!({"name": "nope", "arguments": {}}))
        .await;
    assert!(unknown["code"].as_i64().unwrap() < 0, "{unknown}");
    let again = wire.error("initialize", initialize("2025-06-18")).await;
    assert_eq!(again["code"], -32600);
}

#[tokio::test]
async fn an_unknown_requested_version_gets_the_newest_enabled_one() {
    let (mut wire, _conn) = start(DualEra::new(server()));
    let init = wire.result("initialize", initialize("2099-01-01")).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");

    let (mut wire, _conn) =
        start(DualEra::new(server()).with_legacy_versions(&["2025-03-26", "2024-11-05"]));
    let init = wire.result("initialize", initialize("2025-11-25")).await;
    assert_eq!(init["protocolVersion"], "2025-03-26");
    let (mut init_old, _conn) =
        start(DualEra::new(server()).with_legacy_versions(&["2025-03-26", "2024-11-05"]));
    let old = init_old
        .result("initialize", initialize("2024-11-05"))
        .await;
    assert_eq!(old["protocolVersion"], "2024-11-05");
}

#[tokio::test]
async fn a_modern_only_server_names_its_versions() {
    let (mut wire, _conn) = start(DualEra::new(server()).with_legacy_versions(&[]));
    let error = wire.error("initialize", initialize("2025-11-25")).await;
    assert_eq!(error["code"], -32022);
    assert_eq!(error["data"]["supported"], json!(["2026-07-28"]));
}

#[tokio::test]
async fn a_request_before_initialize_is_an_error_not_an_exit() {
    let (mut wire, _conn) = start(DualEra::new(server()));
    let error = wire.error("tools/list", json!({})).await;
    assert_eq!(error["code"], -32600);
    // The connection is still usable: the handshake follows.
    let init = wire.result("initialize", initialize("2025-11-25")).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn modern_meta_first_makes_a_modern_connection() {
    let (mut wire, _conn) = start(DualEra::new(server()));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let tools = wire.result("tools/list", json!({"_meta": meta})).await;
    assert_eq!(tools["resultType"], "complete");
    let discovered = wire.result("server/discover", json!({"_meta": meta})).await;
    assert!(discovered["supportedVersions"].is_array(), "{discovered}");
    // The era is fixed: a late initialize is not a handshake.
    let late = wire.error("initialize", initialize("2025-11-25")).await;
    assert!(late["code"].as_i64().unwrap() < 0, "{late}");
}

#[tokio::test]
async fn input_required_becomes_real_server_to_client_requests() {
    let (mut wire, _conn) = start(DualEra::new(server()));
    let mut init = initialize("2025-11-25");
    init["capabilities"] = json!({"elicitation": {}});
    wire.result("initialize", init).await;

    wire.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "ask", "arguments": {}}}))
        .await;
    let asked = wire.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["params"]["message"], "Your view?");
    wire.send(json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "accept", "content": {"view": "sunny"}}}))
        .await;
    let done = wire.recv().await;
    assert_eq!(done["id"], 7, "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    // The handler's state survived the round trip, and the answer reached it.
    assert!(text.contains("round") && text.contains("sunny"), "{text}");
    assert!(done["result"].get("resultType").is_none());
}

#[tokio::test]
async fn input_required_without_the_capability_is_the_cores_error() {
    let (mut wire, _conn) = start(DualEra::new(server()));
    wire.result("initialize", initialize("2025-11-25")).await;
    let error = wire
        .error("tools/call", json!({"name": "ask", "arguments": {}}))
        .await;
    assert_eq!(error["code"], -32021, "{error}");
}

#[tokio::test]
async fn an_unknown_resource_is_the_legacy_code() {
    let (mut wire, _conn) = start(DualEra::new(server()));
    wire.result("initialize", initialize("2025-06-18")).await;
    let error = wire
        .error("resources/read", json!({"uri": "test://nope"}))
        .await;
    assert_eq!(error["code"], -32002, "{error}");
    assert_eq!(error["data"]["uri"], "test://nope");
    let read = wire
        .result("resources/read", json!({"uri": "test://here"}))
        .await;
    assert_eq!(read["contents"][0]["text"], "here");

    // A modern connection keeps the 2026-07-28 code.
    let (mut wire, _conn) = start(DualEra::new(server()));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let error = wire
        .error(
            "resources/read",
            json!({"uri": "test://nope", "_meta": meta}),
        )
        .await;
    assert_eq!(error["code"], -32602, "{error}");
}

#[tokio::test]
async fn changes_reach_a_legacy_session_the_legacy_way() {
    let server = server();
    let (mut wire, _conn) = start(DualEra::new(server.clone()));
    let init = wire.result("initialize", initialize("2025-11-25")).await;
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true, "{init}");
    assert_eq!(
        init["capabilities"]["resources"]["subscribe"], true,
        "{init}"
    );
    wire.result("resources/subscribe", json!({"uri": "test://here"}))
        .await;

    // An update for a resource nobody subscribed to is not passed on; the subscribed one
    // is, untagged. Updates go out in order, so the first one seen must be ours.
    server.resource_updated("test://elsewhere");
    server.resource_updated("test://here");
    let updated = wire.recv().await;
    assert_eq!(
        updated,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
            "params": {"uri": "test://here"}})
    );

    server
        .add_tool(ToolDef::new(
            "late",
            json!({"type": "object"}),
            |_args, _cx| async move { Ok(CallToolResult::text("late")) },
        ))
        .unwrap();
    let changed = wire.recv().await;
    assert_eq!(
        changed,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );

    // After unsubscribing, updates stop; a list change still arrives.
    wire.result("resources/unsubscribe", json!({"uri": "test://here"}))
        .await;
    server.resource_updated("test://here");
    server.remove_tool("late");
    let next = wire.recv().await;
    assert_eq!(next["method"], "notifications/tools/list_changed", "{next}");
}

/// An `initialize` already waiting when the connection starts (a host that wrote it while
/// the server was still starting) opens a session whose relay of changes is in place: the
/// handler knows its connection before it reads the first message, on any thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_initialize_waiting_at_connect_gets_change_notifications() {
    for _ in 0..20 {
        let server = server();
        let (mut wire, (read, write)) = MemoryWire::pair(64, Duration::from_secs(10));
        wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": initialize("2025-11-25")}))
            .await;
        let (_peer, _conn) =
            DualEra::new(server.clone()).connect(read, write, PeerConfig::default());
        let init = wire.recv().await;
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        server.remove_tool("echo");
        let changed = wire.recv().await;
        assert_eq!(
            changed,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        );
    }
}

/// A resync on the server's change bus (its listeners may have missed changes: one fell
/// behind, or a bus shared by a fleet lost touch with the others) reaches a legacy session
/// through its relay as the legacy notifications: every list it follows changed, and each
/// resource it subscribed to was updated.
#[tokio::test]
async fn a_resync_reaches_a_legacy_session_as_list_changes_and_updates() {
    let bus = mcp_server::bus::InProcessBus::new();
    let server = Server::builder("dual", "2.0.0")
        .tool(tools::echo(""))
        .resource(ResourceDef::new(
            "test://here",
            "here",
            |uri, _cx| async move {
                Ok(vec![EmbeddedResourceResource::TextResourceContents(
                    TextResourceContents::new("here", uri),
                )])
            },
        ))
        .change_bus(bus.clone())
        .build()
        .unwrap();
    let (mut wire, _conn) = start(DualEra::new(server));
    wire.result("initialize", initialize("2025-11-25")).await;
    wire.result("resources/subscribe", json!({"uri": "test://here"}))
        .await;

    bus.resync();
    // The server has no prompts, so no prompt list is followed.
    let mut heard = Vec::new();
    for _ in 0..3 {
        heard.push(wire.recv().await);
    }
    assert_eq!(
        heard,
        [
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"uri": "test://here"}}),
        ]
    );
}
