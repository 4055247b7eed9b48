//! `cargo xtask bench [--quick]`: issue #8's side-by-side measurement of our server against
//! the official Rust SDK (rmcp) and the machine's floor.
//!
//! 1. Builds `mcp-cli` (release, this workspace) and the benchmark-only workspace `bench/`
//!    (release: `mcp-load`, `floor`, `rmcp-server`). `bench/` is not a member of this
//!    workspace, so CI never builds rmcp.
//! 2. Runs every scenario ([`SCENARIOS`]: a 16-byte echo with 16 calls in flight, a 64 KiB
//!    echo with 16 in flight, a 16-byte echo with one in flight; each over stdio and over
//!    HTTP) against every server ([`servers`]), interleaved: round 1 runs each scenario
//!    for each server, then round 2, then round 3. Over stdio `mcp-load` spawns the server
//!    itself; over HTTP the server is started here with `127.0.0.1:0`, its URL read from
//!    the first line of its stdout, and killed after the run.
//! 3. Takes the median of the rounds for each figure and prints the tables of
//!    `docs/PERFORMANCE.md`: the figures per server, then ours against rmcp and the floor
//!    with the goals. Every report of `mcp-load` is also appended to
//!    `bench/.work/runs.jsonl` (ignored by git).
//!
//! `--quick` measures for 0.3 s with a short warm-up instead of 3 s: a smoke run that
//! shows the harness works, not figures to quote.
//!
//! The TypeScript and Python SDK servers of issue #8 are not measured yet: the interop
//! peers (`interop/`) have no `echo` tool; the run says so instead of failing.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

pub(crate) const USAGE: &str = "bench [--quick]";

/// Rounds of the whole scenario set; the tables show the median.
const ROUNDS: usize = 3;
/// The bound on one `mcp-load` run beyond its measured duration.
const RUN_SLACK: Duration = Duration::from_mins(1);
/// How long an HTTP server may take to print its URL.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The transport of a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Transport {
    Stdio,
    Http,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "HTTP",
        }
    }
}

/// One load shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Load {
    /// 16-byte text, 16 calls in flight.
    Small,
    /// 64 KiB text, 16 calls in flight.
    Large,
    /// 16-byte text, one call in flight.
    Single,
}

impl Load {
    fn payload(self) -> usize {
        match self {
            Self::Small | Self::Single => 16,
            Self::Large => 64 * 1024,
        }
    }

    fn in_flight(self) -> usize {
        match self {
            Self::Small | Self::Large => 16,
            Self::Single => 1,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Small => "16 B, 16 in flight",
            Self::Large => "64 KiB, 16 in flight",
            Self::Single => "16 B, 1 in flight",
        }
    }
}

const SCENARIOS: [(Load, Transport); 6] = [
    (Load::Small, Transport::Stdio),
    (Load::Small, Transport::Http),
    (Load::Large, Transport::Stdio),
    (Load::Large, Transport::Http),
    (Load::Single, Transport::Stdio),
    (Load::Single, Transport::Http),
];

/// Which role a server plays in the ratios.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Ours,
    Rmcp,
    Floor,
    Other,
}

/// A server under test: how to start it over each transport it serves.
struct ServerSpec {
    name: &'static str,
    role: Role,
    /// The era `mcp-load` speaks to it.
    era: &'static str,
    /// The command of the stdio server.
    stdio: Option<Vec<String>>,
    /// The command of the HTTP server; it prints its URL on the first line of stdout.
    http: Option<Vec<String>>,
}

fn servers(bins: &Bins) -> Vec<ServerSpec> {
    let cmd = |bin: &Path, args: &[&str]| -> Vec<String> {
        std::iter::once(bin.display().to_string())
            .chain(args.iter().map(|&a| a.to_owned()))
            .collect()
    };
    vec![
        ServerSpec {
            name: "ours (mcp serve-example)",
            role: Role::Ours,
            era: "modern",
            stdio: Some(cmd(&bins.mcp, &["serve-example"])),
            http: Some(cmd(&bins.mcp, &["serve-example", "--http", "127.0.0.1:0"])),
        },
        ServerSpec {
            name: "ours, HTTP on 1 worker thread (`--workers 1`)",
            role: Role::Other,
            era: "modern",
            stdio: None,
            http: Some(cmd(
                &bins.mcp,
                &["serve-example", "--http", "127.0.0.1:0", "--workers", "1"],
            )),
        },
        ServerSpec {
            name: "floor (serde_json + fixed reply / bare hyper 1)",
            role: Role::Floor,
            era: "modern",
            stdio: Some(cmd(&bins.floor, &["stdio"])),
            http: Some(cmd(&bins.floor, &["http", "127.0.0.1:0"])),
        },
        ServerSpec {
            name: "rmcp 3.11 (`stdio_pipes()`; HTTP stateless JSON)",
            role: Role::Rmcp,
            era: "modern",
            stdio: Some(cmd(&bins.rmcp, &["stdio-pipes"])),
            http: Some(cmd(&bins.rmcp, &["http", "127.0.0.1:0"])),
        },
        ServerSpec {
            name: "rmcp 3.11 default `stdio()`",
            role: Role::Other,
            era: "modern",
            stdio: Some(cmd(&bins.rmcp, &["stdio"])),
            http: None,
        },
    ]
}

/// The binaries the run needs.
struct Bins {
    mcp: PathBuf,
    load: PathBuf,
    floor: PathBuf,
    rmcp: PathBuf,
}

/// How long and how hard each run measures.
#[derive(Clone, Copy, Debug)]
struct Settings {
    duration: f64,
    warmup: u64,
}

/// The figures of one `mcp-load` report the tables use.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Figures {
    calls_per_s: f64,
    p50_us: f64,
    p99_us: f64,
    cpu_us_per_call: f64,
    peak_rss_kib: f64,
    cold_start_ms: Option<f64>,
}

impl Figures {
    fn from_report(report: &Value) -> Result<Self, String> {
        let number = |key: &str| {
            report[key]
                .as_f64()
                .ok_or_else(|| format!("the report has no number `{key}`: {report}"))
        };
        Ok(Self {
            calls_per_s: number("calls_per_s")?,
            p50_us: number("p50_us")?,
            p99_us: number("p99_us")?,
            cpu_us_per_call: number("cpu_us_per_call")?,
            peak_rss_kib: number("peak_rss_kib")?,
            cold_start_ms: report["cold_start_ms"].as_f64(),
        })
    }

    /// The median of each figure over the rounds.
    fn median(runs: &[Self]) -> Option<Self> {
        let of = |f: fn(&Self) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
        let cold: Vec<f64> = runs.iter().filter_map(|r| r.cold_start_ms).collect();
        Some(Self {
            calls_per_s: of(|r| r.calls_per_s)?,
            p50_us: of(|r| r.p50_us)?,
            p99_us: of(|r| r.p99_us)?,
            cpu_us_per_call: of(|r| r.cpu_us_per_call)?,
            peak_rss_kib: of(|r| r.peak_rss_kib)?,
            cold_start_ms: median(&cold),
        })
    }
}

/// The median (the mean of the middle two for an even count); `None` when empty or when a
/// value is not a number.
fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len().is_multiple_of(2) {
        f64::midpoint(sorted[mid - 1], sorted[mid])
    } else {
        sorted[mid]
    })
}

pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let quick = match args {
        [] => false,
        [flag] if flag == "--quick" => true,
        _ => return Err(format!("usage: cargo xtask {USAGE}")),
    };
    let settings = if quick {
        Settings {
            duration: 0.3,
            warmup: 100,
        }
    } else {
        Settings {
            duration: 3.0,
            warmup: 500,
        }
    };
    let bins = build()?;
    let servers = servers(&bins);
    let work = crate::project_root().join("bench/.work");
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let log_path = work.join("runs.jsonl");
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
    skip_sdk_peers();

    // (server index, load, transport) → the figures of each round.
    let mut results: BTreeMap<(usize, Load, Transport), Vec<Figures>> = BTreeMap::new();
    let mut failures = Vec::new();
    for round in 1..=ROUNDS {
        for &(load, transport) in &SCENARIOS {
            for (index, server) in servers.iter().enumerate() {
                let command = match transport {
                    Transport::Stdio => server.stdio.as_ref(),
                    Transport::Http => server.http.as_ref(),
                };
                let Some(command) = command else { continue };
                eprintln!(
                    "round {round}/{ROUNDS}: {} over {}, {}",
                    server.name,
                    transport.name(),
                    load.name()
                );
                match measure(&bins, server, command, load, transport, settings) {
                    Ok(report) => {
                        let _ = writeln!(log, "{report}");
                        let figures = Figures::from_report(&report)?;
                        results
                            .entry((index, load, transport))
                            .or_default()
                            .push(figures);
                    }
                    Err(e) => {
                        eprintln!("  failed: {e}");
                        failures.push(format!(
                            "{} over {}, {}: {e}",
                            server.name,
                            transport.name(),
                            load.name()
                        ));
                    }
                }
            }
        }
    }
    let medians: BTreeMap<(usize, Load, Transport), Figures> = results
        .iter()
        .filter_map(|(key, runs)| Figures::median(runs).map(|m| (*key, m)))
        .collect();
    println!("{}", render(&servers, &medians, settings, quick));
    eprintln!("every report: {}", log_path.display());
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} run(s) failed:\n  {}",
            failures.len(),
            failures.join("\n  ")
        ))
    }
}

/// Builds what the run needs and finds the binaries.
fn build() -> Result<Bins, String> {
    let root = crate::project_root();
    crate::cargo(&["build", "--release", "-p", "mcp-cli"])?;
    crate::cargo(&["build", "--release", "--manifest-path", "bench/Cargo.toml"])?;
    let target = |workspace: &Path| match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => workspace.join("target"),
    };
    let main = target(&root).join("release");
    let bench = target(&root.join("bench")).join("release");
    let bins = Bins {
        mcp: main.join("mcp"),
        load: bench.join("mcp-load"),
        floor: bench.join("floor"),
        rmcp: bench.join("rmcp-server"),
    };
    for bin in [&bins.mcp, &bins.load, &bins.floor, &bins.rmcp] {
        if !bin.is_file() {
            return Err(format!("{} is missing after the build", bin.display()));
        }
    }
    Ok(bins)
}

/// Says which SDK peers of issue #8 this run leaves out, and why.
fn skip_sdk_peers() {
    let interop = crate::project_root().join("interop");
    for (peer, dir) in [("TypeScript SDK", "node_modules"), ("Python SDK", ".venv")] {
        let state = if interop.join(dir).exists() {
            "installed, but the interop peer has no `echo` tool yet"
        } else {
            "not installed (interop/setup.sh)"
        };
        eprintln!("skipping the {peer} server: {state}");
    }
}

/// One `mcp-load` run; gives its JSON report.
fn measure(
    bins: &Bins,
    server: &ServerSpec,
    command: &[String],
    load: Load,
    transport: Transport,
    settings: Settings,
) -> Result<Value, String> {
    let mut args = vec![
        "--in-flight".to_owned(),
        load.in_flight().to_string(),
        "--payload".to_owned(),
        load.payload().to_string(),
        "--duration".to_owned(),
        settings.duration.to_string(),
        "--warmup".to_owned(),
        settings.warmup.to_string(),
        "--era".to_owned(),
        server.era.to_owned(),
    ];
    let mut http_server = None;
    match transport {
        Transport::Stdio => {
            args.push("--stdio".to_owned());
            args.push("--".to_owned());
            args.extend(command.iter().cloned());
        }
        Transport::Http => {
            let (child, url) = start_http(command)?;
            args.extend([
                "--http".to_owned(),
                url,
                "--pid".to_owned(),
                child.0.id().to_string(),
            ]);
            http_server = Some(child);
        }
    }
    let limit = Duration::from_secs_f64(settings.duration) + RUN_SLACK;
    let output = run_with_timeout(&bins.load, &args, limit)?;
    drop(http_server);
    let line = output
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .ok_or_else(|| format!("mcp-load printed no report: {output:?}"))?;
    let mut report: Value =
        serde_json::from_str(line).map_err(|e| format!("unreadable report {line:?}: {e}"))?;
    report["server"] = Value::from(server.name);
    Ok(report)
}

/// Kills a server on every path out.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts an HTTP server and reads its URL from the first line of its stdout.
fn start_http(command: &[String]) -> Result<(Killed, String), String> {
    let (program, args) = command.split_first().ok_or("empty server command")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let child = Killed(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let first = reader.read_line(&mut line).map(|_| line.clone());
        let _ = tx.send(first);
        // Keep draining so the server never blocks on a full pipe.
        while matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
            line.clear();
        }
    });
    let line = rx
        .recv_timeout(START_TIMEOUT)
        .map_err(|_| format!("{program} printed no URL within {START_TIMEOUT:?}"))?
        .map_err(|e| format!("cannot read {program}'s stdout: {e}"))?;
    let url = server_url(&line).ok_or_else(|| format!("{program} printed {line:?}, not a URL"))?;
    Ok((child, url))
}

/// The URL on a server's first line of output.
fn server_url(line: &str) -> Option<String> {
    line.split_whitespace()
        .find(|word| word.starts_with("http://"))
        .map(str::to_owned)
}

/// Runs a program to completion within `limit`; gives its stdout.
fn run_with_timeout(program: &Path, args: &[String], limit: Duration) -> Result<String, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("mcp-load took longer than {limit:?}; killed"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for mcp-load: {e}")),
        }
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("cannot read mcp-load's output: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        Ok(stdout)
    } else {
        Err(format!(
            "mcp-load failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// A number with thousands separators, no decimals.
fn thousands(value: f64) -> String {
    if !value.is_finite() {
        return "—".to_owned();
    }
    #[allow(clippy::cast_possible_truncation)]
    let rounded = value.round() as i64;
    let digits = rounded.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if rounded < 0 {
        out.insert(0, '-');
    }
    out
}

/// A figure with up to three significant digits and its unit.
fn short(value: f64, unit: &str) -> String {
    if !value.is_finite() {
        return "—".to_owned();
    }
    let text = if value >= 100.0 {
        thousands(value)
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    };
    format!("{text} {unit}")
}

/// `a / b` as a ratio, or `—`.
fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() => format!("{:.2}×", a / b),
        _ => "—".to_owned(),
    }
}

/// One row of the ratio table: label, load, transport, the figure, its unit, the goal.
type Row = (
    &'static str,
    Load,
    Transport,
    fn(&Figures) -> Option<f64>,
    &'static str,
    &'static str,
);

/// The report: the figures of each server, then ours against rmcp and the floor.
fn render(
    servers: &[ServerSpec],
    medians: &BTreeMap<(usize, Load, Transport), Figures>,
    settings: Settings,
    quick: bool,
) -> String {
    let get =
        |index: usize, load: Load, transport: Transport| medians.get(&(index, load, transport));
    let pair = |index: usize, load: Load, f: &dyn Fn(&Figures) -> String| {
        let cell = |t| get(index, load, t).map_or_else(|| "—".to_owned(), f);
        format!("{} / {}", cell(Transport::Stdio), cell(Transport::Http))
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Medians of {ROUNDS} interleaved rounds, {} s measured per run{}.\n",
        settings.duration,
        if quick {
            " (--quick: a smoke run, not figures to quote)"
        } else {
            ""
        }
    );
    let _ = writeln!(out, "16-byte echo, 16 calls in flight:\n");
    let _ = writeln!(
        out,
        "| server | stdio calls/s | HTTP calls/s | server CPU per call (stdio / HTTP) | peak RSS (stdio / HTTP) | cold start (stdio) | p99 (stdio / HTTP) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for (index, server) in servers.iter().enumerate() {
        let calls = |t| {
            get(index, Load::Small, t).map_or_else(|| "—".to_owned(), |f| thousands(f.calls_per_s))
        };
        let cold = get(index, Load::Small, Transport::Stdio)
            .and_then(|f| f.cold_start_ms)
            .map_or_else(|| "—".to_owned(), |ms| short(ms, "ms"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            server.name,
            calls(Transport::Stdio),
            calls(Transport::Http),
            pair(index, Load::Small, &|f| short(f.cpu_us_per_call, "µs")),
            pair(index, Load::Small, &|f| short(
                f.peak_rss_kib / 1024.0,
                "MB"
            )),
            cold,
            pair(index, Load::Small, &|f| short(f.p99_us, "µs")),
        );
    }
    let _ = writeln!(
        out,
        "\n64 KiB echo (16 in flight) and one call in flight:\n"
    );
    let _ = writeln!(
        out,
        "| server | 64 KiB calls/s (stdio / HTTP) | 64 KiB CPU per call (stdio / HTTP) | 1 in flight p50 (stdio / HTTP) | 1 in flight calls/s (stdio / HTTP) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    for (index, server) in servers.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            server.name,
            pair(index, Load::Large, &|f| thousands(f.calls_per_s)),
            pair(index, Load::Large, &|f| short(f.cpu_us_per_call, "µs")),
            pair(index, Load::Single, &|f| short(f.p50_us, "µs")),
            pair(index, Load::Single, &|f| thousands(f.calls_per_s)),
        );
    }

    let find = |role: Role| servers.iter().position(|s| s.role == role);
    let (ours, rmcp, floor) = (find(Role::Ours), find(Role::Rmcp), find(Role::Floor));
    let figure = |index: Option<usize>, load, transport, f: fn(&Figures) -> Option<f64>| {
        index.and_then(|i| get(i, load, transport)).and_then(f)
    };
    let _ = writeln!(out, "\nOurs against rmcp and the floor (same run):\n");
    let _ = writeln!(
        out,
        "| figure | ours | rmcp | floor | ours ÷ rmcp | ours ÷ floor | goal (issue #8) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---|");
    let rows: [Row; 14] = [
        (
            "calls/s, small, stdio",
            Load::Small,
            Transport::Stdio,
            |f| Some(f.calls_per_s),
            "",
            "≥ 1.5× rmcp",
        ),
        (
            "calls/s, small, HTTP",
            Load::Small,
            Transport::Http,
            |f| Some(f.calls_per_s),
            "",
            "≥ 2× rmcp",
        ),
        (
            "calls/s, 64 KiB, stdio",
            Load::Large,
            Transport::Stdio,
            |f| Some(f.calls_per_s),
            "",
            "≥ 1.2× rmcp",
        ),
        (
            "calls/s, 64 KiB, HTTP",
            Load::Large,
            Transport::Http,
            |f| Some(f.calls_per_s),
            "",
            "≥ 1.3× rmcp",
        ),
        (
            "CPU per small call, stdio",
            Load::Small,
            Transport::Stdio,
            |f| Some(f.cpu_us_per_call),
            "µs",
            "≤ 3 µs",
        ),
        (
            "CPU per small call, HTTP",
            Load::Small,
            Transport::Http,
            |f| Some(f.cpu_us_per_call),
            "µs",
            "≤ 12 µs",
        ),
        (
            "p50, 1 in flight, stdio",
            Load::Single,
            Transport::Stdio,
            |f| Some(f.p50_us),
            "µs",
            "≤ 1.2× floor",
        ),
        (
            "p50, 1 in flight, HTTP",
            Load::Single,
            Transport::Http,
            |f| Some(f.p50_us),
            "µs",
            "≤ 1.2× floor",
        ),
        (
            "p99, 16 in flight, stdio",
            Load::Small,
            Transport::Stdio,
            |f| Some(f.p99_us),
            "µs",
            "≤ 0.5× rmcp",
        ),
        (
            "p99, 16 in flight, HTTP",
            Load::Small,
            Transport::Http,
            |f| Some(f.p99_us),
            "µs",
            "≤ 0.5× rmcp",
        ),
        (
            "peak RSS, small, stdio",
            Load::Small,
            Transport::Stdio,
            |f| Some(f.peak_rss_kib / 1024.0),
            "MB",
            "≤ 4 MB",
        ),
        (
            "peak RSS, small, HTTP",
            Load::Small,
            Transport::Http,
            |f| Some(f.peak_rss_kib / 1024.0),
            "MB",
            "≤ 6 MB",
        ),
        (
            "peak RSS, 64 KiB, stdio",
            Load::Large,
            Transport::Stdio,
            |f| Some(f.peak_rss_kib / 1024.0),
            "MB",
            "—",
        ),
        (
            "cold start, stdio",
            Load::Small,
            Transport::Stdio,
            |f| f.cold_start_ms,
            "ms",
            "≤ 1.5 ms",
        ),
    ];
    for (label, load, transport, f, unit, goal) in rows {
        let (a, b, c) = (
            figure(ours, load, transport, f),
            figure(rmcp, load, transport, f),
            figure(floor, load, transport, f),
        );
        let cell = |v: Option<f64>| {
            v.map_or_else(
                || "—".to_owned(),
                |v| {
                    if unit.is_empty() {
                        thousands(v)
                    } else {
                        short(v, unit)
                    }
                },
            )
        };
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {} | {} | {goal} |",
            cell(a),
            cell(b),
            cell(c),
            ratio(a, b),
            ratio(a, c),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::float_cmp)] // exact values, chosen to be representable

    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn figures_from_reports() {
        let report = serde_json::json!({
            "calls_per_s": 1000.0, "p50_us": 50.0, "p99_us": 90.0,
            "cpu_us_per_call": 4.5, "peak_rss_kib": 2048, "cold_start_ms": null
        });
        let f = Figures::from_report(&report).unwrap();
        assert_eq!(f.peak_rss_kib, 2048.0);
        assert_eq!(f.cold_start_ms, None);
        let err = Figures::from_report(&serde_json::json!({"calls_per_s": 1})).unwrap_err();
        assert!(err.contains("p50_us"), "{err}");
        let runs = [
            f,
            Figures {
                calls_per_s: 3000.0,
                cold_start_ms: Some(2.0),
                ..f
            },
            Figures {
                calls_per_s: 2000.0,
                cold_start_ms: Some(1.0),
                ..f
            },
        ];
        let m = Figures::median(&runs).unwrap();
        assert_eq!(m.calls_per_s, 2000.0);
        assert_eq!(m.cold_start_ms, Some(1.5));
        assert_eq!(Figures::median(&[]), None);
    }

    #[test]
    fn formatting() {
        assert_eq!(thousands(1_234_567.4), "1,234,567");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(-1000.0), "-1,000");
        assert_eq!(thousands(f64::NAN), "—");
        assert_eq!(short(3.25159, "µs"), "3.25 µs");
        assert_eq!(short(51.26, "µs"), "51.3 µs");
        assert_eq!(short(1050.0, "µs"), "1,050 µs");
        assert_eq!(ratio(Some(3.0), Some(2.0)), "1.50×");
        assert_eq!(ratio(Some(3.0), Some(0.0)), "—");
        assert_eq!(ratio(None, Some(2.0)), "—");
    }

    #[test]
    fn urls_from_first_lines() {
        assert_eq!(
            server_url("http://127.0.0.1:4000/mcp\n").as_deref(),
            Some("http://127.0.0.1:4000/mcp")
        );
        assert_eq!(
            server_url("listening on http://127.0.0.1:1/mcp").as_deref(),
            Some("http://127.0.0.1:1/mcp")
        );
        assert_eq!(server_url("ready"), None);
    }

    #[test]
    fn the_table_renders_without_results() {
        let bins = Bins {
            mcp: "mcp".into(),
            load: "mcp-load".into(),
            floor: "floor".into(),
            rmcp: "rmcp-server".into(),
        };
        let servers = servers(&bins);
        let mut medians = BTreeMap::new();
        let f = Figures {
            calls_per_s: 10_000.0,
            p50_us: 50.0,
            p99_us: 80.0,
            cpu_us_per_call: 5.0,
            peak_rss_kib: 4096.0,
            cold_start_ms: Some(2.0),
        };
        medians.insert((0, Load::Small, Transport::Stdio), f);
        medians.insert(
            (2, Load::Small, Transport::Stdio),
            Figures {
                calls_per_s: 5_000.0,
                ..f
            },
        );
        let text = render(
            &servers,
            &medians,
            Settings {
                duration: 1.0,
                warmup: 1,
            },
            false,
        );
        assert!(
            text.contains("| calls/s, small, stdio | 10,000 | 5,000 | — | 2.00× | — |"),
            "{text}"
        );
        assert!(text.contains("| 4.00 MB / — |"), "{text}");
    }
}
