//! JSON text helpers shared by the MCP crates: a JSON writer and a scan that finds where a
//! JSON value ends.
//!
//! - [`write()`], [`to_vec`], [`to_raw_value`] and the other functions at this crate's root
//!   write compact JSON byte for byte as `serde_json` does, with a faster string escaper
//!   (`writer.rs`): outgoing messages are written with them.
//! - [`scan`] finds where a JSON value ends without building it, accepting exactly what
//!   `serde_json` accepts when it skips a value.
//!
//! Each stands in for `serde_json` on a path where they measurably cost time
//! (`docs/PERFORMANCE.md`). Tests hold each to what it stands in for, and the fuzz
//! targets `json_writer` and `json_scan` (`fuzz/`) hold the writer and the scan to
//! `serde_json`.
//!
//! This crate is an implementation detail shared by the MCP crates, not part of their
//! API: `mcp-jsonrpc`, the transports, the server and the client depend on it directly,
//! and none re-exports it. Its API carries no stability promise beyond the workspace's own
//! version. It knows nothing of JSON-RPC or MCP: the JSON-RPC engine is `mcp-jsonrpc`.

#![forbid(unsafe_code)]

pub mod scan;
// Built with `--cfg mcp_without="json_writer"`, the functions at the root are `serde_json`'s
// (`plain.rs`): the build `cargo xtask bench` measures the writer against. The scan still
// uses the writer's escape search, so the writer is compiled either way.
#[cfg(mcp_without = "json_writer")]
mod plain;
#[cfg_attr(mcp_without = "json_writer", allow(dead_code, unreachable_pub))]
mod writer;

#[cfg(mcp_without = "json_writer")]
pub use plain::{
    to_raw_object_led_by, to_raw_value, to_string, to_vec, write, write_object, write_value,
};
#[cfg(not(mcp_without = "json_writer"))]
pub use writer::{
    to_raw_object_led_by, to_raw_value, to_string, to_vec, write, write_object, write_value,
};
