//! The server's tools: `echo` and `add` always, the benchmark's `search` and `steps` with
//! `--bench-tools`, N generated tools with `--extra-tools N`, and the soak's tools with
//! `--soak-tools` (`soak.rs`). Every peer of the benchmark (`bench/rmcp-server`,
//! `bench/ts-server`, `bench/py-server`) has the same `echo`, `add`, `search`, `steps` and
//! generated tools.

use std::sync::Arc;

use mcp_server::{Server, ToolDef};
use mcp_types::CallToolResult;

use crate::arguments::{Add, Echo, Search, Steps, extra_tool_schema};
use crate::soak::Probes;

#[path = "../../mcp-cli/src/example/echo_add.rs"]
mod echo_add;

use echo_add::{echo_and_add, read_only};

/// The server's name, as `server/discover` (or `initialize`) reports it.
const NAME: &str = "mcp-bench-server";

/// Which tools beyond `echo` and `add` the command line asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Choice {
    /// `--bench-tools`: register `search` and `steps`.
    pub(crate) bench: bool,
    /// `--extra-tools N`: register N generated tools, `extra_000` on.
    pub(crate) extra: usize,
    /// `--soak-tools`: register the soak's tools and counter.
    pub(crate) soak: bool,
}

/// The server with the tools `choice` asks for. `probes` feeds the soak's `stats`.
pub(crate) fn server(choice: Choice, probes: &Arc<Probes>) -> Result<Server, mcp_server::Error> {
    let mut builder = echo_and_add(Server::builder(NAME, env!("CARGO_PKG_VERSION")));
    if choice.bench {
        builder = builder
            .tool(
                ToolDef::typed("search", |args: Search, _cx| async move {
                    Ok(CallToolResult::text(format!(
                        "no results for {} in {}",
                        args.query,
                        args.scope.as_str()
                    )))
                })
                .description("Searches code, issues or docs (finds nothing: a benchmark tool)")
                .annotations(read_only()),
            )
            .tool(
                ToolDef::typed("steps", |args: Steps, cx| async move {
                    let total = f64::from(args.steps);
                    for done in 1..=args.steps {
                        cx.progress(f64::from(done), Some(total), None).await;
                    }
                    Ok(CallToolResult::text(format!("{} steps", args.steps)))
                })
                .description("Sends the given number of progress notifications, then answers")
                .annotations(read_only()),
            );
    }
    let counter = choice.soak.then(crate::soak::Counter::default);
    if let Some(counter) = &counter {
        builder = crate::soak::register(builder, Arc::clone(probes), counter);
    }
    for i in 0..choice.extra {
        let name = format!("extra_{i:03}");
        builder = builder.tool(
            ToolDef::new(name, extra_tool_schema(), move |args, _cx| async move {
                Ok(CallToolResult::text(format!(
                    "record {} from extra tool {i}",
                    args["id"]
                )))
            })
            .description(format!(
                "Fetches a record (generated tool {i} of {}, for benchmarks)",
                choice.extra
            ))
            .annotations(read_only()),
        );
    }
    let server = builder.build()?;
    if let Some(counter) = counter {
        counter.attach(&server);
    }
    Ok(server)
}
