//! `cargo xtask fuzz [--time SECONDS] [--jobs N] [TARGET…]`: runs the cargo-fuzz targets
//! of `fuzz/` (all of them when none is named), each for `SECONDS` (default 60), one
//! after the other, and prints what each did.
//!
//! - Needs `cargo-fuzz` (`cargo install cargo-fuzz --locked`). The stable toolchain runs
//!   it with `RUSTC_BOOTSTRAP=1`, which lets cargo-fuzz pass its sanitizer flags.
//! - Each run starts from, and adds to, `fuzz/corpus/<target>/` (checked in;
//!   `cargo fuzz cmin <target>` keeps it small). A failing input lands in
//!   `fuzz/artifacts/<target>/` (ignored by git); once fixed, copy it to
//!   `fuzz/regressions/<target>/`, which `cargo test` in `fuzz/` replays forever.
//! - `--jobs N` runs N fuzzing processes per target (libFuzzer's `-fork`).
//!
//! The properties each target checks are in `fuzz/src/<target>.rs`; the record of runs
//! and findings is `docs/RELIABILITY.md`.

use std::process::Command;
use std::time::Instant;

const TARGETS: [&str; 10] = [
    "line_codec",
    "message",
    "sse",
    "http_request",
    "http_server",
    "uri_template",
    "request_state",
    "legacy_session",
    "json_writer",
    "call_writer",
];

pub(crate) const USAGE: &str = "fuzz [--time SECONDS] [--jobs N] [TARGET...]";

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let usage = || {
        format!(
            "usage: cargo xtask {USAGE} (targets: {})",
            TARGETS.join(", ")
        )
    };
    let mut seconds: u64 = 60;
    let mut jobs: u32 = 1;
    let mut targets = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--time" => seconds = rest.next().and_then(|s| s.parse().ok()).ok_or_else(usage)?,
            "--jobs" => {
                jobs = rest
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|&j| j > 0)
                    .ok_or_else(usage)?;
            }
            name if TARGETS.contains(&name) => targets.push(name),
            _ => return Err(usage()),
        }
    }
    if targets.is_empty() {
        targets.extend(TARGETS);
    }
    let dir = crate::project_root().join("fuzz");
    let mut summary = Vec::new();
    for target in targets {
        let corpus = dir.join("corpus").join(target);
        std::fs::create_dir_all(&corpus)
            .map_err(|e| format!("creating {}: {e}", corpus.display()))?;
        let before = count(&corpus);
        let mut command = Command::new("cargo");
        command
            .current_dir(&dir)
            .env("RUSTC_BOOTSTRAP", "1")
            .args(["fuzz", "run", "--release", target])
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg("-rss_limit_mb=2048")
            .arg("-timeout=10")
            .arg("-print_final_stats=1");
        if jobs > 1 {
            command.arg(format!("-fork={jobs}"));
        }
        eprintln!(
            "$ (cd fuzz && cargo fuzz run --release {target} corpus/{target} -- -max_total_time={seconds} …)"
        );
        let started = Instant::now();
        let output = command
            .stderr(std::process::Stdio::piped())
            .output()
            .map_err(|e| format!("cannot run cargo fuzz (is cargo-fuzz installed?): {e}"))?;
        let log = String::from_utf8_lossy(&output.stderr);
        let runs = final_stat(&log, "stat::number_of_executed_units:").unwrap_or_default();
        let coverage = last_cov(&log).unwrap_or_default();
        let outcome = if output.status.success() {
            "no finding"
        } else {
            "FAILED"
        };
        summary.push(format!(
            "{target:16} {:>6.0} s {runs:>12} runs  cov {coverage:>6}  corpus {before} -> {}  {outcome}",
            started.elapsed().as_secs_f64(),
            count(&corpus)
        ));
        if !output.status.success() {
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
        }
    }
    println!("{}", summary.join("\n"));
    if summary.iter().any(|line| line.ends_with("FAILED")) {
        Err("a target failed: its input is in fuzz/artifacts/<target>/".to_owned())
    } else {
        Ok(())
    }
}

fn count(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, Iterator::count)
}

/// A `-print_final_stats` value.
fn final_stat(log: &str, key: &str) -> Option<String> {
    log.lines()
        .rev()
        .find_map(|line| line.strip_prefix(key))
        .map(|value| value.trim().to_owned())
}

/// The coverage of the last status line (`#N ... cov: C ft: …`).
fn last_cov(log: &str) -> Option<String> {
    log.lines().rev().find_map(|line| {
        let (_, after) = line.split_once(" cov: ")?;
        after.split_whitespace().next().map(str::to_owned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_libfuzzers_final_lines() {
        let log = "#1024 pulse  cov: 811 ft: 2201 corp: 40/3Kb exec/s: 341 rss: 80Mb\n\
                   #2048 DONE   cov: 923 ft: 2484 corp: 52/4Kb exec/s: 682 rss: 81Mb\n\
                   stat::number_of_executed_units: 2048\n\
                   stat::peak_rss_mb:              81\n";
        assert_eq!(
            final_stat(log, "stat::number_of_executed_units:").as_deref(),
            Some("2048")
        );
        assert_eq!(last_cov(log).as_deref(), Some("923"));
        assert_eq!(last_cov("nothing"), None);
    }
}
