//! A connection thread's idle poll ([`HttpServerConfig::idle_poll`]): before the thread's
//! runtime sleeps, it looks for its one connection's next request for a short while.
//!
//! The look is `recv(MSG_PEEK)` on a duplicate of the connection's socket (std's
//! [`TcpStream::peek`]), so it consumes nothing and needs no access to the runtime's own
//! registration: when the peek sees bytes (or the end, or an error) the poll returns, the
//! runtime's `epoll_wait` finds the socket ready at once, and the request is read the
//! usual way. Between looks the thread yields its CPU ([`std::thread::yield_now`]); a
//! look that comes back late means another thread had the CPU, and the poll gives up so
//! as not to compete with it for its share.
//!
//! Each connection thread keeps its connections' duplicates in a thread-local list; a
//! [`Watched`] guard, held by the connection's task, takes its duplicate out when the task
//! ends or is dropped, so the socket closes when the connection does.
//!
//! [`HttpServerConfig::idle_poll`]: crate::HttpServerConfig::idle_poll

use std::cell::RefCell;
use std::io::ErrorKind;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A look that took longer than this means the thread was preempted: its CPU is wanted.
const PREEMPTED: Duration = Duration::from_micros(5);

thread_local! {
    /// The sockets of the connections this thread serves, by id.
    static WATCHED: RefCell<Watch> = const {
        RefCell::new(Watch { next: 0, sockets: Vec::new() })
    };
}

struct Watch {
    next: u64,
    sockets: Vec<(u64, TcpStream)>,
}

/// A connection's place in its thread's list; dropping it takes the connection out.
pub(crate) struct Watched(Option<u64>);

impl Watched {
    /// Adds `socket` (a duplicate of a connection's socket) to this thread's list.
    pub(crate) fn new(socket: TcpStream) -> Watched {
        let id = WATCHED
            .try_with(|watch| {
                let mut watch = watch.borrow_mut();
                let id = watch.next;
                watch.next += 1;
                watch.sockets.push((id, socket));
                id
            })
            .ok();
        Watched(id)
    }

    /// A guard that watches nothing (the poll is off, or the socket could not be
    /// duplicated).
    pub(crate) fn none() -> Watched {
        Watched(None)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(id) = self.0 {
            // The thread's storage may already be gone when the runtime drops what is left
            // at the thread's end; its sockets are closed with it then.
            let _ = WATCHED.try_with(|watch| {
                watch.borrow_mut().sockets.retain(|(other, _)| *other != id);
            });
        }
    }
}

/// What the connection threads' runtimes run before they sleep: with exactly one
/// connection on this thread, looks for its next request for up to `window`.
pub(crate) fn before_park(window: Duration) {
    let _ = WATCHED.try_with(|watch| {
        let Ok(watch) = watch.try_borrow() else {
            return;
        };
        if let [(_, socket)] = watch.sockets.as_slice() {
            poll(socket, window);
        }
    });
}

/// Peeks at `socket` until it has something to read, `window` has passed, or the thread
/// was preempted.
fn poll(socket: &TcpStream, window: Duration) {
    let start = Instant::now();
    let mut last = start;
    let mut byte = [0u8; 1];
    loop {
        match socket.peek(&mut byte) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            // Bytes, the end of the stream, or an error: the connection's task sees it.
            _ => return,
        }
        std::thread::yield_now();
        let now = Instant::now();
        if now.duration_since(last) > PREEMPTED || now.duration_since(start) >= window {
            return;
        }
        last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        server.set_nonblocking(true).unwrap();
        (client, server)
    }

    #[test]
    fn a_waiting_request_ends_the_poll_and_stays_to_be_read() {
        let (mut client, server) = pair();
        client.write_all(b"x").unwrap();
        // Wait until the byte has crossed the loopback.
        let mut byte = [0u8; 1];
        while server.peek(&mut byte).is_err() {
            std::thread::yield_now();
        }
        let start = Instant::now();
        poll(&server, Duration::from_secs(10));
        assert!(start.elapsed() < Duration::from_secs(5));
        let mut server = server;
        assert_eq!(std::io::Read::read(&mut server, &mut byte).unwrap(), 1);
        assert_eq!(&byte, b"x");
    }

    #[test]
    fn the_poll_gives_up_after_its_window() {
        let (_client, server) = pair();
        let start = Instant::now();
        poll(&server, Duration::from_millis(2));
        assert!(start.elapsed() < Duration::from_secs(1));
        // Nothing was consumed: the socket still has nothing to read.
        let mut byte = [0u8; 1];
        assert_eq!(
            server.peek(&mut byte).unwrap_err().kind(),
            ErrorKind::WouldBlock
        );
    }

    #[test]
    fn the_list_holds_a_connection_until_its_guard_drops() {
        let (_client, server) = pair();
        let count = || WATCHED.with(|w| w.borrow().sockets.len());
        let before = count();
        let guard = Watched::new(server.try_clone().unwrap());
        assert_eq!(count(), before + 1);
        drop(guard);
        assert_eq!(count(), before);
        drop(Watched::none());
        assert_eq!(count(), before);
    }

    #[test]
    fn a_closed_peer_ends_the_poll() {
        let (client, server) = pair();
        drop(client);
        let start = Instant::now();
        poll(&server, Duration::from_secs(10));
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
