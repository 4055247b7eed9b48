//! A `SKILL.md`'s YAML frontmatter as JSON (feature `frontmatter`): the one reading the
//! server (which publishes it in a skill entry) and the client (which compares the file it
//! fetched against that entry) both use.
//!
//! The YAML is read by `yaml-rust2` (a YAML 1.2 parser) event by event into
//! `serde_json` values, with the YAML 1.2 core schema's scalars (null, booleans, integers,
//! floats, strings), as the frontmatter readers of the other SDKs resolve them. The
//! frontmatter comes from a server, so it is bounded: at most [`MAX_FRONTMATTER_NODES`]
//! values with aliases counted at their expanded size (no "billion laughs"), at most 64
//! levels of nesting, one document, a mapping at the top, scalar keys only, no key given
//! twice.

use std::collections::HashMap;

use serde_json::{Number, Value};
use yaml_rust2::parser::{Event, EventReceiver, Parser, Tag};
use yaml_rust2::scanner::TScalarStyle;
use yaml_rust2::yaml::Yaml;

use crate::JsonObject;

use super::split_frontmatter;

/// The most values a frontmatter may expand to, aliases counted at their expanded size.
pub const MAX_FRONTMATTER_NODES: usize = 10_000;

/// The deepest nesting of sequences and mappings accepted.
const MAX_DEPTH: usize = 64;

/// Why a `SKILL.md`'s frontmatter could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrontmatterError {
    /// The text does not open with a `---` delimited block.
    Missing,
    /// The block is not valid YAML.
    Yaml(String),
    /// The block is not one YAML mapping.
    NotAMapping,
    /// A mapping key is a sequence or a mapping.
    ComplexKey,
    /// A mapping gives the same key twice.
    DuplicateKey(String),
    /// A value's tag contradicts its text (`!!int abc`).
    BadTag(String),
    /// More than [`MAX_FRONTMATTER_NODES`] values, or nesting deeper than 64.
    TooLarge,
}

impl std::fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrontmatterError::Missing => f.write_str("no `---` delimited frontmatter block"),
            FrontmatterError::Yaml(e) => write!(f, "invalid YAML: {e}"),
            FrontmatterError::NotAMapping => f.write_str("the frontmatter is not one mapping"),
            FrontmatterError::ComplexKey => f.write_str("a mapping key is not a scalar"),
            FrontmatterError::DuplicateKey(key) => write!(f, "the key {key:?} is given twice"),
            FrontmatterError::BadTag(value) => write!(f, "{value:?} does not fit its tag"),
            FrontmatterError::TooLarge => f.write_str("the frontmatter is too large or too deep"),
        }
    }
}

impl std::error::Error for FrontmatterError {}

/// The frontmatter of a `SKILL.md` (the text of the whole file) as a JSON object.
///
/// ```
/// use mcp_types::skills::parse_frontmatter;
///
/// let md = "---\nname: pdf-processing\ndescription: Fill PDF forms\nmetadata:\n  version: 2.1.0\n  stable: true\n---\n# PDF\n";
/// let fm = parse_frontmatter(md)?;
/// assert_eq!(fm["name"], "pdf-processing");
/// assert_eq!(fm["metadata"], serde_json::json!({"version": "2.1.0", "stable": true}));
/// # Ok::<(), mcp_types::skills::FrontmatterError>(())
/// ```
pub fn parse_frontmatter(text: &str) -> Result<JsonObject, FrontmatterError> {
    let (yaml, _body) = split_frontmatter(text).ok_or(FrontmatterError::Missing)?;
    let mut builder = Builder::default();
    Parser::new_from_str(yaml)
        .load(&mut builder, true)
        .map_err(|e| FrontmatterError::Yaml(e.to_string()))?;
    if let Some(error) = builder.error {
        return Err(error);
    }
    match builder.root {
        Some(Value::Object(object)) => Ok(object),
        _ => Err(FrontmatterError::NotAMapping),
    }
}

/// An open sequence or mapping, with the anchor it will be stored under and the node count
/// when it opened (to weigh it for aliases).
enum Frame {
    Seq {
        items: Vec<Value>,
        anchor: usize,
        start: usize,
    },
    Map {
        map: JsonObject,
        key: Option<String>,
        anchor: usize,
        start: usize,
    },
}

/// Builds JSON from parser events; the first error stops the building (the parser still
/// reads to the end of the bounded text, but nothing more is kept).
#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, (Value, usize)>,
    nodes: usize,
    documents: usize,
    root: Option<Value>,
    error: Option<FrontmatterError>,
}

impl Builder {
    fn fail(&mut self, error: FrontmatterError) {
        if self.error.is_none() {
            self.error = Some(error);
        }
        self.stack.clear();
        self.anchors.clear();
    }

    /// Counts `weight` more nodes; whether the budget still holds.
    fn charge(&mut self, weight: usize) -> bool {
        self.nodes = self.nodes.saturating_add(weight);
        if self.nodes > MAX_FRONTMATTER_NODES {
            self.fail(FrontmatterError::TooLarge);
            return false;
        }
        true
    }

    /// Whether the next value would be a mapping key.
    fn expects_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Map { key: None, .. }))
    }

    /// Places a finished value (weighing `weight` nodes) in its parent.
    fn insert(&mut self, value: Value, anchor: usize, weight: usize) {
        if anchor > 0 {
            self.anchors.insert(anchor, (value.clone(), weight));
        }
        let outcome = match self.stack.last_mut() {
            None if self.root.is_some() => Err(FrontmatterError::NotAMapping),
            None => {
                self.root = Some(value);
                Ok(())
            }
            Some(Frame::Seq { items, .. }) => {
                items.push(value);
                Ok(())
            }
            Some(Frame::Map { map, key, .. }) => match key.take() {
                Some(k) if map.contains_key(&k) => Err(FrontmatterError::DuplicateKey(k)),
                Some(k) => {
                    map.insert(k, value);
                    Ok(())
                }
                None => key_text(&value)
                    .map(|text| *key = Some(text))
                    .ok_or(FrontmatterError::ComplexKey),
            },
        };
        if let Err(error) = outcome {
            self.fail(error);
        }
    }

    fn open(&mut self, frame: Frame) {
        if self.expects_key() {
            self.fail(FrontmatterError::ComplexKey);
        } else if self.stack.len() >= MAX_DEPTH {
            self.fail(FrontmatterError::TooLarge);
        } else if self.charge(1) {
            self.stack.push(frame);
        }
    }

    fn close(&mut self) {
        let (value, anchor, start) = match self.stack.pop() {
            Some(Frame::Seq {
                items,
                anchor,
                start,
            }) => (Value::Array(items), anchor, start),
            Some(Frame::Map {
                map,
                key,
                anchor,
                start,
            }) => {
                if key.is_some() {
                    // The parser closes a mapping only after a key's value.
                    self.fail(FrontmatterError::NotAMapping);
                    return;
                }
                (Value::Object(map), anchor, start)
            }
            None => return,
        };
        let weight = self.nodes - start;
        self.insert(value, anchor, weight);
    }

    fn scalar(&mut self, text: String, style: TScalarStyle, anchor: usize, tag: Option<&Tag>) {
        if !self.charge(1) {
            return;
        }
        let value = if self.expects_key() {
            // Keys are names: the text as written (quoted or not).
            Value::String(text)
        } else {
            match resolve(text, style, tag) {
                Ok(value) => value,
                Err(e) => return self.fail(e),
            }
        };
        self.insert(value, anchor, 1);
    }

    fn alias(&mut self, id: usize) {
        let Some((value, weight)) = self.anchors.get(&id).cloned() else {
            return self.fail(FrontmatterError::Yaml(format!("unknown alias {id}")));
        };
        if self.charge(weight) {
            self.insert(value, 0, weight);
        }
    }
}

impl EventReceiver for Builder {
    fn on_event(&mut self, event: Event) {
        if self.error.is_some() {
            return;
        }
        match event {
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents > 1 {
                    self.fail(FrontmatterError::NotAMapping);
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                self.scalar(text, style, anchor, tag.as_ref());
            }
            Event::Alias(id) => self.alias(id),
            Event::SequenceStart(anchor, _) => self.open(Frame::Seq {
                items: Vec::new(),
                anchor,
                start: self.nodes,
            }),
            Event::MappingStart(anchor, _) => self.open(Frame::Map {
                map: JsonObject::new(),
                key: None,
                anchor,
                start: self.nodes,
            }),
            Event::SequenceEnd | Event::MappingEnd => self.close(),
            _ => {}
        }
    }
}

/// A scalar key's text; `None` for sequences and mappings.
fn key_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Null => Some(String::new()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// A scalar's value under the YAML 1.2 core schema: quoted and block scalars are strings;
/// plain ones are null, booleans, integers, floats or strings by their text; the core
/// tags (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`) force a type, and other tags
/// leave the text a string.
fn resolve(
    text: String,
    style: TScalarStyle,
    tag: Option<&Tag>,
) -> Result<Value, FrontmatterError> {
    let core = tag
        .filter(|t| t.handle == "tag:yaml.org,2002:")
        .map(|t| t.suffix.as_str());
    let yaml = match (style, core, tag) {
        (TScalarStyle::Plain, None, None) => Yaml::from_str(&text),
        (_, Some("int"), _) => match Yaml::from_str(&text) {
            y @ Yaml::Integer(_) => y,
            _ => return Err(FrontmatterError::BadTag(text)),
        },
        (_, Some("float"), _) => match Yaml::from_str(&text) {
            Yaml::Integer(i) => Yaml::Real(i.to_string()),
            y @ Yaml::Real(_) => y,
            _ => return Err(FrontmatterError::BadTag(text)),
        },
        (_, Some("bool"), _) => match Yaml::from_str(&text) {
            y @ Yaml::Boolean(_) => y,
            _ => return Err(FrontmatterError::BadTag(text)),
        },
        (_, Some("null"), _) => match Yaml::from_str(&text) {
            Yaml::Null => Yaml::Null,
            _ => return Err(FrontmatterError::BadTag(text)),
        },
        _ => return Ok(Value::String(text)),
    };
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::from(i),
        // Infinities and NaN have no JSON form; they read as null, as JSON.stringify has it.
        Yaml::Real(r) => float(&r).map_or(Value::Null, Value::Number),
        Yaml::String(s) => Value::String(s),
        _ => Value::String(text),
    })
}

fn float(text: &str) -> Option<Number> {
    let parsed = match text.trim_start_matches('+') {
        ".inf" | ".Inf" | ".INF" | "-.inf" | "-.Inf" | "-.INF" | ".nan" | ".NaN" | ".NAN" => {
            return None;
        }
        other => other.parse::<f64>().ok()?,
    };
    Number::from_f64(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fmt::Write as _;

    fn parse(yaml: &str) -> Result<Value, FrontmatterError> {
        parse_frontmatter(&format!("---\n{yaml}\n---\n")).map(Value::Object)
    }

    #[test]
    fn scalars_resolve_by_the_core_schema() {
        let fm = parse(
            "s: hello\nq: '42'\ni: 42\nneg: -7\nf: 2.5\nv: 2.1.0\nb: true\nyes: yes\n\
             n: ~\ne:\nhex: 0x1f\ntagged: !!str 12\nlit: |\n  line one\n  line two\n\
             list: [a, 1]\nnested:\n  k: v",
        )
        .unwrap();
        assert_eq!(
            fm,
            json!({"s": "hello", "q": "42", "i": 42, "neg": -7, "f": 2.5, "v": "2.1.0",
                   "b": true, "yes": "yes", "n": null, "e": null, "hex": 31, "tagged": "12",
                   "lit": "line one\nline two\n", "list": ["a", 1], "nested": {"k": "v"}})
        );
    }

    #[test]
    fn hostile_frontmatter_is_refused() {
        assert_eq!(parse("- a\n- b"), Err(FrontmatterError::NotAMapping));
        assert_eq!(parse("plain"), Err(FrontmatterError::NotAMapping));
        assert_eq!(parse(""), Err(FrontmatterError::NotAMapping));
        assert_eq!(
            parse("a: 1\na: 2"),
            Err(FrontmatterError::DuplicateKey("a".to_owned()))
        );
        assert_eq!(parse("? [a, b]\n: c"), Err(FrontmatterError::ComplexKey));
        assert_eq!(
            parse("a: !!int abc"),
            Err(FrontmatterError::BadTag("abc".to_owned()))
        );
        assert!(matches!(parse("a: [b"), Err(FrontmatterError::Yaml(_))));
        assert_eq!(
            parse_frontmatter("name: a\n"),
            Err(FrontmatterError::Missing)
        );
        // A billion laughs: ten aliases of ten aliases of ... is refused, not expanded.
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..9 {
            let prev = level - 1;
            let refs = vec![format!("*a{prev}"); 10].join(", ");
            writeln!(bomb, "a{level}: &a{level} [{refs}]").unwrap();
        }
        assert_eq!(parse(&bomb), Err(FrontmatterError::TooLarge));
        let deep = format!("a: {}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(parse(&deep), Err(FrontmatterError::TooLarge));
    }

    #[test]
    fn aliases_within_the_budget_expand() {
        let fm = parse("base: &b {k: 1}\ncopy: *b\n*b : no").err();
        assert_eq!(fm, Some(FrontmatterError::ComplexKey));
        let fm = parse("base: &b {k: 1}\ncopy: *b").unwrap();
        assert_eq!(fm, json!({"base": {"k": 1}, "copy": {"k": 1}}));
    }
}
