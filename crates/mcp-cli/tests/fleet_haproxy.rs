//! A fleet behind a load balancer, for real: `cargo xtask fleet` runs this (it needs
//! HAProxy and redis-server, Debian's packages, so a plain `cargo test` skips it).
//!
//! Three `mcp serve-example --http ADDR --redis URL` instances sit behind HAProxy: round
//! robin, no stickiness, health checks on `/readyz`, the PROXY protocol (v2) to the
//! instances, which trust only the proxy's address. The checks:
//!
//! - a listener on one instance hears a change made through another;
//! - a 2025-11-25 session's calls land on every instance (HAProxy's own per-server
//!   counters tell), and its server-to-client request is answered through the balancer;
//! - one instance is killed during a session, a listen and a task: the session goes on,
//!   `Last-Event-ID` resumes its GET stream on another instance, the listener listens again
//!   elsewhere and hears changes, and the task is resumed elsewhere and completes;
//! - the key ring rotates (`mcp rotate-keys`) during a multi round-trip call, and the call
//!   completes.
//!
//! `FLEET_SIZE=full` repeats the session and listen checks more, and, with `FLEET_LOAD`
//! naming the benchmark's `mcp-load` driver, measures calls/s through HAProxy with three
//! instances beside one (docs/PERFORMANCE.md).

#[path = "../../mcp-server/tests/redis_common/mod.rs"]
mod redis_common;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_test_support::Killed;
use mcp_test_support::http::{HttpClient, SseEvents, client, client_from, json_body, send};
use serde_json::{Value, json};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

fn root() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs an SDK's fleet client (`interop/ts-fleet-client.mjs` with node, or
/// `interop/py-fleet-client.py` with the interop venv's Python) against `url`: the JSON
/// object it prints.
async fn sdk_client(program: PathBuf, script: &str, url: &str) -> Value {
    let (script, url) = (root().join("interop").join(script), url.to_owned());
    let output = tokio::task::spawn_blocking(move || {
        Command::new(program)
            .arg(script)
            .args(["--url", &url])
            .current_dir(root().join("interop"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().rev().find(|l| l.starts_with('{'));
    serde_json::from_str(line.unwrap_or_default()).unwrap_or_else(|e| {
        panic!(
            "no result ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}
const MODERN: &str = "2026-07-28";

fn full() -> bool {
    std::env::var("FLEET_SIZE").is_ok_and(|s| s == "full")
}

/// How HAProxy tells an instance the client's address.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ClientAddress {
    /// A PROXY protocol v2 header on each connection (`send-proxy-v2`).
    ProxyProtocol,
    /// An `X-Forwarded-For` header on each request (`option forwardfor`).
    ForwardedFor,
}

/// One instance: its process, its port.
struct Instance {
    process: Option<Killed>,
    port: u16,
}

impl Instance {
    fn start(redis: &str, address: ClientAddress) -> Instance {
        let port = mcp_test_support::free_port();
        let listen = format!("127.0.0.1:{port}");
        let mut args = vec!["serve-example", "--http", &listen, "--redis", redis];
        args.extend(["--trusted-proxy", "127.0.0.1", "--drain", "0"]);
        if address == ClientAddress::ProxyProtocol {
            args.push("--proxy-protocol");
        }
        let (process, _url) =
            mcp_test_support::spawn_url(Command::new(MCP).args(args).stderr(Stdio::inherit()));
        Instance {
            process: Some(process),
            port,
        }
    }

    /// Its endpoint, reached directly (not through HAProxy).
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Kills it at once (SIGKILL): nothing drains, nothing is handed over.
    fn kill(&mut self) {
        self.process = None;
    }
}

/// HAProxy in front of the instances.
struct Balancer {
    process: Killed,
    _dir: TempDir,
    url: String,
    stats: String,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Balancer {
    fn start(instances: &[&Instance], address: ClientAddress) -> Balancer {
        let (port, stats_port) = (mcp_test_support::free_port(), mcp_test_support::free_port());
        let dir = std::env::temp_dir().join(format!("mcp-fleet-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut servers = String::new();
        for (n, instance) in instances.iter().enumerate() {
            let _ = writeln!(servers, "    server i{n} 127.0.0.1:{} check", instance.port);
        }
        let config = format!(
            "global\n    maxconn 4096\n\
             defaults\n    mode http\n    timeout connect 2s\n    timeout client 60s\n    \
             timeout server 60s\n    timeout tunnel 60s\n    retries 3\n    option redispatch 1\n\
             frontend mcp\n    bind 127.0.0.1:{port}\n    default_backend fleet\n\
             frontend stats\n    bind 127.0.0.1:{stats_port}\n    stats enable\n    stats uri /stats\n\
             backend fleet\n    balance roundrobin\n    option httpchk GET /readyz\n    \
             http-check expect status 200\n{address}\n{servers}",
            address = match address {
                ClientAddress::ProxyProtocol => {
                    "    default-server inter 300ms fall 2 rise 1 send-proxy-v2 check-send-proxy"
                }
                ClientAddress::ForwardedFor => {
                    "    option forwardfor\n    default-server inter 300ms fall 2 rise 1"
                }
            }
        );
        let path = dir.join("haproxy.cfg");
        std::fs::File::create(&path)
            .unwrap()
            .write_all(config.as_bytes())
            .unwrap();
        let process = Command::new("haproxy")
            .args(["-db", "-f"])
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("haproxy is installed (Debian: apt-get install haproxy)");
        Balancer {
            process: Killed(process),
            _dir: TempDir(dir),
            url: format!("http://127.0.0.1:{port}/mcp"),
            stats: format!("http://127.0.0.1:{stats_port}/stats;csv"),
        }
    }

    /// HAProxy's counters for each server of the backend: (name, status, requests).
    async fn servers(&self, http: &HttpClient) -> Vec<(String, String, u64)> {
        self.try_servers(http).await.expect("HAProxy's statistics")
    }

    /// [`servers`](Self::servers), or `None` while HAProxy is not listening yet.
    async fn try_servers(&self, http: &HttpClient) -> Option<Vec<(String, String, u64)>> {
        let request = hyper::Request::get(&self.stats)
            .body(http_body_util::Full::new(bytes::Bytes::new()))
            .unwrap();
        let response = http.request(request).await.ok()?;
        let body = mcp_test_support::http::text_body(response).await;
        let mut lines = body.lines();
        let header: Vec<&str> = lines
            .next()
            .unwrap()
            .trim_start_matches("# ")
            .split(',')
            .collect();
        let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let (px, sv, status, requests) = (
            column("pxname"),
            column("svname"),
            column("status"),
            column("req_tot"),
        );
        lines
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| f[px] == "fleet" && f[sv].starts_with('i'))
            .map(|f| {
                (
                    f[sv].to_owned(),
                    f[status].to_owned(),
                    f[requests].parse().unwrap_or(0),
                )
            })
            .collect::<Vec<_>>()
            .into()
    }

    /// Waits until HAProxy sees `up` servers up.
    async fn until_up(&self, http: &HttpClient, up: usize) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let servers = self.try_servers(http).await.unwrap_or_default();
            if servers.iter().filter(|s| s.1 == "UP").count() == up {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "HAProxy never saw {up} up: {servers:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn meta(extensions: &Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": extensions}
    })
}

/// A 2026-07-28 request: its reply's JSON-RPC object.
async fn modern(http: &HttpClient, url: &str, method: &str, mut params: Value) -> Value {
    if params.get("_meta").is_none() {
        params["_meta"] = meta(&json!({}));
    }
    // Mcp-Name carries the tool's name, or the task's id for the Tasks extension's methods.
    let name = params["name"]
        .as_str()
        .or_else(|| params["taskId"].as_str())
        .map(str::to_owned);
    let mut headers = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
    if let Some(name) = name.as_deref() {
        headers.push(("mcp-name", name));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = send(http, "POST", url, &headers, body.to_string()).await;
    json_body(response).await
}

/// A 2025-11-25 session through `url`.
struct Session {
    url: String,
    id: String,
    next: i64,
}

impl Session {
    async fn open(http: &HttpClient, url: &str) -> Session {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "fleet", "version": "1"}
        }});
        let response = send(http, "POST", url, &[], body.to_string()).await;
        assert_eq!(response.status(), 200);
        let id = mcp_test_support::http::session_id(&response);
        let reply = json_body(response).await;
        assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
        let session = Session {
            url: url.to_owned(),
            id,
            next: 1,
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = session.post(http, &initialized).await;
        assert_eq!(response.status(), 202);
        session
    }

    async fn post(
        &self,
        http: &HttpClient,
        body: &Value,
    ) -> hyper::Response<hyper::body::Incoming> {
        let headers = [
            ("mcp-session-id", self.id.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        send(http, "POST", &self.url, &headers, body.to_string()).await
    }

    /// Calls `name`: the reply (read from a JSON or an SSE answer).
    async fn call(&mut self, http: &HttpClient, name: &str, arguments: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        let response = self.post(http, &body).await;
        assert_eq!(response.status(), 200, "session call {name}");
        reply_of(response, id).await
    }
}

/// The reply with `id` in a JSON or SSE answer.
async fn reply_of(response: hyper::Response<hyper::body::Incoming>, id: i64) -> Value {
    let sse = response
        .headers()
        .get("content-type")
        .is_some_and(|c| c.as_bytes().starts_with(b"text/event-stream"));
    if !sse {
        return json_body(response).await;
    }
    let mut events = SseEvents::new(response);
    while let Some(event) = events.next().await {
        let message: Value = serde_json::from_str(event.data()).unwrap_or(Value::Null);
        if message["id"] == id {
            return message;
        }
    }
    panic!("no reply {id} on the stream");
}

/// The next JSON-RPC message of an SSE stream (priming events, with no data, skipped).
async fn next_message(events: &mut SseEvents) -> Value {
    loop {
        let event = events.next().await.expect("another event");
        if !event.data().is_empty() {
            return serde_json::from_str(event.data()).unwrap();
        }
    }
}

/// Calls `increment` through `url` until `heard` says a listener got it (10 s at most).
async fn change_until(http: &HttpClient, url: &str, mut heard: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !heard() {
        assert!(Instant::now() < deadline, "no change was heard");
        let reply = modern(
            http,
            url,
            "tools/call",
            json!({"name": "increment", "arguments": {}}),
        )
        .await;
        assert!(reply.get("result").is_some(), "{reply}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The events of a listen, read on a task of their own, which stops when this is dropped.
struct Listening {
    rx: tokio::sync::mpsc::UnboundedReceiver<String>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Opens a 2026-07-28 listen for `example://counter` on `url`.
async fn listen(http: &HttpClient, url: &str) -> Listening {
    let params = json!({"_meta": meta(&json!({})), "notifications": {"resourceSubscriptions": ["example://counter"]}});
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params});
    let headers = [
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "subscriptions/listen"),
    ];
    let response = send(http, "POST", url, &headers, body.to_string()).await;
    assert_eq!(response.status(), 200);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let mut events = SseEvents::new(response);
        while let Some(event) = events.next().await {
            if tx.send(event.data().to_owned()).is_err() {
                return;
            }
        }
    });
    Listening { rx, task }
}

fn heard_update(listening: &mut Listening) -> bool {
    while let Ok(event) = listening.rx.try_recv() {
        if event.contains("notifications/resources/updated") {
            return true;
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs HAProxy: run by `cargo xtask fleet`"]
async fn a_fleet_behind_haproxy() {
    let redis = redis_common::redis()
        .await
        .expect("redis-server is installed");
    let mut instances: Vec<Instance> = (0..3)
        .map(|_| Instance::start(&redis.url, ClientAddress::ProxyProtocol))
        .collect();
    let balancer = Balancer::start(
        &instances.iter().collect::<Vec<_>>(),
        ClientAddress::ProxyProtocol,
    );
    let http = client();
    // Requests straight to an instance come from 127.0.0.2, which is not the trusted
    // proxy: they need no PROXY header.
    let direct = client_from([127, 0, 0, 2]);
    balancer.until_up(&http, 3).await;
    let rounds = if full() { 30 } else { 6 };

    // A listener on one instance hears a change made through another.
    let mut rx = listen(&direct, &instances[0].url()).await;
    change_until(&http, &balancer.url, || heard_update(&mut rx)).await;
    drop(rx);
    eprintln!("fleet: a listener on one instance heard a change made through the balancer");

    // The key ring rotates during a multi round-trip call, and the call completes.
    let greet = json!({"name": "greet", "arguments": {}});
    let first = modern(&http, &balancer.url, "tools/call", greet.clone()).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let rotated = Command::new(MCP)
        .args(["rotate-keys", "--redis", &redis.url])
        .output()
        .unwrap();
    assert!(
        rotated.status.success(),
        "{}",
        String::from_utf8_lossy(&rotated.stderr)
    );
    // Three refresh intervals until the new key seals everywhere, and one more.
    tokio::time::sleep(Duration::from_secs(8)).await;
    let mut retry = greet.clone();
    retry["requestState"] = first["result"]["requestState"].clone();
    let key = first["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    retry["inputResponses"] = json!({key: {"action": "accept", "content": {"name": "Grace"}}});
    let done = modern(&http, &balancer.url, "tools/call", retry).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Grace!",
        "{done}"
    );
    eprintln!("fleet: a multi round-trip call completed across a key rotation");

    // The SDKs' own clients (2025-11-25 sessions) through the balancer: calls, an
    // elicitation and a subscription's updates, whichever instance takes each request.
    mcp_test_support::setup_once(&root().join("crates/mcp-legacy/tests/peers/setup.sh"));
    let python = root().join("interop/.venv/bin/python");
    for (program, script, name) in [
        (PathBuf::from("node"), "ts-fleet-client.mjs", "Ada"),
        (python, "py-fleet-client.py", "Grace"),
    ] {
        let before = balancer.servers(&http).await;
        let out = sdk_client(program, script, &balancer.url).await;
        assert!(out.get("error").is_none(), "{script}: {out}");
        assert_eq!(out["protocol"], "2025-11-25", "{script}: {out}");
        let echoes: Vec<String> = (0..6).map(|n| format!("call {n}")).collect();
        assert_eq!(out["echoes"], json!(echoes), "{script}: {out}");
        assert_eq!(out["greet"], format!("Hello, {name}!"), "{script}: {out}");
        assert_eq!(
            out["asked"],
            json!(["What is your name?"]),
            "{script}: {out}"
        );
        assert_eq!(out["updated"][0], "example://counter", "{script}: {out}");
        let after = balancer.servers(&http).await;
        for ((server, _, was), (_, _, is)) in before.iter().zip(&after) {
            assert!(is > was, "{script}: {server} served none of its requests");
        }
        eprintln!("fleet: the {script} SDK client's session ran across every instance");
    }

    // A 2025-11-25 session whose calls land on every instance.
    let before = balancer.servers(&http).await;
    let mut session = Session::open(&http, &balancer.url).await;
    for n in 0..rounds {
        let text = format!("call {n}");
        let reply = session.call(&http, "echo", json!({"text": text})).await;
        assert_eq!(reply["result"]["content"][0]["text"], text, "{reply}");
    }
    let after = balancer.servers(&http).await;
    for ((name, _, was), (_, _, is)) in before.iter().zip(&after) {
        assert!(
            is > was,
            "instance {name} served none of the session's calls: {after:?}"
        );
    }
    eprintln!("fleet: a 2025-11-25 session's calls landed on every instance: {after:?}");

    // Its server-to-client request (greet asks for a name) is answered through the
    // balancer, whichever instance takes the answer.
    let body = json!({"jsonrpc": "2.0", "id": 1000, "method": "tools/call",
        "params": {"name": "greet", "arguments": {}}});
    let response = session.post(&http, &body).await;
    let mut events = SseEvents::checked(response);
    let ask = next_message(&mut events).await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
    assert_eq!(session.post(&http, &answer).await.status(), 202);
    let done = next_message(&mut events).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Ada!",
        "{done}"
    );
    eprintln!("fleet: the session's elicitation was answered through the balancer");

    // One instance dies during a session, a listen, and a task.
    let victim = &instances[0];
    let mut session = Session::open(&http, &balancer.url).await;
    let get = send(
        &direct,
        "GET",
        &victim.url(),
        &[
            ("mcp-session-id", session.id.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
            ("accept", "text/event-stream"),
        ],
        "",
    )
    .await;
    assert_eq!(get.status(), 200);
    let mut stream = SseEvents::new(get);
    // A change reaches the session's GET stream (its subscription is the session's).
    let sub = json!({"jsonrpc": "2.0", "id": 500, "method": "resources/subscribe", "params": {"uri": "example://counter"}});
    assert_eq!(session.post(&http, &sub).await.status(), 200);
    let mut last_id = None;
    let deadline = Instant::now() + Duration::from_secs(10);
    while last_id.is_none() {
        assert!(Instant::now() < deadline, "the GET stream heard no change");
        modern(
            &http,
            &balancer.url,
            "tools/call",
            json!({"name": "increment", "arguments": {}}),
        )
        .await;
        if let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_millis(300), stream.next()).await
        {
            last_id = event.id;
        }
    }
    let mut listener = listen(&direct, &victim.url()).await;
    let task = modern(
        &direct,
        &victim.url(),
        "tools/call",
        json!({"_meta": meta(&json!({"io.modelcontextprotocol/tasks": {}})),
            "name": "countdown", "arguments": {"seconds": 2}}),
    )
    .await;
    let task_id = task["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{task}"))
        .to_owned();

    instances[0].kill();
    drop(stream);
    // A change while the GET stream is down.
    modern(
        &http,
        &balancer.url,
        "tools/call",
        json!({"name": "increment", "arguments": {}}),
    )
    .await;
    balancer.until_up(&http, 2).await;

    // The session goes on through the others.
    for n in 0..rounds {
        let reply = session.call(&http, "add", json!({"a": n, "b": 1})).await;
        assert_eq!(
            reply["result"]["content"][0]["text"],
            (n + 1).to_string(),
            "{reply}"
        );
    }
    // Its GET stream resumes through the balancer from the last event it saw.
    let last_id = last_id.unwrap();
    let get = send(
        &http,
        "GET",
        &balancer.url,
        &[
            ("mcp-session-id", session.id.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
            ("accept", "text/event-stream"),
            ("last-event-id", last_id.as_str()),
        ],
        "",
    )
    .await;
    assert_eq!(get.status(), 200, "Last-Event-ID on another instance");
    let mut resumed = SseEvents::new(get);
    // What the dead instance had appended after that event is replayed; changes go on
    // arriving on the resumed stream.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(
            Instant::now() < deadline,
            "the resumed stream heard no change"
        );
        if let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_millis(300), resumed.next()).await
            && event.data().contains("notifications/resources/updated")
        {
            assert_ne!(
                event.id.as_deref(),
                Some(last_id.as_str()),
                "not a replay of what was seen"
            );
            break;
        }
        modern(
            &http,
            &balancer.url,
            "tools/call",
            json!({"name": "increment", "arguments": {}}),
        )
        .await;
    }
    eprintln!("fleet: the session went on and its stream resumed on another instance");

    // The listener's stream ended with its instance; listening again elsewhere hears changes.
    let deadline = Instant::now() + Duration::from_secs(5);
    while listener.rx.recv().await.is_some() {
        assert!(
            Instant::now() < deadline,
            "the dead instance's listen never ended"
        );
    }
    let mut again = listen(&http, &balancer.url).await;
    change_until(&http, &balancer.url, || heard_update(&mut again)).await;
    drop(again);
    eprintln!("fleet: the listener listened again on another instance and heard a change");

    // The task is resumed by another instance once its lease lapses, and completes.
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let got = modern(
            &http,
            &balancer.url,
            "tasks/get",
            json!({"_meta": meta(&json!({"io.modelcontextprotocol/tasks": {}})), "taskId": task_id}),
        )
        .await;
        let status = got["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if status == "completed" {
            assert_eq!(
                got["result"]["result"]["content"][0]["text"], "Counted down 2 s",
                "{got}"
            );
            break;
        }
        assert_eq!(status, "working", "{got}");
        assert!(
            Instant::now() < deadline,
            "the task was never resumed: {got}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!("fleet: the task of the dead instance was resumed elsewhere and completed");

    if let Some(load) = std::env::var_os("FLEET_LOAD").filter(|_| full()) {
        throughput(&PathBuf::from(load), &redis.url, &mut instances).await;
    }
    drop(redis);
}

/// Calls/s through HAProxy with three instances and with one, each way HAProxy can pass
/// the client's address on: interleaved rounds, medians, printed as one JSON line (and
/// written to `$FLEET_RESULTS` when set) for docs/PERFORMANCE.md.
async fn throughput(load: &std::path::Path, redis: &str, instances: &mut Vec<Instance>) {
    async fn measure(load: &std::path::Path, balancer: &Balancer) -> f64 {
        let pid = balancer.process.0.id().to_string();
        let (load, url) = (load.to_owned(), balancer.url.clone());
        let out = tokio::task::spawn_blocking(move || {
            Command::new(load)
                .args(["--http", &url, "--pid", &pid, "--in-flight", "64"])
                .args(["--duration", "3", "--threads", "1"])
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["calls_per_s"]
            .as_f64()
            .unwrap_or_else(|| panic!("{report}"))
    }
    fn median(mut runs: Vec<f64>) -> f64 {
        runs.sort_by(f64::total_cmp);
        runs[runs.len() / 2]
    }
    instances.retain(|i| i.process.is_some());
    while instances.len() < 3 {
        instances.push(Instance::start(redis, ClientAddress::ProxyProtocol));
    }
    let forwarded: Vec<Instance> = (0..3)
        .map(|_| Instance::start(redis, ClientAddress::ForwardedFor))
        .collect();
    let mut setups = Vec::new();
    for (address, members) in [
        (ClientAddress::ProxyProtocol, &instances[..]),
        (ClientAddress::ForwardedFor, &forwarded[..]),
    ] {
        for count in [1, 3] {
            let chosen: Vec<&Instance> = members.iter().take(count).collect();
            let balancer = Balancer::start(&chosen, address);
            balancer.until_up(&client(), count).await;
            setups.push((address, count, balancer, Vec::new()));
        }
    }
    for _round in 0..3 {
        for (_, _, balancer, runs) in &mut setups {
            runs.push(measure(load, balancer).await);
        }
    }
    let mut report = serde_json::Map::new();
    for address in [ClientAddress::ProxyProtocol, ClientAddress::ForwardedFor] {
        let of = |count: usize| {
            let (_, _, _, runs) = setups
                .iter()
                .find(|(a, c, _, _)| *a == address && *c == count)
                .unwrap();
            median(runs.clone())
        };
        let (one, three) = (of(1), of(3));
        report.insert(
            format!("{address:?}"),
            json!({"one_instance_calls_per_s": one.round(), "three_instances_calls_per_s": three.round(), "ratio": (three / one * 100.0).round() / 100.0}),
        );
    }
    let report = json!({"fleet_throughput": report, "cores": std::thread::available_parallelism().map_or(0, std::num::NonZero::get)});
    println!("{report}");
    if let Some(path) = std::env::var_os("FLEET_RESULTS") {
        std::fs::write(path, format!("{report:#}\n")).unwrap();
    }
}
