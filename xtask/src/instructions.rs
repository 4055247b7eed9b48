//! `cargo xtask instructions [--record]`: instruction counts of `mcp serve-example` over
//! stdio, which do not drift with the machine's load the way times do (issue #8,
//! `docs/PERFORMANCE.md`).
//!
//! Each workload is a file of pipelined `tools/call` requests in the 2026-07-28 form,
//! piped into the release build of `mcp serve-example` under
//! `valgrind --tool=callgrind`; the figure is callgrind's total of executed instructions
//! (`I refs`), start-up included, and per call once a run with a single call (the
//! start-up) is subtracted. `--record` writes the figures to
//! `docs/instructions.tsv`; without it the run is compared with that file and any
//! workload more than [`TOLERANCE`] above its recorded count is reported, so a regression
//! shows in review. Counts depend on the toolchain, the C library and the CPU's
//! instruction set (glibc picks its `memcpy` by CPU), so compare runs of one machine.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// How much a workload may grow over its recorded count before the run says so.
const TOLERANCE: f64 = 0.03;

/// The recorded counts, one `workload<TAB>instructions` line each.
const RECORD: &str = "docs/instructions.tsv";

/// A workload: `calls` pipelined `echo` calls with `payload` bytes of text each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Workload {
    name: &'static str,
    calls: usize,
    payload: usize,
}

const WORKLOADS: [Workload; 3] = [
    Workload {
        name: "startup (1 call)",
        calls: 1,
        payload: 16,
    },
    Workload {
        name: "5000 calls, 16 B",
        calls: 5000,
        payload: 16,
    },
    Workload {
        name: "200 calls, 64 KiB",
        calls: 200,
        payload: 64 * 1024,
    },
];

/// Runs the command: `args` are what follows `instructions`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let record = match args {
        [] => false,
        [flag] if flag == "--record" => true,
        _ => return Err("usage: cargo xtask instructions [--record]".to_owned()),
    };
    if Command::new("valgrind").arg("--version").output().is_err() {
        return Err("valgrind is not installed (Debian's package `valgrind`)".to_owned());
    }
    let mcp = crate::build_mcp_release()?;
    let root = crate::project_root();
    let work = root.join("target/instructions");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;

    let mut counts = Vec::new();
    for workload in WORKLOADS {
        let input = work.join(format!("{}x{}.jsonl", workload.calls, workload.payload));
        std::fs::write(&input, requests(workload.calls, workload.payload))
            .map_err(|e| format!("{}: {e}", input.display()))?;
        let count = callgrind(&mcp, &input, workload.calls)?;
        eprintln!("{}: {count} instructions", workload.name);
        counts.push((workload, count));
    }

    let recorded = std::fs::read_to_string(root.join(RECORD))
        .map(|text| parse_record(&text))
        .unwrap_or_default();
    print!("{}", table(&counts, &recorded));
    if record {
        let text = record_text(&counts);
        std::fs::write(root.join(RECORD), text).map_err(|e| format!("{RECORD}: {e}"))?;
        eprintln!("recorded in {RECORD}");
        return Ok(());
    }
    let grown = regressions(&counts, &recorded);
    if grown.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "more instructions than recorded in {RECORD} (tolerance {:.0} %): {}",
            TOLERANCE * 100.0,
            grown.join(", ")
        ))
    }
}

/// `calls` lines of `tools/call echo`, each with `payload` bytes of text and the
/// 2026-07-28 `_meta`.
fn requests(calls: usize, payload: usize) -> Vec<u8> {
    let text: String = "0123456789abcdef".chars().cycle().take(payload).collect();
    let mut out = Vec::with_capacity(calls * (payload + 200));
    for id in 0..calls {
        let line = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"text": text},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        });
        // A `Value` always serializes.
        let _ = serde_json::to_writer(&mut out, &line);
        out.push(b'\n');
    }
    out
}

/// Pipes `input` into `mcp serve-example` under callgrind and returns the total of
/// executed instructions; fails unless exactly `calls` replies came back.
fn callgrind(mcp: &Path, input: &Path, calls: usize) -> Result<u64, String> {
    let out_file = input.with_extension("callgrind");
    let mut child = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(mcp)
        .arg("serve-example")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    let bytes = std::fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    // The server reads while it answers; write from a thread so neither side blocks.
    let writer = std::thread::spawn(move || stdin.write_all(&bytes));
    let output = child
        .wait_with_output()
        .map_err(|e| format!("valgrind: {e}"))?;
    let _ = writer.join();
    let replies = output
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    if replies != calls {
        return Err(format!(
            "{} calls gave {replies} replies: {}",
            calls,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let _ = std::fs::remove_file(&out_file);
    total_instructions(&String::from_utf8_lossy(&output.stderr))
        .ok_or_else(|| "callgrind printed no `I refs` total".to_owned())
}

/// The `==PID== I   refs:      136,173,572` line of callgrind's summary.
fn total_instructions(stderr: &str) -> Option<u64> {
    let line = stderr.lines().rev().find(|l| l.contains("I   refs:"))?;
    let digits: String = line
        .rsplit(':')
        .next()?
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn parse_record(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (name, count) = l.split_once('\t')?;
            Some((name.to_owned(), count.trim().parse().ok()?))
        })
        .collect()
}

fn record_text(counts: &[(Workload, u64)]) -> String {
    let mut text = String::from(
        "# `cargo xtask instructions --record`: callgrind's instruction totals of `mcp serve-example`\n",
    );
    for (workload, count) in counts {
        let _ = writeln!(text, "{}\t{count}", workload.name);
    }
    text
}

/// The workloads more than [`TOLERANCE`] above their recorded count.
fn regressions(counts: &[(Workload, u64)], recorded: &[(String, u64)]) -> Vec<String> {
    counts
        .iter()
        .filter_map(|(workload, count)| {
            let (_, before) = recorded.iter().find(|(n, _)| n == workload.name)?;
            #[allow(clippy::cast_precision_loss, reason = "a ratio of two counts")]
            let ratio = *count as f64 / *before as f64;
            (ratio > 1.0 + TOLERANCE).then(|| format!("{} {ratio:.3}x", workload.name))
        })
        .collect()
}

fn table(counts: &[(Workload, u64)], recorded: &[(String, u64)]) -> String {
    let startup = counts
        .iter()
        .find(|(w, _)| w.calls == 1)
        .map_or(0, |(_, c)| *c);
    let mut out = String::from(
        "| workload | instructions | per call (start-up subtracted) | recorded | ratio |\n|---|---:|---:|---:|---:|\n",
    );
    for (workload, count) in counts {
        let per_call = if workload.calls > 1 {
            format!("{}", count.saturating_sub(startup) / workload.calls as u64)
        } else {
            "—".to_owned()
        };
        let (before, ratio) = match recorded.iter().find(|(n, _)| n == workload.name) {
            #[allow(clippy::cast_precision_loss, reason = "a ratio of two counts")]
            Some((_, before)) => (
                before.to_string(),
                format!("{:.3}", *count as f64 / *before as f64),
            ),
            None => ("—".to_owned(), "—".to_owned()),
        };
        let _ = writeln!(
            out,
            "| {} | {count} | {per_call} | {before} | {ratio} |",
            workload.name
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_callgrinds_total() {
        let stderr = "==1== Events    : Ir\n==1== Collected : 136173572\n==1== \n==1== I   refs:      136,173,572\n";
        assert_eq!(total_instructions(stderr), Some(136_173_572));
        assert_eq!(total_instructions("no summary"), None);
    }

    #[test]
    fn requests_are_one_valid_line_each() {
        let bytes = requests(3, 20);
        let lines: Vec<&[u8]> = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines.len(), 3);
        let last: serde_json::Value = serde_json::from_slice(lines[2]).unwrap();
        assert_eq!(last["id"], 2);
        assert_eq!(
            last["params"]["arguments"]["text"].as_str().unwrap().len(),
            20
        );
    }

    #[test]
    fn a_regression_past_the_tolerance_is_reported() {
        let w = WORKLOADS[1];
        let recorded = parse_record(&record_text(&[(w, 1000)]));
        assert_eq!(recorded, vec![(w.name.to_owned(), 1000)]);
        assert!(regressions(&[(w, 1030)], &recorded).is_empty());
        assert_eq!(regressions(&[(w, 1031)], &recorded).len(), 1);
        assert!(regressions(&[(WORKLOADS[2], 99_999)], &recorded).is_empty());
        let table = table(&[(WORKLOADS[0], 100), (w, 1100)], &recorded);
        assert!(
            table.contains("| 5000 calls, 16 B | 1100 | 0 | 1000 | 1.100 |"),
            "{table}"
        );
    }
}
