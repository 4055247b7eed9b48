//! `mcp-load`: a load driver for MCP servers (issue #8's measuring harness).
//!
//! ```text
//! mcp-load [OPTIONS] --stdio -- CMD ARGS…     spawn CMD, pipeline calls over its pipes
//! mcp-load [OPTIONS] --http URL --pid PID     keep-alive connections to a running server
//!
//!   --in-flight N     calls in flight (stdio: pipelined; HTTP: one per connection) [16]
//!   --duration SECS   how long to measure [3]
//!   --calls N         measure this many calls instead of a duration
//!   --warmup N        calls answered before measuring starts [500]
//!   --payload BYTES   length of the echoed text [16]
//!   --era E           modern (2026-07-28 `_meta` on every request) or legacy
//!                     (initialize + notifications/initialized first) [modern]
//!   --threads N       HTTP only: the driver's tokio worker threads [1]
//! ```
//!
//! Every call is `tools/call` of `echo`, and every reply is checked (its id is one in
//! flight, it is no error, it carries the text sent), so a broken server cannot look
//! fast; a stdio server silent for 30 s is killed and the run fails, and an HTTP reply
//! must be complete within 60 s. The report is one JSON object on stdout: calls/s, p50 and p99 latency, the
//! server's CPU time per call (utime + stime from `/proc/PID/stat` before and after the
//! measured window, divided by the calls), its peak RSS (`VmHWM`), and for stdio the cold
//! start (spawn to first reply).

mod http;
mod measure;
mod protocol;
mod stdio;

use std::process::ExitCode;
use std::time::Duration;

use protocol::Era;

/// When the measured window ends.
#[derive(Clone, Copy, Debug)]
pub enum Stop {
    /// After this long.
    Duration(Duration),
    /// After this many calls.
    Calls(u64),
}

/// The command line, parsed.
#[derive(Debug)]
pub struct Options {
    pub in_flight: usize,
    pub stop: Stop,
    pub warmup: u64,
    pub payload: usize,
    pub era: Era,
    pub threads: usize,
}

/// What one run measured.
#[derive(Debug, serde::Serialize)]
pub struct Report {
    pub transport: &'static str,
    pub era: &'static str,
    pub in_flight: usize,
    pub payload: usize,
    pub calls: u64,
    pub seconds: f64,
    pub calls_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub cpu_us_per_call: f64,
    pub peak_rss_kib: u64,
    /// Spawn to the first reply (stdio only).
    pub cold_start_ms: Option<f64>,
}

impl Report {
    /// Builds the report from the latencies (ns, any order) of the measured calls.
    pub fn new(
        transport: &'static str,
        options: &Options,
        mut latencies: Vec<u64>,
        elapsed: Duration,
        cpu: Duration,
        peak_rss_kib: u64,
        cold_start: Option<Duration>,
    ) -> Result<Self, String> {
        if latencies.is_empty() {
            return Err("no call was measured".to_owned());
        }
        latencies.sort_unstable();
        let calls = latencies.len() as u64;
        let us = |ns: Option<u64>| ns.unwrap_or(0) as f64 / 1000.0;
        Ok(Self {
            transport,
            era: match options.era {
                Era::Modern => "modern",
                Era::Legacy => "legacy",
            },
            in_flight: options.in_flight,
            payload: options.payload,
            calls,
            seconds: elapsed.as_secs_f64(),
            calls_per_s: calls as f64 / elapsed.as_secs_f64().max(1e-9),
            p50_us: us(measure::percentile(&latencies, 50.0)),
            p99_us: us(measure::percentile(&latencies, 99.0)),
            cpu_us_per_call: cpu.as_secs_f64() * 1e6 / calls as f64,
            peak_rss_kib,
            cold_start_ms: cold_start.map(|d| d.as_secs_f64() * 1000.0),
        })
    }
}

const USAGE: &str = "usage: mcp-load [--in-flight N] [--duration SECS | --calls N] [--warmup N] \
[--payload BYTES] [--era modern|legacy] [--threads N] (--stdio -- CMD ARGS... | --http URL --pid PID)";

#[derive(Debug)]
enum Target {
    Stdio(Vec<String>),
    Http { url: String, pid: u32 },
}

/// The value of a numeric flag.
fn number<T: std::str::FromStr>(flag: &str, value: Option<&String>) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    let value = value.ok_or_else(|| format!("{flag} needs a value"))?;
    value.parse().map_err(|e| format!("{flag} {value:?}: {e}"))
}

fn parse(args: &[String]) -> Result<(Target, Options), String> {
    let mut options = Options {
        in_flight: 16,
        stop: Stop::Duration(Duration::from_secs(3)),
        warmup: 500,
        payload: 16,
        era: Era::Modern,
        threads: 1,
    };
    let mut url = None;
    let mut pid = None;
    let mut command = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--in-flight" => options.in_flight = number(flag, rest.next())?,
            "--duration" => {
                let secs: f64 = number(flag, rest.next())?;
                options.stop = Stop::Duration(
                    Duration::try_from_secs_f64(secs)
                        .map_err(|e| format!("--duration {secs}: {e}"))?,
                );
            }
            "--calls" => options.stop = Stop::Calls(number(flag, rest.next())?),
            "--warmup" => options.warmup = number(flag, rest.next())?,
            "--payload" => options.payload = number(flag, rest.next())?,
            "--threads" => options.threads = number(flag, rest.next())?,
            "--era" => {
                options.era = Era::parse(rest.next().ok_or("--era needs a value")?)?;
            }
            "--http" => url = Some(rest.next().ok_or("--http needs a URL")?.clone()),
            "--pid" => pid = Some(number(flag, rest.next())?),
            "--stdio" => {
                if rest.next().map(String::as_str) != Some("--") {
                    return Err("--stdio must be followed by -- CMD ARGS...".to_owned());
                }
                command = Some(rest.by_ref().cloned().collect::<Vec<_>>());
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if options.in_flight == 0 || options.threads == 0 {
        return Err("--in-flight and --threads must be at least 1".to_owned());
    }
    if matches!(options.stop, Stop::Calls(0)) {
        return Err("--calls must be at least 1".to_owned());
    }
    let target = match (command, url, pid) {
        (Some(command), None, None) if !command.is_empty() => Target::Stdio(command),
        (None, Some(url), Some(pid)) => Target::Http { url, pid },
        (None, Some(_), None) => return Err("--http needs --pid PID of the server".to_owned()),
        _ => return Err("give either --stdio -- CMD ARGS... or --http URL --pid PID".to_owned()),
    };
    Ok((target, options))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = parse(&args)
        .map_err(|e| format!("{e}\n{USAGE}"))
        .and_then(|(target, options)| match target {
            Target::Stdio(command) => stdio::run(&command, &options),
            Target::Http { url, pid } => http::run(&url, pid, &options),
        })
        .and_then(|report| {
            serde_json::to_string(&report).map_err(|e| format!("cannot write the report: {e}"))
        });
    match result {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("mcp-load: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn parses_both_targets() {
        let (t, o) = parse(&args(
            "--in-flight 1 --payload 65536 --stdio -- mcp serve-example",
        ))
        .unwrap();
        assert!(matches!(t, Target::Stdio(c) if c == ["mcp", "serve-example"]));
        assert_eq!((o.in_flight, o.payload), (1, 65536));
        let (t, o) = parse(&args("--http http://x/mcp --pid 7 --era legacy --calls 10")).unwrap();
        assert!(matches!(t, Target::Http { pid: 7, .. }));
        assert_eq!(o.era, Era::Legacy);
        assert!(matches!(o.stop, Stop::Calls(10)));
    }

    #[test]
    fn refuses_bad_input() {
        assert!(
            parse(&args("--http http://x/mcp"))
                .unwrap_err()
                .contains("--pid")
        );
        assert!(parse(&args("--stdio mcp")).is_err());
        assert!(parse(&args("--stdio --")).is_err());
        assert!(
            parse(&args("--in-flight x --stdio -- a"))
                .unwrap_err()
                .contains("--in-flight")
        );
        assert!(parse(&args("--in-flight 0 --stdio -- a")).is_err());
        assert!(parse(&args("--era ancient --stdio -- a")).is_err());
        assert!(parse(&args("--duration -1 --stdio -- a")).is_err());
        assert!(parse(&args("--bogus")).is_err());
    }
}
