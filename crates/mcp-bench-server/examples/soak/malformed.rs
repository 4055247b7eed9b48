//! (b) Malformed requests: N of them, cycling through the kinds below, against one
//! server; its memory must stay flat. Resident memory (`VmRSS`) and its peak (`VmHWM`)
//! are read after a warm-up of N/20 requests (allocator pools and buffers at their
//! working size) and again at the end; the peak may grow by at most
//! [`TOLERANCE_KIB`] plus 10 % of the warm-up peak. Every request must get its error
//! answer (stdio: one JSON-RPC error line each; HTTP: a 4xx status), and a valid call
//! afterwards must still succeed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method};
use mcp_transport_http::{HttpClient, HttpClientConfig, RawRequest};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

use crate::Report;
use crate::procfs::{Sample, Server};

/// How much the peak may grow past the warm-up's, besides 10 % of it.
pub(crate) const TOLERANCE_KIB: u64 = 4096;

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"soak","version":"1"}}"#;

/// The malformed messages, each answered with exactly one error.
fn kinds() -> Vec<Vec<u8>> {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    vec![
        b"not json at all".to_vec(),
        br#"{"jsonrpc":"2.0","id":1,"method":"#.to_vec(),
        br#"{"jsonrpc":"1.0","id":2,"method":"tools/list"}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":3,"method":42}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":4.5,"method":"tools/list"}"#.to_vec(),
        b"[]".to_vec(),
        deep.into_bytes(),
        vec![0xff, 0xfe, b'{', b'}'],
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}"#.to_vec(),
        format!(r#"{{"jsonrpc":"2.0","id":6,"method":"no/such/method","params":{{"_meta":{META}}}}}"#)
            .into_bytes(),
        format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"_meta":{META},"name":"no-such-tool"}}}}"#)
            .into_bytes(),
    ]
}

fn flat(warm: Sample, end: Sample) -> bool {
    end.peak_kib <= warm.peak_kib + warm.peak_kib / 10 + TOLERANCE_KIB
}

fn record(report: &mut Report, scenario: &str, n: usize, warm: Sample, end: Sample, secs: f64) {
    report.figure(scenario, "malformed requests", n.to_string());
    report.figure(
        scenario,
        "RSS / peak after warm-up",
        format!("{} / {} KiB", warm.rss_kib, warm.peak_kib),
    );
    report.figure(
        scenario,
        "RSS / peak at the end",
        format!("{} / {} KiB", end.rss_kib, end.peak_kib),
    );
    #[allow(clippy::cast_precision_loss)] // a rate to print, from at most millions
    let rate = n as f64 / secs;
    report.figure(scenario, "rate", format!("{rate:.0} requests/s"));
    report.check(
        flat(warm, end),
        format!(
            "{scenario}: peak RSS grew from {} to {} KiB (allowed: +10 % + {TOLERANCE_KIB} KiB)",
            warm.peak_kib, end.peak_kib
        ),
    );
}

/// N malformed lines over the server's stdin, then a valid call.
pub(crate) async fn stdio(program: &str, n: usize, report: &mut Report) -> Result<(), String> {
    let scenario = "malformed, stdio";
    let (server, mut stdin, stdout) = Server::stdio(program)?;
    let kinds = kinds();
    let answered = Arc::new(AtomicUsize::new(0));
    let counting = Arc::clone(&answered);
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::with_capacity(1 << 16, stdout).lines();
        let mut errors = 0usize;
        let mut last = None;
        while let Ok(Some(line)) = lines.next_line().await {
            let value: serde_json::Value = serde_json::from_str(&line)
                .map_err(|e| format!("the server wrote a line that is not JSON ({e}): {line}"))?;
            if value.get("error").is_some() {
                errors += 1;
                counting.store(errors, Ordering::Release);
            } else {
                last = Some(value);
            }
        }
        Ok::<_, String>((errors, last))
    });
    let warm_up = (n / 20).max(1);
    let mut buffer = Vec::with_capacity(1 << 16);
    let started = Instant::now();
    let mut warm = None;
    for i in 0..n {
        buffer.extend_from_slice(&kinds[i % kinds.len()]);
        buffer.push(b'\n');
        if buffer.len() >= 1 << 15 || i + 1 == warm_up || i + 1 == n {
            stdin
                .write_all(&buffer)
                .await
                .map_err(|e| format!("the server stopped reading: {e}"))?;
            buffer.clear();
        }
        if i + 1 == warm_up {
            wait_for(&answered, warm_up).await?;
            warm = Some(server.sample()?);
        }
    }
    wait_for(&answered, n).await?;
    let secs = started.elapsed().as_secs_f64();
    let end = server.sample()?;
    let valid = format!(
        r#"{{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{{"_meta":{META},"name":"echo","arguments":{{"text":"still here"}}}}}}"#
    );
    stdin
        .write_all(format!("{valid}\n").as_bytes())
        .await
        .map_err(|e| format!("the server stopped reading: {e}"))?;
    drop(stdin);
    let (errors, last) = reader
        .await
        .map_err(|e| format!("the reader failed: {e}"))??;
    record(report, scenario, n, warm.unwrap_or_default(), end, secs);
    report.check(
        errors == n,
        format!("{scenario}: {errors} error answers to {n} malformed lines"),
    );
    let echoed = last
        .as_ref()
        .and_then(|v| v["result"]["content"][0]["text"].as_str())
        .map(str::to_owned);
    report.check(
        echoed.as_deref() == Some("still here"),
        format!("{scenario}: the valid call after them got {last:?}"),
    );
    drop(server);
    Ok(())
}

/// Waits until `answered` reaches `n` (bounded: 5 min without progress fails).
async fn wait_for(answered: &AtomicUsize, n: usize) -> Result<(), String> {
    let mut seen = answered.load(Ordering::Acquire);
    let mut since = Instant::now();
    while seen < n {
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        let now = answered.load(Ordering::Acquire);
        if now != seen {
            seen = now;
            since = Instant::now();
        } else if since.elapsed() > std::time::Duration::from_mins(5) {
            return Err(format!("only {seen} of {n} answers, none for 5 min"));
        }
    }
    Ok(())
}

/// The headers a modern client sends with a `tools/call` of `echo`.
fn request(body: Bytes) -> RawRequest {
    let header = |name: &'static str, value: &'static str| {
        (
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        )
    };
    let mut request = RawRequest::new(Method::POST).body(body);
    for (name, value) in [
        header("content-type", "application/json"),
        header("accept", "application/json, text/event-stream"),
        header("mcp-protocol-version", "2026-07-28"),
        header("mcp-method", "tools/call"),
        header("mcp-name", "echo"),
    ] {
        request = request.header(name, value);
    }
    request
}

/// N malformed POSTs over keep-alive connections, 16 at a time, then a valid call.
pub(crate) async fn http(program: &str, n: usize, report: &mut Report) -> Result<(), String> {
    let scenario = "malformed, HTTP";
    let server = Server::http(program, &[]).await?;
    let client = HttpClient::new(&server.url, HttpClientConfig::default())
        .map_err(|e| format!("cannot connect: {e}"))?;
    let kinds: Arc<Vec<Bytes>> = Arc::new(kinds().into_iter().map(Bytes::from).collect());
    let warm_up = (n / 20).max(1);
    let started = Instant::now();
    let mut statuses = std::collections::BTreeMap::new();
    run(&client, &kinds, 0..warm_up, &mut statuses).await?;
    let warm = server.sample()?;
    run(&client, &kinds, warm_up..n, &mut statuses).await?;
    let secs = started.elapsed().as_secs_f64();
    let end = server.sample()?;
    record(report, scenario, n, warm, end, secs);
    let refused: usize = statuses
        .iter()
        .filter(|(status, _)| (400..500).contains(*status))
        .map(|(_, count)| count)
        .sum();
    report.figure(
        scenario,
        "statuses",
        statuses
            .iter()
            .map(|(status, count)| format!("{status}×{count}"))
            .collect::<Vec<_>>()
            .join(" "),
    );
    report.check(
        refused == n,
        format!("{scenario}: {refused} of {n} answered 4xx ({statuses:?})"),
    );
    let mcp_client = mcp_client::Client::builder("soak", "1")
        .connect_http(&server.url, HttpClientConfig::default())
        .map_err(|e| format!("cannot connect: {e}"))?;
    let args = serde_json::json!({"text": "still here"});
    let outcome = mcp_client
        .call_tool("echo", args.as_object().cloned().unwrap_or_default())
        .await;
    report.check(
        outcome.is_ok(),
        format!("{scenario}: the valid call after them: {outcome:?}"),
    );
    Ok(())
}

async fn run(
    client: &HttpClient,
    kinds: &Arc<Vec<Bytes>>,
    range: std::ops::Range<usize>,
    statuses: &mut std::collections::BTreeMap<u16, usize>,
) -> Result<(), String> {
    const CONNECTIONS: usize = 16;
    let next = Arc::new(AtomicUsize::new(range.start));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..CONNECTIONS {
        let (client, kinds, next, end) = (
            client.clone(),
            Arc::clone(kinds),
            Arc::clone(&next),
            range.end,
        );
        tasks.spawn(async move {
            let mut seen = std::collections::BTreeMap::<u16, usize>::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= end {
                    return Ok::<_, String>(seen);
                }
                let response = client
                    .send(request(kinds[i % kinds.len()].clone()))
                    .await
                    .map_err(|e| format!("request {i}: {e}"))?;
                let status = response.status().as_u16();
                response
                    .bytes()
                    .await
                    .map_err(|e| format!("request {i}: the body: {e}"))?;
                *seen.entry(status).or_default() += 1;
            }
        });
    }
    while let Some(joined) = tasks.join_next().await {
        let seen = joined.map_err(|e| e.to_string())??;
        for (status, count) in seen {
            *statuses.entry(status).or_default() += count;
        }
    }
    Ok(())
}
