//! (c) The mixed soak: for the given time, one HTTP server (both eras) serves at once
//!
//! - calls: two modern clients calling `echo` in a loop, each answer checked;
//! - listens: a modern client that listens to `soak://counter`, calls `increment`,
//!   waits for the update, and drops the subscription, in a loop;
//! - cancellations: a modern client calling `wait` (60 s) with a 20 ms timeout, so every
//!   call is abandoned mid-way (the client closes the connection: the spec's cancellation
//!   on HTTP) and the handler must be cancelled;
//! - legacy sessions: a 2025-11-25 client that opens a session (`initialize`), calls
//!   `echo` three times, listens once (the session's GET stream), and ends the session
//!   (`DELETE`), in a loop.
//!
//! Every 1/20 of the time the server's resident memory, open descriptors, tokio tasks and
//! legacy sessions are sampled (the last two by its `stats` tool). Checks: no worker saw an
//! unexpected error; resident memory at the end of the load is at most 10 % + 8 MiB above
//! the sample at 1/4 of the time (after warm-up); once the load stops, the descriptors,
//! tasks and sessions come back to what they were before it started (+4 descriptors and
//! tasks: the sampling client's own connection).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_client::{CallOptions, Client, ListenEvent};
use mcp_legacy::client::{Connector, EraChoice};
use mcp_transport_http::HttpClientConfig;
use mcp_types::{CallToolResult, JsonObject, SubscriptionFilter};
use serde_json::{Value, json};

use crate::Report;
use crate::procfs::{Sample, Server};

const COUNTER: &str = "soak://counter";
/// Allowed growth of resident memory after warm-up, besides 10 %.
const RSS_TOLERANCE_KIB: u64 = 8192;
/// Allowed excess of descriptors and tasks after the load, over before it.
const COUNT_TOLERANCE: usize = 4;

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(result)
        .ok()
        .and_then(|v| v["content"][0]["text"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn client(url: &str) -> Result<Client, String> {
    Client::builder("soak", env!("CARGO_PKG_VERSION"))
        .timeout(Duration::from_secs(30))
        .connect_http(url, HttpClientConfig::default())
        .map_err(|e| format!("cannot connect: {e}"))
}

/// Counts of what the workers did.
#[derive(Default)]
struct Counts {
    calls: AtomicU64,
    listens: AtomicU64,
    cancellations: AtomicU64,
    sessions: AtomicU64,
}

/// One sample of the server.
#[derive(Clone, Copy, Debug)]
struct Point {
    at: Duration,
    process: Sample,
    tasks: usize,
    sessions: usize,
}

async fn point(server: &Server, stats: &Client, started: Instant) -> Result<Point, String> {
    let result = stats
        .call_tool("stats", JsonObject::new())
        .await
        .map_err(|e| format!("stats: {e}"))?;
    let value: Value = serde_json::from_str(&text(&result)).map_err(|e| format!("stats: {e}"))?;
    let count = |key: &str| {
        value[key]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0)
    };
    Ok(Point {
        at: started.elapsed(),
        process: server.sample()?,
        tasks: count("alive_tasks"),
        sessions: count("legacy_sessions"),
    })
}

type Worker = tokio::task::JoinHandle<Result<(), String>>;

fn spawn_loop<F, Fut>(stop: &Arc<AtomicBool>, mut body: F) -> Worker
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    let stop = Arc::clone(stop);
    tokio::spawn(async move {
        while !stop.load(Ordering::Relaxed) {
            body().await?;
        }
        Ok(())
    })
}

pub(crate) async fn run(
    program: &str,
    duration: Duration,
    report: &mut Report,
) -> Result<(), String> {
    let scenario = "mixed soak";
    let server = Server::http(program, &[]).await?;
    let url = server.url.clone();
    let stats = client(&url)?;
    let started = Instant::now();
    let before = point(&server, &stats, started).await?;
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts::default());
    let mut workers: Vec<Worker> = Vec::new();

    for worker in 0..2 {
        let (client, counts) = (Arc::new(client(&url)?), Arc::clone(&counts));
        let mut n = 0u64;
        workers.push(spawn_loop(&stop, move || {
            let (client, counts) = (Arc::clone(&client), Arc::clone(&counts));
            n += 1;
            let want = format!("w{worker}-{n}");
            async move {
                let result = client
                    .call_tool("echo", args(json!({"text": want})))
                    .await
                    .map_err(|e| format!("echo: {e}"))?;
                if text(&result) != want {
                    return Err(format!("echo {want:?} answered {:?}", text(&result)));
                }
                counts.calls.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
        }));
    }

    let (listener, listen_counts) = (Arc::new(client(&url)?), Arc::clone(&counts));
    workers.push(spawn_loop(&stop, move || {
        let (client, counts) = (Arc::clone(&listener), Arc::clone(&listen_counts));
        async move {
            let mut filter = SubscriptionFilter::default();
            filter.resource_subscriptions = Some(vec![COUNTER.to_owned()]);
            let mut subscription = client
                .listen(filter)
                .await
                .map_err(|e| format!("listen: {e}"))?;
            let first = tokio::time::timeout(Duration::from_secs(30), subscription.next()).await;
            if !matches!(first, Ok(Some(ListenEvent::Acknowledged(_)))) {
                return Err(format!("listen: no acknowledgement ({first:?})"));
            }
            client
                .call_tool("increment", JsonObject::new())
                .await
                .map_err(|e| format!("increment: {e}"))?;
            let updated = tokio::time::timeout(Duration::from_secs(30), async {
                while let Some(event) = subscription.next().await {
                    if matches!(&event, ListenEvent::ResourceUpdated(uri) if uri == COUNTER) {
                        return true;
                    }
                }
                false
            })
            .await;
            if updated != Ok(true) {
                return Err(format!("listen: no update of {COUNTER} ({updated:?})"));
            }
            counts.listens.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
    }));

    let (canceller, cancel_counts) = (Arc::new(client(&url)?), Arc::clone(&counts));
    workers.push(spawn_loop(&stop, move || {
        let (client, counts) = (Arc::clone(&canceller), Arc::clone(&cancel_counts));
        async move {
            let options = CallOptions::default().timeout(Duration::from_millis(20));
            match client
                .call_tool_with(
                    "wait",
                    args(json!({"ms": 60_000, "text": "late"})),
                    &options,
                )
                .await
            {
                Err(mcp_client::Error::Timeout { .. }) => {
                    counts.cancellations.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                }
                other => Err(format!("wait with a 20 ms timeout gave {other:?}")),
            }
        }
    }));

    let (legacy_url, legacy_counts) = (url.clone(), Arc::clone(&counts));
    workers.push(spawn_loop(&stop, move || {
        let (url, counts) = (legacy_url.clone(), Arc::clone(&legacy_counts));
        async move {
            let connection = Connector::new(Client::builder("soak-legacy", "1"))
                .era(EraChoice::Legacy)
                .connect_http(&url, HttpClientConfig::default())
                .await
                .map_err(|e| format!("legacy session: {e}"))?;
            let client = connection.client;
            for i in 0..3 {
                let want = format!("legacy-{i}");
                let result = client
                    .call_tool("echo", args(json!({"text": want})))
                    .await
                    .map_err(|e| format!("legacy echo: {e}"))?;
                if text(&result) != want {
                    return Err(format!("legacy echo answered {:?}", text(&result)));
                }
            }
            let mut filter = SubscriptionFilter::default();
            filter.resources_list_changed = Some(true);
            let mut subscription = client
                .listen(filter)
                .await
                .map_err(|e| format!("legacy listen: {e}"))?;
            let first = tokio::time::timeout(Duration::from_secs(30), subscription.next()).await;
            if !matches!(first, Ok(Some(ListenEvent::Acknowledged(_)))) {
                return Err(format!("legacy listen: no acknowledgement ({first:?})"));
            }
            drop(subscription);
            client.shutdown(Duration::from_secs(1)).await;
            counts.sessions.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
    }));

    // Sample until the time is up, or a worker fails.
    let interval = (duration / 20).max(Duration::from_secs(1));
    let mut points = vec![before];
    let deadline = started + duration;
    let mut failure = None;
    while Instant::now() < deadline && failure.is_none() {
        tokio::time::sleep(interval.min(deadline.saturating_duration_since(Instant::now()))).await;
        points.push(point(&server, &stats, started).await?);
        if let Some(done) = workers
            .iter()
            .position(tokio::task::JoinHandle::is_finished)
        {
            let worker = workers.swap_remove(done);
            failure = Some(match worker.await {
                Ok(Err(e)) => e,
                Ok(Ok(())) => "a worker stopped early".to_owned(),
                Err(e) => e.to_string(),
            });
        }
    }
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        match worker.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                failure.get_or_insert(e);
            }
            Err(e) => {
                failure.get_or_insert(e.to_string());
            }
        }
    }
    let end_of_load = *points.last().unwrap_or(&before);

    // After the load: wait (bounded) for connections, tasks and sessions to wind down.
    let settle = Instant::now();
    let after = loop {
        let now = point(&server, &stats, started).await?;
        let settled = now.process.fds <= before.process.fds + COUNT_TOLERANCE
            && now.tasks <= before.tasks + COUNT_TOLERANCE
            && now.sessions <= before.sessions;
        if settled || settle.elapsed() > Duration::from_secs(30) {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };

    let warm = points
        .iter()
        .find(|p| p.at >= duration / 4)
        .copied()
        .unwrap_or(end_of_load);
    let c = |n: &AtomicU64| n.load(Ordering::Relaxed);
    report.figure(
        scenario,
        "duration",
        format!("{:.0} s", duration.as_secs_f64()),
    );
    report.figure(
        scenario,
        "calls / listens / cancellations / legacy sessions",
        format!(
            "{} / {} / {} / {}",
            c(&counts.calls),
            c(&counts.listens),
            c(&counts.cancellations),
            c(&counts.sessions)
        ),
    );
    let describe = |p: &Point| {
        format!(
            "RSS {} KiB, fds {}, tasks {}, sessions {}",
            p.process.rss_kib, p.process.fds, p.tasks, p.sessions
        )
    };
    report.figure(scenario, "before the load", describe(&before));
    report.figure(
        scenario,
        &format!("after warm-up ({:.0} s)", warm.at.as_secs_f64()),
        describe(&warm),
    );
    report.figure(
        scenario,
        &format!("end of the load ({:.0} s)", end_of_load.at.as_secs_f64()),
        describe(&end_of_load),
    );
    report.figure(
        scenario,
        &format!("after it ({:.1} s later)", settle.elapsed().as_secs_f64()),
        describe(&after),
    );
    report.figure(
        scenario,
        "peak RSS",
        format!("{} KiB", after.process.peak_kib),
    );
    report.check(
        failure.is_none(),
        format!("{scenario}: {}", failure.as_deref().unwrap_or("")),
    );
    report.check(
        end_of_load.process.rss_kib
            <= warm.process.rss_kib + warm.process.rss_kib / 10 + RSS_TOLERANCE_KIB,
        format!(
            "{scenario}: RSS grew from {} KiB after warm-up to {} KiB (allowed: +10 % + {RSS_TOLERANCE_KIB} KiB)",
            warm.process.rss_kib, end_of_load.process.rss_kib
        ),
    );
    report.check(
        after.process.fds <= before.process.fds + COUNT_TOLERANCE
            && after.tasks <= before.tasks + COUNT_TOLERANCE
            && after.sessions <= before.sessions,
        format!(
            "{scenario}: after the load {} (before it: {})",
            describe(&after),
            describe(&before)
        ),
    );
    Ok(())
}
