//! The host's handlers reach every client it connects from configuration: a tool that
//! elicits, samples or asks for roots runs under a `Host` with handlers, in both eras (a
//! modern MRTR round, and a legacy session's server-to-client request), and fails without
//! them.

use std::time::Duration;

use mcp_host::{Handlers, Host, HostConfig, ToolCall};
use mcp_server::{Server, ToolDef};
use mcp_types::{
    CallToolResult, CreateMessageResult, ElicitRequestFormParams, ElicitRequestParams,
    ElicitResult, ElicitResultAction, ListRootsResult,
};
use serde_json::json;

/// `ask` elicits a name, `muse` samples a line, `where` lists the roots.
fn server() -> Server {
    let ask = ToolDef::new("ask", json!({"type": "object"}), |_, cx| async move {
        let form: ElicitRequestFormParams = serde_json::from_value(json!({
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
        }))?;
        let answer = cx.elicit("name", ElicitRequestParams::ElicitRequestForm(form))?;
        let name = answer
            .content
            .as_ref()
            .and_then(|c| c.get("name"))
            .and_then(|n| serde_json::to_value(n).ok())
            .and_then(|n| n.as_str().map(str::to_owned))
            .unwrap_or_default();
        Ok(CallToolResult::text(format!("Hello, {name}")))
    });
    let muse = ToolDef::new("muse", json!({"type": "object"}), |_, cx| async move {
        let params = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "A line?"}}],
            "maxTokens": 10
        }))?;
        let sampled = cx.sample("line", params)?;
        let sampled = serde_json::to_value(&sampled)?;
        Ok(CallToolResult::text(
            sampled["content"]["text"]
                .as_str()
                .unwrap_or("?")
                .to_owned(),
        ))
    });
    let roots = ToolDef::new("where", json!({"type": "object"}), |_, cx| async move {
        let roots = cx.roots("roots")?;
        let uris: Vec<String> = roots.roots.iter().map(|r| r.uri.clone()).collect();
        Ok(CallToolResult::text(uris.join(",")))
    });
    Server::builder("asking", "1")
        .tool(ask)
        .tool(muse)
        .tool(roots)
        .build()
        .unwrap()
}

fn handlers() -> Handlers {
    Handlers::new()
        .on_elicit(|_| async {
            let mut result = ElicitResult::new(ElicitResultAction::Accept);
            result.content = serde_json::from_value(json!({"name": "Ada"})).ok();
            Ok(result)
        })
        .on_sample(|_| async {
            serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "Quiet numbers hum"},
                "model": "test-model"
            }))
            .map_err(|e| e.to_string())
        })
        .on_roots(|| async {
            serde_json::from_value::<ListRootsResult>(
                json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
            )
            .map_err(|e| e.to_string())
        })
}

/// Whether calling `ask`, `muse` and `where` failed, and the text of each, under a host
/// connected to `url` in the revision `version`, with `handlers` if any.
async fn outcomes(url: &str, version: &str, handlers: Option<Handlers>) -> Vec<(bool, String)> {
    let config = HostConfig::from_json(
        &json!({"mcpServers": {"s": {"url": url, "protocolVersions": [version]}}}).to_string(),
    )
    .unwrap();
    let mut builder = Host::builder().config(config);
    if let Some(handlers) = handlers {
        builder = builder.handlers(handlers);
    }
    let host = builder.connect().await.unwrap();
    assert!(host.failures().is_empty(), "{:?}", host.failures());
    let calls = ["ask", "muse", "where"]
        .iter()
        .map(|tool| ToolCall::new(*tool, format!("s__{tool}"), mcp_types::JsonObject::new()))
        .collect();
    let outcomes = host.call(&host.catalog(), calls).await;
    host.shutdown().await;
    outcomes
        .iter()
        .map(|o| {
            let text = o.to_openai_chat()["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (o.is_error(), text)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_asks_runs_under_a_host_with_handlers_in_both_eras() {
    let running = mcp_legacy::http::DualEraHttp::bind(
        "127.0.0.1:0".parse().unwrap(),
        server(),
        mcp_transport_http::HttpServerConfig::default(),
        mcp_legacy::http::LegacyHttpConfig::default(),
    )
    .await
    .unwrap();
    for version in ["2026-07-28", "2025-06-18"] {
        let answered = outcomes(running.url(), version, Some(handlers())).await;
        assert_eq!(
            answered,
            [
                (false, "Hello, Ada".to_owned()),
                (false, "Quiet numbers hum".to_owned()),
                (false, "file:///work".to_owned())
            ],
            "{version}"
        );
        // Without handlers the capabilities are not declared: every call fails.
        let refused = outcomes(running.url(), version, None).await;
        for (error, text) in &refused {
            assert!(*error, "{version}: {text}");
        }
        if version == "2026-07-28" {
            assert!(refused[0].1.contains("-32021"), "{}", refused[0].1);
        }
    }
    running.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_builders_methods_install_the_same_handlers() {
    let running = mcp_transport_http::HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        server(),
        mcp_transport_http::HttpServerConfig::default(),
    )
    .await
    .unwrap();
    let config =
        HostConfig::from_json(&json!({"mcpServers": {"s": {"url": running.url()}}}).to_string())
            .unwrap();
    let host = Host::builder()
        .config(config)
        .on_elicit(|_| async {
            let mut result = ElicitResult::new(ElicitResultAction::Accept);
            result.content = serde_json::from_value(json!({"name": "Grace"})).ok();
            Ok(result)
        })
        .connect()
        .await
        .unwrap();
    let outcome = host
        .call(
            &host.catalog(),
            vec![ToolCall::new("1", "s__ask", mcp_types::JsonObject::new())],
        )
        .await;
    assert_eq!(outcome[0].to_openai_chat()["content"], "Hello, Grace");
    host.shutdown().await;
    running.shutdown(Duration::from_secs(1)).await;
}
