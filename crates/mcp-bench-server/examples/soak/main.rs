//! The load and soak test binary, which `cargo xtask soak` builds and runs
//! (see `docs/RELIABILITY.md`, Load and soak). It drives the real `mcp-bench-server
//! --soak-tools` process (`--server PATH`) with this workspace's own clients:
//!
//! ```text
//! soak --server PATH [--size ci|full] [--seconds S] [--only a,b,c]
//! ```
//!
//! - (a) `load.rs`: N calls in flight at once over HTTP (full 10,000, ci 1,000) and over
//!   one stdio connection (full 1,000, ci 200), every answer matched to its call;
//! - (b) `malformed.rs`: N malformed requests (full 1,000,000, ci 20,000) over stdio and
//!   over HTTP, with the server's resident memory and its peak after warm-up and at the
//!   end;
//! - (c) `mixed.rs`: calls, listens, cancellations and legacy sessions at once for S
//!   seconds (full 600, ci 30), sampling memory, descriptors, tasks and sessions.
//!
//! It prints a table of the figures and the failed checks, and exits 1 if any check
//! failed. Every loop is bounded in count or time, and every server listens on 127.0.0.1.

mod load;
mod malformed;
mod mixed;
mod procfs;

use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The figures of a run and the checks that failed.
#[derive(Default)]
pub(crate) struct Report {
    rows: Vec<(String, String, String)>,
    failures: Vec<String>,
}

impl Report {
    /// Records a figure of a scenario.
    pub(crate) fn figure(&mut self, scenario: &str, name: &str, value: String) {
        self.rows
            .push((scenario.to_owned(), name.to_owned(), value));
    }

    /// Records a check; `message` says what went wrong if `ok` is false.
    pub(crate) fn check(&mut self, ok: bool, message: String) {
        if !ok {
            self.failures.push(message);
        }
    }

    fn print(&self) {
        println!("| scenario | figure | value |");
        println!("|---|---|---|");
        for (scenario, name, value) in &self.rows {
            println!("| {scenario} | {name} | {value} |");
        }
        if self.failures.is_empty() {
            println!("\nall checks passed");
        } else {
            println!("\nfailed checks:");
            for failure in &self.failures {
                println!("- {failure}");
            }
        }
    }
}

/// How big a run is.
struct Size {
    http_in_flight: usize,
    stdio_in_flight: usize,
    malformed: usize,
    mixed: Duration,
}

impl Size {
    fn of(name: &str) -> Result<Size, String> {
        match name {
            "full" => Ok(Size {
                http_in_flight: 10_000,
                stdio_in_flight: 1_000,
                malformed: 1_000_000,
                mixed: Duration::from_mins(10),
            }),
            "ci" => Ok(Size {
                http_in_flight: 1_000,
                stdio_in_flight: 200,
                malformed: 20_000,
                mixed: Duration::from_secs(30),
            }),
            other => Err(format!("unknown size {other:?}: ci or full")),
        }
    }
}

struct Options {
    server: String,
    size: Size,
    only: Vec<char>,
}

const USAGE: &str = "usage: soak --server PATH [--size ci|full] [--seconds S] [--only a,b,c]";

fn parse(args: &[String]) -> Result<Options, String> {
    let mut server = None;
    let mut size = Size::of("ci")?;
    let mut seconds = None;
    let mut only = vec!['a', 'b', 'c'];
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let mut value = || rest.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--server" => server = Some(value()?.clone()),
            "--size" => size = Size::of(value()?)?,
            "--seconds" => {
                let text = value()?;
                seconds = Some(
                    text.parse::<u64>()
                        .map_err(|e| format!("--seconds {text}: {e}"))?,
                );
            }
            "--only" => {
                only = value()?
                    .split(',')
                    .map(|s| s.trim().chars().next().unwrap_or(' '))
                    .collect();
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if let Some(seconds) = seconds {
        size.mixed = Duration::from_secs(seconds.max(1));
    }
    if let Some(bad) = only.iter().find(|c| !matches!(c, 'a' | 'b' | 'c')) {
        return Err(format!("--only takes a, b and c, not {bad:?}"));
    }
    let server = server.ok_or("--server PATH is required")?;
    Ok(Options { server, size, only })
}

async fn run(options: &Options, report: &mut Report) -> Result<(), String> {
    // Each process holds one socket per call in flight (the driver its client ends, the
    // server its own), plus a few more; the server inherits this process's limit.
    let needed = options.size.http_in_flight as u64 + 256;
    if options.only.contains(&'a')
        && let Some(limit) = procfs::open_files_limit()
        && limit < needed
    {
        return Err(format!(
            "{} calls in flight over HTTP need {needed} open files, and the limit is {limit} \
             (raise it with `ulimit -n`)",
            options.size.http_in_flight
        ));
    }
    let program = options.server.as_str();
    let size = &options.size;
    let timed = |name: &str, started: Instant| {
        eprintln!(
            "soak: {name} done in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    };
    if options.only.contains(&'a') {
        let started = Instant::now();
        load::http(program, size.http_in_flight, report).await?;
        load::stdio(program, size.stdio_in_flight, report).await?;
        timed("(a) concurrency", started);
    }
    if options.only.contains(&'b') {
        let started = Instant::now();
        malformed::stdio(program, size.malformed, report).await?;
        malformed::http(program, size.malformed, report).await?;
        timed("(b) malformed requests", started);
    }
    if options.only.contains(&'c') {
        let started = Instant::now();
        mixed::run(program, size.mixed, report).await?;
        timed("(c) mixed soak", started);
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&args) {
        Ok(options) => options,
        Err(e) => {
            eprintln!("soak: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("soak: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut report = Report::default();
    let outcome = runtime.block_on(run(&options, &mut report));
    report.print();
    match outcome {
        Err(e) => {
            println!("\nthe run stopped: {e}");
            ExitCode::FAILURE
        }
        Ok(()) if report.failures.is_empty() => ExitCode::SUCCESS,
        Ok(()) => ExitCode::FAILURE,
    }
}
