//! `cargo xtask soak [--size ci|full] [--minutes N] [--release|--debug]`: the
//! load and soak run (`docs/RELIABILITY.md`, Load and soak).
//!
//! Builds the benchmark's and the soak's server, `mcp-bench-server`, and the soak driver
//! (`crates/mcp-bench-server/examples/soak/`), then runs the driver against
//! `mcp-bench-server --soak-tools` with the open-files limit
//! raised to its hard limit (10,000 calls in flight over HTTP hold 10,000 sockets in each
//! of the two processes). The driver prints the table of figures and exits non-zero when a
//! check fails; so does this command.
//!
//! `--size ci` (the default, run by `.ci/run`): 1,000 calls in flight over HTTP, 200 over
//! stdio, 20,000 malformed requests on each transport, a 30 s mixed soak, against the
//! debug build that `cargo xtask test` has just built. `--size full`: 10,000, 1,000,
//! 1,000,000 and 10 minutes, against a release build (the figures worth quoting).
//! `--minutes N` sets the mixed soak's length; `--release` or `--debug` the build.

use std::process::Command;

use crate::{cargo, project_root, target_dir};

pub(crate) const USAGE: &str = "soak [--size ci|full] [--minutes N] [--release|--debug]";

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let mut size = "ci".to_owned();
    let mut seconds = None;
    let mut release = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--size" => {
                size.clone_from(rest.next().ok_or("--size needs ci or full")?);
                if size != "ci" && size != "full" {
                    return Err(format!("--size {size}: ci or full"));
                }
            }
            "--minutes" => {
                let value = rest.next().ok_or("--minutes needs a number")?;
                let minutes: f64 = value
                    .parse()
                    .map_err(|e| format!("--minutes {value}: {e}"))?;
                if !(minutes > 0.0 && minutes <= 24.0 * 60.0) {
                    return Err(format!("--minutes {value}: between 0 and 1440"));
                }
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let whole = (minutes * 60.0).ceil() as u64;
                seconds = Some(whole);
            }
            "--release" => release = Some(true),
            "--debug" => release = Some(false),
            other => {
                return Err(format!(
                    "unknown argument {other:?}\nusage: cargo xtask {USAGE}"
                ));
            }
        }
    }
    let release = release.unwrap_or(size == "full");
    let mut build = vec![
        "build",
        "-p",
        "mcp-bench-server",
        "--bin",
        "mcp-bench-server",
        "--example",
        "soak",
    ];
    if release {
        build.push("--release");
    }
    cargo(&build)?;
    let dir = target_dir().join(if release { "release" } else { "debug" });
    let (server, driver) = (
        dir.join("mcp-bench-server"),
        dir.join("examples").join("soak"),
    );
    for bin in [&server, &driver] {
        if !bin.is_file() {
            return Err(format!("{} is missing after the build", bin.display()));
        }
    }
    let mut driver_args = vec![
        "--server".to_owned(),
        server.display().to_string(),
        "--size".to_owned(),
        size.clone(),
    ];
    if let Some(seconds) = seconds {
        driver_args.extend(["--seconds".to_owned(), seconds.to_string()]);
    }
    eprintln!(
        "$ {} {} (size {size}, {} build)",
        driver.display(),
        driver_args.join(" "),
        if release { "release" } else { "debug" }
    );
    // `ulimit -n` to the hard limit, for this driver and the servers it starts; a limit
    // that cannot be raised is left as it is, and the driver says if it is too low.
    crate::run_status(
        Command::new("bash")
            .arg("-c")
            .arg(r#"ulimit -n "$(ulimit -Hn)" 2>/dev/null || true; exec "$0" "$@""#)
            .arg(&driver)
            .args(&driver_args)
            .current_dir(project_root()),
        "the soak driver",
        "the soak",
    )
}
