//! The MCP Apps extension on the wire (<https://modelcontextprotocol.io/extensions/apps/overview>,
//! <https://modelcontextprotocol.io/extensions/overview> Graceful Degradation): what a client that declared
//! `io.modelcontextprotocol/ui` sees, and the plain protocol every other client gets.

use mcp_jsonrpc::memory;
use mcp_jsonrpc::{FrameReader, FrameWriter, Peer, PeerConfig};
use mcp_server::apps::{Csp, Permissions, ToolUi, UiResource, Visibility};
use mcp_server::{Error, Server, ToolDef};
use mcp_test_support::tools;
use mcp_types::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

const VIEW: &str = "ui://weather/view.html";
const HTML: &str = "<!DOCTYPE html><html><body>weather</body></html>";

/// What a client declares: nothing, the extension as the overview shows it, or the
/// extension without the app media type.
#[derive(Clone, Copy, Debug)]
enum Declares {
    Nothing,
    Apps,
    AppsWithoutMimeType,
}

fn meta(declares: Declares) -> Value {
    let capabilities = match declares {
        Declares::Nothing => json!({}),
        Declares::Apps => json!({"extensions": {"io.modelcontextprotocol/ui": {
            "mimeTypes": ["text/html;profile=mcp-app"]
        }}}),
        Declares::AppsWithoutMimeType => json!({"extensions": {"io.modelcontextprotocol/ui": {}}}),
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities
    })
}

fn server() -> Server {
    let mut csp = Csp::default();
    csp.connect_domains = Some(vec!["https://api.weather.example".to_owned()]);
    let mut permissions = Permissions::default();
    permissions.geolocation = Some(serde_json::Map::new());
    let view = UiResource::new(VIEW, "weather_view", HTML)
        .unwrap()
        .description("Interactive weather")
        .csp(csp)
        .permissions(permissions)
        .prefers_border(true);
    let forecast = ToolDef::new(
        "forecast",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        |args, cx| async move {
            // Structured data for the view, and a link to it: what a plain result must
            // lose or turn into text.
            let mut result = CallToolResult::structured(json!({"city": args["city"], "c": 21}));
            result.content = vec![ContentBlock::resource_link(VIEW, "view")];
            if cx.renders_apps() {
                result
                    .content
                    .push(ContentBlock::text("rendered in the app"));
            }
            Ok(result)
        },
    )
    .meta(
        json!({"com.example/owner": "weather-team"})
            .as_object()
            .cloned()
            .unwrap(),
    )
    .ui(ToolUi::new(VIEW));
    let refresh =
        tools::answers("refresh", "refreshed").ui(ToolUi::new(VIEW).visibility([Visibility::App]));
    let plain = tools::answers("plain", "plain");
    Server::builder("weather", "1.0")
        .ui_resource(view)
        .resource(mcp_server::ResourceDef::new(
            "file:///notes.txt",
            "notes",
            |uri, _| async move {
                Ok(vec![
                    mcp_types::EmbeddedResourceResource::TextResourceContents(
                        mcp_types::TextResourceContents::new("notes", uri),
                    ),
                ])
            },
        ))
        .tool(forecast)
        .tool(refresh)
        .tool(plain)
        .page_size(2)
        .build()
        .unwrap()
}

/// Sends one request with the `_meta` of `declares` and returns the response.
async fn check(server: &Server, declares: Declares, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta(declares);
    let ((mut read, mut write), (b_read, b_write)) = memory::pair(8);
    let (_peer, _conn) = Peer::connect(b_read, b_write, server.clone(), PeerConfig::default());
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    write.write_frame(request.to_string().into()).await.unwrap();
    let frame = read.read_frame().await.unwrap().unwrap();
    serde_json::from_slice(&frame).unwrap()
}

/// Every tool of `tools/list`, following cursors.
async fn tools(server: &Server, declares: Declares) -> Vec<Value> {
    let mut all = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let response = check(server, declares, "tools/list", params).await;
        let result = &response["result"];
        all.extend(result["tools"].as_array().unwrap().iter().cloned());
        cursor = result.get("nextCursor").cloned().unwrap_or(Value::Null);
        if cursor.is_null() {
            return all;
        }
    }
}

fn named<'a>(tools: &'a [Value], name: &str) -> Option<&'a Value> {
    tools.iter().find(|t| t["name"] == name)
}

#[tokio::test]
async fn the_extension_is_declared_in_discover() {
    let server = server();
    let response = check(&server, Declares::Nothing, "server/discover", json!({})).await;
    assert_eq!(
        response["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/ui"],
        json!({})
    );
}

#[tokio::test]
async fn a_client_that_renders_apps_sees_links_and_app_only_tools() {
    let server = server();
    let listed = tools(&server, Declares::Apps).await;
    assert_eq!(listed.len(), 3);
    let forecast = named(&listed, "forecast").unwrap();
    assert_eq!(forecast["_meta"]["ui"], json!({"resourceUri": VIEW}));
    assert_eq!(
        forecast["_meta"]["com.example/owner"], "weather-team",
        "other _meta kept"
    );
    let refresh = named(&listed, "refresh").unwrap();
    assert_eq!(
        refresh["_meta"]["ui"],
        json!({"resourceUri": VIEW, "visibility": ["app"]})
    );
    assert!(named(&listed, "plain").unwrap().get("_meta").is_none());

    let resources = check(&server, Declares::Apps, "resources/list", json!({})).await;
    let view = &resources["result"]["resources"][0];
    assert_eq!(view["uri"], VIEW);
    assert_eq!(view["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(
        view["_meta"]["ui"]["csp"],
        json!({"connectDomains": ["https://api.weather.example"]})
    );

    let call = check(
        &server,
        Declares::Apps,
        "tools/call",
        json!({"name": "forecast", "arguments": {"city": "Oslo"}}),
    )
    .await;
    let result = &call["result"];
    assert_eq!(
        result["content"][0]["uri"], VIEW,
        "the link to the view stays"
    );
    assert_eq!(result["content"][1]["text"], "rendered in the app");
    assert_eq!(result["structuredContent"]["c"], 21);
    let call = check(
        &server,
        Declares::Apps,
        "tools/call",
        json!({"name": "refresh"}),
    )
    .await;
    assert_eq!(call["result"]["content"][0]["text"], "refreshed");
}

#[tokio::test]
async fn any_other_client_gets_the_plain_protocol() {
    let server = server();
    for declares in [Declares::Nothing, Declares::AppsWithoutMimeType] {
        let listed = tools(&server, declares).await;
        let names: Vec<&str> = listed.iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(
            names,
            ["forecast", "plain"],
            "{declares:?}: the app-only tool is left out"
        );
        let forecast = named(&listed, "forecast").unwrap();
        assert!(
            forecast["_meta"].get("ui").is_none(),
            "{declares:?}: {forecast}"
        );
        assert_eq!(forecast["_meta"]["com.example/owner"], "weather-team");

        let resources = check(&server, declares, "resources/list", json!({})).await;
        let uris: Vec<&Value> = resources["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["uri"])
            .collect();
        assert_eq!(
            uris,
            [&json!("file:///notes.txt")],
            "{declares:?}: the UI resource is not advertised"
        );

        let call = check(
            &server,
            declares,
            "tools/call",
            json!({"name": "forecast", "arguments": {"city": "Oslo"}}),
        )
        .await;
        let result = &call["result"];
        assert_eq!(
            result["content"],
            json!([{"type": "text", "text": r#"{"city":"Oslo","c":21}"#}]),
            "{declares:?}: no link to the view, and text to read"
        );
        assert_eq!(result["structuredContent"]["c"], 21);

        let call = check(&server, declares, "tools/call", json!({"name": "refresh"})).await;
        assert_eq!(call["error"]["code"], -32602, "{declares:?}: {call}");
    }
}

#[tokio::test]
async fn the_ui_resource_reads_as_html_with_its_sandbox_metadata() {
    let server = server();
    for declares in [Declares::Apps, Declares::Nothing] {
        let response = check(&server, declares, "resources/read", json!({"uri": VIEW})).await;
        let content = &response["result"]["contents"][0];
        assert_eq!(content["uri"], VIEW);
        assert_eq!(content["mimeType"], "text/html;profile=mcp-app");
        assert_eq!(content["text"], HTML);
        assert_eq!(
            content["_meta"]["ui"],
            json!({
                "csp": {"connectDomains": ["https://api.weather.example"]},
                "permissions": {"geolocation": {}},
                "prefersBorder": true
            })
        );
    }
}

#[test]
fn links_and_ui_resources_are_checked_at_build() {
    let tool = |link: ToolUi| tools::answers("t", "").ui(link).check();
    assert!(matches!(
        tool(ToolUi::new("https://x/view.html")),
        Err(Error::InvalidUiResource { .. })
    ));
    assert!(matches!(
        tool(ToolUi::default()),
        Err(Error::InvalidUiResource { .. })
    ));
    assert!(matches!(
        UiResource::new("file:///view.html", "v", HTML),
        Err(Error::InvalidUiResource { .. })
    ));

    // A link to a UI resource the server does not have.
    let dangling = Server::builder("s", "1")
        .tool(tool(ToolUi::new("ui://missing")))
        .build();
    assert!(matches!(dangling, Err(Error::InvalidUiResource { uri, .. }) if uri == "ui://missing"));

    // Without any app, nothing is declared.
    let bare = Server::builder("s", "1")
        .tool(tools::answers("t", ""))
        .build()
        .unwrap();
    assert!(bare.capabilities().extensions.is_none());
}
