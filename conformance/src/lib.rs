//! The programs that the official MCP conformance suite drives, and nothing else.
//!
//! The suite is the npm package `@modelcontextprotocol/conformance`, pinned with the
//! Node.js 22 it needs in `package.json` and `package-lock.json` beside this crate. It
//! tests a server by sending it requests over Streamable HTTP and checking the answers
//! against the fixtures each scenario names (tools such as `test_simple_text`, resources
//! such as `test://static-text`, prompts such as `test_simple_prompt`). This crate holds
//! the programs that provide those fixtures with the workspace's own libraries:
//!
//! - `conformance-server`: an `mcp-server` with every fixture of the
//!   2026-07-28 requirement set. `conformance-server --http 127.0.0.1:0` binds a free
//!   loopback port and prints its endpoint URL (`http://127.0.0.1:PORT/mcp`) as the
//!   first line of stdout; `conformance-server --stdio` serves the same fixtures over
//!   stdin and stdout.
//! - `conformance-client`: the client the suite's `client` scenarios
//!   start.
//!
//! `SCENARIOS.md` beside this crate lists every scored scenario, what it sends, what it
//! checks and which fixtures it needs: it is the specification of these programs.
//! `cargo xtask conformance server` installs the pinned suite, builds and starts
//! `conformance-server`, runs the suite against it with
//! `--requirements 2026-07-28`, prints a table with one row per scenario, and fails on
//! any failure that `expected-failures.yml` does not list or on a listed entry that now
//! passes.
//!
//! The crate is not published and no other crate depends on it.

#![forbid(unsafe_code)]

pub mod fixtures;
mod skill_fixtures;
mod task_fixtures;

/// The runtime `builder` makes with every driver on; `None`, said on stderr, when it
/// cannot start. The programs' `main`s share it, each failing in its own way.
pub fn runtime(builder: &mut tokio::runtime::Builder) -> Option<tokio::runtime::Runtime> {
    builder
        .enable_all()
        .build()
        .inspect_err(|e| eprintln!("cannot start the runtime: {e}"))
        .ok()
}
