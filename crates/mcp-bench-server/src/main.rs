//! `mcp-bench-server`: the server that `cargo xtask bench` and `cargo xtask soak` measure.
//!
//! It is written the way a user writes a server: `Server::builder` with its tools, served
//! for both eras by `mcp-legacy` over stdio or Streamable HTTP, built with the workspace's
//! release profile and nothing else. What it serves:
//!
//! - always `echo` {text} and `add` {a, b}, the tools every server of the benchmark has;
//! - `--bench-tools`: `search` (a realistic input schema) and `steps` (progress
//!   notifications), for the benchmark's tool scenarios; off by default, so that the echo
//!   loads (and their cold start) measure the server without those schemas;
//! - `--extra-tools N`: N generated tools, `extra_000` on, for the `tools/list` scenario;
//! - `--soak-tools`: `barrier`, `wait`, `stats`, `increment` and the `soak://counter`
//!   resource, for the soak (see `soak.rs`).
//!
//! ```text
//! mcp-bench-server [--http ADDR] [--workers N] [--tokio-runtime] [--bench-tools]
//!                  [--extra-tools N] [--soak-tools] [--max-concurrent-requests N]
//!                  [--max-connections N] [--max-sessions N] [--idle-poll MICROS]
//! ```
//!
//! Built with the `mimalloc` feature, its global allocator is the `mimalloc` crate's.
//!
//! Over stdio it serves until stdin closes. Over HTTP it prints the endpoint's URL as the
//! first line of stdout and serves until interrupted.

#![forbid(unsafe_code)]

mod arguments;
mod soak;
mod tools;

/// The `mimalloc` feature (see Cargo.toml); the system allocator otherwise.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_legacy::server::DualEra;
use mcp_transport_http::{HttpServer, HttpServerConfig};

use crate::soak::Probes;

const USAGE: &str = "usage: mcp-bench-server [--http ADDR] [--workers N] [--tokio-runtime] \
[--bench-tools] [--extra-tools N] [--soak-tools] [--max-concurrent-requests N] \
[--max-connections N] [--max-sessions N] [--idle-poll MICROS]

  --http ADDR                    serve Streamable HTTP on ADDR (such as 127.0.0.1:0) and
                                 print its URL; stdio otherwise
  --workers N                    HTTP: 1 serves everything on the main thread; N > 1
                                 serves the connections on N connection threads (default 2)
  --tokio-runtime                HTTP: no connection threads; everything on a
                                 multi-threaded tokio runtime of N workers (default 2)
  --bench-tools                  also register `search` and `steps` (cargo xtask bench)
  --extra-tools N                also register N generated tools, extra_000 on
  --soak-tools                   also register `barrier`, `wait`, `stats`, `increment` and
                                 soak://counter (cargo xtask soak)
  --max-concurrent-requests N    HTTP: requests in flight at once (default 1024)
  --max-connections N            HTTP: open connections at once (default 4096)
  --max-sessions N               HTTP: 2025-era sessions at once, in all, per principal and
                                 per address (defaults 1024, 64, 64)
  --idle-poll MICROS             HTTP: a connection thread's idle poll (default 50, 0: off)";

/// What the command line asks for.
#[derive(Debug, Default, PartialEq)]
struct Options {
    http: Option<SocketAddr>,
    workers: Option<usize>,
    tools: tools::Choice,
    max_concurrent_requests: Option<usize>,
    max_connections: Option<usize>,
    /// Every cap on legacy sessions at once: the bench's idle-session figure opens 1,000
    /// from one address, past the per-address default.
    max_sessions: Option<usize>,
    idle_poll: Option<Duration>,
    tokio_runtime: bool,
}

/// The value of `flag`, a number within `range`.
fn number(
    flag: &str,
    value: Option<&String>,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize, String> {
    let value = value.ok_or_else(|| format!("{flag} needs a value"))?;
    let n: usize = value.parse().map_err(|e| format!("{flag} {value}: {e}"))?;
    if range.contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "{flag} {value}: from {} to {}",
            range.start(),
            range.end()
        ))
    }
}

/// Parses the arguments after the program's name; `Ok(None)` for `--help`.
fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut options = Options::default();
    let mut http_only = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--http" => {
                let value = rest.next().ok_or("--http needs an address")?;
                options.http = Some(value.parse().map_err(|e| format!("--http {value}: {e}"))?);
            }
            "--workers" => options.workers = Some(number(flag, rest.next(), 1..=256)?),
            "--bench-tools" => options.tools.bench = true,
            "--extra-tools" => options.tools.extra = number(flag, rest.next(), 0..=10_000)?,
            "--soak-tools" => options.tools.soak = true,
            "--max-concurrent-requests" => {
                options.max_concurrent_requests = Some(number(flag, rest.next(), 1..=1_000_000)?);
                http_only = Some(flag);
            }
            "--max-connections" => {
                options.max_connections = Some(number(flag, rest.next(), 1..=1_000_000)?);
                http_only = Some(flag);
            }
            "--max-sessions" => {
                options.max_sessions = Some(number(flag, rest.next(), 1..=1_000_000)?);
                http_only = Some(flag);
            }
            "--idle-poll" => {
                let micros = number(flag, rest.next(), 0..=1000)?;
                options.idle_poll = Some(Duration::from_micros(micros as u64));
                http_only = Some(flag);
            }
            "--tokio-runtime" => {
                options.tokio_runtime = true;
                http_only = Some(flag);
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if let Some(flag) = http_only
        && options.http.is_none()
    {
        return Err(format!("{flag} needs --http"));
    }
    Ok(Some(options))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // One thread runs the runtime: over stdio it serves the one connection (no hand-offs
    // between workers, no second stack); over HTTP it runs the accept loop, and the
    // connections have threads of their own (`connection_threads`). With
    // `--tokio-runtime`, the server is served as `#[tokio::main]` serves one.
    let mut builder = if options.tokio_runtime {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(options.workers.unwrap_or(2));
        builder
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Boxed, the server's future is not copied from frame to frame down `block_on`'s
    // stack (each copy would be stack pages touched for good).
    match runtime.block_on(Box::pin(serve(options))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let probes = Arc::<Probes>::default();
    let server = tools::server(options.tools, &probes)?;
    let Some(addr) = options.http else {
        DualEra::new(server).serve_stdio().await;
        return Ok(());
    };
    // One worker, or tokio's runtime: the connections are served on the main runtime.
    let threads = match options.workers.unwrap_or(2) {
        _ if options.tokio_runtime => 0,
        1 => 0,
        n => n,
    };
    let mut config = HttpServerConfig::default().connection_threads(threads);
    if let Some(limit) = options.max_concurrent_requests {
        config.max_concurrent_requests = limit;
    }
    if let Some(limit) = options.max_connections {
        config.max_connections = limit;
    }
    if let Some(window) = options.idle_poll {
        config.idle_poll = window;
    }
    // `DualEraHttp::bind` would do all of this in one call; the endpoint and the running
    // server are kept apart here so that `stats` can count the endpoint's legacy sessions
    // and every runtime's tasks.
    let mut legacy = LegacyHttpConfig::default();
    if let Some(limit) = options.max_sessions {
        legacy = legacy
            .max_sessions(limit)
            .max_sessions_per_principal(limit)
            .max_sessions_per_address(limit);
    }
    let endpoint = DualEraHttp::new(server, config.clone(), legacy)?;
    let counted = endpoint.clone();
    let _ = probes.sessions.set(Box::new(move || counted.sessions()));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let running = HttpServer::serve_endpoint(listener, endpoint, &config)?;
    // Every runtime's tasks: the main one (the accept loop) and the connection threads'.
    let runtimes = running.connection_runtimes().to_vec();
    let main = tokio::runtime::Handle::current();
    let _ = probes.tasks.set(Box::new(move || {
        runtimes
            .iter()
            .chain([&main])
            .map(|runtime| runtime.metrics().num_alive_tasks())
            .sum()
    }));
    println!("{}", running.url());
    let _ = tokio::signal::ctrl_c().await;
    running.shutdown(Duration::from_secs(2)).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_command_lines_of_the_bench_and_the_soak() {
        assert_eq!(parse(&args("")).unwrap(), Some(Options::default()));
        let options = parse(&args(
            "--http 127.0.0.1:0 --workers 1 --bench-tools --extra-tools 500",
        ))
        .unwrap()
        .unwrap();
        assert_eq!(options.http, Some("127.0.0.1:0".parse().unwrap()));
        assert_eq!(options.workers, Some(1));
        assert!(options.tools.bench && !options.tools.soak);
        assert_eq!(options.tools.extra, 500);
        let options = parse(&args(
            "--soak-tools --http 127.0.0.1:0 --max-concurrent-requests 1064 \
             --max-connections 1064 --idle-poll 0 --max-sessions 2000",
        ))
        .unwrap()
        .unwrap();
        assert!(options.tools.soak);
        assert_eq!(options.max_concurrent_requests, Some(1064));
        assert_eq!(options.max_connections, Some(1064));
        assert_eq!(options.idle_poll, Some(Duration::ZERO));
        assert_eq!(options.max_sessions, Some(2000));
        let options = parse(&args("--http 127.0.0.1:0 --tokio-runtime --workers 3"))
            .unwrap()
            .unwrap();
        assert!(options.tokio_runtime);
        assert_eq!(options.workers, Some(3));
        assert_eq!(parse(&args("--help")).unwrap(), None);
    }

    #[test]
    fn bad_command_lines_are_refused() {
        for line in [
            "--workers 0",
            "--workers",
            "--http nowhere",
            "--idle-poll 1001",
            "--max-connections 10",
            "--max-sessions 2000",
            "--http 127.0.0.1:0 --max-sessions 0",
            "--tokio-runtime",
            "--serve",
        ] {
            assert!(parse(&args(line)).is_err(), "{line}");
        }
    }
}
