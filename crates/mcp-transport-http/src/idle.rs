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
//! Each connection thread counts its connections in a thread-local, and keeps a duplicate
//! of one socket only: that of a connection that arrived when the thread served none. So
//! the poll costs one descriptor per thread at most, not one per connection (which would
//! halve how many connections fit under the process's descriptor limit). A second
//! connection on the thread stops the polls; if the first then ends, the one left is not
//! polled (its socket was never duplicated) until the thread is empty again. A [`Watched`]
//! guard, held by the connection's task, counts the connection out and drops the
//! duplicate when the task ends or is dropped, so the socket closes when the connection
//! does.
//!
//! [`HttpServerConfig::idle_poll`]: crate::HttpServerConfig::idle_poll

use std::cell::RefCell;
use std::io::ErrorKind;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A look that took longer than this means the thread was preempted: its CPU is wanted.
const PREEMPTED: Duration = Duration::from_micros(5);

thread_local! {
    /// This thread's connections.
    static WATCH: RefCell<Watch> = const {
        RefCell::new(Watch { connections: 0, socket: None })
    };
}

struct Watch {
    /// How many connections the thread serves.
    connections: usize,
    /// A duplicate of the socket of the connection that arrived when the thread served
    /// none, while that connection lasts.
    socket: Option<TcpStream>,
}

/// A connection counted on its thread; dropping it counts the connection out.
pub(crate) struct Watched {
    /// Whether the thread counted this connection (its storage was there).
    counted: bool,
    /// Whether the thread's duplicate is of this connection's socket.
    polled: bool,
}

impl Watched {
    /// Counts a connection arriving on this thread. If the thread served none,
    /// `duplicate` is called for a duplicate of its socket, which the poll watches while
    /// the connection is alone (`None`, out of descriptors: it is served unpolled).
    pub(crate) fn arrive(duplicate: impl FnOnce() -> Option<TcpStream>) -> Watched {
        WATCH
            .try_with(|watch| {
                let mut watch = watch.borrow_mut();
                watch.connections += 1;
                let polled = watch.connections == 1 && {
                    watch.socket = duplicate();
                    watch.socket.is_some()
                };
                Watched {
                    counted: true,
                    polled,
                }
            })
            .unwrap_or_else(|_| Watched::none())
    }

    /// A connection the poll does not know of (the poll is off).
    pub(crate) fn none() -> Watched {
        Watched {
            counted: false,
            polled: false,
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if !self.counted {
            return;
        }
        // The thread's storage may already be gone when the runtime drops what is left
        // at the thread's end; the duplicate is closed with it then.
        let _ = WATCH.try_with(|watch| {
            let mut watch = watch.borrow_mut();
            watch.connections -= 1;
            if self.polled {
                watch.socket = None;
            }
        });
    }
}

/// What the connection threads' runtimes run before they sleep: with exactly one
/// connection on this thread, looks for its next request for up to `window`.
pub(crate) fn before_park(window: Duration) {
    let _ = WATCH.try_with(|watch| {
        let Ok(watch) = watch.try_borrow() else {
            return;
        };
        if watch.connections == 1
            && let Some(socket) = &watch.socket
        {
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
    fn only_a_connection_alone_on_its_thread_is_duplicated_and_polled() {
        let state = || {
            WATCH.with(|w| {
                let w = w.borrow();
                (w.connections, w.socket.is_some())
            })
        };
        let (_client, server) = pair();
        let (_client2, server2) = pair();
        assert_eq!(state(), (0, false));
        let first = Watched::arrive(|| server.try_clone().ok());
        assert_eq!(state(), (1, true));
        // A second connection is counted, not duplicated: the poll stops.
        let second = Watched::arrive(|| panic!("only the first is duplicated"));
        assert_eq!(state(), (2, true));
        drop(first);
        assert_eq!(state(), (1, false));
        drop(second);
        assert_eq!(state(), (0, false));
        // An empty thread duplicates the next one again; one that cannot be duplicated
        // is counted all the same.
        let third = Watched::arrive(|| None);
        assert_eq!(state(), (1, false));
        drop(third);
        let fourth = Watched::arrive(|| server2.try_clone().ok());
        assert_eq!(state(), (1, true));
        drop(fourth);
        drop(Watched::none());
        assert_eq!(state(), (0, false));
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
