//! Project automation for the MCP workspace: `cargo xtask <command>`.
//!
//! Commands:
//! - `codegen [--check]`: regenerate `crates/mcp-types/src/generated/` from the vendored
//!   schemas; with `--check`, fail instead of writing when a file is stale.
//! - `test`: the whole test suite, exactly what the README and `.ci/run` call.
//! - `conformance server [--url URL]`: the official MCP conformance suite against
//!   `conformance-server` (see `conformance.rs` and `conformance/SCENARIOS.md`).
//! - `conformance client`: the suite's client leg against `conformance-client` (see
//!   `conformance/SCENARIOS-client.md`).
//! - `bench [--quick]`: issue #8's measurement of our server against rmcp, the TypeScript
//!   and Python SDKs and the floor (see `bench.rs` and `docs/PERFORMANCE.md`).
//! - `fuzz [--time SECONDS] [--jobs N] [TARGET…]`: the cargo-fuzz targets of `fuzz/`
//!   (see `fuzz.rs` and `docs/RELIABILITY.md`).
//! - `soak [--size ci|full] [--minutes N]`: the load and soak run of issue #11 against
//!   `mcp serve-example` (see `soak.rs` and `docs/RELIABILITY.md`).
//! - `dist`: the release `mcp` binary, built as users build it (see
//!   [`build_mcp_release`]); the benchmark measures this build.

mod bench;
mod codegen;
mod conformance;
mod fuzz;
mod soak;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("codegen") => {
            let mode = if args.iter().any(|a| a == "--check") {
                codegen::Mode::Check
            } else {
                codegen::Mode::Write
            };
            codegen::run(mode)
        }
        Some("test") => test(),
        Some("conformance") => conformance::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("soak") => soak::run(&args[1..]),
        Some("dist") => build_mcp_release().map(|mcp| println!("{}", mcp.display())),
        _ => Err(
            "usage: cargo xtask <command>\n\n  codegen [--check]  regenerate mcp-types from the schemas\n  test               run the whole test suite\n  conformance server [--revision R] [--url URL]\n                     run the official conformance suite against conformance-server\n  conformance client [--revision R]\n                     run the official conformance suite against conformance-client\n  bench [--quick]    measure our server against the official SDKs and the floor (docs/PERFORMANCE.md)\n  fuzz [--time SECONDS] [--jobs N] [TARGET...]\n                     run the cargo-fuzz targets of fuzz/ (docs/RELIABILITY.md)\n  soak [--size ci|full] [--minutes N] [--release|--debug]\n                     load and soak mcp serve-example (docs/RELIABILITY.md)\n  dist               build the release mcp binary (cargo build --release -p mcp-cli)"
                .to_owned(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The root of the workspace, found from this crate's manifest directory.
pub(crate) fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// Runs the whole test suite: the generated code must be fresh, then every test of every
/// crate (unit, integration and doc tests), then the tests of features no workspace crate
/// turns on (`mcp-server`'s `auth`), which the workspace run does not build: its unit and
/// resource-server tests, and the end-to-end test against a real OpenID provider
/// (`crates/mcp-server/tests/oidc/`, which installs its pinned npm package itself); and
/// last the fuzz targets' checked-in corpus and regressions, replayed on the stable
/// toolchain (`fuzz/`, its own workspace).
fn test() -> Result<(), String> {
    codegen::run(codegen::Mode::Check)?;
    cargo(&["test", "--workspace", "--all-targets"])?;
    cargo(&["test", "--workspace", "--doc"])?;
    let auth = ["-p", "mcp-server", "--features", "auth"];
    cargo(
        &[
            &["test"][..],
            &auth,
            &["--lib", "--test", "auth", "--test", "oidc"],
        ]
        .concat(),
    )?;
    cargo(&[&["test"][..], &auth, &["--doc"]].concat())?;
    // The fuzz workspace builds into the main target directory: the dependencies it
    // shares with the main build (same versions, features and profile) are compiled and
    // stored once, not twice, which keeps a cold CI run's disk use down.
    let target = target_dir();
    cargo(&[
        "test",
        "--manifest-path",
        "fuzz/Cargo.toml",
        "--target-dir",
        &target.to_string_lossy(),
        "--test",
        "corpus",
    ])
}

/// Builds the release `mcp` binary and returns its path (`target/release/mcp`).
///
/// It is the plain `cargo build --release -p mcp-cli` that `cargo install` and users run,
/// with no extra link arguments, so that what the benchmark measures is what they get.
pub(crate) fn build_mcp_release() -> Result<PathBuf, String> {
    cargo(&["build", "--release", "-p", "mcp-cli"])?;
    Ok(target_dir().join("release/mcp"))
}

/// The main workspace's target directory: `CARGO_TARGET_DIR` (relative to the root) when
/// set, else `target/` at the root.
pub(crate) fn target_dir() -> PathBuf {
    let root = project_root();
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

fn cargo(args: &[&str]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    eprintln!("$ cargo {}", args.join(" "));
    let status = Command::new(cargo)
        .args(args)
        .current_dir(project_root())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}
