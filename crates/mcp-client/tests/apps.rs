//! The client side of MCP Apps (<https://modelcontextprotocol.io/extensions/apps/overview>) against our server:
//! the declaration, the tool's link, and the UI resource read and checked.

use mcp_client::Client;
use mcp_client::apps::{UiLink, Visibility, model_visible};
use mcp_server::apps::{Csp, ToolUi, UiResource};
use mcp_server::{ResourceDef, Server, ToolDef};
use mcp_test_support::client::connect_in_memory;
use mcp_types::{
    BlobResourceContents, CallToolResult, EmbeddedResourceResource, TextResourceContents,
};
use serde_json::json;

const HTML: &str = "<!DOCTYPE html><html><body>chart</body></html>";

fn text(
    uri: &str,
    mime: Option<&str>,
    meta: Option<serde_json::Value>,
) -> EmbeddedResourceResource {
    let mut content = TextResourceContents::new(HTML, uri);
    content.mime_type = mime.map(str::to_owned);
    content.meta = meta.and_then(|m| m.as_object().cloned());
    EmbeddedResourceResource::TextResourceContents(content)
}

/// A fixed answer to `resources/read`, for the cases our own `UiResource` never produces.
fn fixed(uri: &str, content: EmbeddedResourceResource) -> ResourceDef {
    ResourceDef::new(uri, "fixed", move |_, _| {
        let content = content.clone();
        async move { Ok(vec![content]) }
    })
}

fn server() -> Server {
    let mut csp = Csp::default();
    csp.resource_domains = Some(vec!["https://cdn.example.com".to_owned()]);
    let tool = |name: &str, link: Option<ToolUi>| {
        let tool = ToolDef::new(name, json!({"type": "object"}), |_, _| async {
            Ok(CallToolResult::text("ok"))
        });
        match link {
            Some(link) => tool.ui(link),
            None => tool,
        }
    };
    let blob = BlobResourceContents::new(
        "PCFET0NUWVBFIGh0bWw+PGh0bWw+PGJvZHk+Y2hhcnQ8L2JvZHk+PC9odG1sPg==",
        "ui://blob",
    );
    let mut blob_app = blob.clone();
    blob_app.mime_type = Some("text/html; profile=\"mcp-app\"".to_owned());
    Server::builder("charts", "1")
        .ui_resource(
            UiResource::new("ui://chart", "chart", HTML)
                .unwrap()
                .csp(csp),
        )
        .tool(Ok(tool("chart", Some(ToolUi::new("ui://chart")))))
        .tool(Ok(tool(
            "zoom",
            Some(ToolUi::new("ui://chart").visibility([Visibility::App])),
        )))
        .tool(Ok(tool("plain", None)))
        .resource(fixed(
            "ui://blob",
            EmbeddedResourceResource::BlobResourceContents(blob_app),
        ))
        .resource(fixed(
            "ui://plain-html",
            text("ui://plain-html", Some("text/html"), None),
        ))
        .resource(fixed(
            "ui://other-uri",
            text("ui://elsewhere", Some(mcp_types::apps::MIME_TYPE), None),
        ))
        .resource(fixed(
            "ui://bad-blob",
            EmbeddedResourceResource::BlobResourceContents({
                let mut b = BlobResourceContents::new("not base64!", "ui://bad-blob");
                b.mime_type = Some(mcp_types::apps::MIME_TYPE.to_owned());
                b
            }),
        ))
        .resource(
            fixed(
                "ui://listed-meta",
                text("ui://listed-meta", Some(mcp_types::apps::MIME_TYPE), None),
            )
            .meta(
                json!({"ui": {"prefersBorder": false, "domain": "x.example"}})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .build()
        .unwrap()
}

fn connect(
    builder: mcp_client::ClientBuilder,
) -> (Client, mcp_jsonrpc::Connection, mcp_jsonrpc::Connection) {
    connect_in_memory(server(), builder, 16)
}

#[tokio::test]
async fn declaring_apps_shows_links_and_app_only_tools() {
    let (client, _c, _s) = connect(Client::builder("host", "1").apps());
    assert_eq!(
        client.capabilities().extensions.as_ref().unwrap()["io.modelcontextprotocol/ui"],
        json!({"mimeTypes": ["text/html;profile=mcp-app"]})
    );
    let tools = client.list_tools_all().await.unwrap();
    let links: Vec<(String, Option<UiLink>, bool)> = tools
        .iter()
        .map(|t| (t.name.clone(), UiLink::of(t), model_visible(t)))
        .collect();
    assert_eq!(links.len(), 3);
    let chart = links[0].1.clone().unwrap();
    assert_eq!(chart.resource_uri, "ui://chart");
    assert!(chart.model_visible() && chart.app_callable());
    let zoom = links[1].1.clone().unwrap();
    assert!(!zoom.model_visible() && zoom.app_callable());
    assert!(!links[1].2, "the app-only tool is not for the model");
    assert_eq!((links[2].1.clone(), links[2].2), (None, true));

    let view = client.read_ui_resource(&chart.resource_uri).await.unwrap();
    assert_eq!(view.html, HTML);
    assert_eq!(
        view.ui.csp.unwrap().resource_domains,
        Some(vec!["https://cdn.example.com".to_owned()])
    );
}

#[tokio::test]
async fn without_the_declaration_the_server_shows_no_app() {
    let (client, _c, _s) = connect(Client::builder("agent", "1"));
    let tools = client.list_tools_all().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["chart", "plain"]);
    assert!(tools.iter().all(|t| UiLink::of(t).is_none()));
}

#[tokio::test]
async fn ui_resources_are_checked_before_rendering() {
    let (client, _c, _s) = connect(Client::builder("host", "1").apps());
    // HTML sent as base64, with a quoted profile parameter.
    let view = client.read_ui_resource("ui://blob").await.unwrap();
    assert_eq!(view.html, HTML);
    // Metadata from the listing entry when the content carries none.
    let view = client.read_ui_resource("ui://listed-meta").await.unwrap();
    assert_eq!(
        (view.ui.prefers_border, view.ui.domain.as_deref()),
        (Some(false), Some("x.example"))
    );

    let refused = [
        ("https://example.com/app.html", "ui:// scheme"),
        ("ui://plain-html", "media type"),
        ("ui://other-uri", "no content for this URI"),
        ("ui://bad-blob", "base64"),
    ];
    for (uri, why) in refused {
        match client.read_ui_resource(uri).await {
            Err(mcp_client::Error::InvalidUiResource { uri: u, reason }) => {
                assert_eq!(u, uri);
                assert!(reason.contains(why), "{uri}: {reason}");
            }
            other => panic!("{uri}: {other:?}"),
        }
    }
}
