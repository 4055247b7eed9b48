//! What the client's tests share: scripted servers that say exactly what a test tells them
//! to (over the real stdio line framing, or as a raw HTTP/1.1 server on 127.0.0.1), and a
//! panic counter for the hostile-server suites.

#![allow(
    dead_code,
    reason = "each test binary uses a part of the shared module"
)]

pub(crate) mod hostile;
pub(crate) mod http;
pub(crate) mod script;

#[allow(
    unused_imports,
    reason = "each test binary uses a part of the shared module"
)]
pub(crate) use mcp_test_support::{count_panics, panics};
