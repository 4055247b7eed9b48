//! Golden tests: the declarations of every vendor for a set of real-world tool schemas
//! (`golden/tools.json`) are pinned in `golden/<vendor>.json`, and every vendor's
//! rendering of a set of tool results (`golden/results.json`: images, structured content,
//! audio, embedded resources, errors) in `golden/results-<vendor>.json`. Regenerate them
//! with `UPDATE_GOLDEN=1 cargo test -p mcp-host --test golden` and review the diff.

use std::path::PathBuf;

use mcp_host::{Catalog, ToolOutcome, Vendor};
use mcp_types::{CallToolResult, Tool};
use serde_json::{Value, json};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn servers() -> Vec<(String, Vec<Tool>)> {
    let text = std::fs::read_to_string(golden_dir().join("tools.json")).unwrap();
    let input: Value = serde_json::from_str(&text).unwrap();
    input["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let name = s["name"].as_str().unwrap().to_owned();
            let tools = serde_json::from_value(s["tools"].clone()).unwrap();
            (name, tools)
        })
        .collect()
}

/// Compares `actual` with the golden file `name`, or rewrites it under `UPDATE_GOLDEN=1`.
fn check(name: &str, actual: &Value) {
    let path = golden_dir().join(name);
    let text = serde_json::to_string_pretty(actual).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} is missing; run with UPDATE_GOLDEN=1", path.display()));
    assert!(
        expected == text,
        "{name} differs from the golden file; run with UPDATE_GOLDEN=1 and review the diff.\n--- actual:\n{text}"
    );
}

#[test]
fn declarations_match_the_golden_files() {
    let servers = servers();
    let catalog = Catalog::new(servers.iter().map(|(n, t)| (n.as_str(), t.as_slice())));
    for vendor in Vendor::ALL {
        check(
            &format!("{vendor}.json"),
            &Value::Array(catalog.declarations(vendor)),
        );
    }
    // The name mapping, both ways, is pinned too.
    let names: Vec<Value> = catalog
        .entries()
        .iter()
        .map(|e| json!([e.name, e.server, e.tool.name]))
        .collect();
    check("names.json", &Value::Array(names));
    for entry in catalog.entries() {
        let back = catalog.resolve(&entry.name).unwrap();
        assert_eq!(
            (&back.server, &back.tool.name),
            (&entry.server, &entry.tool.name)
        );
        assert!(entry.name.len() <= 64, "{}", entry.name);
    }
}

/// Every case of `golden/results.json` as an outcome: the call's id and name, the result
/// as MCP sends it, and the media limit when the case sets one.
fn outcomes() -> Vec<(String, ToolOutcome)> {
    let text = std::fs::read_to_string(golden_dir().join("results.json")).unwrap();
    let input: Value = serde_json::from_str(&text).unwrap();
    input["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let result: CallToolResult = serde_json::from_value(case["result"].clone()).unwrap();
            let mut outcome = ToolOutcome::new(
                case["id"].as_str().unwrap(),
                case["name"].as_str().unwrap(),
                result,
            );
            if let Some(max) = case["max_media_len"].as_u64() {
                outcome = outcome.with_max_media_len(usize::try_from(max).unwrap());
            }
            (case["case"].as_str().unwrap().to_owned(), outcome)
        })
        .collect()
}

#[test]
fn results_match_the_golden_files() {
    let outcomes = outcomes();
    for vendor in Vendor::ALL {
        let rendered: Vec<Value> = outcomes
            .iter()
            .map(|(case, outcome)| {
                // For OpenAI Chat the answer to a call is the tool message and, when the
                // result has media, the user message after it.
                let rendered = match vendor {
                    Vendor::OpenAiChat => Value::Array(ToolOutcome::openai_chat_messages(
                        std::slice::from_ref(outcome),
                    )),
                    _ => outcome.to_vendor(vendor),
                };
                json!({"case": case, "rendered": rendered})
            })
            .collect();
        check(&format!("results-{vendor}.json"), &Value::Array(rendered));
    }
}

/// A schema `depth` levels deep: `{"type":"object","properties":{"x": ...}}`.
fn nested(depth: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..depth {
        schema = json!({"type": "object", "properties": {"x": schema}, "required": ["x"]});
    }
    schema
}

#[test]
fn hostile_schemas_are_bounded() {
    let mut defs = serde_json::Map::new();
    // A chain of definitions, each referring to the next twice: inlined naively it
    // doubles at every level.
    for i in 0..40 {
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {
                "l": {"$ref": format!("#/$defs/d{}", i + 1)},
                "r": {"$ref": format!("#/$defs/d{}", i + 1)}
            }}),
        );
    }
    let huge_enum: Vec<Value> = (0..100_000).map(|i| json!(format!("v{i}"))).collect();
    let schemas = [
        // As deep as JSON from the wire can be (serde_json stops at 128 levels).
        nested(63),
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
               "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}}),
        json!({"type": "object", "properties": {"me": {"$ref": "#"}, "far": {"$ref": "https://x/y"}, "nowhere": {"$ref": "#/$defs/none"}}}),
        json!({"type": "object", "properties": {"d": {"$ref": "#/$defs/d0"}}, "$defs": defs}),
        json!({"type": "object", "properties": {"e": {"type": "string", "enum": huge_enum}}}),
        json!({"type": "object", "properties": {"odd": {"type": 7, "enum": "x", "anyOf": {}, "items": [], "properties": []}, "t": true, "f": false}}),
    ];
    for (i, schema) in schemas.iter().enumerate() {
        let tool = Tool::from_schema(format!("t{i}"), schema.as_object().unwrap().clone()).unwrap();
        let tools = vec![tool];
        let catalog = Catalog::new([("hostile", tools.as_slice())]);
        for vendor in Vendor::ALL {
            let declarations = catalog.declarations(vendor);
            let size = serde_json::to_string(&declarations).unwrap().len();
            assert!(size < 2_000_000, "schema {i} for {vendor}: {size} bytes");
        }
        // Nothing this hostile is strict.
        let responses = catalog.declarations(Vendor::OpenAiResponses);
        if i != 1 && i != 2 {
            assert_eq!(responses[0]["strict"], false, "schema {i}");
        }
    }
}
