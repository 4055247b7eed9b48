//! docs/CONFIG.md and docs/mcp-config.schema.json agree with the parser: every ```json
//! block of the document is valid against the schema and parses with `HostConfig`, and
//! configurations the parser refuses are refused by the schema too.

use mcp_host::HostConfig;
use serde_json::{Value, json};

const DOC: &str = include_str!("../../../docs/CONFIG.md");
const SCHEMA: &str = include_str!("../../../docs/mcp-config.schema.json");

/// The schema, itself checked against the 2020-12 meta-schema.
fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    jsonschema::meta::validate(&schema).expect("the schema is a valid 2020-12 schema");
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}

/// The text of every ```json block of `markdown`.
fn json_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None if line.trim_start().starts_with("```json") => current = Some(String::new()),
            None => {}
            Some(_) if line.trim_start().starts_with("```") => {
                blocks.extend(current.take());
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    assert!(current.is_none(), "an unclosed ```json block");
    blocks
}

/// Every variable is set, to a value of its own name (the parser takes an
/// `Fn(&str) -> Option<String>`, `None` being unset).
#[allow(clippy::unnecessary_wraps)]
fn env(name: &str) -> Option<String> {
    Some(format!("value-of-{name}"))
}

#[test]
fn every_json_example_of_the_document_is_valid_and_parses() {
    let validator = validator();
    let blocks = json_blocks(DOC);
    assert!(blocks.len() >= 7, "only {} ```json blocks", blocks.len());
    for block in &blocks {
        let value: Value =
            serde_json::from_str(block).unwrap_or_else(|e| panic!("not JSON ({e}):\n{block}"));
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:?} in\n{block}");
        let config = HostConfig::from_json_with_env(block, &env)
            .unwrap_or_else(|e| panic!("{e} in\n{block}"));
        assert!(!config.servers.is_empty(), "no server in\n{block}");
    }
}

#[test]
fn the_schema_and_the_parser_refuse_the_same_mistakes() {
    let validator = validator();
    for bad in [
        json!({"mcpServers": {"a": {"type": "websocket", "url": "ws://x"}}}),
        json!({"mcpServers": {"a": {"type": "stdio", "url": "http://x"}}}),
        json!({"mcpServers": {"a": {"type": "sse", "command": "x"}}}),
        json!({"mcpServers": {"a": {"command": "x", "url": "http://x"}}}),
        json!({"mcpServers": {"a": {"command": "x", "headers": {"A": "b"}}}}),
        json!({"mcpServers": {"a": {"url": "http://x", "args": ["y"]}}}),
        json!({"mcpServers": {"a": {}}}),
        json!({"mcpServers": {"a": {"command": ""}}}),
        json!({"mcpServers": {"a": {"command": "x", "args": [1]}}}),
        json!({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}),
        json!({"mcpServers": {"a": {"command": "x", "timeout": "30s"}}}),
        json!({"mcpServers": {"a": {"command": "x", "timeout": 0}}}),
        json!({"mcpServers": {"a": {"command": "x", "timeout": 86_400_001}}}),
        json!({"mcpServers": {"a": {"command": "x", "protocolVersions": []}}}),
        json!({"mcpServers": {"a": {"command": "x", "protocolVersions": ["2024-01-01"]}}}),
        json!({"mcpServers": {"a": {"command": "x", "allow": [""]}}}),
        json!({"mcpServers": {"a": {"command": "x", "deny": "y"}}}),
        json!({"mcpServers": {"a": {"command": "x", "disabled": "no"}}}),
        json!({"mcpServers": {"a": {"command": "x", "rename": ["t"]}}}),
        json!({"mcpServers": {"a": {"command": "x", "rename": {"t": "a b"}}}}),
        json!({"mcpServers": {"a": {"command": "x", "rename": {"t": ""}}}}),
        json!({"mcpServers": {"a": {"command": "x", "rename": {"": "b"}}}}),
        json!({"mcpServers": {"a": {"command": "x", "approval": ["rm"]}}}),
        json!({"mcpServers": {"a": {"command": "x", "approval": {"tools": [""]}}}}),
        json!({"mcpServers": {"a": {"command": "x", "approval": {"destructive": 1}}}}),
        json!({"mcpServers": {"a": {"command": "x", "approval": {"all": true}}}}),
        json!({"mcpServers": {"a": {"command": "x", "oauth": {"grant": "stored"}}}}),
        json!({"mcpServers": {"a": {"url": "http://x", "oauth": "stored"}}}),
        json!({"mcpServers": {"a": {"url": "http://x", "oauth": {}}}}),
        json!({"mcpServers": {"a": {"url": "http://x", "oauth": {"grant": "password"}}}}),
        json!({"mcpServers": {"a": {"url": "http://x",
            "oauth": {"grant": "client_credentials", "clientId": "a"}}}}),
        json!({"mcpServers": {"a": {"url": "http://x",
            "oauth": {"grant": "stored", "clientId": "a"}}}}),
        json!({"mcpServers": {"a": {"url": "http://x",
            "oauth": {"grant": "stored", "allowPrivate": "yes"}}}}),
        json!({"mcpServers": {"a": {"command": "x"}}, "servers": {}}),
        json!({"mcpServers": []}),
        json!({"naming": [], "mcpServers": {}}),
        json!({"naming": {"prefix": ""}, "mcpServers": {}}),
        json!({"naming": {"prefix": "9x"}, "mcpServers": {}}),
        json!({"naming": {"separator": "::"}, "mcpServers": {}}),
        json!({"naming": {"includeServer": "yes"}, "mcpServers": {}}),
        json!({"naming": {"maxLength": 65}, "mcpServers": {}}),
        json!({"naming": {"maxLength": 17}, "mcpServers": {}}),
        json!({"naming": {"case": "snake"}, "mcpServers": {}}),
        json!({"tools": {}}),
        json!([]),
    ] {
        assert!(!validator.is_valid(&bad), "the schema accepts {bad}");
        assert!(
            HostConfig::from_json_with_env(&bad.to_string(), &env).is_err(),
            "the parser accepts {bad}"
        );
    }
    // What both accept: a disabled entry is not checked, unknown members are ignored.
    for good in [
        json!({"mcpServers": {"a": {"disabled": true, "type": "websocket"}}}),
        json!({"servers": {"a": {"command": "x", "envFile": ".env"}}, "inputs": []}),
        json!({"mcpServers": {"a": {"type": "streamableHttp", "url": "http://x/mcp"}}}),
        json!({"naming": {"prefix": "mcp", "separator": "_", "includeServer": false,
                          "maxLength": 18}, "servers": {}}),
    ] {
        assert!(validator.is_valid(&good), "the schema refuses {good}");
        assert!(
            HostConfig::from_json_with_env(&good.to_string(), &env).is_ok(),
            "the parser refuses {good}"
        );
    }
}
