//! A hostile tool list, from a server through the client into the catalog:
//! names with control characters, bidirectional overrides, path segments, no characters
//! or ten thousand, duplicates and names that only differ in characters no vendor accepts;
//! schemas with `$ref` loops, exponential `$ref` fan-out, remote and dangling `$ref`s,
//! nesting just under serde_json's limit, ten thousand properties, huge descriptions and
//! enums, members of the wrong type; icons with unsafe URIs. Every vendor's declarations
//! must come out valid (names of `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`, unique, mapped back to
//! the exact tool), bounded, with only safe icons left, and nothing may panic.
//!
//! The rules: <https://modelcontextprotocol.io/specification/2026-07-28/server/tools> (tools, `inputSchema`) and
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic> (`icons`).

use std::cell::Cell;
use std::collections::HashSet;

use mcp_client::Client;
use mcp_host::{Catalog, Vendor};
use mcp_jsonrpc::{
    ErrorObject, Handler, NoHandler, Peer, PeerConfig, Request, RequestContext, memory,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

thread_local! {
    static PANICS: Cell<usize> = const { Cell::new(0) };
}

/// A server whose `tools/list` is the hostile list.
struct Hostile(Value);

impl Handler for Hostile {
    async fn request(&self, _: Request, _: RequestContext) -> Result<Box<RawValue>, ErrorObject> {
        Ok(serde_json::value::to_raw_value(&self.0).unwrap())
    }
}

fn tool(name: &str, schema: &Value) -> Value {
    json!({"name": name, "inputSchema": schema})
}

fn object(properties: &Value) -> Value {
    json!({"type": "object", "properties": properties})
}

/// `depth` objects nested through a property `x`.
fn deep(depth: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..depth {
        schema = object(&json!({ "x": schema }));
    }
    schema
}

/// `$defs` where each level refers twice to the next: 2^levels expansions if inlined.
fn fan_out(levels: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for n in 0..levels {
        let next = format!("#/$defs/L{}", n + 1);
        defs.insert(
            format!("L{n}"),
            object(&json!({"a": {"$ref": next}, "b": {"$ref": next}})),
        );
    }
    defs.insert(format!("L{levels}"), json!({"type": "string"}));
    json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/L0"}}, "$defs": defs})
}

fn hostile_list() -> Value {
    let many: serde_json::Map<String, Value> = (0..10_000)
        .map(|n| (format!("p{n}"), json!({"type": "integer"})))
        .collect();
    let plain = json!({"type": "object"});
    let mut with_icons = tool("iconic", &plain);
    with_icons["icons"] = json!([
        {"src": "javascript:alert(1)"},
        {"src": "file:///etc/passwd"},
        {"src": "https://user:pw@evil.example/i.png"},
        {"src": "data:text/html;base64,PHNjcmlwdD4="},
        {"src": "https://mcp.example.com/ok.png"},
        {"src": "data:image/png;base64,iVBORw0KGgo="}
    ]);
    json!({"resultType": "complete", "tools": [
        tool("nul\u{0}byte", &plain),
        tool("line\nbreak\r\n", &plain),
        tool("\u{1b}[2J\u{1b}]0;pwned\u{7}", &plain),
        tool("\u{202e}txt.exe", &plain),
        tool("", &plain),
        tool(&"x".repeat(10_000), &plain),
        tool("../../etc/passwd", &plain),
        tool("名前", &plain),
        tool("a.b", &plain),
        tool("a_b", &plain),
        tool("dup", &object(&json!({"first": {"type": "string"}}))),
        tool("dup", &object(&json!({"second": {"type": "string"}}))),
        tool("self-ref", &object(&json!({"a": {"$ref": "#"}}))),
        tool("mutual-refs", &json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": object(&json!({"b": {"$ref": "#/$defs/B"}})), "B": object(&json!({"a": {"$ref": "#/$defs/A"}}))}})),
        tool("fan-out", &fan_out(30)),
        tool("remote-ref", &object(&json!({"a": {"$ref": "https://evil.example/schema.json"}}))),
        tool("dangling-ref", &object(&json!({"a": {"$ref": "#/nowhere/at/all"}, "b": {"$ref": "not a pointer"}}))),
        tool("deep", &deep(60)),
        tool("wide", &json!({"type": "object", "properties": many})),
        tool("huge-text", &object(&json!({"a": {"type": "string", "description": "d".repeat(1 << 20),
            "enum": (0..5000).map(|n| n.to_string()).collect::<Vec<_>>()}}))),
        tool("wrong-types", &json!({"type": "object", "properties": [], "required": "x", "anyOf": {},
            "items": 7, "enum": 5, "additionalProperties": "no", "$defs": [1, 2]})),
        tool("wrong-members", &object(&json!({"a": {"type": ["string", 5, null]}, "b": 42, "c": null, "d": [1]}))),
        with_icons,
    ]})
}

/// The deepest nesting of `value`.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[tokio::test]
async fn a_hostile_tool_list_maps_to_valid_bounded_declarations() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.with(|c| c.set(c.get() + 1));
        previous(info);
    }));
    let list = hostile_list();
    let ((a_read, a_write), (b_read, b_write)) = memory::pair(16);
    let (_server, _server_conn) = Peer::connect(
        b_read,
        b_write,
        Hostile(list.clone()),
        PeerConfig::default(),
    );
    let (peer, _conn) = Peer::connect(a_read, a_write, NoHandler, PeerConfig::default());
    let client = Client::builder("host", "1").build(peer);
    let tools = client
        .list_tools_all()
        .await
        .expect("every tool in the list is readable");
    assert_eq!(tools.len(), 23);

    // A hostile server name too.
    let catalog = Catalog::new([("evil\u{0}server/..", tools.as_slice())]);
    let entries = catalog.entries();
    assert_eq!(entries.len(), 22, "the second `dup` is dropped");
    let dup = entries.iter().find(|e| e.tool.name == "dup").unwrap();
    assert!(
        dup.tool.input_schema.extra["properties"]
            .get("first")
            .is_some(),
        "the first `dup` is kept"
    );

    let iconic = entries.iter().find(|e| e.tool.name == "iconic").unwrap();
    let icons: Vec<&str> = iconic
        .tool
        .icons
        .iter()
        .flatten()
        .map(|i| i.src.as_str())
        .collect();
    assert_eq!(
        icons,
        [
            "https://mcp.example.com/ok.png",
            "data:image/png;base64,iVBORw0KGgo="
        ]
    );

    for vendor in Vendor::ALL {
        let declarations = catalog.declarations(vendor);
        assert_eq!(declarations.len(), entries.len(), "{vendor}");
        let mut names = HashSet::new();
        for (declaration, entry) in declarations.iter().zip(entries) {
            let name = declaration
                .get("name")
                .or_else(|| declaration.pointer("/function/name"))
                .and_then(Value::as_str)
                .unwrap();
            assert!(valid_name(name), "{vendor}: {name:?}");
            assert!(names.insert(name.to_owned()), "{vendor}: {name} twice");
            let resolved = catalog.resolve(name).unwrap();
            assert_eq!(
                resolved.tool.name, entry.tool.name,
                "{vendor}: {name} maps back exactly"
            );
            let size = declaration.to_string().len();
            assert!(size < 1 << 20, "{vendor} {name}: {size} bytes");
            assert!(
                depth(declaration) < 128,
                "{vendor} {name}: nested {} deep",
                depth(declaration)
            );
        }
    }
    assert_eq!(PANICS.with(Cell::get), 0, "nothing may panic, even caught");
}
