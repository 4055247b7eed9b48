//! What the golden-message tests of the extensions share: a round trip through a type.

#![allow(
    dead_code,
    reason = "each test binary uses a part of the shared module"
)]

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Reads `wire` as `T` and checks that it writes back as the same JSON.
pub(crate) fn check<T: Serialize + DeserializeOwned>(wire: &Value) -> T {
    let typed: T = serde_json::from_value(wire.clone()).expect("reads");
    let back = serde_json::to_value(&typed).expect("writes");
    assert_eq!(&back, wire, "round trip");
    typed
}

/// The `_meta` of a 2026-07-28 request whose client declares `capabilities`.
pub(crate) fn meta_with(capabilities: &Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities
    })
}
