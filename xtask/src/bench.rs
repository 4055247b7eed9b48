//! `cargo xtask bench [--quick] [--only TEXT]`: the side-by-side measurement of our server
//! against the official SDKs (rmcp, TypeScript, Python) and the machine's floor, in both
//! protocol eras.
//!
//! 1. Builds ours, each as a user builds it (release, this workspace): `minimal-server` (the
//!    README's quick start, the server of the echo loads), `mcp` (for `mcp serve-example`)
//!    and `mcp-bench-server` (the same API with the benchmark's tools, for the tool
//!    scenarios and the with-and-without rows); and the benchmark-only workspace `bench/`
//!    (release: `mcp-load`, `floor`, `rmcp-server`, then `client-load` on its own so that
//!    the main workspace's serde_json features do not reach the floor). `bench/` is not a
//!    member of this workspace, so CI never builds rmcp. Installs the SDK peers pinned
//!    when missing or out of date ([`peers::sdk_peers`]): `npm ci` in `bench/ts-server`, and a
//!    venv in `bench/.work/py-venv` with `bench/py-server/requirements.txt`; without node
//!    or python (or when the install fails) the run says so and goes on without that peer.
//! 2. Runs every scenario ([`SCENARIOS`]) against every server that serves it, in each era
//!    it speaks ([`servers`], [`ServerSpec::command`], [`Era`]), interleaved: round 1 runs each scenario for
//!    each server, then round 2, then round 3. The echo loads: a 16-byte echo with 16 calls
//!    in flight, a 64 KiB echo with 16 in flight, a 16-byte echo with one in flight. The
//!    tool scenarios (servers with the benchmark's tools: ours, rmcp, the SDK peers): the
//!    schema-validated `search`, `tools/list` of 500 tools (`--extra-tools 500`, every page
//!    followed, the driver checking on two threads), and `steps` with 10 progress notifications per call over SSE (HTTP only).
//!    Each SDK is driven in the era it speaks. Our client (`client-load`) drives ours with
//!    the small echo, for the "our client ÷ mcp-load" figure (over HTTP with the server on
//!    its default worker threads and on one, against `mcp-load` driving the same server).
//!    Over stdio the driver spawns
//!    the server itself; over HTTP the server is started here with `127.0.0.1:0`, its URL
//!    read from the first line of its stdout (or, for `minimal-server`, which prints
//!    none, on a port picked here: [`Url::PickedPort`]), and killed after the run. Then,
//!    once, the idle cost ([`idle_specs`]): memory per idle session and connection.
//! 3. Takes the median of the rounds for each figure and prints the tables of
//!    `docs/PERFORMANCE.md`: the figures per server, the tool scenarios, ours against rmcp
//!    and the floor with the goals, and our client against `mcp-load`. Every report
//!    is also appended to `bench/.work/runs.jsonl` (ignored by git).
//!
//! `--quick` measures for 0.3 s with a short warm-up instead of 3 s: a smoke run that
//! shows the harness works, not figures to quote. `--only TEXT` keeps the runs whose
//! server, load, transport or era names contain TEXT (the idle cost: "idle").

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

mod idle;
mod peers;
mod render;

use idle::{IDLE_COUNT, IdleFigure, IdleKind, idle_specs, measure_idle, raise_open_files};
use peers::sdk_peers;
use render::render;

pub(crate) const USAGE: &str = "bench [--quick] [--only TEXT]";

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

/// The protocol era `mcp-load` speaks to a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Era {
    /// 2026-07-28: `_meta` on every request, no handshake.
    Modern,
    /// 2025-11-25: `initialize` and `notifications/initialized` first, then the
    /// `Mcp-Session-Id` over HTTP when the server gives one.
    Legacy,
}

impl Era {
    const BOTH: [Era; 2] = [Era::Modern, Era::Legacy];

    /// The value of `mcp-load --era`.
    fn arg(self) -> &'static str {
        match self {
            Self::Modern => "modern",
            Self::Legacy => "legacy",
        }
    }

    /// The revision, as the tables name the era.
    fn revision(self) -> &'static str {
        match self {
            Self::Modern => "2026-07-28",
            Self::Legacy => "2025-11-25",
        }
    }
}

/// How the harness learns an HTTP server's URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Url {
    /// It binds `127.0.0.1:0` and prints its URL on the first line of stdout.
    Printed,
    /// It prints nothing (`minimal-server`, the README's quick start): the harness picks a
    /// free port, puts it in place of [`PICKED_PORT`] in the command and waits until the
    /// port takes connections.
    PickedPort,
}

/// The address argument that [`Url::PickedPort`] replaces with `127.0.0.1:PORT`.
const PICKED_PORT: &str = "127.0.0.1:{port}";

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
            // Checking a listing costs the driver more than serving it costs our server:
            // the driver checks on two threads, so that it does not set the rate.
            Self::List => vec![
                "--method".into(),
                "tools/list".into(),
                "--expect-tools".into(),
                EXTRA_TOOLS.to_string(),
                "--threads".into(),
                "2".into(),
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
    /// `minimal-server`, the README's quick start: ours for the echo loads.
    OursMinimal,
    /// `mcp-bench-server`: ours for the tool scenarios (it has their tools), and the
    /// server of the with-and-without rows.
    Ours,
    /// `mcp serve-example`, the bundled example server.
    ServeExample,
    /// Ours, driven by our client instead of `mcp-load`.
    OursByClient,
    /// Ours over HTTP on one worker thread (`--workers 1`).
    OursOneWorker,
    /// The same, driven by our client.
    OursOneWorkerByClient,
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
    /// rmcp stateless (HTTP) and `stdio_pipes()` (stdio).
    Rmcp,
    /// rmcp's default HTTP, with sessions: the 2025 era only.
    RmcpStateful,
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
    /// `client-load` built without a hand-written piece.
    ClientWithout(Piece),
}

impl Driver {
    fn is_client(self) -> bool {
        matches!(self, Self::Client | Self::ClientWithout(_))
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
    /// `mcp-transport-http`'s client connection pool (`client/pool.rs`), against
    /// hyper-util's (`client::legacy::Client`).
    ClientPool,
}

impl Piece {
    /// Those the server is built without.
    const SERVER: [Piece; 1] = [Self::JsonWriter];
    /// Those the client is built without.
    const CLIENT: [Piece; 2] = [Self::CallWriter, Self::ClientPool];

    /// The value of `mcp_without` that turns it off.
    fn cfg(self) -> &'static str {
        match self {
            Self::JsonWriter => "json_writer",
            Self::CallWriter => "call_writer",
            Self::ClientPool => "client_pool",
        }
    }

    /// Whether the client built without it is weighed over stdio as well as HTTP: not the
    /// HTTP client's pieces, which a stdio call does not run.
    fn over_stdio(self) -> bool {
        !matches!(self, Self::ClientPool)
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
    era: Era,
    /// The command of the stdio server.
    stdio: Option<Vec<String>>,
    /// The command of the HTTP server.
    http: Option<Vec<String>>,
    /// How its URL is learnt.
    url: Url,
    /// It serves the echo loads.
    echo: bool,
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
        if load.needs_tools() && !self.tools || !load.needs_tools() && !self.echo {
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

/// A server of the modern era that prints its URL, served on every load it has.
fn spec(
    name: &str,
    role: Role,
    stdio: Option<Vec<String>>,
    http: Option<Vec<String>>,
) -> ServerSpec {
    ServerSpec {
        name: name.to_owned(),
        role,
        driver: Driver::McpLoad,
        era: Era::Modern,
        stdio,
        http,
        url: Url::Printed,
        echo: true,
        tools: false,
        tools_args: &[],
        progress_http: &[],
    }
}

impl ServerSpec {
    /// The same server driven in the 2025 era.
    fn legacy(&self) -> ServerSpec {
        ServerSpec {
            name: self.name.clone(),
            era: Era::Legacy,
            stdio: self.stdio.clone(),
            http: self.http.clone(),
            ..*self
        }
    }
}

/// Ours (`minimal-server` for the echo loads, `mcp-bench-server` for the tools, `mcp
/// serve-example` beside them), the floor and rmcp, then the SDK peers that could be
/// installed, in the 2026-07-28 era; then the same in the 2025 era, with rmcp's default
/// stateful HTTP (which needs `initialize`); then the rows weighed against ours (modern only).
fn servers(bins: &Bins, peers: Vec<ServerSpec>) -> Vec<ServerSpec> {
    let cmd = command_of;
    let ours = |name: &str, role, driver, tools, stdio: bool, http: &[&str]| ServerSpec {
        name: name.to_owned(),
        role,
        driver,
        era: Era::Modern,
        stdio: stdio.then(|| cmd(&bins.server, &[])),
        http: Some(cmd(&bins.server, http)),
        url: Url::Printed,
        echo: true,
        tools,
        tools_args: &["--bench-tools"],
        progress_http: &[],
    };
    let minimal = ServerSpec {
        url: Url::PickedPort,
        ..spec(
            "ours (minimal-server, the README's quick start)",
            Role::OursMinimal,
            Some(cmd(&bins.minimal, &[])),
            Some(cmd(&bins.minimal, &["--http", PICKED_PORT])),
        )
    };
    let bench_server = ours(
        "ours (mcp-bench-server)",
        Role::Ours,
        Driver::McpLoad,
        true,
        true,
        &["--http", "127.0.0.1:0"],
    );
    let serve_example = spec(
        "ours (`mcp serve-example`)",
        Role::ServeExample,
        Some(cmd(&bins.mcp, &["serve-example"])),
        Some(cmd(&bins.mcp, &["serve-example", "--http", "127.0.0.1:0"])),
    );
    let floor = spec(
        "floor (serde_json + fixed reply / bare hyper 1)",
        Role::Floor,
        Some(cmd(&bins.floor, &["stdio"])),
        Some(cmd(&bins.floor, &["http", "127.0.0.1:0"])),
    );
    let rmcp = ServerSpec {
        tools: true,
        ..spec(
            "rmcp 3.11 (`stdio_pipes()`; HTTP stateless JSON)",
            Role::Rmcp,
            Some(cmd(&bins.rmcp, &["stdio-pipes"])),
            Some(cmd(&bins.rmcp, &["http", "127.0.0.1:0"])),
        )
    };
    let rmcp_stateful = ServerSpec {
        era: Era::Legacy,
        tools: true,
        ..spec(
            "rmcp 3.11 HTTP stateful (its default: sessions, SSE replies)",
            Role::RmcpStateful,
            None,
            Some(cmd(&bins.rmcp, &["http-stateful", "127.0.0.1:0"])),
        )
    };
    // The 2025 era: ours (the benchmark's server for its tools only: `minimal-server` and
    // `serve-example` have the echo rows), the floor (echo only), rmcp both ways, and the
    // peers that speak it.
    let mut legacy = vec![
        minimal.legacy(),
        ServerSpec {
            echo: false,
            ..bench_server.legacy()
        },
        serve_example.legacy(),
        floor.legacy(),
        rmcp.legacy(),
        rmcp_stateful,
    ];
    let mut servers = vec![
        minimal,
        bench_server,
        serve_example,
        ours(
            "ours, HTTP on 1 worker thread (`--workers 1`)",
            Role::OursOneWorker,
            Driver::McpLoad,
            false,
            false,
            &["--http", "127.0.0.1:0", "--workers", "1"],
        ),
        floor,
        rmcp,
        spec(
            "rmcp 3.11 default `stdio()`",
            Role::Other,
            Some(cmd(&bins.rmcp, &["stdio"])),
            None,
        ),
    ];
    for peer in peers {
        match peer.era {
            Era::Modern => {
                // A modern peer that also answers `initialize` (the Python SDK) takes part
                // in both eras.
                legacy.push(peer.legacy());
                servers.push(peer);
            }
            Era::Legacy => legacy.push(peer),
        }
    }
    servers.extend(legacy);
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
    servers.push(spec(
        "ours, built with mimalloc (`--features mimalloc`)",
        Role::OursMimalloc,
        Some(cmd(&bins.server_mimalloc, &[])),
        Some(cmd(&bins.server_mimalloc, &["--http", "127.0.0.1:0"])),
    ));
    // The hand-written pieces, each against the build without it (`Piece`).
    for (piece, server) in &bins.server_without {
        servers.push(spec(
            &format!("ours, without {} (`mcp_without`)", piece.cfg()),
            Role::OursWithout(*piece),
            Some(cmd(server, &[])),
            Some(cmd(server, &["--http", "127.0.0.1:0"])),
        ));
    }
    // Over both transports (the writer's share of the client's CPU is largest over stdio,
    // where no HTTP stack shares the call), but HTTP only for the HTTP client's pieces.
    for (piece, _) in &bins.client_without {
        servers.push(ours(
            &format!(
                "ours, driven by our client without {} (`mcp_without`)",
                piece.cfg()
            ),
            Role::OursByClientWithout(*piece),
            Driver::ClientWithout(*piece),
            false,
            piece.over_stdio(),
            &["--http", "127.0.0.1:0"],
        ));
    }
    servers
}

/// The binaries the run needs.
struct Bins {
    /// Ours as the README's quick start builds it: `examples/minimal-server`.
    minimal: PathBuf,
    /// `mcp` (`crates/mcp-cli`), for `mcp serve-example`.
    mcp: PathBuf,
    /// Ours with the benchmark's tools: `mcp-bench-server`.
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

/// Whether `--only TEXT` keeps a run: TEXT in the server's name, the load's, the
/// transport's or the era's (any case); everything without `--only`.
fn kept(only: Option<&str>, parts: &[&str]) -> bool {
    only.is_none_or(|text| {
        let text = text.to_lowercase();
        parts.iter().any(|part| part.to_lowercase().contains(&text))
    })
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
    idle: &[IdleFigure],
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
                "era": servers[*index].era.revision(),
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
    let idle: Vec<Value> = idle
        .iter()
        .map(|figure| {
            serde_json::json!({
                "server": figure.name,
                "idle": figure.kind.name(),
                "count": IDLE_COUNT,
                "bytes_per": figure.bytes,
            })
        })
        .collect();
    let record = serde_json::json!({
        "unix_time": seconds,
        "commit": commit,
        "seconds_per_run": settings.duration,
        "rounds": ROUNDS,
        "medians": rows,
        "idle": idle,
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
    let (mut quick, mut only) = (false, None);
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--quick" => quick = true,
            "--only" => only = Some(rest.next().ok_or("--only needs a text")?.clone()),
            _ => return Err(format!("usage: cargo xtask {USAGE}")),
        }
    }
    let only = only.as_deref();
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
    // Before any server starts: the servers inherit it.
    let open_files = u64::try_from(IDLE_COUNT).unwrap_or(u64::MAX) * 2 + 256;
    if let Err(e) = raise_open_files(open_files) {
        eprintln!("warning: {e}");
    }
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
                let parts = [
                    server.name.as_str(),
                    load.name(),
                    transport.name(),
                    server.era.revision(),
                ];
                if !kept(only, &parts) {
                    continue;
                }
                eprintln!(
                    "round {round}/{ROUNDS}: {} over {}, {}, {}",
                    server.name,
                    transport.name(),
                    load.name(),
                    server.era.revision()
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
                            "{} over {}, {}, {}: {e}",
                            server.name,
                            transport.name(),
                            load.name(),
                            server.era.revision()
                        ));
                    }
                }
            }
        }
    }
    // Once per run, after the rounds: memory held by idle clients does not change from
    // round to round the way throughput does.
    let mut idle = Vec::new();
    for spec in idle_specs(&bins) {
        if !kept(only, &[spec.name.as_str(), "idle", spec.kind.name()]) {
            continue;
        }
        eprintln!(
            "idle cost: {} with {IDLE_COUNT} idle {}",
            spec.name,
            spec.kind.name()
        );
        let bytes = match measure_idle(&bins, &spec) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                eprintln!("  failed: {e}");
                failures.push(format!(
                    "{}, {IDLE_COUNT} idle {}: {e}",
                    spec.name,
                    spec.kind.name()
                ));
                None
            }
        };
        idle.push(IdleFigure {
            name: spec.name,
            role: spec.role,
            kind: spec.kind,
            bytes,
        });
    }
    let medians: BTreeMap<(usize, Load, Transport), Figures> = results
        .iter()
        .filter_map(|(key, runs)| Figures::median(runs).map(|m| (*key, m)))
        .collect();
    println!("{}", render(&servers, &medians, &idle, settings, quick));
    if !quick {
        let dir = crate::project_root().join("bench/results");
        match record(&dir, &servers, &medians, &idle, settings) {
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
    // Each on its own, as a user builds it (features unified with no other package).
    crate::cargo(&["build", "--release", "-p", "minimal-server"])?;
    crate::cargo(&["build", "--release", "-p", "mcp-cli"])?;
    let minimal = crate::target_dir().join("release/minimal-server");
    let mcp = crate::target_dir().join("release/mcp");
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
        minimal,
        mcp,
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
        &bins.minimal,
        &bins.mcp,
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
            args.extend(["--era".to_owned(), server.era.arg().to_owned()]);
            args.extend(load.load_args());
            (args, "mcp-load")
        }
        Driver::Client | Driver::ClientWithout(_) => {
            args.extend([
                "--in-flight".to_owned(),
                load.in_flight().to_string(),
                "--payload".to_owned(),
                load.payload().to_string(),
            ]);
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
        Driver::Client | Driver::ClientWithout(_) => bins.client_of(server.driver),
    };
    let mut http_server = None;
    match transport {
        Transport::Stdio => {
            args.push("--stdio".to_owned());
            args.push("--".to_owned());
            args.extend(command.iter().cloned());
        }
        Transport::Http => {
            let (child, url) = start_server(command, server.url)?;
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

/// Starts an HTTP server and learns its URL the way `url` says.
fn start_server(command: &[String], url: Url) -> Result<(Killed, String), String> {
    match url {
        Url::Printed => start_http(command),
        Url::PickedPort => start_on_picked_port(command),
    }
}

/// A free loopback port: bound, read and let go (another process could take it in
/// between; on a quiet loopback it does not).
fn pick_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("cannot pick a free port: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot read the picked port: {e}"))?
        .port();
    Ok(port)
}

/// `command` with [`PICKED_PORT`] replaced by `127.0.0.1:port`.
fn on_port(command: &[String], port: u16) -> Vec<String> {
    command
        .iter()
        .map(|arg| {
            if arg == PICKED_PORT {
                format!("127.0.0.1:{port}")
            } else {
                arg.clone()
            }
        })
        .collect()
}

/// Starts a server that prints no URL on a port picked here, and waits until the port
/// takes connections; fails early, with what it wrote on stderr, when it exits first.
fn start_on_picked_port(command: &[String]) -> Result<(Killed, String), String> {
    let port = pick_port()?;
    let command = on_port(command, port);
    let (program, args) = command.split_first().ok_or("empty server command")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let stderr = child.stderr.take().ok_or("no stderr pipe")?;
    let mut child = Killed(child);
    // Read all along, so the server never blocks on a full pipe; kept for the error.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut text);
        let _ = tx.send(text);
    });
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = child.0.try_wait() {
            let stderr = rx.recv_timeout(Duration::from_secs(1)).unwrap_or_default();
            return Err(format!(
                "{program} exited ({status}) before serving on port {port}: {}",
                stderr.trim()
            ));
        }
        if std::net::TcpStream::connect_timeout(&address, Duration::from_millis(100)).is_ok() {
            return Ok((child, format!("http://127.0.0.1:{port}/mcp")));
        }
        if started.elapsed() > START_TIMEOUT {
            return Err(format!(
                "{program} took no connection on port {port} within {START_TIMEOUT:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
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
mod tests;
