//! The host aggregates its servers' prompts, resources and resource templates beside
//! their tools, in both eras: prompts under names made as tools' are, resources under
//! their own URIs unless two servers list the same one, each read from the server it
//! belongs to, and the lists refreshed after a server reports a change.

use std::time::Duration;

use mcp_host::{Error, Host, HostConfig, qualified_uri};
use mcp_server::{PromptDef, ResourceDef, ResourceTemplateDef, Server, ToolDef};
use mcp_types::{
    CallToolResult, ContentBlock, EmbeddedResourceResource, GetPromptResult, PromptMessage,
    ReadResourceResult, Role, TextResourceContents,
};
use serde_json::json;

/// A prompt `name` of the server `server` that greets its `who` argument.
fn prompt(server: &'static str, name: &str) -> PromptDef {
    PromptDef::new(name, move |args, _| async move {
        let who = args.get("who").cloned().unwrap_or_default();
        Ok(GetPromptResult::new(vec![PromptMessage::new(
            ContentBlock::text(format!("{server}: hello {who}")),
            Role::User,
        )]))
    })
    .argument("who", "Whom to greet", false)
}

/// A resource at `uri` of the server `server`, whose text names both.
fn resource(server: &'static str, uri: &str) -> ResourceDef {
    ResourceDef::new(uri, uri, move |uri, _| async move {
        let text = format!("{server} has {uri}");
        Ok(vec![EmbeddedResourceResource::TextResourceContents(
            TextResourceContents::new(text, uri),
        )])
    })
}

/// A server `name` with a tool, the prompt `review`, the resources `file:///<name>` and
/// `file:///shared`, and (for `docs`) the template `docs://page/{id}`.
fn server(name: &'static str) -> Server {
    let mut builder = Server::builder(name, "1")
        .tool(ToolDef::new(
            "ping",
            json!({"type": "object"}),
            |_, _| async { Ok(CallToolResult::text("pong")) },
        ))
        .prompt(prompt(name, "review"))
        .resource(resource(name, &format!("file:///{name}")))
        .resource(resource(name, "file:///shared"));
    if name == "docs" {
        builder = builder.resource_template(ResourceTemplateDef::new(
            "docs://page/{id}",
            "page",
            |uri, vars, _| async move {
                let id = vars.get("id").cloned().unwrap_or_default();
                Ok(vec![EmbeddedResourceResource::TextResourceContents(
                    TextResourceContents::new(format!("page {id}"), uri),
                )])
            },
        ));
    }
    builder.build().unwrap()
}

async fn serve(server: Server) -> mcp_transport_http::RunningServer {
    mcp_legacy::http::DualEraHttp::bind(
        "127.0.0.1:0".parse().unwrap(),
        server,
        mcp_transport_http::HttpServerConfig::default(),
        mcp_legacy::http::LegacyHttpConfig::default(),
    )
    .await
    .unwrap()
}

fn text_of_prompt(result: &GetPromptResult) -> String {
    let value = serde_json::to_value(result).unwrap();
    value["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn text_of_resource(result: &ReadResourceResult) -> String {
    let value = serde_json::to_value(result).unwrap();
    value["contents"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_and_resources_of_every_server_in_both_eras() {
    let (docs, wiki) = (server("docs"), server("wiki"));
    let (docs_http, wiki_http) = (serve(docs.clone()).await, serve(wiki.clone()).await);
    for (round, version) in ["2026-07-28", "2025-06-18"].into_iter().enumerate() {
        let config = HostConfig::from_json(
            &json!({
                "naming": {"prefix": "mcp"},
                "mcpServers": {
                    "docs": {"url": docs_http.url(), "protocolVersions": [version]},
                    "wiki": {"url": wiki_http.url(), "protocolVersions": [version]}
                }
            })
            .to_string(),
        )
        .unwrap();
        let host = Host::builder().config(config).connect().await.unwrap();
        assert!(
            host.failures().is_empty(),
            "{version}: {:?}",
            host.failures()
        );

        // Prompts: named as tools are, and got from their own server.
        let prompts: Vec<String> = host.prompts().into_iter().map(|p| p.name).collect();
        // With what the earlier rounds added at run time.
        let mut expected = vec![
            "mcp__docs__review".to_owned(),
            "mcp__wiki__review".to_owned(),
        ];
        expected.extend((0..round).map(|r| format!("mcp__wiki__plan{r}")));
        assert_eq!(prompts, expected, "{version}");
        let got = host
            .get_prompt("mcp__wiki__review", json!({"who": "Ada"}))
            .await
            .unwrap();
        assert_eq!(text_of_prompt(&got), "wiki: hello Ada", "{version}");
        assert!(matches!(
            host.get_prompt("review", ()).await,
            Err(Error::UnknownPrompt(name)) if name == "review"
        ));

        // Resources: their own URIs, but for the one both servers list.
        let resources: Vec<(String, String)> = host
            .resources()
            .into_iter()
            .map(|r| (r.uri, r.server))
            .collect();
        let mut expected = vec![
            ("file:///docs".to_owned(), "docs".to_owned()),
            (qualified_uri("docs", "file:///shared"), "docs".to_owned()),
            ("file:///wiki".to_owned(), "wiki".to_owned()),
            (qualified_uri("wiki", "file:///shared"), "wiki".to_owned()),
        ];
        expected.extend((0..round).map(|r| (format!("file:///new{r}"), "wiki".to_owned())));
        assert_eq!(resources, expected, "{version}");
        for (uri, text) in [
            ("file:///wiki", "wiki has file:///wiki"),
            ("mcp-host://docs/file:///shared", "docs has file:///shared"),
            ("mcp-host://wiki/file:///shared", "wiki has file:///shared"),
        ] {
            let read = host.read_resource(uri).await.unwrap();
            assert_eq!(text_of_resource(&read), text, "{version} {uri}");
        }
        // A shared URI stands for no one resource; a template's URIs are read from its
        // server.
        assert!(matches!(
            host.read_resource("file:///shared").await,
            Err(Error::UnknownResource(_))
        ));
        let templates = host.resource_templates();
        assert_eq!(templates.len(), 1);
        assert_eq!(templates[0].server, "docs");
        assert_eq!(templates[0].template.uri_template, "docs://page/{id}");
        let page = host
            .read_resource_from("docs", "docs://page/7")
            .await
            .unwrap();
        assert_eq!(text_of_resource(&page), "page 7");
        assert!(matches!(
            host.read_resource_from("nowhere", "docs://page/7").await,
            Err(Error::UnknownServer(_))
        ));

        // A change is heard and picked up by the next refresh.
        let mut changes = host.changes();
        wiki.add_prompt(prompt("wiki", &format!("plan{round}")))
            .unwrap();
        wiki.add_resource(resource("wiki", &format!("file:///new{round}")));
        tokio::time::timeout(Duration::from_secs(10), changes.wait_for(|n| *n >= 2))
            .await
            .unwrap()
            .unwrap();
        assert!(host.refresh().await, "{version}");
        let plan = format!("mcp__wiki__plan{round}");
        assert!(host.prompts().iter().any(|p| p.name == plan), "{version}");
        let read = host
            .read_resource(&format!("file:///new{round}"))
            .await
            .unwrap();
        assert_eq!(
            text_of_resource(&read),
            format!("wiki has file:///new{round}")
        );
        // The tools are as they were.
        assert_eq!(host.catalog().entries().len(), 2);
        host.shutdown().await;
    }
    docs_http.shutdown(Duration::from_secs(1)).await;
    wiki_http.shutdown(Duration::from_secs(1)).await;
}
