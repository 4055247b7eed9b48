//! The HTTP target: `--in-flight` keep-alive HTTP/1.1 connections, one call in flight on
//! each, JSON or SSE replies. Each connection is owned by the task that makes its calls
//! and spoken to with the minimal client of `wire.rs`, so the driver takes as little of
//! the machine as a client can.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::check::{self, Expect, Listed, Listing, ProgressCheck, Received};
use crate::measure;
use crate::protocol::{self, Call, CallTemplate, Era};
use crate::wire::{self, Conn};
use crate::{CpuUsed, Options, Report, Stop};

/// How long a reply may take to be complete before the run fails.
const REPLY_TIMEOUT: Duration = Duration::from_mins(1);

pub(crate) struct Target {
    /// The request target in origin form (`/mcp`): servers need not accept the absolute
    /// form on a direct connection (uvicorn answers 404).
    path: String,
    /// The `Host` header.
    host: String,
    /// Where to connect, `host:port`.
    pub(crate) address: String,
}

/// What every request carries besides its body.
#[derive(Clone)]
pub(crate) struct Headers {
    pub(crate) protocol_version: &'static str,
    pub(crate) session: Option<String>,
    pub(crate) era: Era,
    /// The `Mcp-Name` of the calls (2026-07-28).
    pub(crate) name: Option<String>,
}

impl Headers {
    /// The head of a request for `method` ([`wire::request_head`]).
    pub(crate) fn head(&self, target: &Target, method: &str) -> Vec<u8> {
        let mut headers = vec![("MCP-Protocol-Version", self.protocol_version)];
        if self.era == Era::Modern {
            headers.push(("Mcp-Method", method));
            if let Some(name) = &self.name
                && !method.starts_with("notifications/")
                && method != "initialize"
            {
                headers.push(("Mcp-Name", name));
            }
        }
        if let Some(session) = &self.session {
            headers.push(("Mcp-Session-Id", session));
        }
        wire::request_head(&target.path, &target.host, &headers)
    }
}

pub fn run(url: &str, pid: u32, options: &Options) -> Result<Report, String> {
    crate::cli::runtime(options.threads)?.block_on(drive(url, pid, options))
}

/// Splits `http://host:port/path` into where to connect, the `Host` header and the path
/// (`http`'s `Uri` parses it).
pub(crate) fn parse_url(url: &str) -> Result<Target, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("bad URL {url:?}: {e}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("only http:// URLs are supported, not {url:?}"));
    }
    let authority = uri
        .authority()
        .filter(|a| !a.host().is_empty())
        .ok_or_else(|| format!("no host in {url:?}"))?;
    // `Authority` takes any text after the host's colon, and has no port unless it is one.
    let port = match authority.port_u16() {
        Some(port) => port,
        None if authority.as_str() == authority.host() => 80,
        None => return Err(format!("bad port in {url:?}")),
    };
    Ok(Target {
        path: uri
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned()),
        host: authority.as_str().to_owned(),
        // `host()` keeps an IPv6 address's brackets, which `connect` wants.
        address: format!("{}:{port}", authority.host()),
    })
}

async fn drive(url: &str, pid: u32, options: &Options) -> Result<Report, String> {
    let ticks = measure::ticks_per_second();
    let target = parse_url(url)?;
    let template = Arc::new(CallTemplate::new(options.era, &options.call)?);
    let check = Arc::new(Check {
        expect: options.expect.clone(),
        progress: options.progress,
    });
    let name = options.call.mcp_name().map(str::to_owned);
    if let Some(name) = &name {
        http::HeaderValue::from_str(name)
            .map_err(|e| format!("the name cannot be an Mcp-Name header: {e}"))?;
    }

    let mut conns = Vec::with_capacity(options.in_flight);
    for _ in 0..options.in_flight {
        conns.push(Conn::connect(&target.address).await?);
    }
    let mut headers = Headers {
        protocol_version: options.era.protocol_version(),
        session: None,
        era: options.era,
        name,
    };
    if options.era == Era::Legacy {
        let conn = conns.first_mut().ok_or("no connection")?;
        headers.session = open_session(conn, &target, &headers).await?;
    }
    let head = Arc::new(headers.head(&target, &options.call.method));

    let phase = Phase {
        head: &head,
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
    /// The head of every call's request (its method, name and session).
    head: &'a Arc<Vec<u8>>,
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

/// Milliseconds since `epoch`, plus one, so that 0 can mean "no call waiting".
fn stamp(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis())
        .unwrap_or(u64::MAX - 1)
        .saturating_add(1)
}

impl Phase<'_> {
    /// Runs `limit` calls (or until `deadline`) over `conns`; gives the connections back
    /// with the latencies (ns). A listing's call follows its pages to the end. A call
    /// whose reply is not complete within a minute fails the run: one watchdog checks
    /// every connection's waiting call each second, so no call arms a timer of its own.
    async fn run(
        &self,
        conns: Vec<Conn>,
        limit: u64,
        deadline: Option<Instant>,
    ) -> Result<(Vec<Conn>, Vec<u64>), String> {
        let counter = Arc::new(AtomicU64::new(0));
        let epoch = Instant::now();
        let waiting: Arc<[AtomicU64]> = conns.iter().map(|_| AtomicU64::new(0)).collect();
        let mut tasks = tokio::task::JoinSet::new();
        for (slot, mut conn) in conns.into_iter().enumerate() {
            let counter = Arc::clone(&counter);
            let head = Arc::clone(self.head);
            let template = Arc::clone(self.template);
            let check = Arc::clone(self.check);
            let call = Arc::clone(self.call);
            let ids = Arc::clone(self.ids);
            let waiting = Arc::clone(&waiting);
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
                    waiting[slot].store(stamp(epoch), Ordering::Relaxed);
                    loop {
                        let reply = conn.post(&head, &body).await?;
                        if reply.status != 200 {
                            return Err(format!(
                                "call {id}: HTTP {}: {}",
                                reply.status,
                                lossy(reply.body)
                            ));
                        }
                        let Some((tools, next_cursor)) =
                            check_reply(reply.body, reply.sse, id, &check)?
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
                    waiting[slot].store(0, Ordering::Relaxed);
                    latencies.push(u64::try_from(sent.elapsed().as_nanos()).unwrap_or(u64::MAX));
                }
                Ok::<_, String>((conn, latencies))
            });
        }
        let joined = async {
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
        };
        let watchdog = async {
            let limit = u64::try_from(REPLY_TIMEOUT.as_millis()).unwrap_or(u64::MAX);
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let now = stamp(epoch);
                if waiting.iter().any(|w| {
                    let since = w.load(Ordering::Relaxed);
                    since != 0 && now.saturating_sub(since) > limit
                }) {
                    return format!(
                        "{}: no complete reply within {} s",
                        self.call.method,
                        REPLY_TIMEOUT.as_secs()
                    );
                }
            }
        };
        // Dropping the connections' tasks (the JoinSet) when the watchdog fires aborts them.
        tokio::select! {
            result = joined => result,
            stalled = watchdog => Err(stalled),
        }
    }
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
        match check::check(message, &check.expect)? {
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

pub(crate) fn lossy(body: &[u8]) -> String {
    String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned()
}

/// Opens a 2025-era session on `conn`; gives its id (none from a server without sessions).
pub(crate) async fn open_session(
    conn: &mut Conn,
    target: &Target,
    headers: &Headers,
) -> Result<Option<String>, String> {
    // A new session's `initialize` carries no session id (the warm-up's may be set).
    let mut headers = Headers {
        session: None,
        ..headers.clone()
    };
    let head = headers.head(target, "initialize");
    let reply = conn.post(&head, &protocol::initialize(0)).await?;
    if reply.status != 200 {
        return Err(format!(
            "initialize: HTTP {}: {}",
            reply.status,
            lossy(reply.body)
        ));
    }
    let session = reply.session;
    headers.session.clone_from(&session);
    let head = headers.head(target, "notifications/initialized");
    let reply = conn.post(&head, &protocol::initialized()).await?;
    if !(200..300).contains(&reply.status) {
        return Err(format!(
            "notifications/initialized: HTTP {}: {}",
            reply.status,
            lossy(reply.body)
        ));
    }
    Ok(session)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let t = parse_url("http://127.0.0.1:8080/mcp").unwrap();
        assert_eq!(
            (t.address.as_str(), t.host.as_str(), t.path.as_str()),
            ("127.0.0.1:8080", "127.0.0.1:8080", "/mcp")
        );
        let t = parse_url("http://localhost").unwrap();
        assert_eq!((t.address.as_str(), t.path.as_str()), ("localhost:80", "/"));
        let t = parse_url("http://[::1]:9/a?b=c").unwrap();
        assert_eq!(
            (t.address.as_str(), t.host.as_str(), t.path.as_str()),
            ("[::1]:9", "[::1]:9", "/a?b=c")
        );
        assert!(parse_url("https://example.com/mcp").is_err());
        assert!(parse_url("http://host:port/").is_err());
        assert!(parse_url("http:///mcp").is_err());
    }

    #[test]
    fn heads_carry_the_era_headers() {
        let target = parse_url("http://127.0.0.1:1/mcp").unwrap();
        let mut headers = Headers {
            protocol_version: Era::Modern.protocol_version(),
            session: None,
            era: Era::Modern,
            name: Some("echo".into()),
        };
        let head = String::from_utf8(headers.head(&target, "tools/call")).unwrap();
        assert!(head.starts_with("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:1\r\n"));
        assert!(head.contains("\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n"));
        assert!(head.ends_with("\r\n") && !head.ends_with("\r\n\r\n"));
        headers.era = Era::Legacy;
        headers.session = Some("s-1".into());
        let head = String::from_utf8(headers.head(&target, "tools/call")).unwrap();
        assert!(!head.contains("Mcp-Method") && head.contains("\r\nMcp-Session-Id: s-1\r\n"));
    }

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
