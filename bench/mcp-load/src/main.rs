//! `mcp-load`: a load driver for MCP servers, the harness of `cargo xtask bench`.
//!
//! ```text
//! mcp-load [OPTIONS] --stdio -- CMD ARGS…     spawn CMD, pipeline calls over its pipes
//! mcp-load [OPTIONS] --http URL --pid PID     keep-alive connections to a running server
//!
//!   --in-flight N     calls in flight (stdio: pipelined; HTTP: one per connection) [16]
//!   --duration SECS   how long to measure [3]
//!   --calls N         measure this many calls instead of a duration
//!   --warmup N        calls answered before measuring starts [500]
//!   --cold-starts N   stdio: also spawn the server N more times for its first reply
//!                     alone; the cold start reported is the median of all [4]
//!   --payload BYTES   length of the echoed text [16]
//!   --era E           modern (2026-07-28 `_meta` on every request) or legacy
//!                     (initialize + notifications/initialized first) [modern]
//!   --threads N       HTTP: the driver's tokio worker threads; stdio: with N ≥ 2,
//!                     the replies are read on a thread and checked on N more [1]
//!   --method M        the request's method [tools/call]
//!   --tool NAME       tools/call: the tool [echo]
//!   --arguments JSON  tools/call: the arguments [{"text": PAYLOAD}]
//!   --params JSON     another method: its params without _meta [{}]
//!   --expect-text T   tools/call: the first content block is a text block with text T
//!                     [the payload, for echo without --arguments]
//!   --expect-tools N  tools/list: at least N tools, each with a name and an
//!                     inputSchema object [0]
//!   --progress N      send `_meta.progressToken` (the request's id) and require exactly
//!                     N `notifications/progress` for it, increasing, before the reply
//!   --idle-sessions N     HTTP, legacy era: instead of a load, the server's memory per
//!                         idle session, N of them (`idle.rs`)
//!   --idle-connections N  HTTP: the same per idle keep-alive connection, one call on each
//! ```
//!
//! By default every call is `tools/call` of `echo`, and every reply is checked (its id is
//! one in flight, it is no error, it carries the text sent), so a broken server cannot look
//! fast. Other calls get the generic check: no error, no `isError`, a non-empty `content`
//! of typed blocks (`tools/call`), a `tools` array of named tools with an object
//! `inputSchema` (`tools/list`), or any `result` (other methods). A reply of 16 KiB or more
//! whose text equals, but for its id, that of the last such reply checked whole (against the
//! same expectation) is that reply again: the driver compares it instead of reading it.
//! A stdio server silent for 30 s is killed and the run fails, and an HTTP reply
//! must be complete within 60 s. The report is one JSON object on stdout: calls/s, p50 and p99 latency, the
//! server's CPU time per call (utime + stime from `/proc/PID/stat` before and after the
//! measured window, divided by the calls), its peak RSS (`VmHWM`), and for stdio the cold
//! start (spawn to first reply: the median of the run's own and of `--cold-starts` more
//! spawns, each of which sends the first request alone, waits for its reply and closes
//! the server's stdin; one spawn alone swings by milliseconds); and the driver's own CPU time per call, the same way.

mod check;
mod cli;
mod http;
mod idle;
mod measure;
mod protocol;
mod stdio;
mod wire;

use std::process::ExitCode;
use std::time::Duration;

use check::Expect;
use cli::{Stop, Target, TargetFlags, number};
use protocol::{Call, Era};

/// The command line, parsed.
#[derive(Debug)]
pub struct Options {
    pub in_flight: usize,
    pub stop: Stop,
    pub warmup: u64,
    /// Stdio: the extra spawns measured for the cold start.
    pub cold_starts: usize,
    pub payload: usize,
    pub era: Era,
    pub threads: usize,
    /// What every request is.
    pub call: Call,
    /// What every reply must hold.
    pub expect: Expect,
    /// The progress notifications each call must get (with `call.progress`).
    pub progress: usize,
    /// Instead of a load, what idle sessions or connections cost the server.
    pub idle: Option<idle::Idle>,
}

/// The CPU time used in the measured window.
#[derive(Clone, Copy, Debug)]
pub struct CpuUsed {
    /// By the server process.
    pub server: Duration,
    /// By this driver.
    pub driver: Duration,
}

/// What one run measured.
#[derive(Debug, serde::Serialize)]
pub struct Report {
    pub transport: &'static str,
    pub era: &'static str,
    pub method: String,
    pub tool: Option<String>,
    pub progress: usize,
    pub in_flight: usize,
    pub payload: usize,
    pub calls: u64,
    pub seconds: f64,
    pub calls_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub cpu_us_per_call: f64,
    /// The driver's own CPU time (utime + stime of this process) per call.
    pub driver_cpu_us_per_call: f64,
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
        cpu: CpuUsed,
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
            method: options.call.method.clone(),
            tool: (options.call.method == "tools/call")
                .then(|| options.call.mcp_name().map(str::to_owned))
                .flatten(),
            progress: options.progress,
            in_flight: options.in_flight,
            payload: options.payload,
            calls,
            seconds: elapsed.as_secs_f64(),
            calls_per_s: calls as f64 / elapsed.as_secs_f64().max(1e-9),
            p50_us: us(measure::percentile(&latencies, 50.0)),
            p99_us: us(measure::percentile(&latencies, 99.0)),
            cpu_us_per_call: cpu.server.as_secs_f64() * 1e6 / calls as f64,
            driver_cpu_us_per_call: cpu.driver.as_secs_f64() * 1e6 / calls as f64,
            peak_rss_kib,
            cold_start_ms: cold_start.map(|d| d.as_secs_f64() * 1000.0),
        })
    }
}

const USAGE: &str = "usage: mcp-load [--in-flight N] [--duration SECS | --calls N] [--warmup N] \
[--cold-starts N] [--payload BYTES] [--era modern|legacy] [--threads N] [--method M] [--tool NAME] \
[--arguments JSON | --params JSON] [--expect-text T] [--expect-tools N] [--progress N] \
[--idle-sessions N | --idle-connections N] (--stdio -- CMD ARGS... | --http URL --pid PID)";

/// A JSON value given on the command line.
fn json(flag: &str, value: Option<&String>) -> Result<serde_json::Value, String> {
    let value = value.ok_or_else(|| format!("{flag} needs a value"))?;
    serde_json::from_str(value).map_err(|e| format!("{flag} {value:?}: {e}"))
}

/// What the command line asked each request to be, before it is checked.
#[derive(Default)]
struct CallFlags {
    method: Option<String>,
    tool: Option<String>,
    arguments: Option<serde_json::Value>,
    params: Option<serde_json::Value>,
    expect_text: Option<String>,
    expect_tools: Option<usize>,
    progress: Option<usize>,
}

impl CallFlags {
    /// The request and the check of its replies.
    fn resolve(self, payload: usize) -> Result<(Call, Expect, usize), String> {
        let method = self.method.unwrap_or_else(|| "tools/call".to_owned());
        let is_call = method == "tools/call";
        if !is_call && (self.tool.is_some() || self.arguments.is_some()) {
            return Err("--tool and --arguments are for --method tools/call".to_owned());
        }
        if is_call && self.params.is_some() {
            return Err("--params is for other methods; tools/call takes --arguments".to_owned());
        }
        if self.expect_text.is_some() && !is_call {
            return Err("--expect-text is for tools/call".to_owned());
        }
        if self.expect_tools.is_some() && method != "tools/list" {
            return Err("--expect-tools is for --method tools/list".to_owned());
        }
        let (mut call, expect) = if is_call {
            let tool = self.tool.unwrap_or_else(|| "echo".to_owned());
            let echo = tool == "echo" && self.arguments.is_none();
            let arguments = self
                .arguments
                .unwrap_or_else(|| serde_json::json!({ "text": protocol::payload(payload) }));
            if !arguments.is_object() {
                return Err("--arguments must be a JSON object".to_owned());
            }
            let call = Call::tool(&tool, arguments);
            let expect = match self.expect_text {
                Some(text) => Expect::Text(text),
                None if echo => Expect::Text(protocol::payload(payload)),
                None => Expect::Content,
            };
            (call, expect)
        } else {
            let params = self.params.unwrap_or_else(|| serde_json::json!({}));
            let expect = match self.expect_tools {
                Some(n) => Expect::Tools(n),
                None if method == "tools/list" => Expect::Tools(0),
                None => Expect::Any,
            };
            (
                Call {
                    method,
                    params,
                    progress: false,
                },
                expect,
            )
        };
        call.progress = self.progress.is_some();
        Ok((call, expect, self.progress.unwrap_or(0)))
    }
}

fn parse(args: &[String]) -> Result<(Target, Options), String> {
    let mut options = Options {
        in_flight: 16,
        stop: Stop::Duration(Duration::from_secs(3)),
        warmup: 500,
        cold_starts: 4,
        payload: 16,
        era: Era::Modern,
        threads: 1,
        call: Call::tool("echo", serde_json::Value::Null),
        expect: Expect::Any,
        progress: 0,
        idle: None,
    };
    let mut flags = CallFlags::default();
    let mut targets = TargetFlags::default();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--in-flight" => options.in_flight = number(flag, rest.next())?,
            "--duration" => options.stop = cli::duration(flag, rest.next())?,
            "--calls" => options.stop = Stop::Calls(number(flag, rest.next())?),
            "--warmup" => options.warmup = number(flag, rest.next())?,
            "--cold-starts" => options.cold_starts = number(flag, rest.next())?,
            "--payload" => options.payload = number(flag, rest.next())?,
            "--threads" => options.threads = number(flag, rest.next())?,
            "--era" => {
                options.era = Era::parse(rest.next().ok_or("--era needs a value")?)?;
            }
            "--method" => flags.method = Some(rest.next().ok_or("--method needs a value")?.clone()),
            "--tool" => flags.tool = Some(rest.next().ok_or("--tool needs a name")?.clone()),
            "--arguments" => flags.arguments = Some(json(flag, rest.next())?),
            "--params" => flags.params = Some(json(flag, rest.next())?),
            "--expect-text" => {
                flags.expect_text = Some(rest.next().ok_or("--expect-text needs a value")?.clone());
            }
            "--expect-tools" => flags.expect_tools = Some(number(flag, rest.next())?),
            "--progress" => flags.progress = Some(number(flag, rest.next())?),
            "--idle-sessions" => {
                options.idle = Some(idle::Idle::Sessions(number(flag, rest.next())?));
            }
            "--idle-connections" => {
                options.idle = Some(idle::Idle::Connections(number(flag, rest.next())?));
            }
            other if targets.read(other, &mut rest)? => {}
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    cli::check_counts(options.in_flight, options.threads, options.stop)?;
    (options.call, options.expect, options.progress) = flags.resolve(options.payload)?;
    let target = targets.target()?;
    match options.idle {
        Some(idle::Idle::Sessions(0) | idle::Idle::Connections(0)) => {
            return Err("--idle-sessions and --idle-connections must be at least 1".to_owned());
        }
        Some(idle::Idle::Sessions(_)) if options.era != Era::Legacy => {
            return Err(
                "--idle-sessions needs --era legacy (sessions are the 2025 era's)".to_owned(),
            );
        }
        Some(_) if matches!(target, Target::Stdio(_)) => {
            return Err("--idle-sessions and --idle-connections are for --http".to_owned());
        }
        _ => {}
    }
    Ok((target, options))
}

/// A report as the JSON it is printed as.
fn json_of<R: serde::Serialize>(report: R) -> Result<serde_json::Value, String> {
    serde_json::to_value(report).map_err(|e| format!("cannot write the report: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = parse(&args)
        .map_err(|e| format!("{e}\n{USAGE}"))
        .and_then(|(target, options)| match target {
            Target::Stdio(command) => stdio::run(&command, &options).and_then(json_of),
            Target::Http { url, pid } => match options.idle {
                Some(idle) => idle::run(&url, pid, &options, idle).and_then(json_of),
                None => http::run(&url, pid, &options).and_then(json_of),
            },
        });
    cli::finish("mcp-load", result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args;

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
        assert_eq!(o.call.method, "tools/call");
        assert_eq!(o.expect, Expect::Text(protocol::payload(16)));
        assert_eq!(o.progress, 0);
    }

    #[test]
    fn parses_other_calls() {
        let (_, o) = parse(&args(
            r#"--payload 4 --tool search --arguments {"query":"x"} --expect-text 1 --stdio -- a"#,
        ))
        .unwrap();
        assert_eq!(o.call.mcp_name(), Some("search"));
        assert_eq!(o.call.params["arguments"]["query"], "x");
        assert_eq!(o.expect, Expect::Text("1".to_owned()));
        let (_, o) = parse(&args(
            r#"--tool add --arguments {"a":1,"b":2} --stdio -- a"#,
        ))
        .unwrap();
        assert_eq!(o.expect, Expect::Content);
        let (_, o) = parse(&args("--method tools/list --expect-tools 500 --stdio -- a")).unwrap();
        assert_eq!(o.call.method, "tools/list");
        assert_eq!(o.expect, Expect::Tools(500));
        assert!(!o.call.progress);
        let (_, o) = parse(&args(
            r#"--tool steps --arguments {"steps":8} --progress 8 --stdio -- a"#,
        ))
        .unwrap();
        assert!(o.call.progress);
        assert_eq!(o.progress, 8);
        let (_, o) = parse(&args("--method ping --stdio -- a")).unwrap();
        assert_eq!(o.expect, Expect::Any);
    }

    #[test]
    fn refuses_bad_input() {
        // The target and the counts are checked as `cli.rs`'s tests check them.
        assert!(
            parse(&args("--in-flight x --stdio -- a"))
                .unwrap_err()
                .contains("--in-flight")
        );
        assert!(parse(&args("--in-flight 0 --stdio -- a")).is_err());
        assert!(parse(&args("--era ancient --stdio -- a")).is_err());
        assert!(parse(&args("--duration -1 --stdio -- a")).is_err());
        assert!(parse(&args("--bogus")).is_err());
        assert!(parse(&args("--arguments {x --stdio -- a")).is_err());
        assert!(parse(&args("--arguments [] --stdio -- a")).is_err());
        assert!(parse(&args("--method tools/list --tool echo --stdio -- a")).is_err());
        assert!(parse(&args("--params {} --stdio -- a")).is_err());
        assert!(parse(&args("--expect-tools 3 --stdio -- a")).is_err());
        assert!(parse(&args("--method tools/list --expect-text x --stdio -- a")).is_err());
    }

    #[test]
    fn parses_the_idle_modes() {
        let (_, o) = parse(&args(
            "--era legacy --idle-sessions 1000 --http http://x/mcp --pid 7",
        ))
        .unwrap();
        assert_eq!(o.idle, Some(idle::Idle::Sessions(1000)));
        let (_, o) = parse(&args("--idle-connections 1000 --http http://x/mcp --pid 7")).unwrap();
        assert_eq!(o.idle, Some(idle::Idle::Connections(1000)));
        for line in [
            "--idle-sessions 10 --http http://x/mcp --pid 7",
            "--era legacy --idle-sessions 0 --http http://x/mcp --pid 7",
            "--idle-connections 10 --stdio -- a",
        ] {
            assert!(parse(&args(line)).is_err(), "{line}");
        }
    }
}
