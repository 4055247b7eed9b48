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
use crate::protocol::{
    self, Call, CallTemplate, Era, Expect, Listed, Listing, ProgressCheck, Received,
};
use crate::{CpuUsed, Options, Report, Stop};

struct Target {
    /// The request target in origin form (`/mcp`): servers need not accept the absolute
    /// form on a direct connection (uvicorn answers 404).
    path: Uri,
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
    /// The `Mcp-Name` of the calls (2026-07-28).
    name: Option<HeaderValue>,
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
        path: uri
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned())
            .parse()
            .map_err(|e| format!("bad path in {url:?}: {e}"))?,
        address,
    });
    let template = Arc::new(CallTemplate::new(options.era, &options.call)?);
    let check = Arc::new(Check {
        expect: options.expect.clone(),
        progress: options.progress,
    });
    let name = options
        .call
        .mcp_name()
        .map(HeaderValue::from_str)
        .transpose()
        .map_err(|e| format!("the name cannot be an Mcp-Name header: {e}"))?;

    let mut conns = Vec::with_capacity(options.in_flight);
    for _ in 0..options.in_flight {
        conns.push(connect(&target).await?);
    }
    let mut headers = Headers {
        protocol_version: options.era.protocol_version(),
        session: None,
        era: options.era,
        name,
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
        check: &check,
        call: &Arc::new(options.call.clone()),
        era: options.era,
        ids: &Arc::new(AtomicU64::new(1)),
    };
    let (conns, _) = phase.run(conns, options.warmup, None).await?;
    let cpu_start = measure::process_cpu(pid, ticks)?;
    let driver_start = measure::process_cpu(std::process::id(), ticks)?;
    let start = Instant::now();
    let (limit, deadline) = match options.stop {
        Stop::Calls(n) => (n, None),
        Stop::Duration(d) => (u64::MAX, Some(start + d)),
    };
    let (_conns, latencies) = phase.run(conns, limit, deadline).await?;
    let elapsed = start.elapsed();
    let cpu = measure::process_cpu(pid, ticks)?.saturating_sub(cpu_start);
    let driver_cpu = measure::process_cpu(std::process::id(), ticks)?.saturating_sub(driver_start);
    let peak = measure::process_peak_rss(pid)?;
    Report::new(
        "http",
        options,
        latencies,
        elapsed,
        CpuUsed {
            server: cpu,
            driver: driver_cpu,
        },
        peak,
        None,
    )
}

struct Phase<'a> {
    target: &'a Arc<Target>,
    headers: &'a Arc<Headers>,
    template: &'a Arc<CallTemplate>,
    check: &'a Arc<Check>,
    call: &'a Arc<Call>,
    era: Era,
    /// The next request id, shared by the phases.
    ids: &'a Arc<AtomicU64>,
}

/// What each reply must hold.
struct Check {
    expect: Expect,
    /// The progress notifications each call must get before its reply.
    progress: usize,
}

impl Phase<'_> {
    /// Runs `limit` calls (or until `deadline`) over `conns`; gives the connections back
    /// with the latencies (ns). A listing's call follows its pages to the end.
    async fn run(
        &self,
        conns: Vec<Conn>,
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
            let check = Arc::clone(self.check);
            let call = Arc::clone(self.call);
            let ids = Arc::clone(self.ids);
            let era = self.era;
            tasks.spawn(async move {
                let mut latencies = Vec::with_capacity(1 << 16);
                let mut body = Vec::with_capacity(1024);
                let mut listing = Listing::new(match check.expect {
                    Expect::Tools(n) => n,
                    _ => 0,
                });
                loop {
                    let n = counter.fetch_add(1, Ordering::Relaxed);
                    if n >= limit || deadline.is_some_and(|d| Instant::now() >= d) {
                        break;
                    }
                    let mut id = ids.fetch_add(1, Ordering::Relaxed);
                    body.clear();
                    template.write(id, &mut body);
                    let sent = Instant::now();
                    loop {
                        let (status, _, reply, sse) =
                            post(&mut conn, &target, &headers, &call.method, body.clone()).await?;
                        if status != StatusCode::OK {
                            return Err(format!("call {id}: HTTP {status}: {}", lossy(&reply)));
                        }
                        let Some((tools, next_cursor)) = check_reply(&reply, sse, id, &check)?
                        else {
                            break;
                        };
                        match listing.page(id, tools, next_cursor)? {
                            Listed::Done => break,
                            Listed::More { cursor, so_far } => {
                                id = ids.fetch_add(1, Ordering::Relaxed);
                                listing.carry(id, so_far);
                                body = protocol::next_page(era, &call, &cursor, id)?;
                            }
                        }
                    }
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
    let mut request = Request::post(target.path.clone())
        .header(HOST, target.authority.clone())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", headers.protocol_version);
    if headers.era == Era::Modern {
        request = request.header("mcp-method", method);
        if let Some(name) = &headers.name
            && !method.starts_with("notifications/")
            && method != "initialize"
        {
            request = request.header("mcp-name", name.clone());
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

/// A page of a listing: its tools and the cursor of the next.
type Page = (usize, Option<String>);

/// Checks a reply body: one JSON message, or an event stream that carries the reply
/// after the call's progress notifications (and maybe other messages). Gives the page
/// when the reply is one of a listing.
fn check_reply(body: &[u8], sse: bool, id: u64, check: &Check) -> Result<Option<Page>, String> {
    let mut progress = ProgressCheck::new(check.progress);
    let events;
    let messages: Vec<&[u8]> = if sse {
        events = sse_data(body);
        events.iter().map(String::as_bytes).collect()
    } else {
        vec![body]
    };
    for message in messages {
        match protocol::check(message, &check.expect)? {
            Received::Reply(got) if got == id => {
                progress.finish(id)?;
                return Ok(None);
            }
            Received::Page {
                id: got,
                tools,
                next_cursor,
            } if got == id => {
                progress.finish(id)?;
                return Ok(Some((tools, next_cursor)));
            }
            Received::Reply(got) | Received::Page { id: got, .. } => {
                return Err(format!("call {id} answered with id {got}"));
            }
            Received::Progress { token, progress: p } if token == id => progress.note(token, p)?,
            Received::Progress { token, .. } => {
                return Err(format!(
                    "call {id}'s reply carries progress for token {token}"
                ));
            }
            Received::Other => {}
        }
    }
    Err(if sse {
        format!("call {id}: the event stream ended without the reply")
    } else {
        format!("call {id} answered with a non-reply")
    })
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
        let reply = br#"data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}

data: {"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"hi"}]}}

"#;
        let hi = |progress| Check {
            expect: Expect::Text("hi".to_owned()),
            progress,
        };
        assert_eq!(check_reply(reply, true, 5, &hi(0)), Ok(None));
        assert!(check_reply(reply, true, 6, &hi(0)).is_err());
        assert!(check_reply(b"data: \n\n", true, 6, &hi(0)).is_err());
        assert!(
            check_reply(
                b"data: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n",
                false,
                6,
                &hi(0)
            )
            .is_err()
        );
    }

    #[test]
    fn progress_in_event_streams() {
        let check = |progress| Check {
            expect: Expect::Content,
            progress,
        };
        let note = |token: u64, p: u32| {
            format!(
                "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":{token},\"progress\":{p},\"total\":2}}}}\n\n"
            )
        };
        let reply = "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n";
        let two = format!("{}{}{reply}", note(5, 1), note(5, 2));
        assert_eq!(check_reply(two.as_bytes(), true, 5, &check(2)), Ok(None));
        assert!(check_reply(two.as_bytes(), true, 5, &check(3)).is_err());
        assert!(check_reply(reply.as_bytes(), true, 5, &check(2)).is_err());
        let backwards = format!("{}{}{reply}", note(5, 2), note(5, 1));
        assert!(check_reply(backwards.as_bytes(), true, 5, &check(2)).is_err());
        let other = format!("{}{}{reply}", note(5, 1), note(4, 2));
        assert!(check_reply(other.as_bytes(), true, 5, &check(2)).is_err());
        let json = &reply["data: ".len()..];
        assert!(check_reply(json.as_bytes(), false, 5, &check(2)).is_err());
        assert_eq!(check_reply(json.as_bytes(), false, 5, &check(0)), Ok(None));
    }
}
