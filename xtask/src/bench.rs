//! `cargo xtask bench [--quick]`: the side-by-side measurement of our server against
//! the official SDKs (rmcp, TypeScript, Python) and the machine's floor.
//!
//! 1. Builds `mcp-bench-server` (release, this workspace: our server as a user writes and
//!    builds one, with the benchmark's tools) and the benchmark-only workspace `bench/`
//!    (release: `mcp-load`, `floor`, `rmcp-server`, then `client-load` on its own so that
//!    the main workspace's serde_json features do not reach the floor). `bench/` is not a
//!    member of this workspace, so CI never builds rmcp. Installs the SDK peers pinned
//!    when missing or out of date ([`peers::sdk_peers`]): `npm ci` in `bench/ts-server`, and a
//!    venv in `bench/.work/py-venv` with `bench/py-server/requirements.txt`; without node
//!    or python (or when the install fails) the run says so and goes on without that peer.
//! 2. Runs every scenario ([`SCENARIOS`]) against every server that serves it
//!    ([`servers`], [`ServerSpec::command`]), interleaved: round 1 runs each scenario for
//!    each server, then round 2, then round 3. The echo loads: a 16-byte echo with 16 calls
//!    in flight, a 64 KiB echo with 16 in flight, a 16-byte echo with one in flight. The
//!    tool scenarios (servers with the benchmark's tools: ours, rmcp, the SDK peers): the
//!    schema-validated `search`, `tools/list` of 500 tools (`--extra-tools 500`, every page
//!    followed), and `steps` with 10 progress notifications per call over SSE (HTTP only).
//!    Each SDK is driven in the era it speaks. Our client (`client-load`) drives ours with
//!    the small echo, for the "our client ÷ mcp-load" figure (over HTTP with the server on
//!    its default worker threads and on one, against `mcp-load` driving the same server).
//!    The client's HTTP/1.1, which we own, is measured against hyper's in the same
//!    rounds: our client on hyper's client connection (`client-load --hyper-http1`)
//!    against the same server.
//!    Over stdio the driver spawns
//!    the server itself; over HTTP the server is started here with `127.0.0.1:0`, its URL
//!    read from the first line of its stdout, and killed after the run.
//! 3. Takes the median of the rounds for each figure and prints the tables of
//!    `docs/PERFORMANCE.md`: the figures per server, the tool scenarios, ours against rmcp
//!    and the floor with the goals, and our client against `mcp-load`. Every report
//!    is also appended to `bench/.work/runs.jsonl` (ignored by git).
//!
//! `--quick` measures for 0.3 s with a short warm-up instead of 3 s: a smoke run that
//! shows the harness works, not figures to quote.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

mod peers;
mod render;

use peers::sdk_peers;
use render::render;

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
    /// `search` with [`SEARCH_ARGUMENTS`] (a realistic input schema), 16 in flight.
    Search,
    /// `tools/list` of [`EXTRA_TOOLS`] tools and more (every page followed), 16 in flight.
    List,
    /// `steps` with [`PROGRESS_STEPS`] progress notifications per call, 16 in flight.
    Progress,
}

/// The generated tools of the `tools/list` scenario.
const EXTRA_TOOLS: usize = 500;
/// The progress notifications of each call of the progress scenario.
const PROGRESS_STEPS: usize = 10;
/// The arguments of the `search` scenario: every part of its schema used.
pub(crate) const SEARCH_ARGUMENTS: &str = r#"{"query":"streamable http transport","scope":"code","filters":{"languages":["rust","typescript"],"repository":"modelcontextprotocol/rust-sdk","since":"2025-01-01","labels":["performance","good first issue"],"min_stars":10},"sort":"relevance","limit":20}"#;
/// What every server's `search` answers to [`SEARCH_ARGUMENTS`].
const SEARCH_REPLY: &str = "no results for streamable http transport in code";

impl Load {
    fn payload(self) -> usize {
        match self {
            Self::Large => 64 * 1024,
            _ => 16,
        }
    }

    fn in_flight(self) -> usize {
        match self {
            Self::Single => 1,
            _ => 16,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Small => "16 B, 16 in flight",
            Self::Large => "64 KiB, 16 in flight",
            Self::Single => "16 B, 1 in flight",
            Self::Search => "search (schema-validated), 16 in flight",
            Self::List => "tools/list of 500 tools, 16 in flight",
            Self::Progress => "steps (10 progress notifications), 16 in flight",
        }
    }

    /// Whether the load calls the benchmark's tools beyond `echo`.
    fn needs_tools(self) -> bool {
        matches!(self, Self::Search | Self::List | Self::Progress)
    }

    /// The warm-up calls: a listing of 500 tools costs as much as hundreds of echoes.
    fn warmup(self, settings: Settings) -> u64 {
        match self {
            Self::List => (settings.warmup / 25).max(2),
            _ => settings.warmup,
        }
    }

    /// What `mcp-load` sends and checks, beyond the shared options.
    fn load_args(self) -> Vec<String> {
        let args: Vec<String> = match self {
            Self::Small | Self::Large | Self::Single => {
                vec!["--payload".into(), self.payload().to_string()]
            }
            Self::Search => vec![
                "--tool".into(),
                "search".into(),
                "--arguments".into(),
                SEARCH_ARGUMENTS.into(),
                "--expect-text".into(),
                SEARCH_REPLY.into(),
            ],
            Self::List => vec![
                "--method".into(),
                "tools/list".into(),
                "--expect-tools".into(),
                EXTRA_TOOLS.to_string(),
            ],
            Self::Progress => vec![
                "--tool".into(),
                "steps".into(),
                "--arguments".into(),
                format!(r#"{{"steps":{PROGRESS_STEPS}}}"#),
                "--progress".into(),
                PROGRESS_STEPS.to_string(),
            ],
        };
        let mut all = vec!["--in-flight".to_owned(), self.in_flight().to_string()];
        all.extend(args);
        all
    }
}

const SCENARIOS: [(Load, Transport); 11] = [
    (Load::Small, Transport::Stdio),
    (Load::Small, Transport::Http),
    (Load::Large, Transport::Stdio),
    (Load::Large, Transport::Http),
    (Load::Single, Transport::Stdio),
    (Load::Single, Transport::Http),
    (Load::Search, Transport::Stdio),
    (Load::Search, Transport::Http),
    (Load::List, Transport::Stdio),
    (Load::List, Transport::Http),
    (Load::Progress, Transport::Http),
];

/// Which role a server plays in the ratios.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Ours,
    /// Ours, driven by our client instead of `mcp-load`.
    OursByClient,
    /// Ours over HTTP on one worker thread (`--workers 1`).
    OursOneWorker,
    /// The same, driven by our client.
    OursOneWorkerByClient,
    /// Ours driven by our client speaking HTTP/1.1 through hyper's client connection
    /// (`client-load --hyper-http1`), against the client's own HTTP/1.1.
    OursByClientOnHyper,
    /// Ours over HTTP without its connection threads (and so without the idle poll):
    /// `--tokio-runtime`, a multi-threaded tokio runtime serving every connection.
    OursOnTokio,
    /// Ours over HTTP with the idle poll off (`--idle-poll 0`).
    OursIdlePollOff,
    /// Ours built with the `mimalloc` feature.
    OursMimalloc,
    /// Ours built without a hand-written piece (`--cfg mcp_without="…"`).
    OursWithout(Piece),
    /// Ours driven by our client built without a hand-written piece.
    OursByClientWithout(Piece),
    Rmcp,
    Floor,
    Other,
}

/// What drives the load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Driver {
    /// `mcp-load`, the minimal driver.
    McpLoad,
    /// `client-load`: `mcp_client::Client`, echo only.
    Client,
    /// `client-load --hyper-http1`: the same, its HTTP/1.1 hyper's.
    ClientOnHyper,
    /// `client-load` built without a hand-written piece.
    ClientWithout(Piece),
}

impl Driver {
    fn is_client(self) -> bool {
        matches!(
            self,
            Self::Client | Self::ClientOnHyper | Self::ClientWithout(_)
        )
    }
}

/// A hand-written piece that stands in for a well-kept crate, weighed against a build of
/// the workspace without it: `RUSTFLAGS='--cfg mcp_without="<cfg>"'`, in a target
/// directory of its own, turns it off where it is used (`docs/PERFORMANCE.md`, "Kept, and
/// why").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece {
    /// `mcp-json`'s writer, against `serde_json`'s.
    JsonWriter,
    /// `mcp-client`'s `tools/call` writer (`wire.rs`), against the typed params.
    CallWriter,
}

impl Piece {
    /// Those the server is built without.
    const SERVER: [Piece; 1] = [Self::JsonWriter];
    /// Those the client is built without.
    const CLIENT: [Piece; 1] = [Self::CallWriter];

    /// The value of `mcp_without` that turns it off.
    fn cfg(self) -> &'static str {
        match self {
            Self::JsonWriter => "json_writer",
            Self::CallWriter => "call_writer",
        }
    }

    /// `RUSTFLAGS` for the build without it.
    fn rustflags(self) -> String {
        format!("--cfg mcp_without=\"{}\"", self.cfg())
    }
}

/// A server under test: how to start it over each transport it serves.
struct ServerSpec {
    name: String,
    role: Role,
    driver: Driver,
    /// The era `mcp-load` speaks to it.
    era: &'static str,
    /// The command of the stdio server.
    stdio: Option<Vec<String>>,
    /// The command of the HTTP server; it prints its URL on the first line of stdout.
    http: Option<Vec<String>>,
    /// It serves the tool scenarios (`search`, `steps`, `--extra-tools N`).
    tools: bool,
    /// Added to its command for the tool scenarios (ours registers the benchmark's tools
    /// only when asked).
    tools_args: &'static [&'static str],
    /// Added to the HTTP command for the progress scenario (an SDK that drops
    /// notifications in JSON mode needs its event-stream mode).
    progress_http: &'static [&'static str],
}

impl ServerSpec {
    /// The command that serves `load` over `transport`, or `None` when this server does
    /// not take part in that scenario.
    fn command(&self, load: Load, transport: Transport) -> Option<Vec<String>> {
        if load.needs_tools() && !self.tools {
            return None;
        }
        if self.driver.is_client() && load != Load::Small {
            return None;
        }
        let mut command = match transport {
            Transport::Stdio => self.stdio.clone()?,
            Transport::Http => self.http.clone()?,
        };
        if load.needs_tools() {
            command.extend(self.tools_args.iter().map(|&a| a.to_owned()));
        }
        if load == Load::List {
            command.extend(["--extra-tools".to_owned(), EXTRA_TOOLS.to_string()]);
        }
        if load == Load::Progress && transport == Transport::Http {
            command.extend(self.progress_http.iter().map(|&a| a.to_owned()));
        }
        Some(command)
    }
}

fn command_of(bin: &Path, args: &[&str]) -> Vec<String> {
    std::iter::once(bin.display().to_string())
        .chain(args.iter().map(|&a| a.to_owned()))
        .collect()
}

/// Our servers, the floor and rmcp, then the SDK peers that could be installed.
fn servers(bins: &Bins, peers: Vec<ServerSpec>) -> Vec<ServerSpec> {
    let cmd = command_of;
    let ours = |name: &str, role, driver, tools, stdio: bool, http: &[&str]| ServerSpec {
        name: name.to_owned(),
        role,
        driver,
        era: "modern",
        stdio: stdio.then(|| cmd(&bins.server, &[])),
        http: Some(cmd(&bins.server, http)),
        tools,
        tools_args: &["--bench-tools"],
        progress_http: &[],
    };
    let mut servers = vec![
        ours(
            "ours (mcp-bench-server)",
            Role::Ours,
            Driver::McpLoad,
            true,
            true,
            &["--http", "127.0.0.1:0"],
        ),
        ours(
            "ours, HTTP on 1 worker thread (`--workers 1`)",
            Role::OursOneWorker,
            Driver::McpLoad,
            false,
            false,
            &["--http", "127.0.0.1:0", "--workers", "1"],
        ),
        ServerSpec {
            name: "floor (serde_json + fixed reply / bare hyper 1)".to_owned(),
            role: Role::Floor,
            driver: Driver::McpLoad,
            era: "modern",
            stdio: Some(cmd(&bins.floor, &["stdio"])),
            http: Some(cmd(&bins.floor, &["http", "127.0.0.1:0"])),
            tools: false,
            tools_args: &[],
            progress_http: &[],
        },
        ServerSpec {
            name: "rmcp 3.11 (`stdio_pipes()`; HTTP stateless JSON)".to_owned(),
            role: Role::Rmcp,
            driver: Driver::McpLoad,
            era: "modern",
            stdio: Some(cmd(&bins.rmcp, &["stdio-pipes"])),
            http: Some(cmd(&bins.rmcp, &["http", "127.0.0.1:0"])),
            tools: true,
            tools_args: &[],
            progress_http: &[],
        },
        ServerSpec {
            name: "rmcp 3.11 default `stdio()`".to_owned(),
            role: Role::Other,
            driver: Driver::McpLoad,
            era: "modern",
            stdio: Some(cmd(&bins.rmcp, &["stdio"])),
            http: None,
            tools: false,
            tools_args: &[],
            progress_http: &[],
        },
    ];
    servers.extend(peers);
    servers.push(ours(
        "ours, driven by our client (`client-load`: mcp_client::Client)",
        Role::OursByClient,
        Driver::Client,
        false,
        true,
        &["--http", "127.0.0.1:0"],
    ));
    // On this 2-core machine the driver shares the cores with the server's two worker
    // threads; with one, each has a core, and the driver's own CPU weighs less.
    servers.push(ours(
        "ours, HTTP on 1 worker thread, driven by our client",
        Role::OursOneWorkerByClient,
        Driver::Client,
        false,
        false,
        &["--http", "127.0.0.1:0", "--workers", "1"],
    ));
    // The client's own HTTP/1.1, measured against hyper's in the same rounds: our client
    // on hyper's client connection, beside `Role::OursByClient`.
    servers.push(ours(
        "ours, driven by our client on hyper's HTTP/1.1 (`client-load --hyper-http1`)",
        Role::OursByClientOnHyper,
        Driver::ClientOnHyper,
        false,
        false,
        &["--http", "127.0.0.1:0"],
    ));
    // The code weighed with and without it in the same rounds (the "with and without"
    // table): the connection threads, the idle poll, and mimalloc against the system's.
    servers.push(ours(
        "ours, HTTP on tokio's runtime, no connection threads (`--tokio-runtime`)",
        Role::OursOnTokio,
        Driver::McpLoad,
        false,
        false,
        &["--http", "127.0.0.1:0", "--tokio-runtime"],
    ));
    servers.push(ours(
        "ours, HTTP without the idle poll (`--idle-poll 0`)",
        Role::OursIdlePollOff,
        Driver::McpLoad,
        false,
        false,
        &["--http", "127.0.0.1:0", "--idle-poll", "0"],
    ));
    servers.push(ServerSpec {
        name: "ours, built with mimalloc (`--features mimalloc`)".to_owned(),
        role: Role::OursMimalloc,
        driver: Driver::McpLoad,
        era: "modern",
        stdio: Some(cmd(&bins.server_mimalloc, &[])),
        http: Some(cmd(&bins.server_mimalloc, &["--http", "127.0.0.1:0"])),
        tools: false,
        tools_args: &[],
        progress_http: &[],
    });
    // The hand-written pieces, each against the build without it (`Piece`).
    for (piece, server) in &bins.server_without {
        servers.push(ServerSpec {
            name: format!("ours, without {} (`mcp_without`)", piece.cfg()),
            role: Role::OursWithout(*piece),
            driver: Driver::McpLoad,
            era: "modern",
            stdio: Some(cmd(server, &[])),
            http: Some(cmd(server, &["--http", "127.0.0.1:0"])),
            tools: false,
            tools_args: &[],
            progress_http: &[],
        });
    }
    for (piece, _) in &bins.client_without {
        servers.push(ours(
            &format!(
                "ours, driven by our client without {} (`mcp_without`)",
                piece.cfg()
            ),
            Role::OursByClientWithout(*piece),
            Driver::ClientWithout(*piece),
            false,
            false,
            &["--http", "127.0.0.1:0"],
        ));
    }
    servers
}

/// The binaries the run needs.
struct Bins {
    /// Ours: `mcp-bench-server`.
    server: PathBuf,
    /// The same, built with its `mimalloc` feature.
    server_mimalloc: PathBuf,
    /// The same, built without each of [`Piece::SERVER`].
    server_without: Vec<(Piece, PathBuf)>,
    load: PathBuf,
    client: PathBuf,
    /// `client-load` built without each of [`Piece::CLIENT`].
    client_without: Vec<(Piece, PathBuf)>,
    floor: PathBuf,
    rmcp: PathBuf,
}

impl Bins {
    /// The client binary `driver` runs.
    fn client_of(&self, driver: Driver) -> &Path {
        match driver {
            Driver::ClientWithout(piece) => self
                .client_without
                .iter()
                .find(|(p, _)| *p == piece)
                .map_or(&self.client, |(_, bin)| bin),
            _ => &self.client,
        }
    }
}

/// How long and how hard each run measures.
#[derive(Clone, Copy, Debug)]
struct Settings {
    duration: f64,
    warmup: u64,
}

/// Writes a full run's medians to `<dir>/<seconds since the epoch>.json` (`dir` is
/// `bench/results/`), with the commit measured: the record of earlier runs is this data,
/// not prose.
fn record(
    dir: &Path,
    servers: &[ServerSpec],
    medians: &BTreeMap<(usize, Load, Transport), Figures>,
    settings: Settings,
) -> Result<PathBuf, String> {
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(crate::project_root())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| e.to_string())?
        .as_secs();
    let rows: Vec<Value> = medians
        .iter()
        .map(|((index, load, transport), f)| {
            serde_json::json!({
                "server": servers[*index].name,
                "load": load.name(),
                "transport": transport.name(),
                "calls_per_s": f.calls_per_s,
                "p50_us": f.p50_us,
                "p99_us": f.p99_us,
                "cpu_us_per_call": f.cpu_us_per_call,
                "peak_rss_kib": f.peak_rss_kib,
                "cold_start_ms": f.cold_start_ms,
                "driver_cpu_us_per_call": f.driver_cpu_us_per_call,
            })
        })
        .collect();
    let record = serde_json::json!({
        "unix_time": seconds,
        "commit": commit,
        "seconds_per_run": settings.duration,
        "rounds": ROUNDS,
        "medians": rows,
    });
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{seconds}.json"));
    let text = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
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
    /// The driver's own CPU per call (reports from before it was added have none).
    driver_cpu_us_per_call: Option<f64>,
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
            driver_cpu_us_per_call: report["driver_cpu_us_per_call"].as_f64(),
        })
    }

    /// The median of each figure over the rounds.
    fn median(runs: &[Self]) -> Option<Self> {
        let of = |f: fn(&Self) -> f64| median(&runs.iter().map(f).collect::<Vec<_>>());
        let cold: Vec<f64> = runs.iter().filter_map(|r| r.cold_start_ms).collect();
        let driver: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.driver_cpu_us_per_call)
            .collect();
        Some(Self {
            calls_per_s: of(|r| r.calls_per_s)?,
            p50_us: of(|r| r.p50_us)?,
            p99_us: of(|r| r.p99_us)?,
            cpu_us_per_call: of(|r| r.cpu_us_per_call)?,
            peak_rss_kib: of(|r| r.peak_rss_kib)?,
            cold_start_ms: median(&cold),
            driver_cpu_us_per_call: median(&driver),
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
    let work = crate::project_root().join("bench/.work");
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let mut skipped = Vec::new();
    let peers = sdk_peers(&work, &mut skipped);
    let servers = servers(&bins, peers);
    let log_path = work.join("runs.jsonl");
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;

    // (server index, load, transport) → the figures of each round.
    let mut results: BTreeMap<(usize, Load, Transport), Vec<Figures>> = BTreeMap::new();
    let mut failures = Vec::new();
    for round in 1..=ROUNDS {
        for &(load, transport) in &SCENARIOS {
            for (index, server) in servers.iter().enumerate() {
                let Some(command) = server.command(load, transport) else {
                    continue;
                };
                eprintln!(
                    "round {round}/{ROUNDS}: {} over {}, {}",
                    server.name,
                    transport.name(),
                    load.name()
                );
                match measure(&bins, server, &command, load, transport, settings) {
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
    if !quick {
        let dir = crate::project_root().join("bench/results");
        match record(&dir, &servers, &medians, settings) {
            Ok(path) => eprintln!("the medians: {}", path.display()),
            Err(e) => eprintln!("the medians were not recorded: {e}"),
        }
    }
    if !skipped.is_empty() {
        println!("Not measured:\n");
        for line in &skipped {
            println!("- {line}");
        }
        println!();
    }
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
    // Ours, built as a user builds a server: the workspace's release profile, no extra
    // flags.
    crate::cargo(&["build", "--release", "-p", "mcp-bench-server"])?;
    let server = crate::target_dir().join("release/mcp-bench-server");
    // With mimalloc, in a target directory of its own so that both binaries stay.
    let mimalloc = crate::target_dir().join("bench-mimalloc");
    let mimalloc_dir = mimalloc.display().to_string();
    crate::cargo(&[
        "build",
        "--release",
        "-p",
        "mcp-bench-server",
        "--features",
        "mimalloc",
        "--target-dir",
        &mimalloc_dir,
    ])?;
    let server_mimalloc = mimalloc.join("release/mcp-bench-server");
    let mut server_without = Vec::new();
    for piece in Piece::SERVER {
        let dir = crate::target_dir().join(format!("bench-without-{}", piece.cfg()));
        let dir_arg = dir.display().to_string();
        crate::cargo_with(
            &[
                "build",
                "--release",
                "-p",
                "mcp-bench-server",
                "--target-dir",
                &dir_arg,
            ],
            &[("RUSTFLAGS", &piece.rustflags())],
        )?;
        server_without.push((piece, dir.join("release/mcp-bench-server")));
    }
    let bench = ["build", "--release", "--manifest-path", "bench/Cargo.toml"];
    crate::cargo(
        &[
            &bench[..],
            &["-p", "mcp-load", "-p", "floor", "-p", "rmcp-server"],
        ]
        .concat(),
    )?;
    // On its own: built with the others, the main workspace's serde_json features
    // (preserve_order) would reach the floor and mcp-load.
    crate::cargo(&[&bench[..], &["-p", "client-load"]].concat())?;
    let bench_target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("bench").join("target"),
    };
    let mut client_without = Vec::new();
    for piece in Piece::CLIENT {
        let dir = bench_target.join(format!("without-{}", piece.cfg()));
        let dir_arg = dir.display().to_string();
        crate::cargo_with(
            &[&bench[..], &["-p", "client-load", "--target-dir", &dir_arg]].concat(),
            &[("RUSTFLAGS", &piece.rustflags())],
        )?;
        client_without.push((piece, dir.join("release/client-load")));
    }
    let bench = bench_target.join("release");
    let bins = Bins {
        server,
        server_mimalloc,
        server_without,
        load: bench.join("mcp-load"),
        client: bench.join("client-load"),
        client_without,
        floor: bench.join("floor"),
        rmcp: bench.join("rmcp-server"),
    };
    for bin in [
        &bins.server,
        &bins.server_mimalloc,
        &bins.load,
        &bins.client,
        &bins.floor,
        &bins.rmcp,
    ]
    .into_iter()
    .chain(bins.server_without.iter().map(|(_, bin)| bin))
    .chain(bins.client_without.iter().map(|(_, bin)| bin))
    {
        if !bin.is_file() {
            return Err(format!("{} is missing after the build", bin.display()));
        }
    }
    Ok(bins)
}

/// The arguments of one driver run, before the target (`--stdio -- CMD` or `--http`).
fn driver_args(server: &ServerSpec, load: Load, settings: Settings) -> (Vec<String>, &'static str) {
    let mut args = vec![
        "--duration".to_owned(),
        settings.duration.to_string(),
        "--warmup".to_owned(),
        load.warmup(settings).to_string(),
    ];
    match server.driver {
        Driver::McpLoad => {
            args.extend(["--era".to_owned(), server.era.to_owned()]);
            args.extend(load.load_args());
            (args, "mcp-load")
        }
        Driver::Client | Driver::ClientOnHyper | Driver::ClientWithout(_) => {
            args.extend([
                "--in-flight".to_owned(),
                load.in_flight().to_string(),
                "--payload".to_owned(),
                load.payload().to_string(),
            ]);
            if server.driver == Driver::ClientOnHyper {
                args.push("--hyper-http1".to_owned());
            }
            (args, "client-load")
        }
    }
}

/// One driver run; gives its JSON report.
fn measure(
    bins: &Bins,
    server: &ServerSpec,
    command: &[String],
    load: Load,
    transport: Transport,
    settings: Settings,
) -> Result<Value, String> {
    let (mut args, driver) = driver_args(server, load, settings);
    let program = match server.driver {
        Driver::McpLoad => &bins.load,
        Driver::Client | Driver::ClientOnHyper | Driver::ClientWithout(_) => {
            bins.client_of(server.driver)
        }
    };
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
    let output = run_with_timeout(program, driver, &args, limit)?;
    drop(http_server);
    let line = output
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .ok_or_else(|| format!("{driver} printed no report: {output:?}"))?;
    let mut report: Value =
        serde_json::from_str(line).map_err(|e| format!("unreadable report {line:?}: {e}"))?;
    report["server"] = Value::from(server.name.as_str());
    report["scenario"] = Value::from(load.name());
    Ok(report)
}

/// Kills a server on every path out.
pub(crate) struct Killed(pub(crate) Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts an HTTP server and reads its URL from the first line of its stdout.
pub(crate) fn start_http(command: &[String]) -> Result<(Killed, String), String> {
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

/// Runs a driver to completion within `limit`; gives its stdout.
pub(crate) fn run_with_timeout(
    program: &Path,
    driver: &str,
    args: &[String],
    limit: Duration,
) -> Result<String, String> {
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
                return Err(format!("{driver} took longer than {limit:?}; killed"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for {driver}: {e}")),
        }
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("cannot read {driver}'s output: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        Ok(stdout)
    } else {
        Err(format!(
            "{driver} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
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

    pub(super) fn bins() -> Bins {
        Bins {
            server: "mcp-bench-server".into(),
            server_mimalloc: "mcp-bench-server-mimalloc".into(),
            server_without: Piece::SERVER
                .into_iter()
                .map(|p| (p, format!("mcp-bench-server-without-{}", p.cfg()).into()))
                .collect(),
            load: "mcp-load".into(),
            client: "client-load".into(),
            client_without: Piece::CLIENT
                .into_iter()
                .map(|p| (p, format!("client-load-without-{}", p.cfg()).into()))
                .collect(),
            floor: "floor".into(),
            rmcp: "rmcp-server".into(),
        }
    }

    /// A peer as `ts_peer` makes it, without node.
    pub(super) fn peer() -> ServerSpec {
        ServerSpec {
            name: "TypeScript SDK 1.32.2".to_owned(),
            role: Role::Other,
            driver: Driver::McpLoad,
            era: "legacy",
            stdio: Some(vec!["node".into(), "server.mjs".into()]),
            http: Some(vec![
                "node".into(),
                "server.mjs".into(),
                "--http".into(),
                "127.0.0.1:0".into(),
            ]),
            tools: true,
            tools_args: &[],
            progress_http: &["--sse"],
        }
    }

    #[test]
    fn a_full_run_s_medians_are_recorded_as_data() {
        let servers = servers(&bins(), vec![peer()]);
        let figures = Figures {
            calls_per_s: 1000.0,
            cold_start_ms: Some(1.5),
            ..Figures::default()
        };
        let medians = BTreeMap::from([((0, Load::Small, Transport::Stdio), figures)]);
        let dir = std::env::temp_dir().join(format!("xtask-record-{}", std::process::id()));
        let settings = Settings {
            duration: 3.0,
            warmup: 500,
        };
        let path = record(&dir, &servers, &medians, settings).unwrap();
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(written["rounds"], ROUNDS);
        assert_eq!(written["seconds_per_run"], 3.0);
        let row = &written["medians"][0];
        assert_eq!(row["server"], servers[0].name.as_str());
        assert_eq!(
            (row["load"].as_str(), row["transport"].as_str()),
            (Some(Load::Small.name()), Some("stdio"))
        );
        assert_eq!(row["calls_per_s"], 1000.0);
        assert_eq!(row["cold_start_ms"], 1.5);
        assert!(row["driver_cpu_us_per_call"].is_null());
    }

    #[test]
    fn who_takes_part_in_what() {
        let servers = servers(&bins(), vec![peer()]);
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), 14, "{names:?}");
        let by_role = |role| servers.iter().find(|s| s.role == role).unwrap();
        let ours = by_role(Role::Ours);
        assert_eq!(
            ours.command(Load::List, Transport::Stdio).unwrap(),
            ["mcp-bench-server", "--bench-tools", "--extra-tools", "500"]
        );
        assert_eq!(
            ours.command(Load::Progress, Transport::Http).unwrap(),
            ["mcp-bench-server", "--http", "127.0.0.1:0", "--bench-tools"]
        );
        assert_eq!(
            ours.command(Load::Small, Transport::Stdio).unwrap(),
            ["mcp-bench-server"]
        );
        let floor = by_role(Role::Floor);
        assert!(floor.command(Load::Small, Transport::Stdio).is_some());
        for load in [Load::Search, Load::List, Load::Progress] {
            assert!(floor.command(load, Transport::Http).is_none());
        }
        let rmcp = by_role(Role::Rmcp);
        assert_eq!(
            rmcp.command(Load::List, Transport::Http).unwrap(),
            ["rmcp-server", "http", "127.0.0.1:0", "--extra-tools", "500"]
        );
        let ts = &servers[5];
        assert_eq!(ts.era, "legacy");
        assert_eq!(
            ts.command(Load::Progress, Transport::Http).unwrap(),
            ["node", "server.mjs", "--http", "127.0.0.1:0", "--sse"]
        );
        assert_eq!(
            ts.command(Load::Search, Transport::Stdio).unwrap(),
            ["node", "server.mjs"]
        );
        let client = by_role(Role::OursByClient);
        assert_eq!(client.driver, Driver::Client);
        assert!(client.command(Load::Small, Transport::Stdio).is_some());
        assert!(client.command(Load::Small, Transport::Http).is_some());
        assert!(client.command(Load::Large, Transport::Stdio).is_none());
        assert!(client.command(Load::Search, Transport::Stdio).is_none());
        let one = by_role(Role::OursOneWorkerByClient);
        assert_eq!(one.driver, Driver::Client);
        assert!(one.command(Load::Small, Transport::Stdio).is_none());
        assert_eq!(
            one.command(Load::Small, Transport::Http).unwrap(),
            [
                "mcp-bench-server",
                "--http",
                "127.0.0.1:0",
                "--workers",
                "1"
            ]
        );
        assert_eq!(
            by_role(Role::OursOneWorker).command(Load::Small, Transport::Http),
            one.command(Load::Small, Transport::Http)
        );
        // The client's own HTTP/1.1 against hyper's: against the very server
        // `Role::OursByClient` drives.
        let on_hyper = by_role(Role::OursByClientOnHyper);
        assert_eq!(on_hyper.driver, Driver::ClientOnHyper);
        assert_eq!(
            on_hyper.command(Load::Small, Transport::Http),
            client.command(Load::Small, Transport::Http)
        );
        assert!(on_hyper.command(Load::Small, Transport::Stdio).is_none());
        assert!(on_hyper.command(Load::Large, Transport::Http).is_none());
        // The rows weighed against ours: its command with one flag (HTTP only), or the
        // mimalloc build's binary with ours' command (both transports, echo loads only).
        for (role, flags) in [
            (Role::OursOnTokio, &["--tokio-runtime"][..]),
            (Role::OursIdlePollOff, &["--idle-poll", "0"][..]),
        ] {
            let without = by_role(role);
            for load in [Load::Small, Load::Large, Load::Single] {
                let mut with = ours.command(load, Transport::Http).unwrap();
                with.extend(flags.iter().map(|&f| f.to_owned()));
                assert_eq!(without.command(load, Transport::Http).unwrap(), with);
            }
            assert!(without.command(Load::Small, Transport::Stdio).is_none());
            assert!(without.command(Load::Search, Transport::Http).is_none());
        }
        let mimalloc = by_role(Role::OursMimalloc);
        for transport in [Transport::Stdio, Transport::Http] {
            let mut command = ours.command(Load::Small, transport).unwrap();
            command[0] = "mcp-bench-server-mimalloc".to_owned();
            assert_eq!(mimalloc.command(Load::Small, transport).unwrap(), command);
            assert!(mimalloc.command(Load::Search, transport).is_none());
        }
        // Each build without a hand-written piece: its own binary with ours' arguments, or
        // our client's load from its own client binary.
        for piece in Piece::SERVER {
            let without = by_role(Role::OursWithout(piece));
            let command = without.command(Load::Large, Transport::Http).unwrap();
            assert_eq!(
                command[0],
                format!("mcp-bench-server-without-{}", piece.cfg())
            );
            let with = ours.command(Load::Large, Transport::Http).unwrap();
            assert_eq!(command[1..], with[1..]);
            assert!(without.command(Load::Small, Transport::Stdio).is_some());
            assert!(without.command(Load::Search, Transport::Http).is_none());
        }
        for piece in Piece::CLIENT {
            let without = by_role(Role::OursByClientWithout(piece));
            assert_eq!(without.driver, Driver::ClientWithout(piece));
            assert_eq!(
                without.command(Load::Small, Transport::Http),
                client.command(Load::Small, Transport::Http)
            );
            let bin = format!("client-load-without-{}", piece.cfg());
            assert_eq!(bins().client_of(without.driver), Path::new(&bin));
        }
        assert_eq!(bins().client_of(Driver::Client), Path::new("client-load"));
    }

    /// Every switch the bench builds with is one the workspace declares (an undeclared
    /// `--cfg` would be ignored, and the "without" build would be the "with").
    #[test]
    fn every_switch_is_declared_and_used() {
        let root = crate::project_root();
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let sources = [
            "crates/mcp-json/src/lib.rs",
            "crates/mcp-client/src/client/builder.rs",
        ]
        .map(|path| std::fs::read_to_string(root.join(path)).unwrap())
        .concat();
        for piece in Piece::SERVER.into_iter().chain(Piece::CLIENT) {
            assert_eq!(
                piece.rustflags(),
                format!("--cfg mcp_without=\"{}\"", piece.cfg())
            );
            let value = format!("\"{}\"", piece.cfg());
            assert!(manifest.contains(&value), "{value} is not in check-cfg");
            let used = format!("mcp_without = {value}");
            assert!(sources.contains(&used), "nothing reads {used}");
        }
    }

    #[test]
    fn what_the_drivers_are_told() {
        let settings = Settings {
            duration: 0.5,
            warmup: 100,
        };
        let servers = servers(&bins(), vec![peer()]);
        let (args, driver) = driver_args(&servers[0], Load::Small, settings);
        assert_eq!(driver, "mcp-load");
        assert_eq!(
            args.join(" "),
            "--duration 0.5 --warmup 100 --era modern --in-flight 16 --payload 16"
        );
        let (args, _) = driver_args(&servers[5], Load::Single, settings);
        assert!(
            args.join(" ")
                .ends_with("--era legacy --in-flight 1 --payload 16"),
            "{args:?}"
        );
        let (args, _) = driver_args(&servers[0], Load::List, settings);
        assert_eq!(
            args.join(" "),
            "--duration 0.5 --warmup 4 --era modern --in-flight 16 --method tools/list --expect-tools 500"
        );
        let (args, _) = driver_args(&servers[0], Load::Progress, settings);
        assert!(
            args.join(" ")
                .ends_with(r#"--tool steps --arguments {"steps":10} --progress 10"#),
            "{args:?}"
        );
        let (args, _) = driver_args(&servers[0], Load::Search, settings);
        let at = args.iter().position(|a| a == "--arguments").unwrap();
        let search: Value = serde_json::from_str(&args[at + 1]).unwrap();
        assert_eq!(search["scope"], "code");
        assert!(SEARCH_REPLY.contains(search["query"].as_str().unwrap()));
        assert_eq!(args[at + 3], SEARCH_REPLY);
        let client = servers.iter().find(|s| s.driver == Driver::Client).unwrap();
        let (args, driver) = driver_args(client, Load::Small, settings);
        assert_eq!(driver, "client-load");
        assert_eq!(
            args.join(" "),
            "--duration 0.5 --warmup 100 --in-flight 16 --payload 16"
        );
        let on_hyper = servers
            .iter()
            .find(|s| s.driver == Driver::ClientOnHyper)
            .unwrap();
        let (args, driver) = driver_args(on_hyper, Load::Small, settings);
        assert_eq!(driver, "client-load");
        assert_eq!(
            args.join(" "),
            "--duration 0.5 --warmup 100 --in-flight 16 --payload 16 --hyper-http1"
        );
    }
}
