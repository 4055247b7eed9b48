//! What the workspace's integration tests share, so that each crate's tests say only what
//! is particular to them: the bare end of an in-memory connection ([`MemoryWire`]), the
//! far end of a line-framed pipe ([`JsonLines`]), a per-thread panic counter
//! ([`count_panics`], [`panics`]), a recorder of tracing events ([`Recorder`]), a guard
//! that kills a child process on drop ([`Killed`]), and, with the `http` feature, a raw
//! HTTP client and a reader of server-sent events.
//!
//! It is a dev-dependency only (never published), so it may depend on any crate of the
//! workspace below the ones whose tests use it.

#![allow(
    clippy::missing_panics_doc,
    reason = "test helpers panic on purpose: a panic is a failed test"
)]

mod lines;
mod memory;
mod panics;
mod process;
mod record;

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "server")]
pub mod tools;

pub use lines::JsonLines;
pub use memory::MemoryWire;
pub use panics::{count_panics, panics};
pub use process::{Killed, free_port, setup_once, spawn_ready, spawn_url};
pub use record::{Event, Recorder};

use serde_json::{Value, json};

/// The response to the request `to`, made of the members of `body` (`result` or `error`).
pub fn response(to: &Value, body: Value) -> Value {
    let mut message = json!({"jsonrpc": "2.0", "id": to["id"]});
    if let (Some(message), Value::Object(body)) = (message.as_object_mut(), body) {
        message.extend(body);
    }
    message
}

/// The text of the first content block of a tool result (empty when there is none).
pub fn first_text(result: &impl serde::Serialize) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The names of `tools`, in order.
pub fn tool_names(tools: &[mcp_types::Tool]) -> Vec<String> {
    tools.iter().map(|tool| tool.name.clone()).collect()
}
