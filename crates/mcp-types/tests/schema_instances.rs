//! Every definition of every revision: an instance synthesized from the schema itself
//! (every optional member present, one instance per branch of a top-level union)
//! deserializes into the type that covers it and serializes back Value-equal.
//!
//! Where the example and golden tests cover the messages people send, this covers the
//! schema's corners nobody wrote an example for, in all five revisions.

use std::path::Path;

use serde_json::{Map, Value, json};

mod common;
use common::by_name;

/// Definitions with no generated type of their own, each for a stated reason.
const NOT_GENERATED: &[&str] = &[
    // Hand-written helpers.
    "RequestId",
    "ProgressToken",
    "ResultType",
    "MetaObject",
    "JSONValue",
    "JSONObject",
    "JSONArray",
    // The abstract shapes every message refines; the names belong to the method traits.
    "Request",
    "Notification",
    // 2024-11-05's mixin for annotated content; its members live in each content type.
    "Annotated",
    // 2025-03-26's batches: the engine reads batches as arrays of messages.
    "JSONRPCBatchRequest",
    "JSONRPCBatchResponse",
];

fn schema(revision: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(revision)
        .join("schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

struct Synth<'a> {
    defs: &'a Map<String, Value>,
}

impl Synth<'_> {
    fn value(&self, schema: &Value, branch: usize, depth: usize) -> Value {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap();
            return match name {
                "JSONValue" => json!("v"),
                "JSONObject" => json!({ "k": ["v", 1, true] }),
                "JSONArray" => json!(["v"]),
                _ => {
                    let mut value = self.value(&self.defs[name], branch, depth + 1);
                    // `resultType` is any string in the schema; what tells the kinds of
                    // result apart is its value, so give it the one its type stands for.
                    if let Some(rt) = value.get_mut("resultType") {
                        let kind = if name == "InputRequiredResult" {
                            "input_required"
                        } else {
                            "complete"
                        };
                        *rt = json!(kind);
                    }
                    value
                }
            };
        }
        if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
            let mut object = Map::new();
            for part in parts {
                if let Value::Object(m) = self.value(part, 0, depth + 1) {
                    object.extend(m);
                }
            }
            return Value::Object(object);
        }
        if let Some(variants) = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
        {
            return self.value(&variants[branch % variants.len()], 0, depth + 1);
        }
        if let Some(c) = schema.get("const") {
            return c.clone();
        }
        if let Some(e) = schema.get("enum").and_then(Value::as_array) {
            return e[0].clone();
        }
        let ty = match schema.get("type") {
            Some(Value::String(t)) => t.as_str(),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null")
                .unwrap_or("null"),
            _ => return json!({ "any": "json" }),
        };
        match ty {
            "string" => match schema.get("format").and_then(Value::as_str) {
                Some("uri") => json!("https://example.com/r"),
                Some("byte") => json!("AAAA"),
                Some("date-time") => json!("2026-01-01T00:00:00Z"),
                Some("email") => json!("a@example.com"),
                Some("uri-template") => json!("file:///{path}"),
                _ => json!("text"),
            },
            "integer" => json!(
                schema
                    .get("minimum")
                    .and_then(Value::as_i64)
                    .unwrap_or(1)
                    .max(1)
            ),
            "number" => json!(0.5),
            "boolean" => json!(true),
            "null" => Value::Null,
            "array" => match schema.get("items") {
                Some(items) if depth < 64 => json!([self.value(items, branch, depth + 1)]),
                _ => json!([]),
            },
            "object" => {
                let mut object = Map::new();
                if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                    if depth < 64 {
                        for (k, v) in props {
                            object.insert(k.clone(), self.value(v, 0, depth + 1));
                        }
                    }
                } else if let Some(addl @ Value::Object(m)) = schema.get("additionalProperties")
                    && !m.is_empty()
                    && depth < 64
                {
                    object.insert("key".into(), self.value(addl, branch, depth + 1));
                }
                Value::Object(object)
            }
            other => panic!("unexpected type {other}"),
        }
    }
}

fn branches(schema: &Value) -> usize {
    schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
        .map_or(1, Vec::len)
}

fn check_revision(revision: &str, legacy: bool) {
    let root = schema(revision);
    let defs = root
        .get("$defs")
        .or_else(|| root.get("definitions"))
        .unwrap()
        .as_object()
        .unwrap();
    let synth = Synth { defs };
    let mut failures = Vec::new();
    let mut checked = 0;
    for (name, def) in defs {
        if NOT_GENERATED.contains(&name.as_str()) {
            continue;
        }
        let covering = match name.as_str() {
            "JSONRPCError" => "JSONRPCErrorResponse",
            "ResourceReference" => "ResourceTemplateReference",
            other => other,
        };
        for branch in 0..branches(def) {
            let mut instance = synth.value(def, branch, 0);
            // The older schemas define requests and notifications as `{method, params}`; on
            // the wire they travel inside a JSON-RPC envelope.
            let bare_message = revision != "2026-07-28"
                && instance.get("method").is_some()
                && instance.get("jsonrpc").is_none();
            if bare_message && let Value::Object(m) = &mut instance {
                m.insert("jsonrpc".into(), json!("2.0"));
                if !name.ends_with("Notification") {
                    m.insert("id".into(), json!(1));
                }
            }
            // 2025-03-26's batches are arrays of messages; the engine reads those.
            if instance.is_array() && name == "JSONRPCMessage" {
                continue;
            }
            let result = if legacy {
                by_name::legacy(covering, &instance)
                    .or_else(|| by_name::modern(covering, &instance))
            } else {
                by_name::modern(covering, &instance)
            };
            checked += 1;
            match result {
                None => failures.push(format!("{name}: no generated type")),
                Some(Err(e)) => {
                    failures.push(format!("{name}[{branch}]: {e}\n  instance: {instance}"));
                }
                Some(Ok(back)) if back != instance => failures.push(format!(
                    "{name}[{branch}]: round trip differs\n  in:  {instance}\n  out: {back}"
                )),
                Some(Ok(_)) => {}
            }
        }
    }
    assert!(checked > 50, "{revision}: only {checked} instances");
    assert!(
        failures.is_empty(),
        "{revision}: {} of {checked} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn revision_2026_07_28() {
    check_revision("2026-07-28", false);
}

#[test]
fn revision_2025_11_25() {
    check_revision("2025-11-25", true);
}

#[test]
fn revision_2025_06_18() {
    check_revision("2025-06-18", true);
}

#[test]
fn revision_2025_03_26() {
    check_revision("2025-03-26", true);
}

#[test]
fn revision_2024_11_05() {
    check_revision("2024-11-05", true);
}
