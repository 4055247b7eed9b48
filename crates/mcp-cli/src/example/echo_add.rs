//! The `echo` and `add` tools, served alike by `mcp serve-example` and by
//! `crates/mcp-bench-server` (which includes this file): the smoke tests and the benchmark
//! rely on the same two pure tools. The including module provides their argument types,
//! `Echo` (`text`) and `Add` (`a`, `b`).

use mcp_server::{ServerBuilder, ToolDef, ToolError};
use mcp_types::{CallToolResult, ToolAnnotations};

use super::{Add, Echo};

/// The annotations of a pure tool: read-only, idempotent, closed-world.
pub(super) fn read_only() -> ToolAnnotations {
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(true);
    annotations.idempotent_hint = Some(true);
    annotations.open_world_hint = Some(false);
    annotations
}

/// `builder` with `echo` (its `text` back) and `add` (the sum of the integers `a` and
/// `b`, an error when it does not fit in 64 bits).
pub(super) fn echo_and_add(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            ToolDef::typed("echo", |args: Echo, _cx| async move {
                Ok(CallToolResult::text(args.text))
            })
            .description("Returns its text argument")
            .annotations(read_only()),
        )
        .tool(
            ToolDef::typed("add", |args: Add, _cx| async move {
                let sum = args
                    .a
                    .checked_add(args.b)
                    .ok_or_else(|| ToolError::failed("the sum does not fit in a 64-bit integer"))?;
                Ok(CallToolResult::text(sum.to_string()))
            })
            .description("Adds two integers")
            .annotations(read_only()),
        )
}
