//! `structuredContent` checked against the tool's `outputSchema`
//! (<https://modelcontextprotocol.io/specification/2026-07-28/server/tools>, Output Schema:
//! "Clients SHOULD validate structured results against this schema").
//!
//! Listing tools ([`Client::list_tools`](crate::Client::list_tools)) records each listed
//! tool's `outputSchema`; its validator is compiled on the tool's first call after that
//! listing, once (a listing that repeats the same schema keeps the compiled validator).
//! A call of a tool the client has listed, whose result is not `isError: true`, must carry
//! `structuredContent` that the schema accepts, or the call fails with
//! [`Error::StructuredContentInvalid`]. A tool never listed is not checked.
//!
//! Compilation has a bounded cost, as the server's does: the schema's size
//! ([`MAX_OUTPUT_SCHEMA_BYTES`]) and depth ([`MAX_OUTPUT_SCHEMA_DEPTH`]) are capped before
//! the validator sees it, remote `$ref`s are never fetched (no resolver is compiled in),
//! and `pattern` regexes have size and backtracking limits. A schema that breaks a limit
//! or does not compile fails every call of its tool (fail closed).
//!
//! Without the `schema-validation` feature nothing is recorded or checked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use mcp_types::{CallToolResult, Tool};
use serde_json::Value;

use crate::error::Error;

/// The largest `outputSchema` compiled, serialized; a larger one fails its tool's calls.
pub const MAX_OUTPUT_SCHEMA_BYTES: usize = 1 << 20;
/// The deepest nesting of objects and arrays compiled in an `outputSchema`.
pub const MAX_OUTPUT_SCHEMA_DEPTH: usize = 64;
/// How many backtracking steps one `pattern` may take on one value.
const REGEX_BACKTRACK_LIMIT: usize = 100_000;
/// How many validation errors a refusal quotes.
const REPORTED_ERRORS: usize = 3;

/// One listed tool's schema and its validator, compiled on first use.
struct Check {
    schema: Value,
    compiled: OnceLock<Result<jsonschema::Validator, String>>,
}

/// The output schemas of the tools listed so far, by tool name.
#[derive(Default)]
pub(crate) struct OutputChecks {
    tools: Mutex<HashMap<String, Arc<Check>>>,
}

impl OutputChecks {
    /// Records what a listing says of each tool: its `outputSchema`, or none.
    pub(crate) fn record(&self, tools: &[Tool]) {
        let mut map = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        for tool in tools {
            let schema = tool
                .output_schema
                .as_ref()
                .and_then(|s| serde_json::to_value(s).ok());
            match schema {
                Some(schema) => {
                    if map.get(&tool.name).is_none_or(|c| c.schema != schema) {
                        map.insert(
                            tool.name.clone(),
                            Arc::new(Check {
                                schema,
                                compiled: OnceLock::new(),
                            }),
                        );
                    }
                }
                None => {
                    map.remove(&tool.name);
                }
            }
        }
    }

    /// Checks a result of `tool` against its recorded schema, if any.
    pub(crate) fn check(&self, tool: &str, result: &CallToolResult) -> Result<(), Error> {
        if result.is_error == Some(true) {
            return Ok(());
        }
        let Some(check) = self
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(tool)
            .cloned()
        else {
            return Ok(());
        };
        let refuse = |reason: String| Error::StructuredContentInvalid {
            tool: tool.to_owned(),
            reason,
        };
        let validator = check
            .compiled
            .get_or_init(|| compile(&check.schema))
            .as_ref()
            .map_err(|e| refuse(format!("its outputSchema cannot be used: {e}")))?;
        let Some(structured) = &result.structured_content else {
            return Err(refuse(
                "no structuredContent, though the tool declares an outputSchema".to_owned(),
            ));
        };
        if validator.is_valid(structured) {
            return Ok(());
        }
        let errors: Vec<String> = validator
            .iter_errors(structured)
            .take(REPORTED_ERRORS)
            .map(|e| e.to_string())
            .collect();
        Err(refuse(errors.join("; ")))
    }
}

fn depth(value: &Value) -> usize {
    // Iterative, so a hostile schema cannot overflow the stack.
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, level)) = stack.pop() {
        deepest = deepest.max(level);
        match value {
            Value::Object(map) => stack.extend(map.values().map(|v| (v, level.saturating_add(1)))),
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, level.saturating_add(1)))),
            _ => {}
        }
    }
    deepest
}

/// Whether `value` serializes to more than `limit` bytes (counted, not kept; the count
/// stops at the first byte past the limit).
fn serialized_over(value: &Value, limit: usize) -> bool {
    struct Counter {
        left: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.left = self
                .left
                .checked_sub(bytes.len())
                .ok_or_else(|| std::io::Error::other("over the limit"))?;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(&mut Counter { left: limit }, value).is_err()
}

/// Compiles `schema` with a bounded cost.
fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    if serialized_over(schema, MAX_OUTPUT_SCHEMA_BYTES) {
        return Err(format!(
            "more than the limit of {MAX_OUTPUT_SCHEMA_BYTES} bytes as JSON"
        ));
    }
    if depth(schema) > MAX_OUTPUT_SCHEMA_DEPTH {
        return Err(format!(
            "nested deeper than {MAX_OUTPUT_SCHEMA_DEPTH} levels"
        ));
    }
    let patterns = jsonschema::PatternOptions::fancy_regex()
        .backtrack_limit(REGEX_BACKTRACK_LIMIT)
        .size_limit(1 << 20)
        .dfa_size_limit(1 << 20);
    jsonschema::options()
        .with_pattern_options(patterns)
        .build(schema)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(levels: usize) -> Value {
        // `levels` levels of objects in all: {"not": {"not": ... {}}}.
        let mut schema = json!({});
        for _ in 1..levels {
            schema = json!({ "not": schema });
        }
        schema
    }

    #[test]
    fn depth_limit_at_and_past() {
        assert_eq!(
            depth(&nested(MAX_OUTPUT_SCHEMA_DEPTH)),
            MAX_OUTPUT_SCHEMA_DEPTH
        );
        assert!(compile(&nested(MAX_OUTPUT_SCHEMA_DEPTH)).is_ok());
        let err = compile(&nested(MAX_OUTPUT_SCHEMA_DEPTH + 1)).unwrap_err();
        assert!(err.contains("deeper"), "{err}");
    }

    #[test]
    fn size_limit_at_and_past() {
        // {"description":"xxx…"} is 18 bytes around the string.
        let at = json!({ "description": "x".repeat(MAX_OUTPUT_SCHEMA_BYTES - 18) });
        assert_eq!(
            serde_json::to_vec(&at).unwrap().len(),
            MAX_OUTPUT_SCHEMA_BYTES
        );
        assert!(compile(&at).is_ok());
        let past = json!({ "description": "x".repeat(MAX_OUTPUT_SCHEMA_BYTES - 17) });
        let err = compile(&past).unwrap_err();
        assert!(err.contains("bytes"), "{err}");
    }

    #[test]
    fn a_remote_ref_is_never_fetched() {
        let schema = json!({"$ref": "https://example.invalid/schema.json"});
        assert!(compile(&schema).is_err());
    }

    #[test]
    fn a_catastrophic_pattern_is_bounded() {
        let validator = compile(&json!({"type": "string", "pattern": "^(a+)+$"})).unwrap();
        let hostile = json!(format!("{}!", "a".repeat(64)));
        // Gives up within the backtrack limit rather than running for ages.
        let started = std::time::Instant::now();
        let _ = validator.is_valid(&hostile);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
