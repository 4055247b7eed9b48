//! What the dual-era client's peer tests share: the pinned peers in `tests/peers/`,
//! installed once per test binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// `tests/peers/`.
pub(crate) fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// Runs `tests/peers/setup.sh` once per test binary; the tests run in parallel and must
/// not install at the same time.
pub(crate) fn setup() {
    static DONE: Mutex<bool> = Mutex::new(false);
    let mut done = DONE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !*done {
        let output = Command::new("bash")
            .arg(peers_dir().join("setup.sh"))
            .stdin(Stdio::null())
            .output()
            .expect("cannot run setup.sh");
        assert!(
            output.status.success(),
            "setup.sh failed:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        *done = true;
    }
}
