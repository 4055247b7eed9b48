//! What the dual-era client's peer tests share: the pinned peers in `tests/peers/`,
//! installed once per test binary.

use std::path::{Path, PathBuf};

/// `tests/peers/`.
pub(crate) fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// Runs `tests/peers/setup.sh` once per test binary and panics, with its output, if it
/// fails.
pub(crate) fn setup() {
    mcp_test_support::setup_once(&peers_dir().join("setup.sh"));
}
