//! `client-load`: our client, `mcp_client::Client`, as the load driver, for the goal that our
//! client driving our server reaches at least 90% of what a minimal load driver reaches
//! against it.
//!
//! ```text
//! client-load [OPTIONS] --stdio -- CMD ARGS…     Client::connect_stdio (spawns CMD)
//! client-load [OPTIONS] --http URL --pid PID     Client::connect_http to a running server
//!
//!   --in-flight N     calls in flight: N tasks sharing one Client [16]
//!   --duration SECS   how long to measure [3]
//!   --calls N         measure this many calls instead of a duration
//!   --warmup N        calls answered before measuring starts [500]
//!   --payload BYTES   length of the echoed text [16]
//!   --threads N       the tokio worker threads (1: a current-thread runtime) [1]
//! ```
//!
//! Every call is `Client::call_tool("echo", {"text": …})` of the 2026-07-28 era (the client
//! adds the `_meta` envelope, and over HTTP the `Mcp-*` headers); every result is checked
//! (not `isError`, its first content block the text sent), so a broken run cannot look
//! fast. The report is one JSON object on stdout with the fields of `mcp-load`'s (calls/s,
//! p50 and p99, the server's CPU per call, peak RSS and cold start), `"driver":
//! "mcp-client"`, and the driver's own CPU per call (`driver_cpu_us_per_call`), so that
//! `cargo xtask bench` can set it beside `mcp-load`'s figures for the same server.

// The `/proc` parsing and percentiles, and the command line's target, numbers and exit,
// are mcp-load's, shared as files.
#[path = "../../mcp-load/src/cli.rs"]
mod cli;
#[path = "../../mcp-load/src/measure.rs"]
mod measure;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use cli::{Stop, Target, TargetFlags, number};
use mcp_client::Client;
use mcp_types::{CallToolResult, ContentBlock, JsonObject};

#[derive(Debug, PartialEq)]
struct Options {
    in_flight: usize,
    stop: Stop,
    warmup: u64,
    payload: usize,
    threads: usize,
}

/// What one run measured: `mcp-load`'s report, plus the driver's own CPU.
#[derive(Debug, serde::Serialize)]
struct Report {
    driver: &'static str,
    transport: &'static str,
    era: &'static str,
    method: &'static str,
    tool: &'static str,
    progress: usize,
    in_flight: usize,
    payload: usize,
    calls: u64,
    seconds: f64,
    calls_per_s: f64,
    p50_us: f64,
    p99_us: f64,
    cpu_us_per_call: f64,
    driver_cpu_us_per_call: f64,
    peak_rss_kib: u64,
    cold_start_ms: Option<f64>,
}

const USAGE: &str = "usage: client-load [--in-flight N] [--duration SECS | --calls N] [--warmup N] \
[--payload BYTES] [--threads N] (--stdio -- CMD ARGS... | --http URL --pid PID)";

fn parse(args: &[String]) -> Result<(Target, Options), String> {
    let mut options = Options {
        in_flight: 16,
        stop: Stop::Duration(Duration::from_secs(3)),
        warmup: 500,
        payload: 16,
        threads: 1,
    };
    let mut targets = TargetFlags::default();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--in-flight" => options.in_flight = number(flag, rest.next())?,
            "--duration" => options.stop = cli::duration(flag, rest.next())?,
            "--calls" => options.stop = Stop::Calls(number(flag, rest.next())?),
            "--warmup" => options.warmup = number(flag, rest.next())?,
            "--payload" => options.payload = number(flag, rest.next())?,
            "--threads" => options.threads = number(flag, rest.next())?,
            other if targets.read(other, &mut rest)? => {}
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    cli::check_counts(options.in_flight, options.threads, options.stop)?;
    Ok((targets.target()?, options))
}

/// The echoed text: `mcp-load`'s payload (plain ASCII, no escapes).
fn payload(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..len)
        .map(|i| char::from(ALPHABET[i % ALPHABET.len()]))
        .collect()
}

/// Checks one `echo` result.
fn check(result: &CallToolResult, expected: &str) -> Result<(), String> {
    if result.is_error == Some(true) {
        return Err(format!("tool error: {:?}", result.content.first()));
    }
    match result.content.first() {
        Some(ContentBlock::TextContent(block)) if block.text == expected => Ok(()),
        Some(ContentBlock::TextContent(block)) => Err(format!(
            "a reply carries {} bytes of text that are not the {} bytes sent",
            block.text.len(),
            expected.len()
        )),
        Some(_) => Err("the first content block is not text".to_owned()),
        None => Err("a reply without content".to_owned()),
    }
}

/// The shared state of the calling tasks.
struct Load {
    client: Client,
    arguments: JsonObject,
    text: String,
}

impl Load {
    async fn call(&self) -> Result<(), String> {
        let result = self
            .client
            .call_tool("echo", &self.arguments)
            .await
            .map_err(|e| format!("tools/call echo: {e}"))?;
        check(&result, &self.text)
    }

    /// Runs `limit` calls (or until `deadline`) from `in_flight` tasks; gives the
    /// latencies (ns).
    async fn phase(
        self: &Arc<Self>,
        in_flight: usize,
        limit: u64,
        deadline: Option<Instant>,
    ) -> Result<Vec<u64>, String> {
        let counter = Arc::new(AtomicU64::new(0));
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..in_flight {
            let load = Arc::clone(self);
            let counter = Arc::clone(&counter);
            tasks.spawn(async move {
                let mut latencies = Vec::with_capacity(1 << 16);
                loop {
                    let n = counter.fetch_add(1, Ordering::Relaxed);
                    if n >= limit || deadline.is_some_and(|d| Instant::now() >= d) {
                        return Ok::<_, String>(latencies);
                    }
                    let sent = Instant::now();
                    load.call().await?;
                    latencies.push(u64::try_from(sent.elapsed().as_nanos()).unwrap_or(u64::MAX));
                }
            });
        }
        let mut all = Vec::new();
        let mut failure = None;
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok(latencies)) => all.extend(latencies),
                Ok(Err(e)) => {
                    failure.get_or_insert(e);
                }
                Err(e) => {
                    failure.get_or_insert(format!("a calling task failed: {e}"));
                }
            }
        }
        failure.map_or(Ok(all), Err)
    }
}

async fn run(target: Target, options: &Options) -> Result<Report, String> {
    let ticks = measure::ticks_per_second();
    let text = payload(options.payload);
    let mut arguments = JsonObject::new();
    arguments.insert("text".to_owned(), serde_json::Value::from(text.as_str()));
    let builder =
        Client::builder("client-load", env!("CARGO_PKG_VERSION")).timeout(Duration::from_mins(1));
    let spawned = Instant::now();
    let (client, pid, connection, transport) = match target {
        Target::Stdio(command) => {
            let (program, args) = command.split_first().ok_or("no command to spawn")?;
            let command = mcp_transport_stdio::ServerCommand::new(program).args(args);
            let (client, connection) = builder
                .connect_stdio(&command)
                .map_err(|e| format!("cannot start {program}: {e}"))?;
            let pid = connection.process().id();
            (client, pid, Some(connection), "stdio")
        }
        Target::Http { url, pid } => {
            let client = builder
                .connect_http(&url, mcp_transport_http::HttpClientConfig::default())
                .map_err(|e| format!("cannot connect to {url}: {e}"))?;
            (client, pid, None, "http")
        }
    };
    let load = Arc::new(Load {
        client,
        arguments,
        text,
    });
    load.call().await?;
    let cold_start = connection.is_some().then(|| spawned.elapsed());
    load.phase(options.in_flight, options.warmup, None).await?;

    let me = std::process::id();
    let cpu_start = measure::process_cpu(pid, ticks)?;
    let driver_start = measure::process_cpu(me, ticks)?;
    let start = Instant::now();
    let (limit, deadline) = match options.stop {
        Stop::Calls(n) => (n, None),
        Stop::Duration(d) => (u64::MAX, Some(start + d)),
    };
    let mut latencies = load.phase(options.in_flight, limit, deadline).await?;
    let elapsed = start.elapsed();
    let cpu = measure::process_cpu(pid, ticks)?.saturating_sub(cpu_start);
    let driver_cpu = measure::process_cpu(me, ticks)?.saturating_sub(driver_start);
    let peak_rss_kib = measure::process_peak_rss(pid)?;
    if let Some(connection) = connection {
        let _ = connection.shutdown(Duration::from_secs(2)).await;
    }

    if latencies.is_empty() {
        return Err("no call was measured".to_owned());
    }
    latencies.sort_unstable();
    let calls = latencies.len() as u64;
    let us = |ns: Option<u64>| ns.unwrap_or(0) as f64 / 1000.0;
    let per_call = |d: Duration| d.as_secs_f64() * 1e6 / calls as f64;
    Ok(Report {
        driver: "mcp-client",
        transport,
        era: "modern",
        method: "tools/call",
        tool: "echo",
        progress: 0,
        in_flight: options.in_flight,
        payload: options.payload,
        calls,
        seconds: elapsed.as_secs_f64(),
        calls_per_s: calls as f64 / elapsed.as_secs_f64().max(1e-9),
        p50_us: us(measure::percentile(&latencies, 50.0)),
        p99_us: us(measure::percentile(&latencies, 99.0)),
        cpu_us_per_call: per_call(cpu),
        driver_cpu_us_per_call: per_call(driver_cpu),
        peak_rss_kib,
        cold_start_ms: cold_start.map(|d| d.as_secs_f64() * 1000.0),
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = parse(&args)
        .map_err(|e| format!("{e}\n{USAGE}"))
        .and_then(|(target, options)| {
            cli::runtime(options.threads)?.block_on(run(target, &options))
        });
    cli::finish("client-load", result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args;

    #[test]
    fn parses_both_targets() {
        let (t, o) = parse(&args("--in-flight 4 --stdio -- mcp serve-example")).unwrap();
        assert_eq!(t, Target::Stdio(vec!["mcp".into(), "serve-example".into()]));
        assert_eq!((o.in_flight, o.payload, o.threads), (4, 16, 1));
        let (t, o) = parse(&args("--http http://x/mcp --pid 7 --calls 10")).unwrap();
        assert_eq!(
            t,
            Target::Http {
                url: "http://x/mcp".into(),
                pid: 7
            }
        );
        assert_eq!(o.stop, Stop::Calls(10));
    }

    #[test]
    fn refuses_bad_input() {
        // The target and the counts are checked as `cli.rs`'s tests check them.
        assert!(parse(&args("--calls 0 --stdio -- a")).is_err());
        assert!(parse(&args("--bogus")).is_err());
    }

    #[test]
    fn checks_results() {
        let ok: CallToolResult = serde_json::from_value(serde_json::json!({
            "content": [{"type": "text", "text": "hi"}]
        }))
        .unwrap();
        assert_eq!(check(&ok, "hi"), Ok(()));
        assert!(check(&ok, "ho").unwrap_err().contains("not the"));
        let failed: CallToolResult = serde_json::from_value(serde_json::json!({
            "content": [{"type": "text", "text": "hi"}], "isError": true
        }))
        .unwrap();
        assert!(check(&failed, "hi").unwrap_err().contains("tool error"));
        let empty: CallToolResult =
            serde_json::from_value(serde_json::json!({"content": []})).unwrap();
        assert!(check(&empty, "hi").is_err());
        let image: CallToolResult = serde_json::from_value(serde_json::json!({
            "content": [{"type": "image", "data": "", "mimeType": "image/png"}]
        }))
        .unwrap();
        assert!(check(&image, "hi").unwrap_err().contains("not text"));
    }

    #[test]
    fn payloads_match_mcp_load() {
        assert_eq!(payload(40), "abcdefghijklmnopqrstuvwxyz0123456789abcd");
    }
}
