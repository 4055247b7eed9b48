//! The server on the wire: JSON-RPC in, JSON-RPC out, over the engine's in-memory duplex.

use std::time::Duration;

use mcp_jsonrpc::{Peer, PeerConfig};
use mcp_server::{
    PromptDef, ResourceDef, ResourceTemplateDef, Server, StateKeys, TemplateValue, ToolDef,
    ToolError,
};
use mcp_test_support::{MemoryWire, tools};
use mcp_types::{
    CallToolResult, ContentBlock, ElicitRequestFormParams, ElicitRequestParams,
    EmbeddedResourceResource, GetPromptResult, LoggingLevel, PromptMessage, Role,
    TextResourceContents,
};
use serde_json::{Value, json};

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}})
}

fn server() -> Server {
    Server::builder("wire-test", "1.0.0")
        .instructions("Test server")
        .tool(
            ToolDef::new(
                "echo",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                |args, _cx| async move { Ok(CallToolResult::text(args["text"].as_str().unwrap_or_default())) },
            )
            .description("Echoes"),
        )
        .tool(tools::add())
        .tool(ToolDef::new("boom", json!({"type": "object"}), |_args, _cx| async move {
            panic!("handler bug");
        }))
        .tool(ToolDef::new("traced", json!({"type": "object"}), |_args, _cx| async move {
            let mut result = CallToolResult::text("traced");
            let mut meta = mcp_types::ResultMetaObject::new();
            meta.extra.insert("com.example/trace".into(), json!("t-1"));
            result.meta = Some(meta);
            Ok(result)
        }))
        .tool(ToolDef::new("fails", json!({"type": "object"}), |_args, _cx| async move {
            Err(ToolError::failed("the city is unknown"))
        }))
        .tool(ToolDef::new("chatty", json!({"type": "object"}), |_args, cx| async move {
            cx.progress(1.0, Some(2.0), Some("half")).await;
            cx.log(LoggingLevel::Debug, json!("debug detail")).await;
            cx.log(LoggingLevel::Warning, json!("a warning")).await;
            cx.progress(2.0, Some(2.0), None).await;
            Ok(CallToolResult::text("done"))
        }))
        .tool(ToolDef::new("ask", json!({"type": "object", "properties": {"topic": {"type": "string"}}}), |args, cx| async move {
            let form: ElicitRequestFormParams = serde_json::from_value(json!({
                "message": format!("Your view on {}?", args["topic"].as_str().unwrap_or("?")),
                "requestedSchema": {"type": "object", "properties": {"view": {"type": "string"}}}
            }))?;
            if cx.state().is_none() {
                cx.set_state(json!({"round": 1}));
            }
            let answer = cx.elicit("view", ElicitRequestParams::ElicitRequestForm(form))?;
            let view = answer.content.as_ref().and_then(|c| c.get("view")).map(|v| format!("{v:?}")).unwrap_or_default();
            Ok(CallToolResult::text(format!("state {} view {view}", cx.state().cloned().unwrap_or_default())))
        }))
        .prompt(
            PromptDef::new("greet", |args, _cx| async move {
                let name = args.get("name").cloned().unwrap_or_default();
                Ok(GetPromptResult::new(vec![PromptMessage::new(ContentBlock::text(format!("Hello {name}")), Role::User)]))
            })
            .argument("name", "Who", true),
        )
        .resource(ResourceDef::new("test://static-text", "static", |uri, _cx| async move {
            Ok(vec![EmbeddedResourceResource::TextResourceContents(TextResourceContents::new("static", uri))])
        }))
        .resource_template(ResourceTemplateDef::new("test://template/{id}/data", "item", |uri, vars, _cx| async move {
            let id = vars.get("id").cloned().unwrap_or_default();
            Ok(vec![EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(format!("item {id}"), uri))])
        }))
        // Query, explode and path-segment forms, with the values as matched.
        .resource_template(ResourceTemplateDef::with_values("test://search{/scope}{?q,tag*}", "search", |uri, vars, _cx| async move {
            Ok(vec![EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(format!("{vars:?}"), uri))])
        }))
        .build()
        .unwrap()
}

/// `server` on one end of an in-memory duplex, and the bare other end.
fn start(server: &Server) -> (MemoryWire, mcp_jsonrpc::Connection) {
    let (wire, (read, write)) = MemoryWire::pair(64, Duration::from_secs(10));
    let (_peer, conn) = Peer::connect(read, write, server.clone(), PeerConfig::default());
    (wire, conn)
}

/// The result of `tools/call` with `params` (plus `_meta`), which must succeed.
async fn tool_result(c: &mut MemoryWire, params: Value) -> Value {
    c.result("tools/call", with_meta(params)).await
}

/// The error of `tools/call` with `params` (plus `_meta`), which must fail.
async fn tool_error(c: &mut MemoryWire, params: Value) -> Value {
    c.error("tools/call", with_meta(params)).await
}

/// The error code of `method` with `params` (plus `_meta`), which must fail.
/// The result of `resources/read` of `uri`.
async fn read(c: &mut MemoryWire, uri: &str) -> Value {
    c.result("resources/read", with_meta(json!({"uri": uri})))
        .await
}

async fn error_code(c: &mut MemoryWire, method: &str, params: Value) -> Value {
    c.error(method, with_meta(params)).await["code"].clone()
}

fn with_meta(mut params: Value) -> Value {
    params["_meta"] = meta();
    params
}

#[tokio::test]
async fn every_request_is_judged_on_its_own_meta() {
    let server = server();
    let (mut c, _conn) = start(&server);
    let cases = [
        (json!(null), -32602),
        (json!({}), -32602),
        (
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
            -32602,
        ),
        (
            json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
            -32602,
        ),
    ];
    for (params, code) in cases {
        let params = if params.is_null() { json!({}) } else { params };
        assert_eq!(
            c.error("tools/list", params.clone()).await["code"],
            code,
            "{params}"
        );
    }
    // `tools/call` reads its params in one pass (`_meta` included): a missing or null
    // `_meta` is refused there too, before the tool is looked at, and a good one before
    // it is accepted (the second call reads it remembered).
    let call = |meta: Value| json!({"_meta": meta, "name": "echo", "arguments": {"text": "x"}});
    for params in [
        json!({"name": "echo", "arguments": {"text": "x"}}),
        call(json!(null)),
        call(json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"})),
    ] {
        assert_eq!(
            c.error("tools/call", params.clone()).await["code"],
            -32602,
            "{params}"
        );
    }
    for _ in 0..2 {
        let echoed = c.result("tools/call", call(meta())).await;
        assert_eq!(echoed["content"][0]["text"], "x");
    }
    let old = json!({"io.modelcontextprotocol/protocolVersion": "2025-06-18", "io.modelcontextprotocol/clientCapabilities": {}});
    assert_eq!(c.error("tools/call", call(old)).await["code"], -32022);
    let error = c
        .error("tools/list", json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-06-18", "io.modelcontextprotocol/clientCapabilities": {}}}))
        .await;
    assert_eq!(error["code"], -32022);
    assert_eq!(
        error["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-06-18"})
    );
    for removed in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "no/such",
    ] {
        assert_eq!(
            c.error(removed, with_meta(json!({}))).await["code"],
            -32601,
            "{removed}"
        );
    }
}

#[tokio::test]
async fn discover_and_lists_carry_identity_and_cache_hints() {
    let server = server();
    let (mut c, _conn) = start(&server);
    let discover = c.result("server/discover", with_meta(json!({}))).await;
    assert_eq!(discover["resultType"], "complete");
    assert_eq!(discover["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(discover["instructions"], "Test server");
    assert_eq!(
        discover["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "wire-test", "version": "1.0.0"})
    );
    assert_eq!(
        (discover["ttlMs"].clone(), discover["cacheScope"].clone()),
        (json!(0), json!("public"))
    );
    let caps = &discover["capabilities"];
    assert!(
        caps["tools"].is_object() && caps["prompts"].is_object() && caps["resources"].is_object()
    );
    assert!(
        caps.get("completions").is_none(),
        "no completion handler, no capability"
    );

    let tools = c.result("tools/list", with_meta(json!({}))).await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["echo", "add", "boom", "traced", "fails", "chatty", "ask"],
        "registration order, deterministic"
    );
    assert_eq!(
        tools["tools"][1]["outputSchema"]["properties"]["sum"]["type"],
        "integer"
    );
    assert_eq!(
        tools["tools"][1]["inputSchema"]["required"],
        json!(["a", "b"])
    );
    assert_eq!(tools["cacheScope"], "public");
    assert!(tools["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());

    let templates = c
        .result("resources/templates/list", with_meta(json!({})))
        .await;
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "test://template/{id}/data"
    );
    assert_eq!(
        error_code(&mut c, "tools/list", json!({"cursor": "not-a-cursor"})).await,
        -32602
    );
    assert_eq!(
        c.error("completion/complete", with_meta(json!({}))).await["code"],
        -32601
    );
}

#[tokio::test]
async fn cache_hints_are_configurable_per_kind() {
    let server = Server::builder("cached", "1")
        .cache(mcp_server::CachePolicy::new(
            1_000,
            mcp_types::CacheScope::Public,
        ))
        .cache_for(
            mcp_server::CacheKind::Tools,
            mcp_server::CachePolicy::new(60_000, mcp_types::CacheScope::Private),
        )
        .tool(tools::answers("a", ""))
        .build()
        .unwrap();
    let (mut c, _conn) = start(&server);
    let tools = c.result("tools/list", with_meta(json!({}))).await;
    assert_eq!(
        (tools["ttlMs"].clone(), tools["cacheScope"].clone()),
        (json!(60_000), json!("private"))
    );
    let discover = c.result("server/discover", with_meta(json!({}))).await;
    assert_eq!(
        (discover["ttlMs"].clone(), discover["cacheScope"].clone()),
        (json!(1_000), json!("public"))
    );
}

#[tokio::test]
async fn a_page_holds_a_thousand_items_by_default() {
    let listing = |tools: usize| {
        let mut builder = Server::builder("many", "1");
        for i in 0..tools {
            builder = builder.tool(tools::answers(&format!("t{i:04}"), ""));
        }
        builder.build().unwrap()
    };
    // At the default: one page, without a cursor.
    let (mut c, _conn) = start(&listing(1000));
    let only = c.result("tools/list", with_meta(json!({}))).await;
    assert_eq!(only["tools"].as_array().unwrap().len(), 1000);
    assert!(only.get("nextCursor").is_none());
    // Past it: a second page holds the rest.
    let (mut c, _conn) = start(&listing(1001));
    let first = c.result("tools/list", with_meta(json!({}))).await;
    assert_eq!(first["tools"].as_array().unwrap().len(), 1000);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let second = c
        .result("tools/list", with_meta(json!({"cursor": cursor})))
        .await;
    assert_eq!(second["tools"].as_array().unwrap().len(), 1);
    assert_eq!(second["tools"][0]["name"], "t1000");
}

#[tokio::test]
async fn pagination_follows_opaque_cursors() {
    let server = Server::builder("paged", "1")
        .page_size(2)
        .tool(tools::answers("a", ""))
        .tool(tools::answers("b", ""))
        .tool(tools::answers("c", ""))
        .build()
        .unwrap();
    let (mut c, _conn) = start(&server);
    let first = c.result("tools/list", with_meta(json!({}))).await;
    assert_eq!(first["tools"].as_array().unwrap().len(), 2);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let second = c
        .result("tools/list", with_meta(json!({"cursor": cursor})))
        .await;
    assert_eq!(second["tools"][0]["name"], "c");
    assert!(second.get("nextCursor").is_none());
}

/// A tool's `structuredContent` is checked against its `outputSchema`: a result that
/// matches goes out, one that does not is the server's fault (-32603, naming the tool),
/// never sent as if it were valid.
#[cfg(feature = "schema-validation")]
#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    let tool = ToolDef::new(
        "shaped",
        json!({"type": "object"}),
        |args, _cx| async move { Ok(CallToolResult::structured(args)) },
    )
    .output_schema(json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"]
    }));
    let server = Server::builder("output-test", "1.0.0")
        .tool(tool)
        .build()
        .expect("a valid server");
    let (mut c, _conn) = start(&server);

    let good = tool_result(&mut c, json!({"name": "shaped", "arguments": {"n": 3}})).await;
    assert_eq!(good["structuredContent"], json!({"n": 3}));
    assert!(good.get("isError").is_none(), "{good}");

    let bad = tool_error(
        &mut c,
        json!({"name": "shaped", "arguments": {"n": "three"}}),
    )
    .await;
    assert_eq!(bad["code"], -32603, "{bad}");
    let message = bad["message"].as_str().unwrap();
    assert!(
        message.contains("shaped") && message.contains("outputSchema"),
        "{message}"
    );
}

/// Without `schema-validation` a typed tool's arguments are still refused when they do not
/// deserialize into its type, with the same `isError` result a failed validation gives;
/// a raw tool gets its arguments as they are.
#[cfg(not(feature = "schema-validation"))]
#[tokio::test]
async fn typed_tools_refuse_arguments_that_do_not_deserialize_without_schema_validation() {
    let server = server();
    let (mut c, _conn) = start(&server);
    let bad = tool_result(
        &mut c,
        json!({"name": "add", "arguments": {"a": "two", "b": 3}}),
    )
    .await;
    assert_eq!(bad["isError"], true, "{bad}");
    let text = bad["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Invalid arguments for tool add"), "{text}");
    let sum = tool_result(
        &mut c,
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    )
    .await;
    assert_eq!(sum["structuredContent"], json!({"sum": 5}));
    let raw = tool_result(&mut c, json!({"name": "echo", "arguments": {"text": 5}})).await;
    assert!(raw.get("isError").is_none(), "{raw}");
}

#[cfg(feature = "schema-validation")]
#[tokio::test]
async fn tools_validate_arguments_and_report_failures_as_results() {
    let server = server();
    let (mut c, _conn) = start(&server);
    let ok = tool_result(&mut c, json!({"name": "echo", "arguments": {"text": "hi"}})).await;
    assert_eq!(ok["content"], json!([{"type": "text", "text": "hi"}]));
    assert_eq!(ok["resultType"], "complete");

    let bad = tool_result(&mut c, json!({"name": "echo", "arguments": {"text": 5}})).await;
    assert_eq!(bad["isError"], true);
    let text = bad["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("/text") && text.contains("string"),
        "tells the model what to fix: {text}"
    );
    let missing = c
        .result("tools/call", with_meta(json!({"name": "echo"})))
        .await;
    assert_eq!(missing["isError"], true);

    let sum = tool_result(
        &mut c,
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    )
    .await;
    assert_eq!(sum["structuredContent"], json!({"sum": 5}));
    assert_eq!(sum["content"][0]["text"], "{\"sum\":5}");

    let failed = c
        .result("tools/call", with_meta(json!({"name": "fails"})))
        .await;
    assert_eq!(
        (
            failed["isError"].clone(),
            failed["content"][0]["text"].clone()
        ),
        (json!(true), json!("the city is unknown"))
    );

    let panicked = c
        .result("tools/call", with_meta(json!({"name": "boom"})))
        .await;
    assert_eq!(panicked["isError"], true);
    // The server survived the panic.
    assert_eq!(
        c.result(
            "tools/call",
            with_meta(json!({"name": "echo", "arguments": {"text": "still"}}))
        )
        .await["content"][0]["text"],
        "still"
    );

    assert_eq!(
        error_code(&mut c, "tools/call", json!({"name": "nope"})).await,
        -32602
    );
    assert_eq!(
        error_code(&mut c, "tools/call", json!({"arguments": {}})).await,
        -32602
    );
}

#[tokio::test]
async fn progress_and_logs_only_when_asked_for() {
    let server = server();
    let (mut c, _conn) = start(&server);
    let (notes, response) = c
        .call("tools/call", with_meta(json!({"name": "chatty"})))
        .await;
    assert!(
        notes.is_empty(),
        "no token, no level: nothing but the response: {notes:?}"
    );
    assert_eq!(response["result"]["content"][0]["text"], "done");

    let mut params = with_meta(json!({"name": "chatty"}));
    params["_meta"]["progressToken"] = json!("tok");
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let (notes, _) = c.call("tools/call", params).await;
    let methods: Vec<&str> = notes
        .iter()
        .map(|n| n["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress"
        ]
    );
    assert_eq!(
        notes[0]["params"],
        json!({"progressToken": "tok", "progress": 1.0, "total": 2.0, "message": "half"})
    );
    assert_eq!(
        notes[1]["params"],
        json!({"level": "warning", "data": "a warning"}),
        "debug was filtered out"
    );
}

#[tokio::test]
async fn prompts_and_resources() {
    let server = server();
    let (mut c, _conn) = start(&server);
    let prompt = c
        .result(
            "prompts/get",
            with_meta(json!({"name": "greet", "arguments": {"name": "Ada"}})),
        )
        .await;
    assert_eq!(prompt["messages"][0]["content"]["text"], "Hello Ada");
    assert_eq!(
        error_code(&mut c, "prompts/get", json!({"name": "greet"})).await,
        -32602
    );
    assert_eq!(
        error_code(&mut c, "prompts/get", json!({"name": "nope"})).await,
        -32602
    );

    let fixed = read(&mut c, "test://static-text").await;
    assert_eq!(
        fixed["contents"],
        json!([{"uri": "test://static-text", "text": "static"}])
    );
    assert!(fixed.get("ttlMs").is_some() && fixed.get("cacheScope").is_some());
    let templated = read(&mut c, "test://template/42/data").await;
    assert_eq!(templated["contents"][0]["text"], "item 42");
    // Values come percent-decoded; a list (a bare `,`) reaches `new`'s handler joined.
    let decoded = read(&mut c, "test://template/caf%C3%A9%20au%20lait/data").await;
    assert_eq!(decoded["contents"][0]["text"], "item café au lait");
    let list = read(&mut c, "test://template/a,b%2Cc/data").await;
    assert_eq!(list["contents"][0]["text"], "item a,b,c");
    // The query forms route to the template that has them, lists and all.
    let search = read(&mut c, "test://search/docs?q=rust%20mcp&tag=a&tag=b%26c").await;
    let mut expected = mcp_types::OrderedMap::new();
    expected.insert("scope", TemplateValue::from("docs"));
    expected.insert("q", TemplateValue::from("rust mcp"));
    expected.insert("tag", TemplateValue::List(vec!["a".into(), "b&c".into()]));
    assert_eq!(search["contents"][0]["text"], format!("{expected:?}"));
    let bare = read(&mut c, "test://search").await;
    assert_eq!(
        bare["contents"][0]["text"],
        format!("{:?}", mcp_types::OrderedMap::<TemplateValue>::new())
    );
    // A value that is not UTF-8 once decoded, or a `/` in `{id}`, matches no template.
    for uri in [
        "test://template/%FF/data",
        "test://template/a/b/data",
        "test://search?q=%C3",
    ] {
        let error = c
            .error("resources/read", with_meta(json!({"uri": uri})))
            .await;
        assert_eq!(error["code"], -32602, "{uri}");
    }
    let unknown = c
        .error(
            "resources/read",
            with_meta(json!({"uri": "test://nothing"})),
        )
        .await;
    assert_eq!(
        (unknown["code"].clone(), unknown["data"]["uri"].clone()),
        (json!(-32602), json!("test://nothing"))
    );
}

#[tokio::test]
async fn mrtr_asks_then_completes_and_refuses_forged_state() {
    let server = server();
    let (mut c, _conn) = start(&server);
    let mut params = with_meta(json!({"name": "ask", "arguments": {"topic": "tea"}}));
    // Without the elicitation capability the server may not ask: -32021.
    let error = c.error("tools/call", params.clone()).await;
    assert_eq!(error["code"], -32021);
    assert_eq!(
        error["data"]["requiredCapabilities"]["elicitation"]["form"],
        json!({})
    );

    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    let first = c.result("tools/call", params.clone()).await;
    assert_eq!(first["resultType"], "input_required");
    assert_eq!(
        first["inputRequests"]["view"]["method"],
        "elicitation/create"
    );
    assert_eq!(
        first["inputRequests"]["view"]["params"]["message"],
        "Your view on tea?"
    );
    let state = first["requestState"].as_str().unwrap().to_owned();

    let mut retry = params.clone();
    retry["inputResponses"] = json!({"view": {"action": "accept", "content": {"view": "good"}}});
    retry["requestState"] = json!(state);
    let done = c.result("tools/call", retry.clone()).await;
    assert_eq!(done["resultType"], "complete");
    assert_eq!(
        done["content"][0]["text"],
        "state {\"round\":1} view String(\"good\")"
    );

    // The state is bound to the arguments, and tampering is detected.
    let mut other_args = retry.clone();
    other_args["arguments"]["topic"] = json!("coffee");
    assert_eq!(c.error("tools/call", other_args).await["code"], -32602);
    let mut null_responses = params.clone();
    null_responses["inputResponses"] = Value::Null;
    assert_eq!(
        c.error("tools/call", null_responses).await["code"],
        -32602,
        "null is not an answer"
    );
    let mut wrong_type = params.clone();
    wrong_type["inputResponses"] = json!({"view": 12345});
    assert_eq!(c.error("tools/call", wrong_type).await["code"], -32602);
    let mut wrong_key = params.clone();
    wrong_key["inputResponses"] = json!({"other": {"action": "accept"}});
    assert_eq!(
        c.result("tools/call", wrong_key).await["resultType"],
        "input_required",
        "asked again"
    );

    let mut forged = retry.clone();
    forged["requestState"] = json!(format!("{state}x"));
    assert_eq!(c.error("tools/call", forged).await["code"], -32602);
}

#[tokio::test]
async fn mrtr_state_survives_a_key_rotation_but_not_a_dropped_key() {
    let server = server();
    let (mut c, _conn) = start(&server);
    let mut params = with_meta(json!({"name": "ask", "arguments": {"topic": "tea"}}));
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    let first = c.result("tools/call", params.clone()).await;
    let mut retry = params.clone();
    retry["inputResponses"] = json!({"view": {"action": "accept", "content": {"view": "good"}}});
    retry["requestState"] = first["requestState"].clone();

    // The running server's ring, rotated without a restart: the state sealed under the
    // replaced key is still accepted within the overlap.
    let keys = server.state_keys().clone();
    let before = keys.current_id();
    keys.rotate([42; 32]).unwrap();
    assert_ne!(server.state_keys().current_id(), before);
    let done = c.result("tools/call", retry.clone()).await;
    assert_eq!(done["resultType"], "complete", "{done}");

    // New state is sealed under the new key and opens after the old one is dropped.
    let second = c.result("tools/call", params.clone()).await;
    let mut fresh = retry.clone();
    fresh["requestState"] = second["requestState"].clone();
    keys.drop_previous();
    let refused = c.error("tools/call", retry).await;
    assert_eq!(refused["code"], -32602);
    assert_eq!(
        refused["message"],
        "requestState was sealed under a key no longer accepted"
    );
    assert_eq!(
        c.result("tools/call", fresh).await["resultType"],
        "complete"
    );
}

#[test]
fn a_key_overlap_shorter_than_the_state_lifetime_is_refused() {
    let short = StateKeys::new([1; 32]).with_overlap(Duration::from_mins(9));
    let error = Server::builder("s", "1")
        .state_keys(short)
        .build()
        .unwrap_err();
    assert!(
        matches!(error, mcp_server::Error::InvalidStateKeys { .. }),
        "{error}"
    );
    let enough = StateKeys::new([1; 32]).with_overlap(Duration::from_mins(10));
    assert!(Server::builder("s", "1").state_keys(enough).build().is_ok());
}

#[tokio::test]
async fn subscriptions_acknowledge_then_deliver_opted_in_changes() {
    let server = server();
    let (mut c, _conn) = start(&server);
    c.send(json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
        "params": with_meta(json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://static-text"]}}))}))
        .await;
    let ack = c.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://static-text"]})
    );

    server
        .add_prompt(PromptDef::new("quiet", |_, _| async {
            Ok(GetPromptResult::new(vec![]))
        }))
        .unwrap();
    server.remove_tool("boom");
    let changed = c.recv().await;
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "prompt changes were not asked for"
    );
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );

    // Re-registering a tool notifies listeners and keeps the list's order.
    server.add_tool(server.tool("echo").unwrap()).unwrap();
    assert_eq!(c.recv().await["method"], "notifications/tools/list_changed");
    let (_, listed) = c.call("tools/list", with_meta(json!({}))).await;
    assert_eq!(listed["result"]["tools"][0]["name"], "echo");

    server.resource_updated("test://other");
    server.resource_updated("test://static-text");
    let updated = c.recv().await;
    assert_eq!(updated["params"]["uri"], "test://static-text");

    // Removing a prompt or a resource is a change too; only the resource list was asked
    // for besides tools, and only through resourceSubscriptions, so neither arrives here.
    assert!(server.remove_prompt("quiet"));
    assert!(!server.remove_prompt("quiet"), "already gone");
    assert!(server.remove_resource("test://static-text"));

    server.close_subscriptions();
    let end = c.recv().await;
    assert_eq!(end["id"], "listen-1");
    assert_eq!(
        end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    assert_eq!(end["result"]["resultType"], "complete");
}

#[test]
fn definitions_are_checked_at_build() {
    let noop = |_: Value, _| async { Ok(CallToolResult::text("")) };
    let duplicate = Server::builder("s", "1")
        .tool(ToolDef::new("t", json!({"type": "object"}), noop))
        .tool(ToolDef::new("t", json!({"type": "object"}), noop))
        .build();
    assert!(matches!(
        duplicate,
        Err(mcp_server::Error::Duplicate { .. })
    ));
    let bad_name = Server::builder("s", "1")
        .tool(ToolDef::new("bad name", json!({"type": "object"}), noop))
        .build();
    assert!(matches!(
        bad_name,
        Err(mcp_server::Error::InvalidName { .. })
    ));
    let bad_header = ToolDef::new(
        "t",
        json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}),
        noop,
    );
    assert!(matches!(
        bad_header.check(),
        Err(mcp_server::Error::InvalidHeaderAnnotation { .. })
    ));
    // The builder drops such a tool (clients would) and keeps the rest of the server.
    let server = Server::builder("s", "1")
        .tool(ToolDef::new("ok", json!({"type": "object"}), noop))
        .tool(ToolDef::new(
            "t",
            json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}),
            noop,
        ))
        .build()
        .unwrap();
    assert!(server.tool("ok").is_some() && server.tool("t").is_none());
}

#[test]
fn a_definitions_error_waits_for_its_registration() {
    let noop = |_: Value, _| async { Ok(CallToolResult::text("")) };
    // The setters chain on an invalid definition; the first error is the one reported.
    let bad = ToolDef::new("bad name", json!({"type": "object"}), noop)
        .description("chained")
        .output_schema(json!("not an object"));
    assert_eq!(bad.tool().description.as_deref(), Some("chained"));
    // A copy reports the same error, shared while another copy holds it.
    assert!(matches!(
        bad.clone().check(),
        Err(mcp_server::Error::Shared(e)) if matches!(*e, mcp_server::Error::InvalidName { .. })
    ));
    let built = Server::builder("s", "1").tool(bad).build();
    assert!(matches!(built, Err(mcp_server::Error::InvalidName { .. })));
    // A bad output schema is the error of an otherwise valid tool (one that is no object:
    // refused with or without `schema-validation`).
    let bad_output =
        ToolDef::new("t", json!({"type": "object"}), noop).output_schema(json!(["no", "object"]));
    assert!(matches!(
        bad_output.check(),
        Err(mcp_server::Error::InvalidSchema {
            which: "outputSchema",
            ..
        })
    ));
    // At run time, an invalid definition is refused and the registry is unchanged.
    let server = Server::builder("s", "1")
        .tool(ToolDef::new("ok", json!({"type": "object"}), noop))
        .build()
        .unwrap();
    let refused = server.add_tool(ToolDef::new("bad name", json!({"type": "object"}), noop));
    assert!(matches!(
        refused,
        Err(mcp_server::Error::InvalidName { .. })
    ));
    assert!(server.tool("bad name").is_none() && server.tool("ok").is_some());
    let refused = server.add_prompt(mcp_server::PromptDef::new("bad name", |_, _| async {
        Ok(mcp_types::GetPromptResult::new(Vec::new()))
    }));
    assert!(matches!(
        refused,
        Err(mcp_server::Error::InvalidName { .. })
    ));
    assert!(server.prompt("bad name").is_none());
}

struct Clock;

impl mcp_server::Extension for Clock {
    fn id(&self) -> &'static str {
        "com.example/clock"
    }

    fn settings(&self) -> mcp_types::JsonObject {
        json!({"resolution": "seconds"})
            .as_object()
            .unwrap()
            .clone()
    }

    fn methods(&self) -> &[&'static str] {
        &["clock/now"]
    }

    fn handle(
        &self,
        method: &str,
        params: Box<serde_json::value::RawValue>,
        cx: mcp_server::Context,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<
                    Output = Result<Box<serde_json::value::RawValue>, mcp_jsonrpc::ErrorObject>,
                > + Send,
        >,
    > {
        let method = method.to_owned();
        Box::pin(async move {
            let settings = cx.extension("com.example/clock").cloned();
            let echo: Value = serde_json::from_str(params.get()).unwrap();
            Ok(serde_json::value::to_raw_value(&json!({
                "resultType": "complete", "method": method, "clientSettings": settings, "tz": echo["tz"]
            }))
            .unwrap())
        })
    }
}

#[tokio::test]
async fn extensions_are_advertised_and_negotiated_per_request() {
    let server = Server::builder("ext", "1")
        .extension(Clock)
        .build()
        .unwrap();
    let (mut c, _conn) = start(&server);
    let discover = c.result("server/discover", with_meta(json!({}))).await;
    assert_eq!(
        discover["capabilities"]["extensions"],
        json!({"com.example/clock": {"resolution": "seconds"}})
    );

    let refused = c.error("clock/now", with_meta(json!({"tz": "UTC"}))).await;
    assert_eq!(refused["code"], -32021);
    assert_eq!(
        refused["data"]["requiredCapabilities"],
        json!({"extensions": {"com.example/clock": {}}})
    );

    let mut params = with_meta(json!({"tz": "UTC"}));
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"com.example/clock": {"v": 2}}});
    let ok = c.result("clock/now", params).await;
    assert_eq!(
        ok,
        json!({"resultType": "complete", "method": "clock/now", "clientSettings": {"v": 2}, "tz": "UTC"})
    );
    assert_eq!(
        c.error("clock/later", with_meta(json!({}))).await["code"],
        -32601
    );
}

/// The raw frame of a `tools/call` reply.
async fn call_frame(c: &mut MemoryWire, name: &str) -> String {
    c.send(json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call",
        "params": with_meta(json!({"name": name, "arguments": {"text": "hi"}}))}))
        .await;
    String::from_utf8(c.recv_frame().await.to_vec()).unwrap()
}

#[tokio::test]
async fn a_results_own_meta_is_kept_and_server_info_added_once() {
    let server = server();
    let (mut c, _conn) = start(&server);
    let plain = call_frame(&mut c, "echo").await;
    assert_eq!(plain.matches("\"_meta\"").count(), 1, "{plain}");
    let plain: Value = serde_json::from_str(&plain).unwrap();
    assert_eq!(
        plain["result"]["_meta"],
        json!({"io.modelcontextprotocol/serverInfo": {"name": "wire-test", "version": "1.0.0"}})
    );
    assert_eq!(plain["result"]["content"][0]["text"], "hi");

    let traced = call_frame(&mut c, "traced").await;
    assert_eq!(traced.matches("\"_meta\"").count(), 1, "{traced}");
    let traced: Value = serde_json::from_str(&traced).unwrap();
    assert_eq!(
        traced["result"]["_meta"],
        json!({
            "io.modelcontextprotocol/serverInfo": {"name": "wire-test", "version": "1.0.0"},
            "com.example/trace": "t-1"
        })
    );
}

#[tokio::test]
async fn a_null_input_responses_on_a_tool_call_is_refused_however_its_key_is_spelled() {
    // `tools/call` reads its params in one parse that tells `null` from absent; the other
    // methods scan for the key first. Either way `inputResponses` must be an object.
    let server = server();
    let (mut c, _conn) = start(&server);
    let error = tool_error(
        &mut c,
        json!({"name": "echo", "arguments": {"text": "hi"}, "inputResponses": null}),
    )
    .await;
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("inputResponses must be an object")),
        "{error}"
    );

    // The key spelled with an escape on the wire.
    let frame = format!(
        r#"{{"jsonrpc":"2.0","id":902,"method":"tools/call","params":{{"_meta":{},"name":"echo","arguments":{{"text":"hi"}},"input\u0052esponses":null}}}}"#,
        meta()
    );
    c.send_bytes(frame).await;
    let reply = c.recv().await;
    assert_eq!(reply["id"], 902, "{reply}");
    assert_eq!(reply["error"]["code"], -32602, "{reply}");

    // An empty object is a plain call.
    let ok = tool_result(
        &mut c,
        json!({"name": "echo", "arguments": {"text": "hi"}, "inputResponses": {}}),
    )
    .await;
    assert_eq!(ok["content"][0]["text"], "hi");
}

/// Frames in the usual layout (`{"jsonrpc":"2.0","id":N,"method":"M","params":…}`, what our
/// client and the Python SDK write) are answered exactly as the same requests laid out
/// otherwise, malformed ones included.
#[tokio::test]
async fn requests_in_the_usual_layout_read_their_params_once_and_answer_as_any_other() {
    let server = server();
    let (mut c, _conn) = start(&server);
    let meta = meta().to_string();
    let call = |id: u32, params: &str, after: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}{after}}}"#)
    };
    let echo = format!(r#"{{"name":"echo","arguments":{{"text":"hi"}},"_meta":{meta}}}"#);

    // Plain, then with another member after the params (the frame is still a request).
    for (id, after) in [(1, ""), (2, r#","extra":true"#)] {
        c.send_bytes(call(id, &echo, after).as_bytes()).await;
        let response = c.recv().await;
        assert_eq!(response["id"], id, "{response}");
        assert_eq!(
            response["result"]["content"],
            json!([{"type": "text", "text": "hi"}]),
            "{response}"
        );
    }
    // Another method with a member after its params.
    c.send_bytes(
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{"_meta":{meta}}},"x":1}}"#
        )
        .as_bytes(),
    )
    .await;
    let listed = c.recv().await;
    assert_eq!(listed["id"], 3);
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{listed}"
    );

    // Params that are not JSON: -32700, as the decoder says of any frame that is not.
    c.send_bytes(call(4, r#"{"name":"echo","arguments":{"text":tru}}"#, "").as_bytes())
        .await;
    let parse = c.recv().await;
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    let mut not_utf8 = call(5, r#"{"name":"echo","arguments":{"text":"#, "").into_bytes();
    not_utf8.truncate(not_utf8.len() - 1);
    not_utf8.extend_from_slice(b"\"\xff\"}}}");
    c.send_bytes(&not_utf8).await;
    assert_eq!(c.recv().await["error"]["code"], -32700);
    // A frame that is JSON but not a request (a second id): -32600.
    c.send_bytes(call(6, &echo, r#","id":7"#).as_bytes()).await;
    assert_eq!(c.recv().await["error"]["code"], -32600);
    // Well-formed params naming no tool: -32602, as for any layout.
    c.send_bytes(
        call(
            8,
            &format!(r#"{{"name":"nope","arguments":{{}},"_meta":{meta}}}"#),
            "",
        )
        .as_bytes(),
    )
    .await;
    let refused = c.recv().await;
    assert_eq!(
        (refused["id"].clone(), refused["error"]["code"].clone()),
        (json!(8), json!(-32602)),
        "{refused}"
    );
    // And the connection still serves.
    c.send_bytes(call(9, &echo, "").as_bytes()).await;
    assert_eq!(c.recv().await["id"], 9);
}

/// A schema derived from a Rust type is compiled at the tool's first call, not at
/// registration (`Check` in `tool.rs`): its arguments are still validated by it, and one
/// that does not compile (here a hand-written `JsonSchema` impl with a pattern that is no
/// regex) fails each call with -32603 saying why, instead of failing registration.
#[cfg(feature = "schema-validation")]
#[tokio::test]
async fn derived_schemas_are_compiled_at_first_call() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Add {
        a: i64,
        b: i64,
    }
    #[derive(serde::Deserialize)]
    struct Odd {
        #[allow(dead_code)]
        s: String,
    }
    impl schemars::JsonSchema for Odd {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Odd".into()
        }
        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            schemars::json_schema!({
                "type": "object",
                "properties": {"s": {"type": "string", "pattern": "(unclosed"}}
            })
        }
    }
    let odd = ToolDef::typed("odd", |_args: Odd, _cx| async move {
        Ok(CallToolResult::text("ran"))
    });
    assert!(
        odd.clone().check().is_ok(),
        "a derived schema is not compiled at registration"
    );
    let raw = ToolDef::new(
        "raw",
        json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "(unclosed"}}}),
        |_args, _cx| async move { Ok(CallToolResult::text("ran")) },
    );
    assert!(
        raw.check().is_err(),
        "a raw schema is compiled at registration"
    );
    let open = ToolDef::new(
        "open",
        json!({"type": "object", "properties": {}}),
        |_args, _cx| async move { Ok(CallToolResult::text("ran")) },
    );
    let closed = ToolDef::new(
        "closed",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        |_args, _cx| async move { Ok(CallToolResult::text("ran")) },
    );
    let server = Server::builder("deferred-test", "1.0.0")
        .tool(odd)
        .tool(open)
        .tool(closed)
        .tool(ToolDef::typed("add", |args: Add, _cx| async move {
            Ok(CallToolResult::text((args.a + args.b).to_string()))
        }))
        .build()
        .expect("a valid server");
    let (mut c, _conn) = start(&server);

    let bad = tool_result(
        &mut c,
        json!({"name": "add", "arguments": {"a": "two", "b": 3}}),
    )
    .await;
    assert_eq!(bad["isError"], true, "{bad}");
    let text = bad["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Invalid arguments for tool add") && text.contains("/a"),
        "the derived schema's validator ran: {text}"
    );
    let sum = tool_result(
        &mut c,
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    )
    .await;
    assert_eq!(sum["content"][0]["text"], "5");

    // A schema without parameters accepts any object; one that forbids extra members
    // does not.
    let open = tool_result(&mut c, json!({"name": "open", "arguments": {"extra": 1}})).await;
    assert_eq!(open["content"][0]["text"], "ran", "{open}");
    let closed = tool_result(&mut c, json!({"name": "closed", "arguments": {"extra": 1}})).await;
    assert_eq!(closed["isError"], true, "{closed}");

    for _ in 0..2 {
        let error = tool_error(&mut c, json!({"name": "odd", "arguments": {"s": "x"}})).await;
        assert_eq!(error["code"], -32603, "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("odd") && message.contains("inputSchema"),
            "{message}"
        );
    }
}

/// Icons set on the server, a tool, a prompt, a resource and a template are listed with
/// them; an icon that is neither `https:` nor `data:` is refused where it is registered.
#[tokio::test]
async fn icons_are_listed_and_unsafe_schemes_refused() {
    let icon = |src: &str| mcp_types::Icon::new(src);
    let png = "https://example.com/icon.png";
    let svg = "data:image/svg+xml;base64,PHN2Zy8+";
    let text = |_uri: String, _cx| async move { Ok(vec![]) };
    let server = Server::builder("iconic", "1.0.0")
        .title("Iconic")
        .icons([icon(png), icon(svg)])
        .tool(tools::add().icons([icon(png)]))
        .prompt(
            PromptDef::new(
                "p",
                |_args, _cx| async move { Ok(GetPromptResult::new(vec![])) },
            )
            .icons([icon(svg)]),
        )
        .resource(ResourceDef::new("demo://r", "r", text).icons([icon(png)]))
        .resource_template(
            ResourceTemplateDef::new("demo://t/{id}", "t", |_uri, _vars, _cx| async move {
                Ok(vec![])
            })
            .map(|t| t.icons([icon(svg)])),
        )
        .build()
        .unwrap();
    let (mut c, _conn) = start(&server);
    let discover = c.result("server/discover", with_meta(json!({}))).await;
    let info = &discover["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(info["title"], "Iconic");
    assert_eq!(info["icons"], json!([{"src": png}, {"src": svg}]));
    let listed = [
        ("tools/list", "tools", png),
        ("prompts/list", "prompts", svg),
        ("resources/list", "resources", png),
        ("resources/templates/list", "resourceTemplates", svg),
    ];
    for (method, key, src) in listed {
        let list = c.result(method, with_meta(json!({}))).await;
        assert_eq!(list[key][0]["icons"], json!([{"src": src}]), "{method}");
    }

    let refused = [
        Server::builder("s", "1")
            .icons([icon("javascript:alert(1)")])
            .build(),
        Server::builder("s", "1")
            .tool(tools::add().icons([icon("file:///etc/passwd")]))
            .build(),
        Server::builder("s", "1")
            .resource(
                ResourceDef::new("demo://r", "r", text).icons([icon("http://plain.example/i.png")]),
            )
            .build(),
        Server::builder("s", "1")
            .resource(ResourceDef::new("demo://r", "r", text).icons([icon("no-scheme.png")]))
            .build(),
    ];
    for (result, owner) in
        refused
            .into_iter()
            .zip(["server", "tool \"add\"", "resource", "resource"])
    {
        let error = result.unwrap_err();
        assert!(
            matches!(error, mcp_server::Error::InvalidIcon { .. }),
            "{error}"
        );
        assert!(error.to_string().starts_with(owner), "{error}");
    }
}
