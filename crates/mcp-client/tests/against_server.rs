//! The client against this workspace's server, in one process over the engine's
//! in-memory duplex: every typed method, cursors, MRTR with handlers, progress, errors.

use mcp_client::{CallOptions, Client, Error};
use mcp_jsonrpc::{NoHandler, Peer, PeerConfig, memory};
use mcp_server::{PromptDef, ResourceDef, Server, ToolDef, ToolError};
use mcp_test_support::tools;
use mcp_types::{
    CallToolResult, ContentBlock, ElicitRequestFormParams, ElicitRequestParams, ElicitResult,
    ElicitResultAction, EmbeddedResourceResource, GetPromptResult, OrderedMap, PromptMessage, Role,
    TextResourceContents,
};
use serde_json::json;

fn server() -> Server {
    let mut builder =
        Server::builder("server", "1")
            .page_size(2)
            .cache(mcp_server::CachePolicy::new(
                60_000,
                mcp_types::CacheScope::Public,
            ));
    for n in 0..5 {
        builder = builder.tool(ToolDef::new(
            format!("t{n}"),
            json!({"type": "object"}),
            |_, _| async { Ok(CallToolResult::text("x")) },
        ));
    }
    builder
        .tool(tools::add())
        .tool(ToolDef::new("fails", json!({"type": "object"}), |_, _| async { Err(ToolError::failed("nope")) }))
        .tool(tools::slow())
        .tool(ToolDef::new("ask", json!({"type": "object"}), |_, cx| async move {
            let form: ElicitRequestFormParams = serde_json::from_value(json!({
                "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
            }))?;
            cx.set_state(json!("kept"));
            let answer = cx.elicit("name", ElicitRequestParams::ElicitRequestForm(form))?;
            let roots = cx.roots("roots")?;
            Ok(CallToolResult::text(format!(
                "{:?} {} {}",
                answer.action,
                roots.roots.len(),
                cx.state().and_then(|s| s.as_str()).unwrap_or("lost")
            )))
        }))
        .resource(ResourceDef::new("test://r", "r", |uri, _| async move {
            Ok(vec![EmbeddedResourceResource::TextResourceContents(TextResourceContents::new("content", uri))])
        }))
        .prompt(
            PromptDef::new("p", |args, _| async move {
                let who = args.get("who").cloned().unwrap_or_default();
                Ok(GetPromptResult::new(vec![PromptMessage::new(ContentBlock::text(format!("hi {who}")), Role::User)]))
            })
            .argument("who", "who", true),
        )
        .build()
        .unwrap()
}

fn connect(
    builder: mcp_client::ClientBuilder,
) -> (Client, mcp_jsonrpc::Connection, mcp_jsonrpc::Connection) {
    let ((a_read, a_write), (b_read, b_write)) = memory::pair(64);
    let (peer, client_conn) = Peer::connect(a_read, a_write, NoHandler, PeerConfig::default());
    let (_server_peer, server_conn) =
        Peer::connect(b_read, b_write, server(), PeerConfig::default());
    (builder.build(peer), client_conn, server_conn)
}

#[tokio::test]
async fn typed_methods_and_cursors() {
    let (client, _c, _s) = connect(Client::builder("client", "1"));
    let discover = client.discover().await.unwrap();
    assert_eq!(discover.supported_versions, ["2026-07-28"]);
    let tools = client.list_tools_all().await.unwrap();
    assert_eq!(tools.len(), 9, "five pages of two, followed to the end");
    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 2);
    assert!(first.next_cursor.is_some());

    let sum = client
        .call_tool("add", json!({"a": 2, "b": 40}).as_object().unwrap().clone())
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"sum": 42})));
    // Lent arguments: the same map serves two calls, and is the caller's after them.
    let lent = json!({"a": 1, "b": 2}).as_object().unwrap().clone();
    for _ in 0..2 {
        let sum = client.call_tool("add", &lent).await.unwrap();
        assert_eq!(sum.structured_content, Some(json!({"sum": 3})));
    }
    assert_eq!(lent.len(), 2);
    let failed = client
        .call_tool("fails", mcp_types::JsonObject::new())
        .await
        .unwrap();
    assert_eq!(
        failed.is_error,
        Some(true),
        "a tool failure is a result for the model"
    );
    let unknown = client
        .call_tool("missing", mcp_types::JsonObject::new())
        .await
        .unwrap_err();
    assert_eq!(unknown.protocol().map(|e| e.code.0), Some(-32602));

    let read = client.read_resource("test://r").await.unwrap();
    assert_eq!(read.contents.len(), 1);
    let mut args = OrderedMap::new();
    args.insert("who", "Ada".to_owned());
    let prompt = client.get_prompt("p", args).await.unwrap();
    assert!(
        matches!(&prompt.messages[0].content, ContentBlock::TextContent(t) if t.text == "hi Ada")
    );
    assert_eq!(client.list_prompts_all().await.unwrap().len(), 1);
    assert_eq!(client.list_resources_all().await.unwrap().len(), 1);
}

#[tokio::test]
async fn input_required_runs_the_handlers_and_retries() {
    let builder = Client::builder("client", "1")
        .on_elicit(|_params| async {
            let mut result = ElicitResult::new(ElicitResultAction::Accept);
            result.content = Some(OrderedMap::new());
            Ok(result)
        })
        .on_roots(|| async {
            Ok(serde_json::from_value(json!({"roots": [{"uri": "file:///a"}]})).unwrap())
        });
    let (client, _c, _s) = connect(builder);
    assert!(client.capabilities().elicitation.is_some() && client.capabilities().roots.is_some());
    let result = client
        .call_tool("ask", mcp_types::JsonObject::new())
        .await
        .unwrap();
    assert!(
        matches!(&result.content[0], ContentBlock::TextContent(t) if t.text == "Accept 1 kept"),
        "{result:?}"
    );
}

#[tokio::test]
async fn missing_capabilities_and_handlers_are_errors() {
    // Without handlers the client declares nothing; the server refuses with -32021.
    let (client, _c, _s) = connect(Client::builder("client", "1"));
    let err = client
        .call_tool("ask", mcp_types::JsonObject::new())
        .await
        .unwrap_err();
    assert_eq!(err.protocol().map(|e| e.code.0), Some(-32021));

    // With only an elicitation handler, the server's roots question has nobody to answer it
    // (the server asks because... it only asks for declared capabilities, so -32021 again).
    let builder = Client::builder("client", "1")
        .on_elicit(|_| async { Ok(ElicitResult::new(ElicitResultAction::Accept)) });
    let (client, _c, _s) = connect(builder);
    let err = client
        .call_tool("ask", mcp_types::JsonObject::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Protocol(e) if e.code.0 == -32021),
        "{err}"
    );
}

#[tokio::test]
async fn progress_reaches_the_caller() {
    let (client, _c, _s) = connect(Client::builder("client", "1"));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let options = CallOptions::default().progress({
        let seen = std::sync::Arc::clone(&seen);
        move |p| seen.lock().unwrap().push(p.progress.as_f64().unwrap())
    });
    let result = client
        .call_tool_with("slow", mcp_types::JsonObject::new(), &options)
        .await
        .unwrap();
    assert!(matches!(&result.content[0], ContentBlock::TextContent(t) if t.text == "done"));
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
}

#[tokio::test]
async fn listen_delivers_the_acknowledgement_then_the_opted_in_changes() {
    let ((a_read, a_write), (b_read, b_write)) = memory::pair(64);
    let server = server();
    let (_server_peer, _server_conn) =
        Peer::connect(b_read, b_write, server.clone(), PeerConfig::default());
    let (client, _conn) =
        Client::builder("client", "1").connect(a_read, a_write, PeerConfig::default());

    let mut filter = mcp_types::SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    let mut tools = client.listen(filter).await.unwrap();
    let cached_before = client.list_tools_all().await.unwrap().len();
    let mut filter = mcp_types::SubscriptionFilter::new();
    filter.prompts_list_changed = Some(true);
    let mut prompts = client.listen(filter).await.unwrap();
    assert_ne!(tools.id(), prompts.id());

    assert!(
        matches!(tools.next().await, Some(mcp_client::ListenEvent::Acknowledged(f)) if f.tools_list_changed == Some(true))
    );
    assert!(matches!(
        prompts.next().await,
        Some(mcp_client::ListenEvent::Acknowledged(_))
    ));
    server.remove_tool("t0");
    assert_eq!(
        tools.next().await,
        Some(mcp_client::ListenEvent::ToolsListChanged)
    );
    assert_eq!(
        client.list_tools_all().await.unwrap().len(),
        cached_before - 1,
        "the change evicted the cached list"
    );
    server.remove_prompt("p");
    assert_eq!(
        prompts.next().await,
        Some(mcp_client::ListenEvent::PromptsListChanged),
        "each stream gets only its own"
    );

    server.close_subscriptions();
    assert_eq!(tools.next().await, None, "the server closed it");
    assert_eq!(prompts.next().await, None);

    // A client without a router says so.
    let ((c_read, c_write), _other) = memory::pair(4);
    let (peer, _c) = Peer::connect(c_read, c_write, NoHandler, PeerConfig::default());
    let bare = Client::builder("client", "1").build(peer);
    assert!(matches!(
        bare.listen(mcp_types::SubscriptionFilter::new()).await,
        Err(Error::ListenUnavailable)
    ));
}

#[tokio::test]
async fn arguments_are_anything_that_serializes_to_an_object() {
    #[derive(serde::Serialize)]
    struct Add {
        a: i64,
        b: i64,
    }
    #[derive(serde::Serialize)]
    struct Who<'a> {
        who: &'a str,
    }
    let (client, _client_conn, _server_conn) = connect(Client::builder("c", "1"));
    let sum = |r: CallToolResult| r.structured_content.unwrap()["sum"].clone();
    assert_eq!(
        sum(client.call_tool("add", Add { a: 2, b: 3 }).await.unwrap()),
        5
    );
    assert_eq!(
        sum(client
            .call_tool("add", json!({"a": 4, "b": 3}))
            .await
            .unwrap()),
        7
    );
    let lent = json!({"a": 1, "b": 1}).as_object().cloned().unwrap();
    assert_eq!(sum(client.call_tool("add", &lent).await.unwrap()), 2);
    assert!(
        !client
            .call_tool("t0", ())
            .await
            .unwrap()
            .is_error
            .unwrap_or(false)
    );
    // Not an object: refused before anything is sent.
    for refused in [
        client.call_tool("add", 5).await,
        client.call_tool("add", vec![1, 2]).await,
        client.call_tool("add", "text").await,
    ] {
        assert!(
            matches!(refused, Err(Error::InvalidArguments(_))),
            "{refused:?}"
        );
    }

    let text = |r: GetPromptResult| r.messages[0].content.clone();
    assert_eq!(
        text(client.get_prompt("p", Who { who: "ann" }).await.unwrap()),
        ContentBlock::text("hi ann")
    );
    assert_eq!(
        text(client.get_prompt("p", json!({"who": "bo"})).await.unwrap()),
        ContentBlock::text("hi bo")
    );
    let refused = client.get_prompt("p", json!({"who": 7})).await;
    assert!(
        matches!(&refused, Err(Error::InvalidArguments(m)) if m.contains("\"who\" is a number")),
        "{refused:?}"
    );
}
