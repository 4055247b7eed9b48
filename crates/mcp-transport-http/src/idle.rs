//! A connection thread's idle poll ([`HttpServerConfig::idle_poll`]): before the thread's
//! runtime sleeps, it looks for a next request on any of its connections for a short
//! while.
//!
//! Each connection thread has a readiness instance of its own (mio's `Poll`: epoll on
//! Linux, kqueue on BSD and macOS; one file descriptor per thread), in which every
//! connection it serves is registered for reading, edge-triggered. The runtime's own
//! registration is untouched: the look consumes nothing, and when it finds an event the
//! poll returns, the runtime's wait finds the socket ready at once, and the request is
//! read the usual way. Events that
//! woke the runtime are drained when it wakes ([`after_unpark`]), so that a look sees
//! only what arrived since. Between looks the thread yields its CPU
//! ([`std::thread::yield_now`]); a look that comes back late means another thread had
//! the CPU, and the poll gives up so as not to compete with it for its share.
//!
//! A socket leaves the instance when it closes (it is never duplicated), so a [`Watched`]
//! guard, held by the connection's task, only counts the connection out. Elsewhere than
//! on Unix there is no poll: the runtime sleeps as it would.
//!
//! [`HttpServerConfig::idle_poll`]: crate::HttpServerConfig::idle_poll

#[cfg(unix)]
pub(crate) use unix::{Watched, after_unpark, before_park};

#[cfg(not(unix))]
pub(crate) use elsewhere::{Watched, after_unpark, before_park};

/// No poll: the connection is not watched, and the runtime sleeps as it would.
#[cfg(not(unix))]
mod elsewhere {
    use std::time::Duration;

    pub(crate) struct Watched;

    impl Watched {
        pub(crate) fn arrive(_socket: &std::net::TcpStream) -> Watched {
            Watched
        }

        pub(crate) fn none() -> Watched {
            Watched
        }
    }

    pub(crate) fn before_park(_window: Duration) {}

    pub(crate) fn after_unpark() {}
}

#[cfg(unix)]
mod unix {
    use std::cell::RefCell;
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    use mio::unix::SourceFd;
    use mio::{Events, Interest, Poll, Token};

    /// A look that took longer than this means the thread was preempted: its CPU is wanted.
    const PREEMPTED: Duration = Duration::from_micros(5);

    /// How many events a look takes at once; more wait for the next.
    const EVENTS: usize = 64;

    thread_local! {
        /// This thread's epoll instance, made with its first connection.
        static WATCH: RefCell<Option<Watch>> = const { RefCell::new(None) };
    }

    struct Watch {
        poll: Poll,
        events: Events,
        /// How many connections the thread serves.
        connections: usize,
    }

    /// A connection counted on its thread; dropping it counts the connection out.
    pub(crate) struct Watched {
        /// Whether the thread counted this connection.
        counted: bool,
    }

    impl Watched {
        /// Counts a connection arriving on this thread and registers its socket for the
        /// poll. A socket that cannot be registered (no epoll instance could be made) is
        /// served unpolled.
        pub(crate) fn arrive(socket: &std::net::TcpStream) -> Watched {
            WATCH
                .try_with(|watch| {
                    let mut watch = watch.borrow_mut();
                    if watch.is_none() {
                        *watch = Poll::new().ok().map(|poll| Watch {
                            poll,
                            events: Events::with_capacity(EVENTS),
                            connections: 0,
                        });
                    }
                    let Some(watch) = watch.as_mut() else {
                        return Watched::none();
                    };
                    let fd = socket.as_raw_fd();
                    let registered = watch
                        .poll
                        .registry()
                        .register(&mut SourceFd(&fd), Token(0), Interest::READABLE)
                        .is_ok();
                    if registered {
                        watch.connections += 1;
                    }
                    Watched {
                        counted: registered,
                    }
                })
                .unwrap_or_else(|_| Watched::none())
        }

        /// A connection the poll does not know of (the poll is off).
        pub(crate) fn none() -> Watched {
            Watched { counted: false }
        }
    }

    impl Drop for Watched {
        fn drop(&mut self) {
            if !self.counted {
                return;
            }
            // The thread's storage may already be gone when the runtime drops what is left
            // at the thread's end.
            let _ = WATCH.try_with(|watch| {
                if let Ok(mut watch) = watch.try_borrow_mut()
                    && let Some(watch) = watch.as_mut()
                {
                    watch.connections -= 1;
                }
            });
        }
    }

    /// What the connection threads' runtimes run before they sleep: with connections on
    /// this thread, looks for a next request on any of them for up to `window`.
    pub(crate) fn before_park(window: Duration) {
        let _ = WATCH.try_with(|watch| {
            let Ok(mut watch) = watch.try_borrow_mut() else {
                return;
            };
            if let Some(watch) = watch.as_mut()
                && watch.connections > 0
            {
                poll(watch, window);
            }
        });
    }

    /// What the connection threads' runtimes run when they wake: the events that woke them
    /// are theirs, not news for the next poll.
    pub(crate) fn after_unpark() {
        let _ = WATCH.try_with(|watch| {
            if let Ok(mut watch) = watch.try_borrow_mut()
                && let Some(watch) = watch.as_mut()
                && watch.connections > 0
            {
                let _ = watch.poll.poll(&mut watch.events, Some(Duration::ZERO));
            }
        });
    }

    /// Looks at the thread's sockets until one has something to read, `window` has passed,
    /// or the thread was preempted.
    fn poll(watch: &mut Watch, window: Duration) {
        let start = Instant::now();
        let mut last = start;
        loop {
            match watch.poll.poll(&mut watch.events, Some(Duration::ZERO)) {
                Ok(()) if watch.events.is_empty() => {}
                // Bytes, an end or an error (the runtime sees it), or a poll that failed:
                // nothing to wait for.
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
        use std::io::{Read as _, Write as _};
        use std::net::{TcpListener, TcpStream};

        fn pair() -> (TcpStream, TcpStream) {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (server, _) = listener.accept().unwrap();
            server.set_nonblocking(true).unwrap();
            (client, server)
        }

        fn connections() -> usize {
            WATCH.with_borrow(|w| w.as_ref().map_or(0, |w| w.connections))
        }

        /// Polls as the runtime would before it sleeps, with a window long enough that only
        /// an event can end the poll soon.
        fn poll_ends_soon() -> bool {
            let start = Instant::now();
            before_park(Duration::from_secs(10));
            start.elapsed() < Duration::from_secs(5)
        }

        #[test]
        fn a_request_on_any_connection_ends_the_poll_and_stays_to_be_read() {
            let (_quiet, quiet_server) = pair();
            let (mut client, server) = pair();
            let first = Watched::arrive(&quiet_server);
            let second = Watched::arrive(&server);
            assert_eq!(connections(), 2);
            after_unpark();
            client.write_all(b"x").unwrap();
            assert!(poll_ends_soon());
            // Nothing was consumed: the request is there for the connection's task.
            let mut byte = [0u8; 1];
            let mut server = server;
            loop {
                match server.read(&mut byte) {
                    Ok(n) => {
                        assert_eq!((n, &byte), (1, b"x"));
                        break;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::yield_now();
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            drop((first, second));
            assert_eq!(connections(), 0);
        }

        #[test]
        fn the_poll_gives_up_after_its_window_and_what_woke_the_runtime_is_not_news() {
            let (mut client, server) = pair();
            let watched = Watched::arrive(&server);
            client.write_all(b"x").unwrap();
            // Wait until the byte has crossed the loopback, then wake as the runtime would.
            let mut byte = [0u8; 1];
            while server.peek(&mut byte).is_err() {
                std::thread::yield_now();
            }
            after_unpark();
            let news = WATCH.with_borrow_mut(|w| {
                let w = w.as_mut().unwrap();
                w.poll.poll(&mut w.events, Some(Duration::ZERO)).unwrap();
                !w.events.is_empty()
            });
            assert!(!news, "the byte that woke the runtime is still news");
            // With nothing new, the poll ends with its window.
            let start = Instant::now();
            before_park(Duration::from_millis(2));
            assert!(start.elapsed() < Duration::from_secs(5));
            drop(watched);
        }

        #[test]
        fn a_closed_peer_ends_the_poll() {
            let (client, server) = pair();
            let watched = Watched::arrive(&server);
            after_unpark();
            drop(client);
            assert!(poll_ends_soon());
            drop(watched);
        }

        #[test]
        fn a_thread_without_connections_does_not_poll() {
            let (_client, server) = pair();
            drop(Watched::arrive(&server));
            drop(Watched::none());
            assert_eq!(connections(), 0);
            let start = Instant::now();
            before_park(Duration::from_secs(10));
            assert!(start.elapsed() < Duration::from_secs(5));
        }
    }
}
