//! Schema definitions → the intermediate form the emitter prints.
//!
//! The form is deliberately small: a definition becomes a struct, a union (tagged by a
//! `const` member, or untagged), a string enum or an alias. Every decision about how a JSON
//! Schema construct maps to Rust is made here; `emit.rs` only prints.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Map, Value};

/// Which generated module a name lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The crate root: the 2026-07-28 types and the hand-written helpers.
    Root,
    /// `crate::legacy`: the 2025-11-25 types that differ from the modern ones.
    Legacy,
    /// `crate::tag`: zero-sized types for `const` members.
    Tag,
    /// The hand-written helpers at the crate root (`RequestId`, `Meta`, …).
    Helper,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ty {
    String,
    Bool,
    I64,
    U64,
    Number,
    Value,
    JsonObject,
    Named(Scope, String),
    Vec(Box<Ty>),
    Map(Box<Ty>),
}

impl Ty {
    fn named(scope: Scope, name: &str) -> Ty {
        Ty::Named(scope, name.to_owned())
    }
}

#[derive(Debug)]
pub(crate) struct Item {
    pub(crate) name: String,
    pub(crate) doc: Option<String>,
    pub(crate) kind: Kind,
}

#[derive(Debug)]
pub(crate) enum Kind {
    Struct(Struct),
    Union(Union),
    StrEnum(Vec<String>),
    Alias(Ty),
}

#[derive(Debug)]
pub(crate) struct Struct {
    pub(crate) fields: Vec<Field>,
    /// Unknown members are kept in an `extra` map (the schema leaves the object open).
    pub(crate) extra: bool,
    pub(crate) method: Option<Method>,
}

#[derive(Debug)]
pub(crate) struct Field {
    pub(crate) json: String,
    pub(crate) rust: String,
    pub(crate) ty: Ty,
    pub(crate) doc: Option<String>,
    pub(crate) required: bool,
    /// `null` is a valid value (`type: [T, "null"]`).
    pub(crate) nullable: bool,
    /// Absent on the wire means `Default::default()` (`resultType`).
    pub(crate) defaulted: bool,
}

impl Field {
    /// Whether the Rust type is wrapped in `Option`.
    pub(crate) fn is_option(&self) -> bool {
        !self.required || self.nullable
    }
}

#[derive(Debug)]
pub(crate) struct Method {
    pub(crate) name: String,
    pub(crate) notification: bool,
    pub(crate) params: Ty,
    pub(crate) result: Option<Ty>,
}

#[derive(Debug)]
pub(crate) struct Union {
    pub(crate) variants: Vec<Variant>,
    /// The member whose `const` value names the variant, if every variant has one.
    pub(crate) tag: Option<String>,
}

#[derive(Debug)]
pub(crate) struct Variant {
    pub(crate) name: String,
    pub(crate) ty: Ty,
    /// The tag value, and whether an absent tag selects this variant.
    pub(crate) tag: Option<(String, bool)>,
    /// For an object variant of an untagged union: the members it knows and requires.
    pub(crate) shape: Option<Shape>,
}

/// The members of an object type, for choosing among untagged variants without guessing.
#[derive(Debug)]
pub(crate) struct Shape {
    pub(crate) known: Vec<String>,
    pub(crate) required: Vec<String>,
    /// Unknown members are kept rather than ignored.
    pub(crate) open: bool,
    /// For results: whether `resultType` must be `input_required` (`Some(true)`), must not be
    /// (`Some(false)`), or is not a member (`None`). Every result type accepts any
    /// `resultType` string, so this is what tells `InputRequiredResult` from the others.
    pub(crate) input_required: Option<bool>,
}

/// A `const` member's value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum TagValue {
    Str(String),
    Int(i64),
}

/// All const-tag types, shared by both generated modules.
#[derive(Debug, Default)]
pub(crate) struct Tags {
    by_key: HashMap<(String, TagValue), String>,
    pub(crate) items: BTreeMap<String, TagValue>,
}

impl Tags {
    fn name_for(&mut self, parent: &str, field: &str, value: TagValue) -> String {
        if let Some(name) = self.by_key.get(&(field.to_owned(), value.clone())) {
            return name.clone();
        }
        let base = match (&value, field) {
            (TagValue::Str(s), "jsonrpc") if s == "2.0" => "JsonRpcVersion".to_owned(),
            (TagValue::Str(s), _) if s.chars().any(char::is_alphabetic) => {
                format!("{}{}", pascal(s), pascal(field))
            }
            _ => format!("{parent}{}", pascal(field)),
        };
        let mut name = base.clone();
        let mut n = 2;
        while self.items.contains_key(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.by_key
            .insert((field.to_owned(), value.clone()), name.clone());
        self.items.insert(name.clone(), value);
        name
    }
}

/// Definitions that are written by hand in `mcp-types` and only referenced here.
fn hand_written(name: &str) -> Option<Ty> {
    Some(match name {
        "JSONValue" => Ty::Value,
        "JSONObject" => Ty::JsonObject,
        "JSONArray" => Ty::Vec(Box::new(Ty::Value)),
        "MetaObject" => Ty::named(Scope::Helper, "Meta"),
        "RequestId" | "ProgressToken" | "ResultType" => Ty::named(Scope::Helper, name),
        _ => return None,
    })
}

/// One module's worth of generation.
pub(crate) struct Module<'a> {
    defs: &'a Map<String, Value>,
    scope: Scope,
    /// Definitions generated in this module; other references go to the crate root.
    local: &'a BTreeSet<String>,
    /// Every definition name of the modern schema (for `Request` → `Result` lookups).
    modern: &'a Map<String, Value>,
    pub(crate) items: Vec<Item>,
    taken: BTreeSet<String>,
    inline: HashMap<String, String>,
}

impl<'a> Module<'a> {
    pub(crate) fn new(
        defs: &'a Map<String, Value>,
        scope: Scope,
        local: &'a BTreeSet<String>,
        modern: &'a Map<String, Value>,
    ) -> Self {
        Module {
            defs,
            scope,
            local,
            modern,
            items: Vec::new(),
            taken: local.clone(),
            inline: HashMap::new(),
        }
    }

    pub(crate) fn build(&mut self, tags: &mut Tags) {
        for name in self.local {
            // `Request` and `Notification` are the abstract shapes every message refines;
            // `JSONRPCRequest` and `JSONRPCNotification` carry them on the wire, and the names
            // belong to the method traits.
            if hand_written(name).is_some() || name == "Request" || name == "Notification" {
                continue;
            }
            let schema = &self.defs[name.as_str()];
            self.definition(name, schema, tags);
        }
    }

    fn reference(&self, name: &str) -> Ty {
        if let Some(ty) = hand_written(name) {
            return ty;
        }
        if self.local.contains(name) {
            Ty::named(self.scope, name)
        } else {
            Ty::named(Scope::Root, name)
        }
    }

    fn resolve(&self, schema: &Value) -> Option<(String, &'a Value)> {
        let name = ref_name(schema)?;
        let defs = if self.local.contains(name) {
            self.defs
        } else {
            self.modern
        };
        defs.get(name).map(|s| (name.to_owned(), s))
    }

    fn definition(&mut self, name: &str, schema: &Value, tags: &mut Tags) {
        let doc = description(schema);
        let kind = if let Some(target) = ref_name(schema) {
            Kind::Alias(self.reference(target))
        } else if let Some(parts) = schema.get("allOf") {
            Kind::Struct(self.object(name, &self.merge(parts), tags))
        } else if let Some(variants) = any_of(schema) {
            Kind::Union(self.union(name, variants, tags))
        } else if let Some(values) = string_enum(schema) {
            Kind::StrEnum(values)
        } else if schema
            .get("properties")
            .is_some_and(|p| !is_empty_object(p))
        {
            Kind::Struct(self.object(name, schema, tags))
        } else {
            Kind::Alias(self.ty(name, "", schema, tags))
        };
        self.items.push(Item {
            name: name.to_owned(),
            doc,
            kind,
        });
    }

    /// `schema`, or the merge of its `allOf` parts when it has them.
    fn flatten<'s>(&self, schema: &'s Value) -> Cow<'s, Value> {
        match schema.get("allOf") {
            Some(parts) => Cow::Owned(self.merge(parts)),
            None => Cow::Borrowed(schema),
        }
    }

    /// `allOf` of object schemas (references included) as one object schema.
    fn merge(&self, parts: &Value) -> Value {
        let mut properties = Map::new();
        let mut required: Vec<Value> = Vec::new();
        let mut open = false;
        for part in parts.as_array().into_iter().flatten() {
            let part = self.resolve(part).map_or(part, |(_, s)| s);
            let part = self.flatten(part);
            if let Some(props) = part.get("properties").and_then(Value::as_object) {
                for (k, v) in props {
                    properties.insert(k.clone(), v.clone());
                }
            }
            for r in part
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if !required.contains(r) {
                    required.push(r.clone());
                }
            }
            open |= part
                .get("additionalProperties")
                .is_some_and(|a| a != &Value::Bool(false));
        }
        let mut merged = Map::new();
        merged.insert("type".into(), "object".into());
        merged.insert("properties".into(), Value::Object(properties));
        merged.insert("required".into(), Value::Array(required));
        if open {
            merged.insert("additionalProperties".into(), Value::Object(Map::new()));
        }
        Value::Object(merged)
    }

    fn object(&mut self, name: &str, schema: &Value, tags: &mut Tags) -> Struct {
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut fields = Vec::new();
        let empty = Map::new();
        let props = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        for (json, prop) in props {
            let (ty, nullable, defaulted) =
                if json == "_meta" && ref_name(prop).is_none() && !has_properties(prop) {
                    (Ty::named(Scope::Helper, "Meta"), false, false)
                } else if json == "resultType" && prop.get("type") == Some(&"string".into()) {
                    (Ty::named(Scope::Helper, "ResultType"), false, true)
                } else if let Some(value) = const_value(prop) {
                    let tag = tags.name_for(name, json, value);
                    (Ty::named(Scope::Tag, &tag), false, false)
                } else {
                    let (inner, nullable) = strip_null(prop);
                    (self.ty(name, json, &inner, tags), nullable, false)
                };
            // The spec requires `ttlMs` and `cacheScope` on list and read results, but servers
            // (and the spec's own `ReadResourceResultResponse` example) omit them; a missing
            // caching hint must not make a result unreadable, so they are optional here and
            // the server core always sets them.
            let lenient = json == "ttlMs" || json == "cacheScope";
            fields.push(Field {
                json: json.clone(),
                rust: snake(json),
                ty,
                doc: description(prop),
                required: required.contains(json.as_str()) && !lenient,
                nullable,
                defaulted,
            });
        }
        // A request embedded in an `InputRequiredResult` has a method but no `jsonrpc` or
        // `id`; its legacy form had both, and the spec's examples still carry an `id`, so
        // unknown members are kept there.
        let embedded_request = props.contains_key("method") && !props.contains_key("jsonrpc");
        let extra = embedded_request
            || name.contains("Capabilities")
            || name.ends_with("MetaObject")
            || schema
                .get("additionalProperties")
                .is_some_and(|a| a != &Value::Bool(false));
        let method = self.method(name, props, &fields);
        Struct {
            fields,
            extra,
            method,
        }
    }

    fn method(&self, name: &str, props: &Map<String, Value>, fields: &[Field]) -> Option<Method> {
        let TagValue::Str(method) = const_value(props.get("method")?)? else {
            return None;
        };
        let params = fields
            .iter()
            .find(|f| f.json == "params")
            .map_or(Ty::JsonObject, |f| f.ty.clone());
        let notification = name.ends_with("Notification");
        let result = (!notification).then(|| {
            let candidate = format!("{}Result", name.trim_end_matches("Request"));
            if self.local.contains(&candidate) || self.modern.contains_key(&candidate) {
                self.reference(&candidate)
            } else {
                self.reference("EmptyResult")
            }
        });
        Some(Method {
            name: method,
            notification,
            params,
            result,
        })
    }

    /// The type of a member (or of an inline schema), generating inline items as needed.
    fn ty(&mut self, parent: &str, field: &str, schema: &Value, tags: &mut Tags) -> Ty {
        let inline_name = || format!("{parent}{}", pascal(field));
        if let Some(target) = ref_name(schema) {
            return self.reference(target);
        }
        if let Some(parts) = schema.get("allOf") {
            let merged = self.merge(parts);
            let name = self.fresh(&inline_name());
            let object = self.object(&name, &merged, tags);
            return self.push(name, description(schema), Kind::Struct(object));
        }
        if let Some(variants) = any_of(schema) {
            let key = format!("union:{}", Value::Array(variants.to_vec()));
            if let Some(name) = self.inline.get(&key) {
                return Ty::named(self.scope, name);
            }
            let name = self.fresh(&inline_name());
            self.inline.insert(key, name.clone());
            let union = self.union(&name, variants, tags);
            return self.push(name, description(schema), Kind::Union(union));
        }
        if let Some(values) = string_enum(schema) {
            let key = format!("enum:{field}:{values:?}");
            if let Some(name) = self.inline.get(&key) {
                return Ty::named(self.scope, name);
            }
            // A member name of two words or more (`cacheScope`) names its enum well on its
            // own; a one-word one (`mode`, `type`) needs its parent's name too.
            let preferred = pascal(field);
            let name = if self.taken.contains(&preferred)
                || !field.chars().any(|c| c.is_ascii_uppercase())
            {
                self.fresh(&inline_name())
            } else {
                self.fresh(&preferred)
            };
            self.inline.insert(key, name.clone());
            return self.push(name, description(schema), Kind::StrEnum(values));
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => Ty::String,
            Some("boolean") => Ty::Bool,
            Some("number") => Ty::Number,
            Some("integer") => {
                if schema
                    .get("minimum")
                    .and_then(Value::as_f64)
                    .is_some_and(|m| m >= 0.0)
                {
                    Ty::U64
                } else {
                    Ty::I64
                }
            }
            Some("array") => match schema.get("items") {
                Some(items) => {
                    let item = self.ty(parent, &format!("{field}Item"), items, tags);
                    Ty::Vec(Box::new(item))
                }
                None => Ty::Vec(Box::new(Ty::Value)),
            },
            Some("object") => {
                if has_properties(schema) {
                    let name = self.fresh(&inline_name());
                    let object = self.object(&name, schema, tags);
                    return self.push(name, description(schema), Kind::Struct(object));
                }
                match schema.get("additionalProperties") {
                    Some(Value::Object(inner)) if !inner.is_empty() && !is_open_object(schema) => {
                        let value = self.ty(
                            parent,
                            &format!("{field}Value"),
                            &Value::Object(inner.clone()),
                            tags,
                        );
                        if value == Ty::JsonObject || value == Ty::Value {
                            Ty::JsonObject
                        } else {
                            Ty::Map(Box::new(value))
                        }
                    }
                    _ => Ty::JsonObject,
                }
            }
            _ => Ty::Value,
        }
    }

    fn union(&mut self, name: &str, variants: &[Value], tags: &mut Tags) -> Union {
        // Tagged: every variant is a reference to an object with a string `const` member,
        // the same member for all, with distinct values.
        let resolved: Option<Vec<(String, &Value)>> =
            variants.iter().map(|v| self.resolve(v)).collect();
        let tag = resolved.as_ref().and_then(|defs| {
            ["type", "method", "mode"].into_iter().find(|key| {
                let mut seen = BTreeSet::new();
                let mut optional = 0;
                let ok = defs.iter().all(|(_, def)| {
                    let Some(prop) = def.get("properties").and_then(|p| p.get(*key)) else {
                        return false;
                    };
                    if !is_required(def, key) {
                        optional += 1;
                    }
                    matches!(const_value(prop), Some(TagValue::Str(v)) if seen.insert(v.clone()))
                });
                ok && optional <= 1
            })
        });
        let mut out = Vec::new();
        for (i, variant) in variants.iter().enumerate() {
            if let Some(target) = ref_name(variant) {
                let tag_value = tag.and_then(|key| {
                    let (_, def) = self.resolve(variant)?;
                    let Some(TagValue::Str(v)) = const_value(&def["properties"][key]) else {
                        return None;
                    };
                    Some((v, !is_required(def, key)))
                });
                let shape = self.shape(variant);
                out.push(Variant {
                    name: target.to_owned(),
                    ty: self.reference(target),
                    tag: tag_value,
                    shape,
                });
                continue;
            }
            if let Some(types) = variant.get("type").and_then(Value::as_array) {
                for t in types.iter().filter_map(Value::as_str) {
                    let ty = self.ty(name, "", &serde_json::json!({ "type": t }), tags);
                    out.push(Variant {
                        name: pascal(t),
                        ty,
                        tag: None,
                        shape: None,
                    });
                }
                continue;
            }
            let ty = self.ty(name, &format!("variant{i}"), variant, tags);
            let variant_name = match &ty {
                Ty::Vec(item) if **item == Ty::String => "StringList".to_owned(),
                Ty::Vec(_) => "List".to_owned(),
                Ty::Named(_, n) => n.clone(),
                other => pascal(&format!("{other:?}")),
            };
            out.push(Variant {
                name: variant_name,
                ty,
                tag: None,
                shape: None,
            });
        }
        strip_common_suffix(&mut out);
        if tag.is_none() {
            // Untagged: serde tries variants in order, so the most constrained come first and
            // a catch-all (an open object such as `Result`) comes last.
            let rank = |v: &Variant| -> (bool, usize) {
                let def = match &v.ty {
                    Ty::Named(_, n) => {
                        self.resolve(&serde_json::json!({ "$ref": format!("#/$defs/{n}") }))
                    }
                    _ => None,
                };
                match def {
                    Some((_, d)) => (
                        d.get("additionalProperties")
                            .is_some_and(|a| a != &Value::Bool(false)),
                        usize::MAX
                            - d.get("required")
                                .and_then(Value::as_array)
                                .map_or(0, Vec::len),
                    ),
                    None => (false, usize::MAX),
                }
            };
            if resolved.is_some() {
                out.sort_by_key(|v| rank(v));
            }
        }
        Union {
            variants: out,
            tag: tag.map(str::to_owned),
        }
    }

    /// The members of the object a reference names, if it names an object.
    fn shape(&self, reference: &Value) -> Option<Shape> {
        let (name, def) = self.resolve(reference)?;
        let def = self.flatten(def);
        let props = def.get("properties")?.as_object()?;
        if props.is_empty() {
            return None;
        }
        let required = def
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        let open = name.contains("Capabilities")
            || name.ends_with("MetaObject")
            || def
                .get("additionalProperties")
                .is_some_and(|a| a != &Value::Bool(false));
        let input_required = props
            .contains_key("resultType")
            .then_some(name == "InputRequiredResult");
        Some(Shape {
            known: props.keys().cloned().collect(),
            required,
            open,
            input_required,
        })
    }

    fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_owned();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }

    fn push(&mut self, name: String, doc: Option<String>, kind: Kind) -> Ty {
        self.items.push(Item {
            name: name.clone(),
            doc,
            kind,
        });
        Ty::Named(self.scope, name)
    }
}

fn strip_common_suffix(variants: &mut [Variant]) {
    for suffix in [
        "Request",
        "Notification",
        "Content",
        "Result",
        "Schema",
        "Params",
    ] {
        if variants.len() > 1
            && variants
                .iter()
                .all(|v| v.name.len() > suffix.len() && v.name.ends_with(suffix))
        {
            for v in variants.iter_mut() {
                v.name.truncate(v.name.len() - suffix.len());
            }
            return;
        }
    }
}

pub(crate) fn ref_name(schema: &Value) -> Option<&str> {
    let r = schema.get("$ref")?.as_str()?;
    r.rsplit('/').next()
}

fn any_of(schema: &Value) -> Option<&[Value]> {
    schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
}

fn string_enum(schema: &Value) -> Option<Vec<String>> {
    let values = schema.get("enum")?.as_array()?;
    values
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn const_value(schema: &Value) -> Option<TagValue> {
    match schema.get("const")? {
        Value::String(s) => Some(TagValue::Str(s.clone())),
        Value::Number(n) => n.as_i64().map(TagValue::Int),
        _ => None,
    }
}

fn is_required(def: &Value, key: &str) -> bool {
    def.get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|v| v == key))
}

fn has_properties(schema: &Value) -> bool {
    schema
        .get("properties")
        .is_some_and(|p| !is_empty_object(p))
}

fn is_empty_object(v: &Value) -> bool {
    v.as_object().is_some_and(Map::is_empty)
}

/// `additionalProperties: {additionalProperties: true, properties: {}, type: object}` and the
/// like: a map of free-form objects, which is just a free-form object.
fn is_open_object(schema: &Value) -> bool {
    schema
        .get("additionalProperties")
        .is_some_and(|a| a.get("type") == Some(&"object".into()) && !has_properties(a))
}

/// Splits `type: [T, "null"]` into `T` and a nullable flag.
fn strip_null(schema: &Value) -> (Value, bool) {
    if let Some(types) = schema.get("type").and_then(Value::as_array)
        && types.iter().any(|t| t == "null")
    {
        let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        let mut copy = schema.clone();
        copy["type"] = if rest.len() == 1 {
            rest[0].clone()
        } else {
            Value::Array(rest)
        };
        return (copy, true);
    }
    (schema.clone(), false)
}

fn description(schema: &Value) -> Option<String> {
    schema
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// `tools/call` → `ToolsCall`, `inputSchema` → `InputSchema`, `input_required` → `InputRequired`.
pub(crate) fn pascal(s: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            if upper {
                out.push(c.to_ascii_uppercase());
            } else {
                out.push(c);
            }
            upper = false;
        } else {
            upper = true;
        }
    }
    out
}

/// `inputSchema` → `input_schema`, `_meta` → `meta`, `$schema` → `schema`,
/// `io.modelcontextprotocol/clientInfo` → `client_info`, `type` → `r#type`.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "super", "trait", "true", "type", "unsafe", "use",
    "where", "while", "abstract", "become", "box", "do", "final", "gen", "macro", "override",
    "priv", "typeof", "unsized", "virtual", "yield", "try",
];

pub(crate) fn snake(json: &str) -> String {
    let base = json.rsplit('/').next().unwrap_or(json);
    let mut out = String::new();
    for c in base.chars() {
        if c.is_ascii_uppercase() {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_').to_owned();
    if KEYWORDS.contains(&out.as_str()) {
        format!("r#{out}")
    } else {
        out
    }
}
