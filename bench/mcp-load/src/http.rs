//! The HTTP target: `--in-flight` keep-alive HTTP/1.1 connections (hyper 1 client), one
//! call in flight on each, JSON or SSE replies.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Request, StatusCode, Uri};

use crate::measure;
use crate::protocol::{self, CallTemplate, Era, Received};
use crate::{Options, Report, Stop};

struct Target {
    uri: Uri,
    authority: HeaderValue,
    address: String,
}

struct Conn {
    sender: SendRequest<Full<Bytes>>,
}

/// What every request carries besides its body.
struct Headers {
    protocol_version: &'static str,
    session: Option<HeaderValue>,
    era: Era,
}

pub fn run(url: &str, pid: u32, options: &Options) -> Result<Report, String> {
    let runtime = if options.threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(options.threads)
            .enable_all()
            .build()
    }
    .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    runtime.block_on(drive(url, pid, options))
}

async fn drive(url: &str, pid: u32, options: &Options) -> Result<Report, String> {
    let ticks = measure::ticks_per_second();
    let uri: Uri = url.parse().map_err(|e| format!("bad URL {url:?}: {e}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("only http:// URLs are supported, not {url:?}"));
    }
    let authority = uri
        .authority()
        .ok_or_else(|| format!("no host in {url:?}"))?
        .clone();
    let address = format!(
        "{}:{}",
        authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']'),
        authority.port_u16().unwrap_or(80)
    );
    let target = Arc::new(Target {
        authority: HeaderValue::from_str(authority.as_str())
            .map_err(|e| format!("bad host in {url:?}: {e}"))?,
        uri,
        address,
    });
    let text: Arc<str> = protocol::payload(options.payload).into();
    let template = Arc::new(CallTemplate::new(options.era, &text));

    let mut conns = Vec::with_capacity(options.in_flight);
    for _ in 0..options.in_flight {
        conns.push(connect(&target).await?);
    }
    let mut headers = Headers {
        protocol_version: options.era.protocol_version(),
        session: None,
        era: options.era,
    };
    if options.era == Era::Legacy {
        let conn = conns.first_mut().ok_or("no connection")?;
        let (status, session, body, _) = post(
            conn,
            &target,
            &headers,
            "initialize",
            protocol::initialize(0),
        )
        .await?;
        if status != StatusCode::OK {
            return Err(format!("initialize: HTTP {status}: {}", lossy(&body)));
        }
        headers.session = session;
        let (status, _, body, _) = post(
            conn,
            &target,
            &headers,
            "notifications/initialized",
            protocol::initialized(),
        )
        .await?;
        if !status.is_success() {
            return Err(format!(
                "notifications/initialized: HTTP {status}: {}",
                lossy(&body)
            ));
        }
    }
    let headers = Arc::new(headers);

    let phase = Phase {
        target: &target,
        headers: &headers,
        template: &template,
        text: &text,
    };
    let (conns, _) = phase.run(conns, 1, options.warmup, None).await?;
    let cpu_start = measure::process_cpu(pid, ticks)?;
    let start = Instant::now();
    let (limit, deadline) = match options.stop {
        Stop::Calls(n) => (n, None),
        Stop::Duration(d) => (u64::MAX, Some(start + d)),
    };
    let (_conns, latencies) = phase
        .run(conns, options.warmup + 1, limit, deadline)
        .await?;
    let elapsed = start.elapsed();
    let cpu = measure::process_cpu(pid, ticks)?.saturating_sub(cpu_start);
    let peak = measure::process_peak_rss(pid)?;
    Report::new("http", options, latencies, elapsed, cpu, peak, None)
}

struct Phase<'a> {
    target: &'a Arc<Target>,
    headers: &'a Arc<Headers>,
    template: &'a Arc<CallTemplate>,
    text: &'a Arc<str>,
}

impl Phase<'_> {
    /// Runs `limit` calls (or until `deadline`) over `conns`, with ids from `first_id`;
    /// gives the connections back with the latencies (ns).
    async fn run(
        &self,
        conns: Vec<Conn>,
        first_id: u64,
        limit: u64,
        deadline: Option<Instant>,
    ) -> Result<(Vec<Conn>, Vec<u64>), String> {
        let counter = Arc::new(AtomicU64::new(0));
        let mut tasks = tokio::task::JoinSet::new();
        for mut conn in conns {
            let counter = Arc::clone(&counter);
            let target = Arc::clone(self.target);
            let headers = Arc::clone(self.headers);
            let template = Arc::clone(self.template);
            let text = Arc::clone(self.text);
            tasks.spawn(async move {
                let mut latencies = Vec::with_capacity(1 << 16);
                let mut body = Vec::with_capacity(text.len() + 512);
                loop {
                    let n = counter.fetch_add(1, Ordering::Relaxed);
                    if n >= limit || deadline.is_some_and(|d| Instant::now() >= d) {
                        break;
                    }
                    let id = first_id + n;
                    body.clear();
                    template.write(id, &mut body);
                    let sent = Instant::now();
                    let (status, _, reply, sse) =
                        post(&mut conn, &target, &headers, "tools/call", body.clone()).await?;
                    if status != StatusCode::OK {
                        return Err(format!("call {id}: HTTP {status}: {}", lossy(&reply)));
                    }
                    check_reply(&reply, sse, id, &text)?;
                    latencies.push(u64::try_from(sent.elapsed().as_nanos()).unwrap_or(u64::MAX));
                }
                Ok::<_, String>((conn, latencies))
            });
        }
        let mut conns = Vec::new();
        let mut all = Vec::new();
        let mut failure = None;
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok((conn, latencies))) => {
                    conns.push(conn);
                    all.extend(latencies);
                }
                Ok(Err(e)) => {
                    failure.get_or_insert(e);
                }
                Err(e) => {
                    failure.get_or_insert(format!("a connection task failed: {e}"));
                }
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok((conns, all)),
        }
    }
}

async fn connect(target: &Target) -> Result<Conn, String> {
    let stream = tokio::net::TcpStream::connect(&target.address)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", target.address))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| format!("HTTP handshake with {}: {e}", target.address))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(Conn { sender })
}

/// POSTs one message; gives the status, the `Mcp-Session-Id`, the whole body and whether
/// it was an event stream.
async fn post(
    conn: &mut Conn,
    target: &Target,
    headers: &Headers,
    method: &str,
    body: Vec<u8>,
) -> Result<(StatusCode, Option<HeaderValue>, Bytes, bool), String> {
    let mut request = Request::post(target.uri.clone())
        .header(HOST, target.authority.clone())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", headers.protocol_version);
    if headers.era == Era::Modern {
        request = request.header("mcp-method", method);
        if method == "tools/call" {
            request = request.header("mcp-name", "echo");
        }
    }
    if let Some(session) = &headers.session {
        request = request.header("mcp-session-id", session.clone());
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| format!("cannot build the request: {e}"))?;
    conn.sender
        .ready()
        .await
        .map_err(|e| format!("the connection closed: {e}"))?;
    let response = conn
        .sender
        .send_request(request)
        .await
        .map_err(|e| format!("{method}: {e}"))?;
    let status = response.status();
    let session = response.headers().get("mcp-session-id").cloned();
    let sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let body = tokio::time::timeout(Duration::from_mins(1), response.into_body().collect())
        .await
        .map_err(|_| format!("{method}: no complete reply within 60 s"))?
        .map_err(|e| format!("{method}: reading the reply: {e}"))?
        .to_bytes();
    Ok((status, session, body, sse))
}

/// Checks a reply body: one JSON message, or an event stream that carries the reply
/// among other messages.
fn check_reply(body: &[u8], sse: bool, id: u64, text: &str) -> Result<(), String> {
    if !sse {
        return match protocol::check(body, text)? {
            Received::Reply(got) if got == id => Ok(()),
            Received::Reply(got) => Err(format!("call {id} answered with id {got}")),
            Received::Other => Err(format!("call {id} answered with a non-reply")),
        };
    }
    for data in sse_data(body) {
        if let Received::Reply(got) = protocol::check(data.as_bytes(), text)? {
            if got == id {
                return Ok(());
            }
            return Err(format!("call {id} answered with id {got}"));
        }
    }
    Err(format!(
        "call {id}: the event stream ended without the reply"
    ))
}

/// The `data` of each event in an event stream.
fn sse_data(body: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(body);
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            events.extend(data.take());
        } else if let Some(value) = line.strip_prefix("data:") {
            let value = value.strip_prefix(' ').unwrap_or(value);
            match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_owned()),
            }
        }
    }
    events.extend(data);
    events.retain(|d| !d.trim().is_empty());
    events
}

fn lossy(body: &[u8]) -> String {
    String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_streams() {
        let body = b"id: 1\nretry: 3000\ndata:\n\nevent: message\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: x";
        assert_eq!(sse_data(body), ["{\"a\":\n1}", "x"]);
        let reply = br#"data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}

data: {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hi"}]}}

"#;
        assert_eq!(check_reply(reply, true, 5, "hi"), Ok(()));
        assert!(check_reply(reply, true, 6, "hi").is_err());
        assert!(check_reply(b"data: \n\n", true, 6, "hi").is_err());
    }
}
