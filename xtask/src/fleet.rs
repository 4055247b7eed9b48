//! `cargo xtask fleet [--size ci|full]`: a fleet behind a load balancer, for real
//! (`docs/DEPLOYMENT.md`).
//!
//! Runs `crates/mcp-cli/tests/fleet_haproxy.rs`, which starts a redis-server, three
//! `mcp serve-example --http ADDR --redis URL` instances and HAProxy in front of them on
//! loopback ports, and checks cross-instance listens, a 2025-11-25 session across the
//! instances, the loss of an instance during a session, a listen and a task, and a key
//! rotation during a multi round-trip call. Needs `haproxy` and `redis-server` (Debian's
//! packages; `.ci/run` installs them).
//!
//! `--size ci` (the default, run by `.ci/run`): each check once, debug build. `--size
//! full`: more rounds, a release build, and calls/s through HAProxy with three instances
//! beside one, with the PROXY protocol and with `X-Forwarded-For`, measured with the
//! benchmark's `mcp-load` driver in interleaved rounds (the ratios in
//! `docs/PERFORMANCE.md`; the figures in `bench/results/fleet-<unix time>.json`).

use std::process::Command;

use crate::{cargo_with, project_root};

pub(crate) const USAGE: &str = "fleet [--size ci|full]";

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let size = match args {
        [] => "ci",
        [flag, size] if flag == "--size" && (size == "ci" || size == "full") => size.as_str(),
        _ => return Err(format!("usage: cargo xtask {USAGE}")),
    };
    for (program, package) in [("haproxy", "haproxy"), ("redis-server", "redis-server")] {
        let found = Command::new(program)
            .arg(if program == "haproxy" {
                "-v"
            } else {
                "--version"
            })
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Err(format!(
                "`{program}` is missing: the fleet runs a real one (Debian: apt-get install {package})"
            ));
        }
    }
    let mut test = vec!["test", "-p", "mcp-cli", "--test", "fleet_haproxy"];
    let mut env = vec![("FLEET_SIZE", size.to_owned())];
    if size == "full" {
        test.push("--release");
        crate::cargo(&[
            "build",
            "--release",
            "--manifest-path",
            "bench/Cargo.toml",
            "-p",
            "mcp-load",
        ])?;
        let bench_target = match std::env::var_os("CARGO_TARGET_DIR") {
            Some(dir) => project_root().join(dir),
            None => project_root().join("bench").join("target"),
        };
        let load = bench_target.join("release/mcp-load");
        env.push(("FLEET_LOAD", load.display().to_string()));
        // The run's figures, beside the benchmark's (docs/PERFORMANCE.md cites the latest).
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let results = project_root().join(format!("bench/results/fleet-{stamp}.json"));
        env.push(("FLEET_RESULTS", results.display().to_string()));
    }
    test.extend(["--", "--ignored", "--nocapture"]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    cargo_with(&test, &env)
}
