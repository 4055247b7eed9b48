//! The fuzz targets of the workspace, as functions: `fuzz_targets/<name>.rs`
//! hands each libFuzzer input to `<name>::run`, and `tests/corpus.rs` replays the
//! checked-in corpus (`corpus/<name>/`) through the same functions on the stable
//! toolchain. A target panics when a property it checks does not hold; each module says
//! which properties.

#![forbid(unsafe_code)]

pub mod call_writer;
pub mod fixture;
pub mod http_request;
pub mod http_server;
pub mod json_writer;
pub mod legacy_session;
pub mod line_codec;
pub mod message;
pub mod request_state;
pub mod sse;
pub mod uri_template;

/// A target: its name and the function that checks one input.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, by name, for the corpus replay.
pub const TARGETS: [Target; 10] = [
    ("line_codec", line_codec::run),
    ("message", message::run),
    ("sse", sse::run),
    ("http_request", http_request::run),
    ("uri_template", uri_template::run),
    ("request_state", request_state::run),
    ("legacy_session", legacy_session::run),
    ("json_writer", json_writer::run),
    ("http_server", http_server::run),
    ("call_writer", call_writer::run),
];
