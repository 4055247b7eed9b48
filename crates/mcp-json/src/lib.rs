//! The JSON writer shared by the MCP crates: [`write()`], [`to_vec`], [`to_raw_value`] and
//! the other functions at this crate's root write compact JSON byte for byte as
//! `serde_json` does, with a faster string escaper (`writer.rs`). Outgoing messages are
//! written with them.
//!
//! It stands in for `serde_json`'s writer because a tool result is mostly strings, and on
//! large ones the escaper roughly halves a call's CPU (`docs/PERFORMANCE.md`, "Kept, and
//! why"). Tests, and the fuzz target `json_writer` (`fuzz/`), hold it to `serde_json`.
//!
//! This crate is an implementation detail shared by the MCP crates, not part of their
//! API: `mcp-jsonrpc`, the transports, the server and the client depend on it directly,
//! and none re-exports it. Its API carries no stability promise beyond the workspace's own
//! version. It knows nothing of JSON-RPC or MCP: the JSON-RPC engine is `mcp-jsonrpc`.

#![forbid(unsafe_code)]
// On docs.rs (`--cfg docsrs`, nightly rustdoc) every feature-gated item is labelled with
// the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The crate's README (its page on crates.io) is compiled and run as doc tests, so that its
// example keeps working.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// Built with `--cfg mcp_without="json_writer"`, the functions at the root are `serde_json`'s
// (`plain.rs`): the build `cargo xtask bench` measures the writer against.
#[cfg(mcp_without = "json_writer")]
mod plain;
#[cfg(not(mcp_without = "json_writer"))]
mod writer;

#[cfg(mcp_without = "json_writer")]
pub use plain::{
    to_raw_object_led_by, to_raw_value, to_string, to_vec, write, write_object, write_value,
};
#[cfg(not(mcp_without = "json_writer"))]
pub use writer::{
    to_raw_object_led_by, to_raw_value, to_string, to_vec, write, write_object, write_value,
};
