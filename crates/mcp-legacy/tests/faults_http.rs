//! Fault injection on Streamable HTTP: the dual-era endpoint (`DualEraHttp`
//! on 127.0.0.1) behind a TCP proxy that resets a connection (RST, not a clean close)
//! right after it forwarded a progress event, and clients that vanish while their call
//! runs. The outcomes are those of <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>
//! and <https://modelcontextprotocol.io/specification/2026-07-28/basic/utilities/cancellation>:
//!
//! - modern era: a broken stream loses the request (2026-07-28 has no resumption); the
//!   client re-issues it only when it is safe to run twice and otherwise fails with
//!   `MayHaveRun`, and closing the connection is the cancellation, so the server's handler
//!   is cancelled;
//! - a 2025-11-25 session: the stream is resumable, the client resumes it with
//!   `Last-Event-ID` and the call completes with nothing lost or repeated; a disconnect is
//!   not a cancellation there, `notifications/cancelled` is;
//! - a client that vanishes mid-call: every handler is cancelled, and the server's
//!   concurrency permits, tasks and file descriptors return to what they were.
//!
//! No test sleeps to synchronise: the handlers report each start and each cancellation on
//! channels, the proxy reports each reset, and [`SAFETY`] bounds every wait as a net.

#![cfg(feature = "http")]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_client::{CallOptions, Client};
use mcp_legacy::client::{Connector, EraChoice};
use mcp_legacy::http::{DualEraHttp, LegacyHttpConfig};
use mcp_server::{Server, ToolDef};
use mcp_test_support::client::spawn_call;
use mcp_test_support::first_text as text;
use mcp_transport_http::{HttpClientConfig, HttpServer, HttpServerConfig, RunningServer};
use mcp_types::{CallToolResult, JsonObject, ToolAnnotations};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};

/// A safety net for every wait: no outcome here takes more than a fraction of it.
const SAFETY: Duration = Duration::from_secs(20);

async fn bounded<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(SAFETY, future)
        .await
        .unwrap_or_else(|_| panic!("{what}: no outcome within {SAFETY:?} (a hang)"))
}

/// What the handlers report, and the gate they wait at.
#[derive(Clone)]
struct Probe {
    started: mpsc::UnboundedSender<()>,
    cancelled: mpsc::UnboundedSender<()>,
    gate: Arc<Semaphore>,
}

struct Events {
    started: mpsc::UnboundedReceiver<()>,
    cancelled: mpsc::UnboundedReceiver<()>,
    gate: Arc<Semaphore>,
}

impl Events {
    async fn started(&mut self, n: usize) {
        for _ in 0..n {
            bounded("a handler start", self.started.recv()).await;
        }
    }

    async fn cancelled(&mut self, n: usize) {
        for _ in 0..n {
            bounded("a handler cancellation", self.cancelled.recv()).await;
        }
    }
}

/// Reports a cancellation when a handler is dropped before it finished.
struct Guard {
    probe: Probe,
    finished: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.probe.cancelled.send(());
        }
    }
}

fn probe() -> (Probe, Events) {
    let (started_tx, started) = mpsc::unbounded_channel();
    let (cancelled_tx, cancelled) = mpsc::unbounded_channel();
    let gate = Arc::new(Semaphore::new(0));
    (
        Probe {
            started: started_tx,
            cancelled: cancelled_tx,
            gate: Arc::clone(&gate),
        },
        Events {
            started,
            cancelled,
            gate,
        },
    )
}

/// `wait` (no hints) and `peek` (read-only, so safe to re-send): report progress once,
/// report the start, then wait for a permit of the gate, or for cancellation.
fn server(probe: &Probe) -> Server {
    let tool = |name: &str, read_only: bool| {
        let probe = probe.clone();
        ToolDef::new(name, json!({"type": "object"}), move |_args, cx| {
            let probe = probe.clone();
            async move {
                let mut guard = Guard {
                    probe: probe.clone(),
                    finished: false,
                };
                cx.progress(1.0, None, Some("started")).await;
                let _ = probe.started.send(());
                tokio::select! {
                    permit = probe.gate.acquire() => {
                        permit.expect("the gate stays open").forget();
                    }
                    () = cx.cancellation().cancelled() => {}
                }
                guard.finished = !cx.cancellation().is_cancelled();
                Ok(CallToolResult::text("done"))
            }
        })
        .annotations({
            let mut hints = ToolAnnotations::default();
            hints.read_only_hint = Some(read_only);
            hints
        })
    };
    Server::builder("faults", "1.0.0")
        .tool(tool("wait", false))
        .tool(tool("peek", true))
        .build()
        .unwrap()
}

async fn start(probe: &Probe, http: HttpServerConfig) -> RunningServer {
    let legacy = LegacyHttpConfig::default().retry(Some(Duration::from_millis(10)));
    DualEraHttp::bind(HttpServer::DEFAULT_ADDR, server(probe), http, legacy)
        .await
        .unwrap()
}

/// A TCP proxy that, while armed, resets the connection whose server-to-client bytes
/// carry a progress notification, right after forwarding them; then disarms itself.
struct Proxy {
    url: String,
    armed: Arc<AtomicBool>,
    resets: mpsc::UnboundedReceiver<()>,
}

impl Proxy {
    async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let armed = Arc::new(AtomicBool::new(true));
        let (tx, resets) = mpsc::unbounded_channel();
        let arming = Arc::clone(&armed);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(target).await else {
                    continue;
                };
                tokio::spawn(forward(client, server, Arc::clone(&arming), tx.clone()));
            }
        });
        Proxy { url, armed, resets }
    }

    fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    async fn reset(&mut self) {
        bounded("a reset", self.resets.recv()).await;
    }
}

async fn forward(
    mut client: TcpStream,
    mut server: TcpStream,
    armed: Arc<AtomicBool>,
    resets: mpsc::UnboundedSender<()>,
) {
    let (mut up, mut down) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        tokio::select! {
            read = client.read(&mut up) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => if server.write_all(&up[..n]).await.is_err() { break },
            },
            read = server.read(&mut down) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if client.write_all(&down[..n]).await.is_err() {
                        break;
                    }
                    let progress = down[..n]
                        .windows(b"notifications/progress".len())
                        .any(|w| w == b"notifications/progress");
                    if progress && armed.swap(false, Ordering::SeqCst) {
                        // RST both ways: the client sees a connection reset mid-stream,
                        // the server a peer that is gone.
                        let _ = client.set_zero_linger();
                        let _ = server.set_zero_linger();
                        drop((client, server));
                        let _ = resets.send(());
                        return;
                    }
                }
            },
        }
    }
}

fn counting_progress() -> (CallOptions, mpsc::UnboundedReceiver<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let options = CallOptions::default().progress(move |_| {
        let _ = tx.send(());
    });
    (options, rx)
}

/// Modern era, connection reset mid-SSE: the call that is not safe to repeat fails with
/// `MayHaveRun` as soon as the reset arrives, and the server's handler is cancelled (a
/// closed connection is the spec's cancellation). A read-only call is re-issued on a new
/// connection and completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_a_reset_mid_stream_fails_or_reissues_and_cancels_the_handler() {
    let (probe, mut events) = probe();
    let running = start(&probe, HttpServerConfig::default()).await;
    let mut proxy = Proxy::start(running.local_addr()).await;
    let client = Client::builder("faults", "1.0.0")
        .connect_http(&proxy.url, HttpClientConfig::default())
        .unwrap();
    // The client learns which tools are read-only from the listing.
    let tools = bounded("tools/list", client.list_tools_all())
        .await
        .unwrap();
    assert_eq!(tools.len(), 2);

    let (options, mut progress) = counting_progress();
    let err = bounded(
        "wait",
        client.call_tool_with("wait", JsonObject::new(), &options),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, mcp_client::Error::MayHaveRun { method } if method == "tools/call"),
        "{err:?}"
    );
    proxy.reset().await;
    bounded("the progress before the reset", progress.recv()).await;
    events.started(1).await;
    events.cancelled(1).await;

    proxy.arm();
    let client = Arc::new(client);
    let (options, mut progress) = counting_progress();
    let call = spawn_call(&client, "peek", options);
    events.started(1).await;
    proxy.reset().await;
    events.cancelled(1).await;
    // The re-issued request runs the handler again, on a connection left alone.
    events.started(1).await;
    events.gate.add_permits(1);
    let result = bounded("peek", call).await.unwrap().unwrap();
    assert_eq!(text(&result), "done");
    for attempt in ["first", "second"] {
        bounded(
            &format!("progress of the {attempt} attempt"),
            progress.recv(),
        )
        .await;
    }
    assert!(
        events.cancelled.try_recv().is_err(),
        "the second run finished"
    );
    running.shutdown(Duration::from_secs(1)).await;
}

/// A 2025-11-25 session, connection reset mid-SSE: the stream is resumed with
/// `Last-Event-ID` on a new connection, the handler is not cancelled (a disconnect is not
/// a cancellation in that era), and the result arrives; the progress event delivered
/// before the reset is not delivered again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_a_reset_mid_stream_is_resumed_and_nothing_is_lost_or_repeated() {
    let (probe, mut events) = probe();
    let running = start(&probe, HttpServerConfig::default()).await;
    let mut proxy = Proxy::start(running.local_addr()).await;
    let connection = bounded(
        "the legacy handshake",
        Connector::new(Client::builder("faults", "1.0.0"))
            .era(EraChoice::Legacy)
            .connect_http(&proxy.url, HttpClientConfig::default()),
    )
    .await
    .unwrap();
    let client = Arc::new(connection.client);
    let (options, mut progress) = counting_progress();
    let call = spawn_call(&client, "wait", options);
    events.started(1).await;
    proxy.reset().await;
    bounded("the progress before the reset", progress.recv()).await;
    // Only now may the handler finish: its result goes to the session's event log, which
    // the resumed stream replays from the last event the client saw.
    events.gate.add_permits(1);
    let result = bounded("the resumed call", call).await.unwrap().unwrap();
    assert_eq!(text(&result), "done");
    assert!(progress.try_recv().is_err(), "progress delivered once");
    assert!(events.cancelled.try_recv().is_err(), "not cancelled");
    client.shutdown(Duration::from_secs(1)).await;
    running.shutdown(Duration::from_secs(1)).await;
}

/// This process's open file descriptors.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

/// Waits (bounded) until `measure` is at most `baseline`; gives the last value.
async fn settles(baseline: usize, measure: impl Fn() -> usize) -> usize {
    let deadline = tokio::time::Instant::now() + SAFETY;
    loop {
        let now = measure();
        if now <= baseline || tokio::time::Instant::now() >= deadline {
            return now;
        }
        // Connection tasks end on their own schedule once their peer is gone; yield
        // to them rather than sleeping a guessed time.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Clients that vanish mid-call (their calls dropped, their connections closed), in four
/// rounds of half the server's concurrency limit: every handler is cancelled, each round
/// is admitted in full (no permit leaked: leaked permits would run out by the third round,
/// answer 503, and the handlers would never start), and the tasks and file descriptors of the process return to the
/// count after the first round. The legacy era: a dropped call sends
/// `notifications/cancelled`, which cancels the handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_vanish_mid_call_cancel_their_handlers_and_leak_nothing() {
    const LIMIT: usize = 8;
    let (probe, mut events) = probe();
    let mut config = HttpServerConfig::default();
    // Room for two rounds: a handler reports its cancellation from its drop guard, a
    // moment before the request gives its slot back, so the next round may arrive while
    // the last one's slots are still held. Slots that leaked for good would still run out
    // by the third of the four rounds (and `started` would time out).
    config.max_concurrent_requests = 2 * LIMIT;
    let running = start(&probe, config).await;
    let url = running.url().to_owned();
    let metrics = tokio::runtime::Handle::current().metrics();
    let mut baseline = None;
    for round in 0..4 {
        let client = Arc::new(
            Client::builder("vanishing", "1.0.0")
                .connect_http(&url, HttpClientConfig::default())
                .unwrap(),
        );
        let calls: Vec<_> = (0..LIMIT)
            .map(|_| {
                let client = Arc::clone(&client);
                tokio::spawn(async move { client.call_tool("wait", JsonObject::new()).await })
            })
            .collect();
        events.started(LIMIT).await;
        for call in &calls {
            call.abort();
        }
        for call in calls {
            assert!(call.await.unwrap_err().is_cancelled());
        }
        drop(client);
        events.cancelled(LIMIT).await;
        let counts = (metrics.num_alive_tasks(), open_fds());
        match baseline {
            None if round == 0 => baseline = Some(counts),
            None => unreachable!(),
            Some((tasks, fds)) => {
                let now_tasks = settles(tasks, || metrics.num_alive_tasks()).await;
                let now_fds = settles(fds, open_fds).await;
                assert!(
                    now_tasks <= tasks && now_fds <= fds,
                    "round {round}: tasks {now_tasks} (after round 0: {tasks}), fds {now_fds} (after round 0: {fds})"
                );
            }
        }
    }

    // The legacy era: the session's client sends `notifications/cancelled`.
    let connection = bounded(
        "the legacy handshake",
        Connector::new(Client::builder("faults", "1.0.0"))
            .era(EraChoice::Legacy)
            .connect_http(&url, HttpClientConfig::default()),
    )
    .await
    .unwrap();
    let client = Arc::new(connection.client);
    let call = tokio::spawn({
        let client = Arc::clone(&client);
        async move { client.call_tool("wait", JsonObject::new()).await }
    });
    events.started(1).await;
    call.abort();
    events.cancelled(1).await;
    client.shutdown(Duration::from_secs(1)).await;
    running.shutdown(Duration::from_secs(1)).await;
}
