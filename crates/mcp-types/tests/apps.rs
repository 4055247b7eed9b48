//! Golden JSON of the MCP Apps extension (<https://modelcontextprotocol.io/extensions/apps/overview>; the
//! examples of the extension's specification, <https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx>):
//! each reads into its type and writes back to the same JSON.

mod golden;

use golden::check;

use mcp_types::apps::{
    ClientSettings, Csp, Permissions, ResourceUi, ToolUi, Visibility, is_app_mime_type,
};
use mcp_types::{ClientCapabilities, ReadResourceResult, Resource, Tool};
use serde_json::{Value, json};

#[test]
fn a_tool_visible_to_both_and_an_app_only_tool() {
    let both: Tool = check(&json!({
        "name": "get_weather",
        "description": "Get current weather for a location",
        "inputSchema": {"type": "object", "properties": {"location": {"type": "string"}}},
        "_meta": {"ui": {
            "resourceUri": "ui://weather-server/dashboard-template",
            "visibility": ["model", "app"]
        }}
    }));
    let ui = ToolUi::of(&both).expect("linked");
    assert_eq!(
        ui.resource_uri.as_deref(),
        Some("ui://weather-server/dashboard-template")
    );
    assert!(ui.is_visible_to(Visibility::Model) && ui.is_visible_to(Visibility::App));

    let app_only: Tool = check(&json!({
        "name": "refresh_dashboard",
        "description": "Refresh dashboard data",
        "inputSchema": {"type": "object"},
        "_meta": {"ui": {"resourceUri": "ui://weather-server/dashboard-template", "visibility": ["app"]}}
    }));
    let ui = ToolUi::of(&app_only).expect("linked");
    assert_eq!(ui.audiences(), [Visibility::App]);
    assert!(!ui.is_visible_to(Visibility::Model));
}

#[test]
fn the_deprecated_flat_key_and_absent_links() {
    let flat: Tool = check(&json!({
        "name": "weather", "inputSchema": {"type": "object"},
        "_meta": {"ui/resourceUri": "ui://weather/forecast"}
    }));
    let ui = ToolUi::of(&flat).expect("the flat key is read");
    assert_eq!(ui.resource_uri.as_deref(), Some("ui://weather/forecast"));
    assert_eq!(ui.audiences(), [Visibility::Model, Visibility::App]);

    let plain = Tool::without_arguments("plain");
    assert_eq!(ToolUi::of(&plain), None);
    let other_meta: Tool = check(&json!({
        "name": "t", "inputSchema": {"type": "object"}, "_meta": {"com.example/x": 1}
    }));
    assert_eq!(ToolUi::of(&other_meta), None);
    let malformed: Tool = check(&json!({
        "name": "t", "inputSchema": {"type": "object"}, "_meta": {"ui": "ui://x"}
    }));
    assert_eq!(ToolUi::of(&malformed), None, "a `ui` that is not an object");
}

#[test]
fn unknown_audiences_are_skipped_and_unknown_members_kept() {
    let ui: ToolUi = serde_json::from_value(json!({
        "resourceUri": "ui://a", "visibility": ["app", "hologram"], "future": true
    }))
    .unwrap();
    assert_eq!(ui.visibility, Some(vec![Visibility::App]));
    assert_eq!(ui.extra["future"], json!(true));
}

#[test]
fn a_ui_resource_listing_and_its_content_with_metadata() {
    let listed: Resource = check(&json!({
        "uri": "ui://weather-server/dashboard-template",
        "name": "weather_dashboard",
        "description": "Interactive weather dashboard view",
        "mimeType": "text/html;profile=mcp-app",
        "_meta": {"ui": {
            "csp": {
                "connectDomains": ["https://api.openweathermap.org"],
                "resourceDomains": ["https://cdn.jsdelivr.net"]
            },
            "prefersBorder": true
        }}
    }));
    let ui = ResourceUi::from_meta(listed.meta.as_ref()).expect("listing metadata");
    assert_eq!(ui.prefers_border, Some(true));

    let read: ReadResourceResult = check(&json!({
        "resultType": "complete",
        "contents": [{
            "uri": "ui://weather-server/dashboard-template",
            "mimeType": "text/html;profile=mcp-app",
            "text": "<!DOCTYPE html><html>...</html>",
            "_meta": {"ui": {
                "csp": {
                    "connectDomains": ["https://api.openweathermap.org"],
                    "resourceDomains": ["https://cdn.jsdelivr.net"],
                    "frameDomains": ["https://www.youtube.com"],
                    "baseUriDomains": ["https://cdn.example.com"]
                },
                "permissions": {"camera": {}, "microphone": {}, "geolocation": {}, "clipboardWrite": {}},
                "domain": "a904794854a047f6.claudemcpcontent.com",
                "prefersBorder": false
            }}
        }]
    }));
    let content = serde_json::to_value(&read.contents[0]).unwrap();
    let meta = content["_meta"].as_object().cloned();
    let ui = ResourceUi::from_meta(meta.as_ref()).expect("content metadata");
    let csp: &Csp = ui.csp.as_ref().unwrap();
    assert_eq!(
        csp.frame_domains.as_deref(),
        Some(&["https://www.youtube.com".to_owned()][..])
    );
    let permissions: &Permissions = ui.permissions.as_ref().unwrap();
    assert!(permissions.clipboard_write.is_some() && permissions.camera.is_some());
    assert_eq!(
        ui.domain.as_deref(),
        Some("a904794854a047f6.claudemcpcontent.com")
    );
    assert_eq!(ui.prefers_border, Some(false));
}

#[test]
fn client_settings_as_declared_in_the_extensions_overview() {
    let capabilities: ClientCapabilities = check(&json!({
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    }));
    let settings = ClientSettings::of(&capabilities).expect("declared");
    assert!(settings.renders_apps());
    assert_eq!(settings, ClientSettings::mcp_apps());
    assert_eq!(
        Value::Object(settings.to_object()),
        json!({"mimeTypes": ["text/html;profile=mcp-app"]})
    );

    let bare: ClientCapabilities =
        check(&json!({"extensions": {"io.modelcontextprotocol/ui": {}}}));
    let settings = ClientSettings::of(&bare).expect("declared without settings");
    assert!(
        !settings.renders_apps(),
        "mimeTypes is the extension's required setting"
    );
    let other: ClientCapabilities = check(&json!({"extensions": {"com.example/x": {}}}));
    assert_eq!(ClientSettings::of(&other), None);
    let html_only: ClientCapabilities = check(&json!({
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}
    }));
    assert!(!ClientSettings::of(&html_only).unwrap().renders_apps());
    assert!(is_app_mime_type("text/html ; profile=mcp-app"));
    assert!(!is_app_mime_type("text/html;profile=mcp-app-v2"));
}
