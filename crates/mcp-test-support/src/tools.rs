//! Tools the servers of several crates' tests have alike.

use mcp_server::ToolDef;
use mcp_types::CallToolResult;
use serde_json::json;

/// A tool `name` of no arguments that always answers `text`: for tests where what a tool
/// does is beside the point.
pub fn answers(name: &str, text: &'static str) -> ToolDef {
    ToolDef::new(name, json!({"type": "object"}), move |_, _| async move {
        Ok(CallToolResult::text(text))
    })
}

/// `echo`: answers its `text` argument (a string, optional), or `fallback` without one.
pub fn echo(fallback: &'static str) -> ToolDef {
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    ToolDef::new("echo", schema, move |args, _cx| async move {
        Ok(CallToolResult::text(
            args["text"].as_str().unwrap_or(fallback),
        ))
    })
}

// The arguments and result of [`add`]. No doc comments: schemars would put them in the
// derived schemas, which the tests compare as the tool lists them.
#[allow(missing_docs, reason = "doc comments would change the derived schemas")]
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Add {
    pub a: i64,
    pub b: i64,
}

#[allow(missing_docs, reason = "doc comments would change the derived schemas")]
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Sum {
    pub sum: i64,
}

/// `add`: a structured tool, `{a, b}` in and `{sum}` out, with schemas derived from
/// [`Add`] and [`Sum`].
pub fn add() -> ToolDef {
    ToolDef::structured("add", |args: Add, _cx| async move {
        Ok(Sum {
            sum: args.a + args.b,
        })
    })
}

/// `slow`: reports progress 1, 2 and 3 of 3, then answers `done`.
pub fn slow() -> ToolDef {
    ToolDef::new("slow", json!({"type": "object"}), |_, cx| async move {
        for step in 1..=3 {
            cx.progress(f64::from(step), Some(3.0), None).await;
        }
        Ok(CallToolResult::text("done"))
    })
}
