//! The gateway in process: upstreams served over loopback HTTP, the gateway's server
//! served the same way, and clients of both eras in front of it.

#![cfg(feature = "gateway")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::Client;
use mcp_host::{AuditLog, Gateway, HostConfig, require_approval_if_destructive};
use mcp_legacy::client::{Connector, EraChoice};
use mcp_server::{PromptDef, ResourceDef, ResourceTemplateDef, Server, ToolDef};
use mcp_transport_http::{HttpClientConfig, HttpServerConfig, RunningServer};
use mcp_types::{CallToolResult, EmbeddedResourceResource, TextResourceContents};
use serde_json::{Value, json};

/// Serves `server` over Streamable HTTP (both eras) on a loopback port.
async fn serve(server: Server) -> RunningServer {
    mcp_legacy::http::DualEraHttp::bind(
        "127.0.0.1:0".parse().unwrap(),
        server,
        HttpServerConfig::default(),
        mcp_legacy::http::LegacyHttpConfig::default(),
    )
    .await
    .unwrap()
}

fn config(upstreams: &[(&str, &str)]) -> HostConfig {
    let servers: serde_json::Map<String, Value> = upstreams
        .iter()
        .map(|(name, url)| ((*name).to_owned(), json!({"type": "http", "url": url})))
        .collect();
    HostConfig::from_json(&json!({ "mcpServers": servers }).to_string()).unwrap()
}

fn text_resource(uri: String, text: &str) -> Vec<EmbeddedResourceResource> {
    vec![EmbeddedResourceResource::TextResourceContents(
        TextResourceContents::new(text, uri),
    )]
}

/// A client of the gateway's server over HTTP, in `era`, that answers elicitation forms
/// with `answer`.
async fn client(gateway: &RunningServer, era: EraChoice, answer: Value) -> Client {
    let builder = Client::builder("gateway-test", "1").on_elicit(move |_| {
        let answer = answer.clone();
        async move { Ok(serde_json::from_value(answer).unwrap()) }
    });
    Connector::new(builder)
        .era(era)
        .connect_http(gateway.url(), HttpClientConfig::default())
        .await
        .unwrap()
        .client
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_is_down_is_named_and_the_others_are_served() {
    let up = serve(
        Server::builder("a", "1")
            .tool(ToolDef::new(
                "echo",
                json!({"type": "object"}),
                |_, _| async { Ok(CallToolResult::text("echoed")) },
            ))
            .build()
            .unwrap(),
    )
    .await;
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/mcp", listener.local_addr().unwrap())
    };
    let gateway = Gateway::builder()
        .config(config(&[("a", up.url()), ("gone", &closed)]))
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap();
    let status = gateway.status();
    assert_eq!(status[0], ("a".to_owned(), None));
    assert_eq!(status[1].0, "gone");
    assert!(status[1].1.is_some(), "{status:?}");
    let served = serve(gateway.server().clone()).await;
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        let client = client(&served, era, json!({"action": "decline"})).await;
        let found = client.discover().await.unwrap();
        let instructions = found.instructions.unwrap_or_default();
        assert!(
            instructions.contains("The server gone is unavailable"),
            "{instructions}"
        );
        let tools: Vec<String> = client
            .list_tools_all()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(tools, ["a__echo"]);
        let result = client.call_tool("a__echo", ()).await.unwrap();
        assert_eq!(text(&result), "echoed");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_needs_approval_is_put_to_the_downstream_user_first() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let up = serve(
        Server::builder("files", "1")
            .tool(
                // No annotations: destructive, per the schema's defaults.
                ToolDef::new("rm", json!({"type": "object"}), move |_, _| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    async { Ok(CallToolResult::text("removed")) }
                }),
            )
            .build()
            .unwrap(),
    )
    .await;
    let audit = AuditLog::new();
    let gateway = Gateway::builder()
        .config(config(&[("files", up.url())]))
        .policy(require_approval_if_destructive)
        .middleware(audit.clone())
        .connect()
        .await
        .unwrap();
    let served = serve(gateway.server().clone()).await;
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        let before = runs.load(Ordering::SeqCst);
        let refusing = client(&served, era.clone(), json!({"action": "decline"})).await;
        let refused = refusing.call_tool("files__rm", ()).await.unwrap();
        assert_eq!(refused.is_error, Some(true), "{refused:?}");
        assert!(text(&refused).contains("not approved"), "{refused:?}");
        assert_eq!(runs.load(Ordering::SeqCst), before, "a refused call ran");

        let approving = client(
            &served,
            era,
            json!({"action": "accept", "content": {"approve": true}}),
        )
        .await;
        let done = approving.call_tool("files__rm", ()).await.unwrap();
        assert_eq!(text(&done), "removed");
        assert_eq!(runs.load(Ordering::SeqCst), before + 1);
    }
    // Only the calls that went upstream are audited.
    let entries = audit.entries();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(
        entries
            .iter()
            .all(|e| e.call.server == "files" && e.call.tool == "rm")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_resources_and_templates_are_aggregated_with_uris_mapped_both_ways() {
    let a = serve(
        Server::builder("a", "1")
            .prompt(PromptDef::new("hello", |_, _| async {
                Ok(mcp_types::GetPromptResult::new(vec![
                    mcp_types::PromptMessage::new(
                        mcp_types::ContentBlock::text("hello from a"),
                        mcp_types::Role::User,
                    ),
                ]))
            }))
            .resource(ResourceDef::new("mem://x", "x", |uri, _| async move {
                Ok(text_resource(uri, "x of a"))
            }))
            .build()
            .unwrap(),
    )
    .await;
    let b = serve(
        Server::builder("b", "1")
            .resource(ResourceDef::new("mem://x", "x", |uri, _| async move {
                Ok(text_resource(uri, "x of b"))
            }))
            .resource_template(
                ResourceTemplateDef::new("mem://t/{id}", "t", |uri, values, _| async move {
                    let id = values.get("id").cloned().unwrap_or_default();
                    Ok(text_resource(uri, &format!("t {id} of b")))
                })
                .unwrap(),
            )
            .build()
            .unwrap(),
    )
    .await;
    let gateway = Gateway::builder()
        .config(config(&[("a", a.url()), ("b", b.url())]))
        .connect()
        .await
        .unwrap();
    let served = serve(gateway.server().clone()).await;
    for era in [EraChoice::Detect, EraChoice::Legacy] {
        let client = client(&served, era, json!({"action": "decline"})).await;
        let prompts: Vec<String> = client
            .list_prompts_all()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(prompts, ["a__hello"]);
        let prompt = client.get_prompt("a__hello", ()).await.unwrap();
        assert!(
            serde_json::to_string(&prompt)
                .unwrap()
                .contains("hello from a")
        );

        let uris: Vec<String> = client
            .list_resources_all()
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.uri)
            .collect();
        assert_eq!(uris, ["mem://x", "b+mem://x"]);
        for (uri, expected) in [
            ("mem://x", "x of a"),
            ("b+mem://x", "x of b"),
            ("mem://t/7", "t 7 of b"),
        ] {
            let read = client.read_resource(uri).await.unwrap();
            let content = serde_json::to_value(&read.contents[0]).unwrap();
            assert_eq!(content["text"], expected, "{uri}");
            // The contents name the URI the client asked for.
            assert_eq!(content["uri"], uri);
        }
        let templates: Vec<String> = client
            .list_resource_templates_all()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.uri_template)
            .collect();
        assert_eq!(templates, ["mem://t/{id}"]);
    }
}
