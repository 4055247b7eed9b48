//! The stdio target: spawn the server, pipeline calls over its pipes.
//!
//! A writer thread sends a call whenever a slot is free (several in one write when several
//! slots freed at once); the calling thread reads the replies, checks each, records its
//! latency and frees its slot. The first call (modern era) or the `initialize` request
//! (legacy era) is sent alone right after the spawn: its reply gives the cold start.
//!
//! A `tools/list` page with a `nextCursor` does not end its call: the reader asks the
//! writer to send the request for the next page (a new id, the same slot), and the call's
//! latency runs from its first request to its last page.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::measure;
use crate::protocol::{self, CallTemplate, Era, Listed, Listing, ProgressCheck, Received};
use crate::{CpuUsed, Options, Report, Stop};

/// Kills the server on every path out.
struct Server(Child);

impl Server {
    /// Gives the server, its stdin closed, up to 2 s to exit (the guard kills it after).
    fn wait_exit(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What the writer tells the reader.
enum Sent {
    /// Call `id` went out at this instant.
    Call(u64, Instant),
    /// The writer started no more calls after this many in all (it still writes the
    /// requests for next pages of listings in flight).
    Done(u64),
}

/// What the reader tells the writer.
enum Slot {
    /// A call finished: start another.
    Free,
    /// Write this request (the next page of a listing, already counted as in flight).
    Write(Vec<u8>),
}

pub fn run(command: &[String], options: &Options) -> Result<Report, String> {
    let ticks = measure::ticks_per_second();
    let expect = &options.expect;
    let template = CallTemplate::new(options.era, &options.call)?;
    let mut progress_check = ProgressCheck::new(options.progress);
    let mut listing = Listing::new(match expect {
        protocol::Expect::Tools(n) => *n,
        _ => 0,
    });
    // Request ids: 0 is the first exchange; the writer's calls and the reader's next pages
    // take theirs from here.
    let ids = Arc::new(AtomicU64::new(1));
    let (program, args) = command.split_first().ok_or("no command to spawn")?;

    // The first exchange, alone: its first reply gives the cold start. A listing is
    // followed to its end here.
    let mut first = match options.era {
        Era::Legacy => protocol::initialize(0),
        Era::Modern => {
            let mut out = Vec::new();
            template.write(0, &mut out);
            out
        }
    };
    first.push(b'\n');
    let mut cold_starts = (0..options.cold_starts)
        .map(|_| cold_start(program, args, &first, expect))
        .collect::<Result<Vec<_>, _>>()?;

    let spawned = Instant::now();
    let (mut server, progress) = spawn(program, args)?;
    let pid = server.0.id();
    let mut stdin = server.0.stdin.take().ok_or("no stdin pipe")?;
    let mut stdout =
        BufReader::with_capacity(256 * 1024, server.0.stdout.take().ok_or("no stdout pipe")?);
    let mut line = Vec::with_capacity(128 * 1024);
    write(&mut stdin, &first)?;
    let mut waiting = 0;
    let mut cold_start = None;
    loop {
        read_line(&mut stdout, &mut line, 0)?;
        let page = match protocol::check(&line, expect)? {
            Received::Reply(id) if id == waiting => None,
            Received::Page {
                id,
                tools,
                next_cursor,
            } if id == waiting => Some(listing.page(id, tools, next_cursor)?),
            Received::Reply(id) | Received::Page { id, .. } => {
                return Err(format!("a reply to id {id}, which was not sent"));
            }
            Received::Progress { token, progress } => {
                progress_check.note(token, progress)?;
                continue;
            }
            Received::Other => continue,
        };
        cold_start.get_or_insert_with(|| spawned.elapsed());
        if options.era == Era::Modern {
            progress_check.finish(waiting)?;
        }
        match page {
            Some(Listed::More { cursor, so_far }) => {
                waiting = ids.fetch_add(1, Ordering::Relaxed);
                listing.carry(waiting, so_far);
                let mut next = protocol::next_page(options.era, &options.call, &cursor, waiting)?;
                next.push(b'\n');
                write(&mut stdin, &next)?;
            }
            Some(Listed::Done) | None => break,
        }
    }
    cold_starts.push(cold_start.ok_or("no first reply")?);
    cold_starts.sort_unstable();
    let cold_start = cold_starts[cold_starts.len() / 2];
    if options.era == Era::Legacy {
        let mut note = protocol::initialized();
        note.push(b'\n');
        write(&mut stdin, &note)?;
    }

    let (slot_tx, slot_rx) = mpsc::channel::<Slot>();
    for _ in 0..options.in_flight {
        slot_tx
            .send(Slot::Free)
            .map_err(|_| "the writer thread is gone".to_owned())?;
    }
    let (sent_tx, sent_rx) = mpsc::channel::<Sent>();
    let stop = Arc::new(AtomicBool::new(false));
    let limit = match options.stop {
        Stop::Calls(n) => options.warmup + n,
        Stop::Duration(_) => u64::MAX,
    };
    let writer = {
        let stop = Arc::clone(&stop);
        let ids = Arc::clone(&ids);
        std::thread::spawn(move || -> Result<ChildStdin, String> {
            let mut started = 0_u64;
            let mut done = false;
            let mut buf = Vec::new();
            while let Ok(first) = slot_rx.recv() {
                buf.clear();
                let now = Instant::now();
                let mut slot = Some(first);
                while let Some(message) = slot.take().or_else(|| slot_rx.try_recv().ok()) {
                    match message {
                        Slot::Write(request) => {
                            buf.extend_from_slice(&request);
                            buf.push(b'\n');
                        }
                        Slot::Free if done => {}
                        Slot::Free => {
                            if stop.load(Ordering::Relaxed) || started >= limit {
                                done = true;
                                if sent_tx.send(Sent::Done(started)).is_err() {
                                    return Ok(stdin);
                                }
                                continue;
                            }
                            let id = ids.fetch_add(1, Ordering::Relaxed);
                            template.write(id, &mut buf);
                            buf.push(b'\n');
                            if sent_tx.send(Sent::Call(id, now)).is_err() {
                                return Ok(stdin);
                            }
                            started += 1;
                        }
                    }
                }
                if !buf.is_empty() {
                    write(&mut stdin, &buf)?;
                }
            }
            if !done {
                let _ = sent_tx.send(Sent::Done(started));
            }
            Ok(stdin)
        })
    };

    // With more than one thread, the replies are read and checked on threads of their own
    // from here on (the first exchange above was checked here).
    let mut replies_in = if options.threads > 1 {
        Replies::Checked(Checked::start(stdout, options.threads, expect))
    } else {
        Replies::Here(stdout)
    };
    let mut pending: HashMap<u64, Instant> = HashMap::with_capacity(options.in_flight * 2);
    let mut done = None;
    let mut replies = 0_u64;
    let mut latencies = Vec::with_capacity(1 << 20);
    let mut window = None;
    let read_result: Result<(), String> = (|| {
        loop {
            // Learn what was sent; wait for it when nothing is in flight.
            loop {
                let message = if pending.is_empty() && done.is_none() {
                    sent_rx.recv().ok()
                } else {
                    sent_rx.try_recv().ok()
                };
                match message {
                    Some(Sent::Call(id, at)) => {
                        pending.insert(id, at);
                    }
                    Some(Sent::Done(n)) => done = Some(n),
                    None if pending.is_empty() && done.is_none() => {
                        return Err("the writer stopped early".to_owned());
                    }
                    None => break,
                }
            }
            if done == Some(replies) {
                return Ok(());
            }
            let received = match &mut replies_in {
                Replies::Checked(checked) => checked.next()?,
                Replies::Here(stdout) => {
                    read_line(stdout, &mut line, replies)?;
                    protocol::check(&line, expect)?
                }
            };
            let (id, page) = match received {
                Received::Reply(id) => (id, None),
                Received::Page {
                    id,
                    tools,
                    next_cursor,
                } => (id, Some((tools, next_cursor))),
                Received::Progress { token, progress } => {
                    progress_check.note(token, progress)?;
                    continue;
                }
                Received::Other => continue,
            };
            progress_check.finish(id)?;
            let at = match pending.remove(&id) {
                Some(at) => at,
                None => loop {
                    match sent_rx.recv() {
                        Ok(Sent::Call(sent, at)) if sent == id => break at,
                        Ok(Sent::Call(sent, at)) => {
                            pending.insert(sent, at);
                        }
                        Ok(Sent::Done(_)) | Err(_) => {
                            return Err(format!("a reply to id {id}, which is not in flight"));
                        }
                    }
                },
            };
            progress.fetch_add(1, Ordering::Relaxed);
            if let Some((tools, next_cursor)) = page
                && let Listed::More { cursor, so_far } = listing.page(id, tools, next_cursor)?
            {
                // The call goes on with the next page: same start, a new id.
                let next_id = ids.fetch_add(1, Ordering::Relaxed);
                listing.carry(next_id, so_far);
                pending.insert(next_id, at);
                let request = protocol::next_page(options.era, &options.call, &cursor, next_id)?;
                slot_tx
                    .send(Slot::Write(request))
                    .map_err(|_| "the writer thread is gone".to_owned())?;
                continue;
            }
            let now = Instant::now();
            replies += 1;
            match window {
                None if replies >= options.warmup => {
                    window = Some((
                        now,
                        measure::process_cpu(pid, ticks)?,
                        measure::process_cpu(std::process::id(), ticks)?,
                    ));
                }
                None => {}
                Some((start, _, _)) => {
                    latencies.push(u64::try_from((now - at).as_nanos()).unwrap_or(u64::MAX));
                    if let Stop::Duration(d) = options.stop
                        && now - start >= d
                    {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            // The writer may be gone already (it stopped); that is fine.
            let _ = slot_tx.send(Slot::Free);
        }
    })();
    stop.store(true, Ordering::Relaxed);
    drop(slot_tx);
    let end = Instant::now();
    let cpu_end = measure::process_cpu(pid, ticks);
    let driver_end = measure::process_cpu(std::process::id(), ticks);
    let peak = measure::process_peak_rss(pid);
    let stdin = writer
        .join()
        .map_err(|_| "the writer thread panicked".to_owned())?;
    read_result?;
    // Close stdin so the server can exit; the guard kills it if it does not.
    drop(stdin?);
    server.wait_exit();
    let (start, cpu_start, driver_start) = window.ok_or("the warm-up never finished")?;
    Report::new(
        "stdio",
        options,
        latencies,
        end - start,
        CpuUsed {
            server: cpu_end?.saturating_sub(cpu_start),
            driver: driver_end?.saturating_sub(driver_start),
        },
        peak?,
        Some(cold_start),
    )
}

/// Where the replies are read and checked: on the calling thread, or on threads of their own.
enum Replies {
    Here(BufReader<std::process::ChildStdout>),
    Checked(Checked),
}

/// The server's stdout read and checked on threads of its own (`--threads N`, N ≥ 2): a
/// reader splits it into lines and deals them out in turn to N checkers, whose results
/// [`next`](Self::next) gives back in the order the lines came (a progress notification
/// before the reply it precedes). Checking a large reply (a listing of hundreds of tools)
/// costs the driver more than serving it costs a fast server; on one thread, the driver
/// would set the rate.
struct Checked {
    results: mpsc::Receiver<(u64, Result<Received, String>)>,
    /// The number of the next line to give back, and the results that came before it.
    next: u64,
    early: HashMap<u64, Result<Received, String>>,
}

impl Checked {
    fn start(
        mut stdout: impl BufRead + Send + 'static,
        threads: usize,
        expect: &protocol::Expect,
    ) -> Self {
        let (results_tx, results) = mpsc::channel();
        let mut lines = Vec::with_capacity(threads);
        for _ in 0..threads {
            let (line_tx, line_rx) = mpsc::channel::<(u64, Vec<u8>)>();
            let results_tx = results_tx.clone();
            let expect = expect.clone();
            std::thread::spawn(move || {
                for (number, line) in line_rx {
                    if results_tx
                        .send((number, protocol::check(&line, &expect)))
                        .is_err()
                    {
                        return;
                    }
                }
            });
            lines.push(line_tx);
        }
        // Ends at the server's end of stdout, or once nobody takes the lines.
        std::thread::spawn(move || {
            for (number, checker) in (0_u64..).zip(lines.iter().cycle()) {
                let mut line = Vec::new();
                if let Err(e) = read_line(&mut stdout, &mut line, number) {
                    let _ = results_tx.send((number, Err(e)));
                    return;
                }
                if checker.send((number, line)).is_err() {
                    return;
                }
            }
        });
        Checked {
            results,
            next: 0,
            early: HashMap::new(),
        }
    }

    /// The next line's result.
    fn next(&mut self) -> Result<Received, String> {
        let result = loop {
            if let Some(result) = self.early.remove(&self.next) {
                break result;
            }
            let (number, result) = self
                .results
                .recv()
                .map_err(|_| "the reader of the server's stdout is gone".to_owned())?;
            if number == self.next {
                break result;
            }
            self.early.insert(number, result);
        };
        self.next += 1;
        result
    }
}

/// Spawns the server with piped stdin and stdout, watched: the counter it gives is the
/// watchdog's (see [`watchdog`]).
fn spawn(program: &str, args: &[String]) -> Result<(Server, Arc<AtomicU64>), String> {
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot spawn {program}: {e}"))?;
    let server = Server(child);
    let progress = Arc::new(AtomicU64::new(0));
    watchdog(server.0.id(), Arc::clone(&progress));
    Ok((server, progress))
}

/// One more spawn of the server for the cold start: the time from the spawn to the reply
/// to `first` (a request with id 0), after which the server's stdin is closed and it is
/// given 2 s to exit ([`Server::wait_exit`]).
fn cold_start(
    program: &str,
    args: &[String],
    first: &[u8],
    expect: &protocol::Expect,
) -> Result<Duration, String> {
    let spawned = Instant::now();
    let (mut server, progress) = spawn(program, args)?;
    let mut stdin = server.0.stdin.take().ok_or("no stdin pipe")?;
    let mut stdout = BufReader::new(server.0.stdout.take().ok_or("no stdout pipe")?);
    let mut line = Vec::new();
    write(&mut stdin, first)?;
    let elapsed = loop {
        read_line(&mut stdout, &mut line, 0)?;
        match protocol::check(&line, expect)? {
            Received::Reply(0) | Received::Page { id: 0, .. } => break spawned.elapsed(),
            Received::Reply(id) | Received::Page { id, .. } => {
                return Err(format!("a reply to id {id}, which was not sent"));
            }
            Received::Progress { .. } | Received::Other => {}
        }
    };
    progress.store(WATCHED_OUT, Ordering::Relaxed);
    drop(stdin);
    server.wait_exit();
    Ok(elapsed)
}

/// What `progress` is set to when the server no longer needs watching.
const WATCHED_OUT: u64 = u64::MAX;

/// How long the server may go without answering anything before the run fails.
const STALL: Duration = Duration::from_secs(30);

/// Fails the run (kills the server, exits with an error) when no reply arrives for
/// [`STALL`]: a server that stops answering, or answers with something else, must not
/// hang the driver. The reads block, so this is a thread of its own; it ends when
/// `progress` is set to [`WATCHED_OUT`].
fn watchdog(pid: u32, progress: Arc<AtomicU64>) {
    std::thread::spawn(move || {
        let mut seen = u64::MAX;
        let mut since = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(250));
            let now = progress.load(Ordering::Relaxed);
            if now == WATCHED_OUT {
                return;
            }
            if now != seen {
                seen = now;
                since = Instant::now();
            } else if since.elapsed() > STALL {
                eprintln!(
                    "mcp-load: no reply from the server for {} s (after {now} replies); killing it",
                    STALL.as_secs()
                );
                let _ = std::process::Command::new("kill")
                    .arg(pid.to_string())
                    .status();
                std::process::exit(1);
            }
        }
    });
}

fn write(stdin: &mut ChildStdin, bytes: &[u8]) -> Result<(), String> {
    stdin
        .write_all(bytes)
        .and_then(|()| stdin.flush())
        .map_err(|e| format!("cannot write to the server's stdin: {e}"))
}

fn read_line(stdout: &mut impl BufRead, line: &mut Vec<u8>, replies: u64) -> Result<(), String> {
    line.clear();
    let n = stdout
        .read_until(b'\n', line)
        .map_err(|e| format!("cannot read the server's stdout: {e}"))?;
    if n == 0 {
        return Err(format!(
            "the server closed its stdout after {replies} replies"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    #[test]
    fn checked_lines_come_back_in_their_order_whatever_thread_checked_them() {
        let mut text = String::new();
        for id in 0..50 {
            writeln!(
                text,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#
            )
            .unwrap();
        }
        text.push_str(r#"{"jsonrpc":"2.0","id":50,"error":{"code":-32603,"message":"no"}}"#);
        text.push('\n');
        let expect = protocol::Expect::Text("hi".into());
        let mut checked = Checked::start(std::io::Cursor::new(text.into_bytes()), 3, &expect);
        for id in 0..50 {
            assert_eq!(checked.next(), Ok(Received::Reply(id)));
        }
        // A reply that fails its check fails the run, in its place.
        assert!(checked.next().unwrap_err().contains("error reply"));
        // Then the end of the stream is an error too, not a hang.
        assert!(checked.next().unwrap_err().contains("closed its stdout"));
    }
}
