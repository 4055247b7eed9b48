//! `x-mcp-header`: which tool arguments a Streamable HTTP client mirrors into
//! `Mcp-Param-*` headers, and the rules that make an annotation valid.

use serde_json::Value;

use crate::JsonObject;

/// A mirrored argument: `Mcp-Param-{header}` carries the argument at `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpParamHeader {
    /// The name part of the header (`Region` for `Mcp-Param-Region`).
    pub header: String,
    /// The chain of `properties` keys leading to the argument.
    pub path: Vec<String>,
}

/// Finds and checks the `x-mcp-header` annotations of a tool's input schema
/// (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>, Schema Extension): each must
/// be a non-empty HTTP token, unique case-insensitively, on a string, integer or boolean
/// property reachable from the root through `properties` keys alone. An `Err` names the
/// first rule broken; servers refuse such a tool and clients drop it.
///
/// ```
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "Region"}}});
/// let headers = mcp_types::mcp_param_headers(schema.as_object().unwrap()).unwrap();
/// assert_eq!((headers[0].header.as_str(), headers[0].path.clone()), ("Region", vec!["region".to_owned()]));
/// ```
pub fn mcp_param_headers(schema: &JsonObject) -> Result<Vec<McpParamHeader>, String> {
    let mut found = Vec::new();
    walk_properties(schema, &mut Vec::new(), &mut found)?;
    // Annotations anywhere else (under items, anyOf, $ref, ...) make the tool invalid.
    let total = count_in_object(schema);
    if total != found.len() {
        return Err(
            "an x-mcp-header annotation is not reachable through `properties` alone".to_owned(),
        );
    }
    let mut seen: Vec<String> = Vec::new();
    for header in &found {
        let lower = header.header.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!("x-mcp-header {:?} is not unique", header.header));
        }
        seen.push(lower);
    }
    Ok(found)
}

fn walk_properties(
    schema: &JsonObject,
    path: &mut Vec<String>,
    found: &mut Vec<McpParamHeader>,
) -> Result<(), String> {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Ok(());
    };
    for (key, property) in properties {
        let Value::Object(property) = property else {
            continue;
        };
        path.push(key.clone());
        if let Some(header) = property.get("x-mcp-header") {
            let Some(header) = header.as_str() else {
                return Err(format!("x-mcp-header on {key:?} must be a string"));
            };
            let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
            if header.is_empty() || !header.bytes().all(tchar) {
                return Err(format!("x-mcp-header {header:?} is not an HTTP token"));
            }
            match property.get("type").and_then(Value::as_str) {
                Some("string" | "integer" | "boolean") => {}
                _ => {
                    return Err(format!(
                        "x-mcp-header {header:?} is on a property that is not a string, integer or boolean"
                    ));
                }
            }
            found.push(McpParamHeader {
                header: header.to_owned(),
                path: path.clone(),
            });
        }
        walk_properties(property, path, found)?;
        path.pop();
    }
    Ok(())
}

fn count_annotations(value: &Value) -> usize {
    match value {
        Value::Object(map) => count_in_object(map),
        Value::Array(items) => items.iter().map(count_annotations).sum(),
        _ => 0,
    }
}

fn count_in_object(map: &JsonObject) -> usize {
    usize::from(map.contains_key("x-mcp-header"))
        + map.values().map(count_annotations).sum::<usize>()
}
