//! MCP Apps in the host (<https://modelcontextprotocol.io/extensions/apps/overview>): links kept in the catalog,
//! app-only tools kept from the model but callable by their own app, and the UI passed
//! to the embedding application.

use mcp_client::Client;
use mcp_host::{Catalog, Host, ToolCall, UiRef, Vendor};
use mcp_jsonrpc::{Connection, Peer, PeerConfig, memory};
use mcp_server::apps::{ToolUi, UiResource, Visibility};
use mcp_server::{Server, ToolDef};
use mcp_types::{CallToolResult, JsonObject};
use serde_json::json;

const HTML: &str = "<!DOCTYPE html><html><body>cart</body></html>";

fn tool(name: &'static str, link: Option<ToolUi>) -> ToolDef {
    let tool = ToolDef::new(name, json!({"type": "object"}), move |_, _| async move {
        Ok(CallToolResult::text(format!("{name} ran")))
    });
    match link {
        Some(link) => tool.ui(link),
        None => tool,
    }
}

fn shop() -> Server {
    Server::builder("shop", "1")
        .ui_resource(
            UiResource::new("ui://shop/cart.html", "cart", HTML)
                .unwrap()
                .prefers_border(true),
        )
        .tool(Ok(tool(
            "show_cart",
            Some(ToolUi::new("ui://shop/cart.html")),
        )))
        .tool(Ok(tool(
            "update_quantity",
            Some(ToolUi::new("ui://shop/cart.html").visibility([Visibility::App])),
        )))
        .tool(Ok(tool(
            "checkout",
            Some(ToolUi::new("ui://shop/cart.html").visibility([Visibility::Model])),
        )))
        .build()
        .unwrap()
}

fn bank() -> Server {
    Server::builder("bank", "1")
        .tool(Ok(tool("transfer", None)))
        .build()
        .unwrap()
}

fn in_memory(server: Server, apps: bool) -> (Client, Connection, Connection) {
    let ((a_read, a_write), (b_read, b_write)) = memory::pair(64);
    let (_peer, server_conn) = Peer::connect(b_read, b_write, server, PeerConfig::default());
    let mut builder = Client::builder("host", "1");
    if apps {
        builder = builder.apps();
    }
    let (client, client_conn) = builder.connect(a_read, a_write, PeerConfig::default());
    (client, client_conn, server_conn)
}

#[tokio::test]
async fn a_host_that_renders_apps() {
    let (shop_client, _a, _b) = in_memory(shop(), true);
    let (bank_client, _c, _d) = in_memory(bank(), true);
    let host = Host::builder()
        .client("shop", shop_client)
        .client("bank", bank_client)
        .connect()
        .await
        .unwrap();
    let catalog = host.catalog();
    let entries: Vec<(&str, bool, bool)> = catalog
        .entries()
        .iter()
        .map(|e| (e.name.as_str(), e.model_visible, e.ui.is_some()))
        .collect();
    assert_eq!(
        entries,
        [
            ("shop__show_cart", true, true),
            ("shop__update_quantity", false, true),
            ("shop__checkout", true, true),
            ("bank__transfer", true, false),
        ]
    );
    // The model is never offered the app-only tool, in any dialect, nor can it call it.
    for vendor in Vendor::ALL {
        let declared = catalog.tools_json(vendor).to_string();
        assert!(
            !declared.contains("update_quantity"),
            "{vendor}: {declared}"
        );
        assert!(declared.contains("shop__show_cart"), "{vendor}");
    }
    assert!(catalog.resolve("shop__update_quantity").is_none());

    // A model call of a linked tool: the outcome names the UI, which the app reads.
    let calls = vec![
        ToolCall::new("1", "shop__show_cart", JsonObject::new()),
        ToolCall::new("2", "bank__transfer", JsonObject::new()),
        ToolCall::new("3", "shop__update_quantity", JsonObject::new()),
    ];
    let outcomes = host.call(&catalog, calls).await;
    assert_eq!(
        outcomes[0].ui,
        Some(UiRef::new("shop", "ui://shop/cart.html"))
    );
    assert_eq!(
        outcomes[0].result.content[0],
        mcp_types::ContentBlock::text("show_cart ran")
    );
    assert_eq!(outcomes[1].ui, None);
    assert!(
        outcomes[2].is_error(),
        "the model cannot call an app-only tool"
    );
    let view = host
        .read_ui(outcomes[0].ui.as_ref().unwrap())
        .await
        .unwrap();
    assert_eq!(view.html, HTML);
    assert_eq!(view.ui.prefers_border, Some(true));
    assert!(matches!(
        host.read_ui(&UiRef::new("nowhere", "ui://x")).await,
        Err(mcp_host::Error::UnknownServer(_))
    ));

    // The app calls its own server's app-visible tools, and nothing else.
    let ran = host
        .call_from_app(&catalog, "shop", "update_quantity", JsonObject::new())
        .await;
    assert_eq!(
        ran.content[0],
        mcp_types::ContentBlock::text("update_quantity ran")
    );
    let ran = host
        .call_from_app(&catalog, "shop", "show_cart", JsonObject::new())
        .await;
    assert_eq!(
        ran.is_error, None,
        "the default visibility includes the app"
    );
    for (server, tool) in [("shop", "checkout"), ("shop", "transfer"), ("shop", "nope")] {
        let refused = host
            .call_from_app(&catalog, server, tool, JsonObject::new())
            .await;
        assert_eq!(refused.is_error, Some(true), "{server}/{tool}");
    }
    host.shutdown().await;
}

#[tokio::test]
async fn a_host_that_does_not_render_apps_sees_plain_tools() {
    let (shop_client, _a, _b) = in_memory(shop(), false);
    let host = Host::builder()
        .client("shop", shop_client)
        .connect()
        .await
        .unwrap();
    let catalog = host.catalog();
    let names: Vec<&str> = catalog.entries().iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["shop__show_cart", "shop__checkout"]);
    assert!(
        catalog
            .entries()
            .iter()
            .all(|e| e.ui.is_none() && e.model_visible)
    );
    host.shutdown().await;
}

#[test]
fn the_catalog_reads_links_from_listed_tools() {
    let tools: Vec<mcp_types::Tool> = serde_json::from_value(json!([
        {"name": "view", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "ui://v"}}},
        {"name": "poke", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "ui://v", "visibility": ["app"]}}},
        {"name": "legacy", "inputSchema": {"type": "object"}, "_meta": {"ui/resourceUri": "ui://old"}},
        {"name": "bogus", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "https://x"}}}
    ]))
    .unwrap();
    let catalog = Catalog::new([("s", tools.as_slice())]);
    let links: Vec<Option<&str>> = catalog
        .entries()
        .iter()
        .map(|e| e.ui.as_ref().map(|l| l.resource_uri.as_str()))
        .collect();
    assert_eq!(
        links,
        [Some("ui://v"), Some("ui://v"), Some("ui://old"), None]
    );
    assert_eq!(catalog.declarations(Vendor::Anthropic).len(), 3);
    assert!(catalog.app_tool("s", "poke").is_some());
    assert!(catalog.app_tool("t", "poke").is_none());
}
