//! (a) Concurrency: N calls in flight at once, every answer matched to its call.
//!
//! Over HTTP every call is the soak tool `barrier` of one group of size N, so none can
//! complete before all N are inside the server at the same time: a run that completes
//! proves N concurrent requests, each on its own connection (HTTP/1.1, one request per
//! connection at a time). The endpoint's limit of requests in flight is raised past N with
//! `--max-concurrent-requests`, since the default (1024) answers the excess with 503, and
//! its limit of open connections with `--max-connections`, since past the default (4096)
//! the excess would wait to be accepted until a connection closes, and none would.
//!
//! Over one stdio connection the N calls are `wait` (20 ms) sent at once through one
//! client: the engine matches each answer to its request by id, the server runs at most
//! 64 of them at a time (`PeerConfig::max_concurrency`) and stops reading until a slot
//! frees, so the rest wait in the pipe, in flight from the client's side.
//!
//! Each call carries a text of its own (`req-<i>`) and its answer must carry it back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_client::Client;
use mcp_transport_http::HttpClientConfig;
use mcp_transport_stdio::{ServerCommand, StderrMode};
use mcp_types::{CallToolResult, JsonObject};
use serde_json::json;
use tokio::task::JoinSet;

use crate::Report;
use crate::procfs::Server;

fn arguments(value: serde_json::Value) -> JsonObject {
    match value {
        serde_json::Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn text(result: &CallToolResult) -> Option<String> {
    serde_json::to_value(result).ok()?["content"][0]["text"]
        .as_str()
        .map(str::to_owned)
}

/// What came back for N calls.
#[derive(Default)]
struct Tally {
    matched: usize,
    mismatched: usize,
    failed: usize,
    first_failure: Option<String>,
}

async fn collect(mut calls: JoinSet<(usize, Result<CallToolResult, mcp_client::Error>)>) -> Tally {
    let mut tally = Tally::default();
    while let Some(joined) = calls.join_next().await {
        match joined {
            Ok((i, Ok(result))) if result.is_error != Some(true) => {
                if text(&result).as_deref() == Some(format!("req-{i}").as_str()) {
                    tally.matched += 1;
                } else {
                    tally.mismatched += 1;
                }
            }
            Ok((_, outcome)) => {
                tally.failed += 1;
                tally
                    .first_failure
                    .get_or_insert_with(|| format!("{outcome:?}"));
            }
            Err(e) => {
                tally.failed += 1;
                tally.first_failure.get_or_insert_with(|| e.to_string());
            }
        }
    }
    tally
}

fn record(report: &mut Report, scenario: &str, n: usize, tally: &Tally, elapsed: Duration) {
    report.figure(scenario, "calls in flight at once", n.to_string());
    report.figure(
        scenario,
        "answers matched / mismatched / failed",
        format!(
            "{} / {} / {}",
            tally.matched, tally.mismatched, tally.failed
        ),
    );
    report.figure(
        scenario,
        "wall time",
        format!("{:.2} s", elapsed.as_secs_f64()),
    );
    report.check(
        tally.matched == n,
        format!(
            "{scenario}: {} of {n} answers matched their call ({} mismatched, {} failed; first failure: {})",
            tally.matched,
            tally.mismatched,
            tally.failed,
            tally.first_failure.as_deref().unwrap_or("none")
        ),
    );
}

/// N calls over HTTP, all inside the server at once.
pub(crate) async fn http(program: &str, n: usize, report: &mut Report) -> Result<(), String> {
    let scenario = "HTTP concurrency";
    let limit = (n + 64).to_string();
    let server = Server::http(
        program,
        &[
            "--max-concurrent-requests",
            &limit,
            "--max-connections",
            &limit,
        ],
    )
    .await?;
    let before = server.sample()?;
    let client = Arc::new(
        Client::builder("soak", env!("CARGO_PKG_VERSION"))
            .timeout(Duration::from_mins(2))
            .connect_http(&server.url, HttpClientConfig::default())
            .map_err(|e| format!("cannot connect: {e}"))?,
    );
    let started = Instant::now();
    let mut calls = JoinSet::new();
    for i in 0..n {
        let client = Arc::clone(&client);
        let size = u32::try_from(n).map_err(|_| "too many calls")?;
        calls.spawn(async move {
            let args =
                arguments(json!({"group": "http", "size": size, "text": format!("req-{i}")}));
            (i, client.call_tool("barrier", args).await)
        });
    }
    let tally = collect(calls).await;
    let elapsed = started.elapsed();
    let after = server.sample()?;
    record(report, scenario, n, &tally, elapsed);
    report.figure(
        scenario,
        "server RSS before / peak",
        format!("{} / {} KiB", before.rss_kib, after.peak_kib),
    );
    Ok(())
}

/// N calls in flight over one stdio connection.
pub(crate) async fn stdio(program: &str, n: usize, report: &mut Report) -> Result<(), String> {
    let scenario = "stdio concurrency";
    let command = ServerCommand::new(program)
        .arg("--soak-tools")
        .stderr(StderrMode::Inherit);
    let (client, server) = Client::builder("soak", env!("CARGO_PKG_VERSION"))
        .timeout(Duration::from_mins(2))
        .connect_stdio(&command)
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let pid = server.process().id();
    let client = Arc::new(client);
    let started = Instant::now();
    let mut calls = JoinSet::new();
    for i in 0..n {
        let client = Arc::clone(&client);
        calls.spawn(async move {
            let args = arguments(json!({"ms": 20, "text": format!("req-{i}")}));
            (i, client.call_tool("wait", args).await)
        });
    }
    let tally = collect(calls).await;
    let elapsed = started.elapsed();
    let peak = crate::procfs::Sample::of(pid)?.peak_kib;
    record(report, scenario, n, &tally, elapsed);
    report.figure(scenario, "server peak RSS", format!("{peak} KiB"));
    let _ = server.shutdown(Duration::from_secs(2)).await;
    Ok(())
}
