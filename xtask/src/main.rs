//! Project automation for the MCP workspace: `cargo xtask <command>`.
//!
//! Commands:
//! - `codegen [--check]`: regenerate `crates/mcp-types/src/generated/` from the vendored
//!   schemas; with `--check`, fail instead of writing when a file is stale.
//! - `test`: the whole test suite, exactly what the README and `.ci/run` call.
//! - `conformance server [--revision R] [--suite all] [--url URL]`: the official MCP
//!   conformance suite against `conformance-server` (see `conformance.rs` and
//!   `conformance/SCENARIOS.md`).
//! - `conformance client [--revision R] [--suite all]`: the suite's client leg against
//!   `conformance-client` (see `conformance/SCENARIOS-client.md`).
//! - `bench [--quick]`: the measurement of our server against rmcp, the TypeScript
//!   and Python SDKs and the floor (see `bench.rs` and `docs/PERFORMANCE.md`).
//! - `fuzz [--time SECONDS] [--jobs N] [TARGET…]`: the cargo-fuzz targets of `fuzz/`
//!   (see `fuzz.rs` and `docs/RELIABILITY.md`).
//! - `soak [--size ci|full] [--minutes N]`: the load and soak run against
//!   `mcp-bench-server` (see `soak.rs` and `docs/RELIABILITY.md`).
//! - `fleet [--size ci|full]`: three instances behind HAProxy sharing Redis (see
//!   `fleet.rs` and `docs/DEPLOYMENT.md`).
//! - `dist`: the release `mcp` binary, built as users build it (see
//!   [`build_mcp_release`]).
//! - `public-api [--bless]`: each published library crate's public API against its
//!   snapshot in `api/` (see `public_api.rs`); `--bless` rewrites the snapshots.

mod bench;
mod codegen;
mod conformance;
mod fleet;
mod fuzz;
mod minimal;
mod public_api;
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
        Some("fleet") => fleet::run(&args[1..]),
        Some("minimal-server") => minimal::run(&args[1..]),
        Some("dist") => build_mcp_release().map(|mcp| println!("{}", mcp.display())),
        Some("public-api") => public_api::run(&args[1..]),
        _ => Err(
            "usage: cargo xtask <command>\n\n  codegen [--check]  regenerate mcp-types from the schemas\n  test               run the whole test suite\n  conformance server [--revision R] [--suite all] [--url URL]\n                     run the official conformance suite against conformance-server\n  conformance client [--revision R] [--suite all]\n                     run the official conformance suite against conformance-client\n                     (--suite all: every scenario of the suite that applies at R)\n  bench [--quick]    measure our server against the official SDKs and the floor (docs/PERFORMANCE.md)\n  fuzz [--time SECONDS] [--jobs N] [TARGET...]\n                     run the cargo-fuzz targets of fuzz/ (docs/RELIABILITY.md)\n  soak [--size ci|full] [--minutes N] [--release|--debug]\n                     load and soak mcp-bench-server (docs/RELIABILITY.md)\n  fleet [--size ci|full]\n                     three instances behind HAProxy sharing Redis (docs/DEPLOYMENT.md)\n  minimal-server     build the README's quick-start server in release, check its crates and size, and run the SDK clients against it\n  dist               build the release mcp binary (cargo build --release -p mcp-cli)\n  public-api [--bless]\n                     compare each published crate's public API with api/ (--bless rewrites it)"
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

/// The features the test run turns on by name: each one that a test target needs, whether
/// through `required-features` (without it the target is not built) or a
/// `#![cfg(feature = ...)]` over its whole file (without it the target is built empty and
/// passes). Named here, every such target runs whether or not some crate happens to switch
/// the feature on (today each is also turned on by a crate's dependency, which is what a
/// change elsewhere could undo without a word); [`check_test_features`] fails the run when
/// a target needs a feature this list lacks.
const TEST_FEATURES: &[&str] = &[
    "mcp/server",
    "mcp/client",
    "mcp/host",
    "mcp/stdio",
    "mcp/http",
    "mcp/legacy",
    "mcp/validation",
    "mcp/skills",
    "mcp/opentelemetry",
    "mcp/gateway",
    "mcp/metrics",
    "mcp-client/auth",
    "mcp-client/blocking",
    "mcp-client/stdio",
    "mcp-client/http",
    "mcp-client/schema-validation",
    "mcp-client/skills",
    "mcp-host/auth",
    "mcp-server/auth",
    "mcp-server/metrics",
    "mcp-server/skills",
    "mcp-host/gateway",
    "mcp-legacy/metrics",
    "mcp-legacy/server",
    "mcp-legacy/client",
    "mcp-legacy/stdio",
    "mcp-legacy/http",
    "mcp-legacy/http-sse",
    "mcp-transport-http/server",
    "mcp-transport-http/client",
    "mcp-transport-http/rustls",
    "mcp-transport-http/proxy-protocol",
    "mcp-transport-stdio/client",
];

/// Features a test target needs that the test run leaves off, and where that target runs.
const FEATURES_TESTED_ELSEWHERE: &[(&str, &str)] = &[
    (
        "mcp-server/tasks-redis",
        "`.ci/run`, against the real `redis-server` it installs",
    ),
    (
        "mcp-server/change-bus-redis",
        "`.ci/run`, against the real `redis-server` it installs",
    ),
    (
        "mcp-server/state-keys-redis",
        "`.ci/run`, against the real `redis-server` it installs",
    ),
    (
        "mcp-legacy/session-redis",
        "`.ci/run`, against the real `redis-server` it installs",
    ),
];

/// Runs the whole test suite: the generated code must be fresh, then every test of every
/// crate (unit, integration and doc tests) with [`TEST_FEATURES`] on, among them the
/// resource server's and the OAuth client's tests and the end-to-end test against a real
/// OpenID provider (`crates/mcp-server/tests/oidc/`, which installs its pinned npm package
/// itself); then the fuzz targets' checked-in corpus and regressions, replayed on the
/// stable toolchain (`fuzz/`, its own workspace); last the benchmark workspace's own tests
/// (`bench/`, its own workspace too).
fn test() -> Result<(), String> {
    codegen::run(codegen::Mode::Check)?;
    check_test_features()?;
    let features = TEST_FEATURES.join(",");
    let workspace = ["test", "--workspace", "--features", &features];
    cargo(&[&workspace[..], &["--all-targets"]].concat())?;
    cargo(&[&workspace[..], &["--doc"]].concat())?;
    // The fuzz and bench workspaces build into the main target directory: the
    // dependencies they share with the main build (same versions, features and profile)
    // are compiled and stored once, not twice, which keeps a cold CI run's disk use down.
    let target = target_dir();
    let target = target.to_string_lossy();
    cargo(&[
        "test",
        "--manifest-path",
        "fuzz/Cargo.toml",
        "--target-dir",
        &target,
        "--test",
        "corpus",
    ])?;
    // The load driver's and the client driver's unit tests; the floor and rmcp-server have
    // none yet but are built too, so that a test they gain runs (rmcp makes this step two
    // to three minutes on a cold run of two cores). In two steps, as `cargo xtask bench`
    // builds them: with client-load, the main workspace's serde_json features
    // (preserve_order) would reach the others.
    let bench = [
        "test",
        "--manifest-path",
        "bench/Cargo.toml",
        "--target-dir",
        &target,
    ];
    cargo(&[&bench[..], &["--workspace", "--exclude", "client-load"]].concat())?;
    cargo(&[&bench[..], &["-p", "client-load"]].concat())
}

/// Fails unless every feature that a workspace target requires (`required-features`), or
/// that gates a whole test file (`#![cfg(feature = ...)]`), is in [`TEST_FEATURES`] or
/// [`FEATURES_TESTED_ELSEWHERE`]: a target whose feature nobody names would stop running
/// without a failure the day no crate switches it on any more.
fn check_test_features() -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(project_root())
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let mut missing = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let name = package["name"].as_str().unwrap_or_default();
        for target in package["targets"].as_array().into_iter().flatten() {
            let mut needs: Vec<String> = target["required-features"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect();
            let is_test = target["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "test"));
            if is_test && let Some(path) = target["src_path"].as_str() {
                let source = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read {path}: {e}"))?;
                needs.extend(whole_file_features(&source));
            }
            for feature in needs {
                let qualified = format!("{name}/{feature}");
                let named = TEST_FEATURES.contains(&qualified.as_str())
                    || FEATURES_TESTED_ELSEWHERE
                        .iter()
                        .any(|(elsewhere, _)| *elsewhere == qualified);
                if !named {
                    let target = target["name"].as_str().unwrap_or_default();
                    missing.push(format!("{qualified} (target `{target}`)"));
                }
            }
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "test targets need features the test run does not name; add them to \
             TEST_FEATURES in xtask/src/main.rs: {}",
            missing.join(", ")
        ))
    }
}

/// The features named in a source file's inner `#![cfg(...)]` attributes, which compile
/// the whole file out when they are off.
fn whole_file_features(source: &str) -> Vec<String> {
    let mut features = Vec::new();
    for line in source.lines().map(str::trim_start) {
        let Some(mut rest) = line.strip_prefix("#![cfg(") else {
            continue;
        };
        while let Some(at) = rest.find("feature") {
            rest = rest[at + "feature".len()..].trim_start();
            let Some(value) = rest.strip_prefix('=').map(str::trim_start) else {
                continue;
            };
            let Some(value) = value.strip_prefix('"') else {
                continue;
            };
            if let Some(end) = value.find('"') {
                features.push(value[..end].to_owned());
                rest = &value[end..];
            } else {
                rest = value;
            }
        }
    }
    features
}

/// Builds the release `mcp` binary and returns its path (`target/release/mcp`).
///
/// It is the plain `cargo build --release -p mcp-cli` that `cargo install` and users run,
/// with no extra link arguments.
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
    cargo_with(args, &[])
}

/// [`cargo`] with environment variables set for it (the bench's `RUSTFLAGS`).
fn cargo_with(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let shown: Vec<String> = env.iter().map(|(k, v)| format!("{k}='{v}' ")).collect();
    eprintln!("$ {}cargo {}", shown.concat(), args.join(" "));
    run_status(
        Command::new(cargo)
            .args(args)
            .envs(env.iter().copied())
            .current_dir(project_root()),
        "cargo",
        &format!("`cargo {}`", args.join(" ")),
    )
}

/// Runs `command` to its end: `Err` says it cannot run `program`, or that `what` failed
/// with its exit status.
fn run_status(command: &mut Command, program: &str, what: &str) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_file_features_are_read_from_inner_cfg_attributes() {
        let source = "//! Docs.\n\n#![cfg(feature = \"http\")]\n#![cfg(all(feature=\"stdio\", \
                      target_os = \"linux\", feature = \"http-sse\"))]\n#[cfg(feature = \"item\")]\n\
                      fn f() {}\n";
        assert_eq!(whole_file_features(source), ["http", "stdio", "http-sse"]);
        assert!(whole_file_features("#![cfg(unix)]\nfn main() {}\n").is_empty());
    }

    /// The same check `cargo xtask test` makes first, so that a test target whose feature
    /// nobody names fails the workspace's own tests too.
    #[test]
    fn every_test_feature_of_the_workspace_is_named() {
        check_test_features().unwrap();
    }
}
