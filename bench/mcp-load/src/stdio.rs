//! The stdio target: spawn the server, pipeline calls over its pipes.
//!
//! One thread sends a call whenever one ends (all those of one read in one write), reads
//! the replies, checks each and records its latency. The first call (modern era) or the `initialize` request
//! (legacy era) is sent alone right after the spawn: its reply gives the cold start.
//!
//! A `tools/list` page with a `nextCursor` does not end its call: the request for the next
//! page goes out instead (a new id), and the call's latency runs from its first request to
//! its last page.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::check::{self, Expect, Listed, Listing, ProgressCheck, Received};
use crate::measure;
use crate::protocol::{self, CallTemplate, Era};
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

/// The bytes of requests that may be in flight at once for the replies to be read on the
/// thread that writes the requests (see [`run`]): a quarter of Linux's smallest default
/// pipe capacity.
const PIPE_SAFE: usize = 16 * 1024;

/// The calls of a run: those written, those waiting to be, and whether to start more.
struct Calls {
    /// Requests not yet written.
    out: Vec<u8>,
    /// The calls whose requests are in `out` (their start is the write).
    unsent: Vec<u64>,
    /// The calls in flight, by id (a listing's under the id of its latest page), and when
    /// each was written.
    pending: HashMap<u64, Instant>,
    started: u64,
    /// No more calls start: the measured window ended, or `limit` calls started.
    stopped: bool,
}

impl Calls {
    /// Starts a call, unless the run is stopping.
    fn start(&mut self, template: &CallTemplate, next_id: &mut u64, limit: u64) {
        if self.stopped || self.started >= limit {
            self.stopped = true;
            return;
        }
        template.write(*next_id, &mut self.out);
        self.out.push(b'\n');
        self.unsent.push(*next_id);
        *next_id += 1;
        self.started += 1;
    }

    /// Writes the waiting requests, and notes when the calls among them started.
    fn flush(&mut self, stdin: &mut ChildStdin) -> Result<(), String> {
        if self.out.is_empty() {
            return Ok(());
        }
        let now = Instant::now();
        write(stdin, &self.out)?;
        self.out.clear();
        for id in self.unsent.drain(..) {
            self.pending.insert(id, now);
        }
        Ok(())
    }
}

pub fn run(command: &[String], options: &Options) -> Result<Report, String> {
    let ticks = measure::ticks_per_second();
    let expect = &options.expect;
    let template = CallTemplate::new(options.era, &options.call)?;
    let mut progress_check = ProgressCheck::new(options.progress);
    let mut listing = Listing::new(match expect {
        Expect::Tools(n) => *n,
        _ => 0,
    });
    // Request ids: 0 is the first exchange; the calls and the next pages of listings take
    // theirs from here.
    let mut next_id = 1_u64;
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
        let page = match check::check(&line, expect)? {
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
                waiting = next_id;
                next_id += 1;
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

    // From here on one thread starts the calls and reads the replies: a call goes out for
    // each one that ends, all those of one read in one write, with no hand-off between
    // threads (whose wake-ups cost the driver more than a small call costs a fast server).
    // Writing blocks only when the server's stdin pipe is full; the server could then be
    // blocked on a full stdout that nobody reads. So the replies are read here only while
    // every request that can be in flight fits in a pipe many times over; otherwise (and
    // with `--threads` N ≥ 2) a thread of their own reads them ([`Checked`]).
    let mut sample = Vec::new();
    template.write(u64::MAX, &mut sample);
    let in_flight_bytes = options.in_flight.saturating_mul(sample.len() + 1);
    let mut replies_in = if options.threads == 1 && in_flight_bytes <= PIPE_SAFE {
        Replies::Here(stdout)
    } else {
        Replies::Checked(Checked::start(stdout, options.threads, expect))
    };
    let limit = match options.stop {
        Stop::Calls(n) => options.warmup + n,
        Stop::Duration(_) => u64::MAX,
    };
    let mut calls = Calls {
        out: Vec::new(),
        unsent: Vec::with_capacity(options.in_flight),
        pending: HashMap::with_capacity(options.in_flight * 2),
        started: 0,
        stopped: false,
    };
    for _ in 0..options.in_flight {
        calls.start(&template, &mut next_id, limit);
    }
    let mut replies = 0_u64;
    let mut latencies = Vec::with_capacity(1 << 20);
    let mut window = None;
    let read_result: Result<(), String> = (|| {
        loop {
            if calls.stopped && calls.pending.is_empty() && calls.unsent.is_empty() {
                return Ok(());
            }
            // Send what waits before a read that could block on its replies.
            let ready = match &mut replies_in {
                Replies::Checked(checked) => checked.has_next(),
                Replies::Here(stdout) => stdout.buffer().contains(&b'\n'),
            };
            if !ready {
                calls.flush(&mut stdin)?;
            }
            let received = match &mut replies_in {
                Replies::Checked(checked) => checked.next()?,
                Replies::Here(stdout) => {
                    read_line(stdout, &mut line, replies)?;
                    check::check(&line, expect)?
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
            let at = calls
                .pending
                .remove(&id)
                .ok_or_else(|| format!("a reply to id {id}, which is not in flight"))?;
            progress.fetch_add(1, Ordering::Relaxed);
            if let Some((tools, next_cursor)) = page
                && let Listed::More { cursor, so_far } = listing.page(id, tools, next_cursor)?
            {
                // The call goes on with the next page: same start, a new id.
                let id = next_id;
                next_id += 1;
                listing.carry(id, so_far);
                calls.pending.insert(id, at);
                calls.out.extend_from_slice(&protocol::next_page(
                    options.era,
                    &options.call,
                    &cursor,
                    id,
                )?);
                calls.out.push(b'\n');
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
                        calls.stopped = true;
                    }
                }
            }
            calls.start(&template, &mut next_id, limit);
        }
    })();
    let end = Instant::now();
    let cpu_end = measure::process_cpu(pid, ticks);
    let driver_end = measure::process_cpu(std::process::id(), ticks);
    let peak = measure::process_peak_rss(pid);
    read_result?;
    // Close stdin so the server can exit; the guard kills it if it does not.
    drop(stdin);
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

/// The server's stdout read and checked on threads of its own: a reader splits it into
/// lines and, with `--threads N` (N ≥ 2), deals them out in turn to N checkers, whose
/// results [`next`](Self::next) gives back in the order the lines came (a progress
/// notification before the reply it precedes); with N = 1 the reader checks each line
/// itself. Checking a large reply (a listing of hundreds of tools) costs the driver more
/// than serving it costs a fast server; on one thread, the driver would set the rate.
struct Checked {
    results: mpsc::Receiver<(u64, Result<Received, String>)>,
    /// The number of the next line to give back, and the results that came before it.
    next: u64,
    early: HashMap<u64, Result<Received, String>>,
}

impl Checked {
    fn start(mut stdout: impl BufRead + Send + 'static, threads: usize, expect: &Expect) -> Self {
        let (results_tx, results) = mpsc::channel();
        let checked = Checked {
            results,
            next: 0,
            early: HashMap::new(),
        };
        if threads == 1 {
            let expect = expect.clone();
            std::thread::spawn(move || {
                for number in 0_u64.. {
                    let mut line = Vec::new();
                    let result = read_line(&mut stdout, &mut line, number)
                        .and_then(|()| check::check(&line, &expect));
                    let failed = result.is_err();
                    if results_tx.send((number, result)).is_err() || failed {
                        return;
                    }
                }
            });
            return checked;
        }
        let mut lines = Vec::with_capacity(threads);
        for _ in 0..threads {
            let (line_tx, line_rx) = mpsc::channel::<(u64, Vec<u8>)>();
            let results_tx = results_tx.clone();
            let expect = expect.clone();
            std::thread::spawn(move || {
                for (number, line) in line_rx {
                    if results_tx
                        .send((number, check::check(&line, &expect)))
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
        checked
    }

    /// Whether the next line's result is in, so that [`next`](Self::next) does not wait.
    fn has_next(&mut self) -> bool {
        while let Ok((number, result)) = self.results.try_recv() {
            self.early.insert(number, result);
        }
        self.early.contains_key(&self.next)
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
    expect: &Expect,
) -> Result<Duration, String> {
    let spawned = Instant::now();
    let (mut server, progress) = spawn(program, args)?;
    let mut stdin = server.0.stdin.take().ok_or("no stdin pipe")?;
    let mut stdout = BufReader::new(server.0.stdout.take().ok_or("no stdout pipe")?);
    let mut line = Vec::new();
    write(&mut stdin, first)?;
    let elapsed = loop {
        read_line(&mut stdout, &mut line, 0)?;
        match check::check(&line, expect)? {
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
        let expect = Expect::Text("hi".into());
        for threads in [3, 1] {
            let mut checked = Checked::start(
                std::io::Cursor::new(text.clone().into_bytes()),
                threads,
                &expect,
            );
            for id in 0..50 {
                assert_eq!(checked.next(), Ok(Received::Reply(id)));
            }
            // A reply that fails its check fails the run, in its place.
            assert!(checked.next().unwrap_err().contains("error reply"));
        }
        // Then the end of the stream is an error too, not a hang.
        let mut checked = Checked::start(std::io::Cursor::new(text.into_bytes()), 3, &expect);
        for _ in 0..51 {
            let _ = checked.next();
        }
        assert!(checked.next().unwrap_err().contains("closed its stdout"));
    }
}
