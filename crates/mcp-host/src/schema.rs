//! Lowering a tool's input schema (JSON Schema 2020-12, <https://modelcontextprotocol.io/specification/2026-07-28/server/tools>)
//! to what each vendor accepts.
//!
//! Three lowerings, all bounded (depth, `$ref` expansion, enum size, description length,
//! total size), none of which can panic on a hostile schema:
//!
//! - [`bounded`]: the schema as the server wrote it, for OpenAI Chat Completions, OpenAI
//!   Responses in plain mode and Anthropic, which take JSON Schema. Only the bounds apply.
//! - [`strict`]: OpenAI's strict mode (Structured Outputs): every object closed with
//!   `additionalProperties: false`, every property required, optional ones made nullable.
//!   `None` when the schema cannot be expressed that way.
//! - [`gemini`]: the OpenAPI 3.0 subset of Gemini function declarations: no type arrays
//!   (`nullable` instead), `$ref` inlined, `const` as a one-value `enum`, `oneOf` as
//!   `anyOf`, unsupported keywords dropped.

use serde_json::{Map, Value, json};

/// Limits every lowering applies to the untrusted schemas servers send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaLimits {
    /// The deepest schema nesting kept (default 32); deeper subschemas become `{}`.
    pub max_depth: usize,
    /// How many `$ref`s may be expanded inside one another when inlining (default 8);
    /// a deeper or cyclic reference becomes `{"type": "object"}`.
    pub max_ref_depth: usize,
    /// The most subschemas one lowered schema may hold (default 10 000); past it the
    /// rest become `{}`.
    pub max_nodes: usize,
    /// The largest `enum` kept (default 1000, OpenAI's strict-mode limit); a larger one
    /// is dropped (and makes strict mode impossible).
    pub max_enum: usize,
    /// The longest description, in characters (default 1024); longer ones are cut.
    pub max_description: usize,
}

impl Default for SchemaLimits {
    fn default() -> Self {
        SchemaLimits {
            max_depth: 32,
            max_ref_depth: 8,
            max_nodes: 10_000,
            max_enum: 1000,
            max_description: 1024,
        }
    }
}

/// Keywords whose value is one subschema.
const ONE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// Keywords whose value is an array of subschemas.
const MANY: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Cuts `text` to `max` characters, marking the cut with `…`.
pub(crate) fn cap_text(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((end, _)) => {
            let keep = text[..end].char_indices().last().map_or(0, |(i, _)| i);
            format!("{}…", &text[..keep])
        }
    }
}

/// Counts the subschemas a lowering produced, to stop at [`SchemaLimits::max_nodes`].
struct Budget(usize);

impl Budget {
    fn take(&mut self) -> bool {
        if self.0 == 0 {
            false
        } else {
            self.0 -= 1;
            true
        }
    }
}

/// The schema as given, within `limits`.
pub fn bounded(schema: &Value, limits: &SchemaLimits) -> Value {
    let mut budget = Budget(limits.max_nodes);
    bound_node(schema, 0, limits, &mut budget)
}

fn bound_node(schema: &Value, depth: usize, limits: &SchemaLimits, budget: &mut Budget) -> Value {
    let Value::Object(map) = schema else {
        // `true` and `false` are schemas too.
        return if schema.is_boolean() {
            schema.clone()
        } else {
            json!({})
        };
    };
    if depth > limits.max_depth || !budget.take() {
        return json!({});
    }
    let mut out = Map::new();
    for (key, value) in map {
        let key_str = key.as_str();
        let lowered = if ONE.contains(&key_str) {
            bound_node(value, depth + 1, limits, budget)
        } else if MANY.contains(&key_str) {
            match value {
                Value::Array(items) => Value::Array(
                    items
                        .iter()
                        .map(|s| bound_node(s, depth + 1, limits, budget))
                        .collect(),
                ),
                other => other.clone(),
            }
        } else if MAP.contains(&key_str) {
            match value {
                Value::Object(entries) => Value::Object(
                    entries
                        .iter()
                        .map(|(k, s)| (k.clone(), bound_node(s, depth + 1, limits, budget)))
                        .collect(),
                ),
                other => other.clone(),
            }
        } else if key_str == "description" || key_str == "title" {
            match value {
                Value::String(text) => Value::String(cap_text(text, limits.max_description)),
                _ => continue,
            }
        } else if key_str == "enum" {
            match value {
                Value::Array(values) if values.len() > limits.max_enum => continue,
                other => other.clone(),
            }
        } else {
            value.clone()
        };
        out.insert(key.clone(), lowered);
    }
    Value::Object(out)
}

/// The string formats OpenAI's strict mode accepts.
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords that strict mode cannot express: their presence means plain mode.
const STRICT_REFUSED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "prefixItems",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
];

/// Keywords strict mode keeps as they are.
const STRICT_KEPT: &[&str] = &[
    "type",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "const",
];

/// Strict-mode state: the limits and how many properties were seen (OpenAI allows 5000).
struct Strict<'a> {
    root: &'a Value,
    limits: &'a SchemaLimits,
    properties: usize,
    /// How many objects enclose the node being lowered (OpenAI allows 10 levels).
    objects: usize,
    budget: Budget,
}

/// The schema in OpenAI's strict form, or `None` if it cannot be lowered to it.
///
/// Strict mode needs every object closed and every property required; a property the
/// schema leaves optional becomes required and nullable (`"type": ["string", "null"]`, or
/// an `anyOf` with `{"type": "null"}`), so the model sends `null` for "absent". Dropped as
/// annotations or left to the server to enforce: `title`, `default`, `examples`,
/// `minLength`, `maxLength`, `uniqueItems` and formats strict mode does not know. `oneOf`
/// becomes `anyOf`. Refused: `allOf`, `not`, conditionals, open objects
/// (`additionalProperties` other than `false`, or an object without `properties` below the
/// root), a union at the root, tuples, remote or dangling `$ref`s, untyped subschemas,
/// enums over the limit, more than 5000 properties, more than 10 levels of objects and
/// nesting deeper than the limits. Keywords beside a `$ref` are dropped.
pub fn strict(schema: &Value, limits: &SchemaLimits) -> Option<Value> {
    let mut state = Strict {
        root: schema,
        limits,
        properties: 0,
        objects: 0,
        budget: Budget(limits.max_nodes),
    };
    let mut root = state.node(schema, 0, true)?;
    // Definitions are lowered where they are; `$ref`s keep pointing at them.
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = schema.get(key) {
            let mut lowered = Map::new();
            for (name, def) in defs {
                lowered.insert(name.clone(), state.node(def, 1, false)?);
            }
            root.as_object_mut()?
                .insert(key.to_owned(), Value::Object(lowered));
        }
    }
    (state.properties <= 5000).then_some(root)
}

impl Strict<'_> {
    fn node(&mut self, schema: &Value, depth: usize, root: bool) -> Option<Value> {
        let map = schema.as_object()?;
        if depth > self.limits.max_depth.min(24) || !self.budget.take() {
            return None;
        }
        if STRICT_REFUSED.iter().any(|k| map.contains_key(*k)) {
            return None;
        }
        // The root of a strict schema is an object, never a union.
        if root && (map.contains_key("anyOf") || map.contains_key("oneOf")) {
            return None;
        }
        let is_object = map.get("type").and_then(Value::as_str) == Some("object")
            || map.contains_key("properties");
        if is_object {
            self.objects += 1;
            if self.objects > 10 {
                return None;
            }
        }
        let lowered = self.lower(map, depth, root, is_object);
        if is_object {
            self.objects -= 1;
        }
        lowered
    }

    fn lower(
        &mut self,
        map: &Map<String, Value>,
        depth: usize,
        root: bool,
        is_object: bool,
    ) -> Option<Value> {
        let mut out = Map::new();
        if let Some(reference) = map.get("$ref") {
            let reference = reference.as_str()?;
            let local = reference == "#"
                || ((reference.starts_with("#/$defs/") || reference.starts_with("#/definitions/"))
                    && self.root.pointer(&reference[1..]).is_some());
            if !local {
                return None;
            }
            // Alone: strict mode's examples never put keywords beside a `$ref`.
            out.insert("$ref".to_owned(), Value::String(reference.to_owned()));
            return Some(Value::Object(out));
        }
        for (key, value) in map {
            match key.as_str() {
                k if STRICT_KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                "description" => {
                    out.insert(
                        key.clone(),
                        Value::String(cap_text(value.as_str()?, self.limits.max_description)),
                    );
                }
                "format" if value.as_str().is_some_and(|f| STRICT_FORMATS.contains(&f)) => {
                    out.insert(key.clone(), value.clone());
                }
                "enum" => {
                    let values = value.as_array()?;
                    if values.is_empty() || values.len() > self.limits.max_enum {
                        return None;
                    }
                    out.insert(key.clone(), value.clone());
                }
                "anyOf" | "oneOf" => {
                    let branches = value
                        .as_array()?
                        .iter()
                        .map(|b| self.node(b, depth + 1, false))
                        .collect::<Option<Vec<_>>>()?;
                    if branches.is_empty() {
                        return None;
                    }
                    out.insert("anyOf".to_owned(), Value::Array(branches));
                }
                "items" => {
                    out.insert(key.clone(), self.node(value, depth + 1, false)?);
                }
                "additionalProperties" if value != &Value::Bool(false) => return None,
                "properties" => {
                    let properties = value.as_object()?;
                    let required: Vec<&str> = map
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let mut lowered = Map::new();
                    for (name, property) in properties {
                        self.properties += 1;
                        let mut property = self.node(property, depth + 1, false)?;
                        if !required.contains(&name.as_str()) {
                            property = nullable(property);
                        }
                        lowered.insert(name.clone(), property);
                    }
                    out.insert(key.clone(), Value::Object(lowered));
                }
                // Annotations and constraints strict mode drops; the server still checks
                // what it declared. `required` is rewritten below, definitions by the caller.
                _ => {}
            }
        }
        if is_object {
            if !out.contains_key("properties") {
                if !root {
                    // A free-form object: strict mode has no way to say "any keys".
                    return None;
                }
                out.insert("properties".to_owned(), json!({}));
            }
            let names: Vec<Value> = out
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(|k| Value::String(k.clone())).collect())
                .unwrap_or_default();
            out.insert("required".to_owned(), Value::Array(names));
            out.insert("additionalProperties".to_owned(), Value::Bool(false));
            if !out.contains_key("type") {
                out.insert("type".to_owned(), json!("object"));
            }
        }
        // Every strict subschema says what it is.
        let typed = ["type", "anyOf", "enum", "const"]
            .iter()
            .any(|k| out.contains_key(*k));
        typed.then_some(Value::Object(out))
    }
}

/// `schema`, also accepting `null`.
fn nullable(mut schema: Value) -> Value {
    let Some(map) = schema.as_object_mut() else {
        return schema;
    };
    let null = json!("null");
    let simple = !map.contains_key("const") && !map.contains_key("anyOf");
    match map.get_mut("type") {
        Some(Value::String(t)) if simple => {
            let t = std::mem::take(t);
            map.insert("type".to_owned(), json!([t, "null"]));
        }
        Some(Value::Array(types)) if simple => {
            if !types.contains(&null) {
                types.push(null.clone());
            }
        }
        _ => {
            let only_any_of = map.len() == 1;
            if let Some(Value::Array(branches)) = map.get_mut("anyOf")
                && only_any_of
            {
                branches.push(json!({"type": "null"}));
                return schema;
            }
            return json!({"anyOf": [schema, {"type": "null"}]});
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    schema
}

/// The formats Gemini accepts, by type.
fn gemini_format(ty: Option<&str>, format: &str) -> bool {
    matches!(
        (ty, format),
        (Some("string"), "enum" | "date-time")
            | (Some("integer"), "int32" | "int64")
            | (Some("number"), "float" | "double")
    )
}

/// Keywords of the OpenAPI subset Gemini keeps as they are (after lowering).
const GEMINI_KEPT: &[&str] = &[
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
];

/// Gemini lowering state: the root (for `$ref`s), the references being expanded.
struct Gemini<'a> {
    root: &'a Value,
    limits: &'a SchemaLimits,
    refs: Vec<String>,
    budget: Budget,
}

/// The schema lowered to Gemini's OpenAPI subset; `None` for a schema with no properties
/// (a declaration without `parameters`).
///
/// `$ref`s are inlined (a cyclic or too deep one becomes `{"type": "object"}`), a type
/// array becomes one type with `nullable: true` (or an `anyOf` of types), `const` becomes a
/// one-value `enum`, `oneOf` becomes `anyOf`, an `allOf` of objects is merged, non-string
/// enums and unsupported keywords (`additionalProperties`, `$schema`, `default`,
/// `examples`, formats Gemini lacks, …) are dropped.
pub fn gemini(schema: &Value, limits: &SchemaLimits) -> Option<Value> {
    let mut state = Gemini {
        root: schema,
        limits,
        refs: Vec::new(),
        budget: Budget(limits.max_nodes),
    };
    let lowered = state.node(schema, 0);
    let has_properties = lowered
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    has_properties.then_some(lowered)
}

impl<'a> Gemini<'a> {
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        if reference == "#" {
            return Some(self.root);
        }
        let pointer = reference.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    fn node(&mut self, schema: &Value, depth: usize) -> Value {
        let Some(map) = schema.as_object() else {
            return json!({});
        };
        if depth > self.limits.max_depth || !self.budget.take() {
            return json!({});
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let target = self.resolve(reference);
            let too_deep = self.refs.iter().any(|r| r == reference)
                || self.refs.len() >= self.limits.max_ref_depth;
            let mut lowered = match target {
                Some(target) if !too_deep => {
                    self.refs.push(reference.to_owned());
                    let lowered = self.node(target, depth + 1);
                    self.refs.pop();
                    lowered
                }
                _ => json!({"type": "object"}),
            };
            // Siblings of `$ref` (a description, usually) win over the target's.
            if let (Some(out), Some(Value::String(text))) =
                (lowered.as_object_mut(), map.get("description"))
            {
                out.insert(
                    "description".to_owned(),
                    Value::String(cap_text(text, self.limits.max_description)),
                );
            }
            return lowered;
        }
        if let Some(Value::Array(parts)) = map.get("allOf") {
            return self.all_of(map, parts, depth);
        }
        let mut out = Map::new();
        let mut nullable = false;
        let mut ty: Option<String> = None;
        match map.get("type") {
            Some(Value::String(t)) if t == "null" => nullable = true,
            Some(Value::String(t)) => ty = Some(t.clone()),
            Some(Value::Array(types)) => {
                let mut rest: Vec<&str> = Vec::new();
                for t in types.iter().filter_map(Value::as_str) {
                    if t == "null" {
                        nullable = true;
                    } else if !rest.contains(&t) {
                        rest.push(t);
                    }
                }
                match rest.as_slice() {
                    [] => {}
                    [one] => ty = Some((*one).to_owned()),
                    many => {
                        let branches = many.iter().map(|t| json!({"type": t})).collect();
                        out.insert("anyOf".to_owned(), Value::Array(branches));
                    }
                }
            }
            _ => {}
        }
        let branches = map
            .get("anyOf")
            .or_else(|| map.get("oneOf"))
            .and_then(Value::as_array);
        if let Some(branches) = branches {
            let mut lowered = Vec::new();
            for branch in branches {
                if branch.get("type").and_then(Value::as_str) == Some("null") {
                    nullable = true;
                } else {
                    lowered.push(self.node(branch, depth + 1));
                }
            }
            match lowered.len() {
                0 => {}
                1 => {
                    if let Some(Value::Object(only)) = lowered.pop() {
                        for (k, v) in only {
                            out.entry(k).or_insert(v);
                        }
                    }
                }
                _ => {
                    out.insert("anyOf".to_owned(), Value::Array(lowered));
                }
            }
        }
        let values = match (map.get("const"), map.get("enum")) {
            (Some(value), _) => Some(vec![value.clone()]),
            (None, Some(Value::Array(values))) => Some(values.clone()),
            _ => None,
        };
        // Gemini enums are strings only; `null` among the values means nullable.
        let mut kept_enum = None;
        if let Some(mut values) = values {
            if values.contains(&Value::Null) {
                nullable = true;
                values.retain(|v| !v.is_null());
            }
            let strings = values.iter().all(Value::is_string) && !values.is_empty();
            if strings && values.len() <= self.limits.max_enum {
                if ty.is_none() {
                    ty = Some("string".to_owned());
                }
                if ty.as_deref() == Some("string") {
                    kept_enum = Some(values);
                }
            }
        }
        if let Some(t) = &ty {
            out.insert("type".to_owned(), Value::String(t.clone()));
        }
        if let Some(values) = kept_enum {
            out.insert("enum".to_owned(), Value::Array(values));
        }
        if nullable {
            out.insert("nullable".to_owned(), Value::Bool(true));
        }
        for (key, value) in map {
            match key.as_str() {
                "description" | "title" => {
                    if let Value::String(text) = value {
                        out.insert(
                            key.clone(),
                            Value::String(cap_text(text, self.limits.max_description)),
                        );
                    }
                }
                "format"
                    if value
                        .as_str()
                        .is_some_and(|f| gemini_format(ty.as_deref(), f)) =>
                {
                    out.insert(key.clone(), value.clone());
                }
                k if GEMINI_KEPT.contains(&k) && (value.is_number() || value.is_string()) => {
                    out.insert(key.clone(), value.clone());
                }
                "items" => {
                    let items = match value {
                        // A tuple: Gemini has none, so the first position stands for all.
                        Value::Array(tuple) => tuple.first(),
                        single => Some(single),
                    };
                    if let Some(items) = items {
                        out.insert(key.clone(), self.node(items, depth + 1));
                    }
                }
                "properties" => {
                    if let Value::Object(properties) = value {
                        let mut lowered = Map::new();
                        for (name, property) in properties {
                            lowered.insert(name.clone(), self.node(property, depth + 1));
                        }
                        if !lowered.is_empty() {
                            let required: Vec<Value> = map
                                .get("required")
                                .and_then(Value::as_array)
                                .map(|r| {
                                    r.iter()
                                        .filter(|n| {
                                            n.as_str().is_some_and(|n| lowered.contains_key(n))
                                        })
                                        .cloned()
                                        .collect()
                                })
                                .unwrap_or_default();
                            out.insert(key.clone(), Value::Object(lowered));
                            if !required.is_empty() {
                                out.insert("required".to_owned(), Value::Array(required));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Value::Object(out)
    }

    /// `allOf`: the parts lowered and merged (properties and `required` united; for any
    /// other keyword the first part that has it wins), with the node's own keywords first.
    fn all_of(&mut self, map: &Map<String, Value>, parts: &[Value], depth: usize) -> Value {
        let mut own = map.clone();
        own.remove("allOf");
        let mut merged = match self.node(&Value::Object(own), depth) {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        for part in parts {
            let Value::Object(lowered) = self.node(part, depth + 1) else {
                continue;
            };
            for (key, value) in lowered {
                match (key.as_str(), merged.get_mut(&key), value) {
                    ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                        for (k, v) in theirs {
                            mine.entry(k).or_insert(v);
                        }
                    }
                    ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                        for name in theirs {
                            if !mine.contains(&name) {
                                mine.push(name);
                            }
                        }
                    }
                    (_, Some(_), _) => {}
                    (_, None, value) => {
                        merged.insert(key, value);
                    }
                }
            }
        }
        Value::Object(merged)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{SchemaLimits, gemini, strict};

    fn check(lower: fn(&Value, &SchemaLimits) -> Option<Value>, input: &Value, expected: &Value) {
        let got = lower(input, &SchemaLimits::default()).unwrap_or(Value::Null);
        assert_eq!(&got, expected, "for {input}");
    }

    fn object(properties: &Value) -> Value {
        json!({"type": "object", "properties": properties})
    }

    #[test]
    fn strict_lowering() {
        let closed = |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false});
        let cases = [
            // Optional properties become nullable, each in the form its schema allows.
            (
                object(&json!({
                    "s": {"type": "string", "enum": ["a"]},
                    "t": {"type": ["string", "integer"]},
                    "u": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                    "c": {"const": 1},
                    "r": {"$ref": "#"}
                })),
                closed(
                    json!({
                        "s": {"type": ["string", "null"], "enum": ["a", null]},
                        "t": {"type": ["string", "integer", "null"]},
                        "u": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
                        "c": {"anyOf": [{"const": 1}, {"type": "null"}]},
                        "r": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}
                    }),
                    json!(["s", "t", "u", "c", "r"]),
                ),
            ),
            // Annotations and unsupported constraints are dropped; oneOf becomes anyOf.
            (
                json!({"type": "object", "title": "T", "properties": {"x": {"type": "string", "minLength": 1, "default": "a", "format": "uri", "x-extra": 1}}, "required": ["x"]}),
                closed(json!({"x": {"type": "string"}}), json!(["x"])),
            ),
            (
                object(&json!({"x": {"oneOf": [{"type": "string"}, {"type": "number"}]}})),
                closed(
                    json!({"x": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "null"}]}}),
                    json!(["x"]),
                ),
            ),
            // What strict mode cannot say.
            (object(&json!({"x": {"type": "object"}})), Value::Null),
            (
                object(
                    &json!({"x": {"type": "object", "properties": {}, "additionalProperties": true}}),
                ),
                Value::Null,
            ),
            (
                object(&json!({"x": {"allOf": [{"type": "string"}]}})),
                Value::Null,
            ),
            (object(&json!({"x": {}})), Value::Null),
            (
                object(&json!({"x": {"description": "anything"}})),
                Value::Null,
            ),
            (
                object(&json!({"x": {"type": "array", "prefixItems": [{"type": "string"}]}})),
                Value::Null,
            ),
            (
                object(&json!({"x": {"$ref": "https://example.com/s.json"}})),
                Value::Null,
            ),
            (
                object(&json!({"x": {"$ref": "#/$defs/missing"}})),
                Value::Null,
            ),
            (
                json!({"type": "object", "anyOf": [{"properties": {}}]}),
                Value::Null,
            ),
            (object(&json!({"x": true})), Value::Null),
        ];
        for (input, expected) in &cases {
            check(strict, input, expected);
        }
        // Eleven levels of objects are one too many.
        let mut deep = json!({"type": "string"});
        for _ in 0..10 {
            deep = json!({"type": "object", "properties": {"x": deep}, "required": ["x"]});
        }
        assert!(strict(&deep, &SchemaLimits::default()).is_some());
        let deeper = json!({"type": "object", "properties": {"x": deep}, "required": ["x"]});
        assert!(strict(&deeper, &SchemaLimits::default()).is_none());
    }

    #[test]
    fn gemini_lowering() {
        let cases = [
            (
                json!({"$schema": "x", "type": "object", "additionalProperties": false, "properties": {
                    "a": {"type": ["string", "null"], "default": "x"},
                    "b": {"type": ["string", "integer"]},
                    "c": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                    "d": {"const": "only"},
                    "e": {"type": "integer", "format": "int64", "exclusiveMinimum": 0},
                    "f": {"type": "string", "format": "uri"},
                    "g": {"type": "array", "items": [{"type": "string"}, {"type": "number"}]},
                    "h": {"oneOf": [{"type": "string"}, {"type": "number"}]}
                }, "required": ["a", "zzz"]}),
                json!({"type": "object", "properties": {
                    "a": {"type": "string", "nullable": true},
                    "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                    "c": {"type": "integer", "nullable": true},
                    "d": {"type": "string", "enum": ["only"]},
                    "e": {"type": "integer", "format": "int64"},
                    "f": {"type": "string"},
                    "g": {"type": "array", "items": {"type": "string"}},
                    "h": {"anyOf": [{"type": "string"}, {"type": "number"}]}
                }, "required": ["a"]}),
            ),
            // `$ref`s are inlined; a description beside one wins; a cycle is cut.
            (
                json!({"type": "object", "properties": {
                    "p": {"$ref": "#/definitions/P", "description": "the p"},
                    "loop": {"$ref": "#"}
                }, "definitions": {"P": {"type": "string", "description": "a P"}}}),
                json!({"type": "object", "properties": {
                    "p": {"type": "string", "description": "the p"},
                    "loop": {"type": "object", "properties": {
                        "p": {"type": "string", "description": "the p"},
                        "loop": {"type": "object"}
                    }}
                }}),
            ),
            // No properties: no parameters at all.
            (json!({"type": "object"}), Value::Null),
            (json!({"type": "object", "properties": {}}), Value::Null),
        ];
        for (input, expected) in &cases {
            check(gemini, input, expected);
        }
    }
}
