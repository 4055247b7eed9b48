//! Connection threads ([`HttpServerConfig::connection_threads`]): the thread-per-core
//! model.
//!
//! Each thread runs its own single-threaded tokio runtime with its own I/O driver. The
//! accept loop, on the caller's runtime, takes each accepted socket out of its own driver
//! (`into_std`) and hands it to the thread with the fewest open connections, which
//! registers it with its driver and serves it there to the end. So a request's reads,
//! handler and writes all happen on one thread: none of the wake-ups across threads and
//! work stealing a multi-threaded runtime pays per request.
//!
//! Shutdown follows the accept loop's steps (`server.rs`): the connections are asked to
//! close; after the grace period every request's token fires; after the cancel grace the
//! threads drop what is left. Dropping the accept loop (a dropped
//! [`RunningServer`](crate::RunningServer)) drops every connection at once.
//!
//! [`HttpServerConfig::connection_threads`]: crate::HttpServerConfig::connection_threads

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_jsonrpc::CancellationToken;
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio::task::JoinSet;

use crate::error::Error;
use crate::idle;
use crate::server::{Endpoint, Settings, drain, serve_connection};

/// A connection handed to a thread, with its place among the server's open connections
/// ([`HttpServerConfig::max_connections`](crate::HttpServerConfig::max_connections)),
/// held until the connection ends.
type Handoff = (std::net::TcpStream, SocketAddr, OwnedSemaphorePermit);

/// The connection threads of one server.
pub(crate) struct Shards {
    threads: Vec<Shard>,
    runtimes: Vec<tokio::runtime::Handle>,
    /// Asks every connection to finish its current exchange and close.
    closing: CancellationToken,
    /// Drops every connection at once; fired when this is dropped.
    abort: AbortOnDrop,
    /// Ends (`None`) once every thread has stopped: each holds a sender.
    finished: mpsc::Receiver<Infallible>,
}

struct Shard {
    queue: mpsc::UnboundedSender<Handoff>,
    /// Connections handed to the thread and not yet ended.
    open: Arc<AtomicUsize>,
}

struct AbortOnDrop(CancellationToken);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl Shards {
    /// Starts `count` threads serving connections with `settings`; each looks for a next
    /// request on its connections for up to `idle_poll` before it sleeps
    /// ([`HttpServerConfig::idle_poll`](crate::HttpServerConfig::idle_poll)).
    pub(crate) fn start<E: Endpoint>(
        count: usize,
        settings: &Arc<Settings<E>>,
        idle_poll: Duration,
    ) -> Result<Shards, Error> {
        let closing = CancellationToken::new();
        // Built first: if a later thread cannot start, the ones already running stop.
        let abort = AbortOnDrop(CancellationToken::new());
        let (done, finished) = mpsc::channel(1);
        let mut threads = Vec::with_capacity(count);
        let mut runtimes = Vec::with_capacity(count);
        // The threads log where the server was started from: a subscriber set for that
        // thread only (`tracing::subscriber::set_default`, as tests and embedders do) is
        // theirs too, not only the global one.
        let dispatch = tracing::dispatcher::get_default(Clone::clone);
        for index in 0..count {
            let mut builder = tokio::runtime::Builder::new_current_thread();
            builder.enable_all();
            if !idle_poll.is_zero() {
                builder
                    .on_thread_park(move || idle::before_park(idle_poll))
                    .on_thread_unpark(idle::after_unpark);
            }
            let runtime = builder.build().map_err(Error::Thread)?;
            runtimes.push(runtime.handle().clone());
            let (queue, incoming) = mpsc::unbounded_channel();
            let open = Arc::new(AtomicUsize::new(0));
            let thread = Thread {
                incoming,
                idle_poll: !idle_poll.is_zero(),
                settings: Arc::clone(settings),
                closing: closing.clone(),
                abort: abort.0.clone(),
                open: Arc::clone(&open),
            };
            let done = done.clone();
            let dispatch = dispatch.clone();
            std::thread::Builder::new()
                .name(format!("mcp-http-{index}"))
                .spawn(move || {
                    let _logging = tracing::dispatcher::set_default(&dispatch);
                    runtime.block_on(thread.run());
                    // Tasks the handlers spawned go with the runtime; a blocking task
                    // still running is not waited for.
                    runtime.shutdown_background();
                    drop(done);
                })
                .map_err(Error::Thread)?;
            threads.push(Shard { queue, open });
        }
        Ok(Shards {
            threads,
            runtimes,
            closing,
            abort,
            finished,
        })
    }

    /// The threads' runtimes.
    pub(crate) fn runtimes(&self) -> Vec<tokio::runtime::Handle> {
        self.runtimes.clone()
    }

    /// Hands an accepted connection to the thread with the fewest open connections.
    pub(crate) fn dispatch(
        &self,
        stream: TcpStream,
        peer: SocketAddr,
        permit: OwnedSemaphorePermit,
    ) {
        let stream = match stream.into_std() {
            Ok(stream) => stream,
            Err(e) => {
                tracing::debug!(%peer, error = %e, "cannot hand the connection to a thread");
                return;
            }
        };
        let Some(shard) = self
            .threads
            .iter()
            .min_by_key(|shard| shard.open.load(Ordering::Relaxed))
        else {
            return;
        };
        shard.open.fetch_add(1, Ordering::Relaxed);
        if shard.queue.send((stream, peer, permit)).is_err() {
            shard.open.fetch_sub(1, Ordering::Relaxed);
            tracing::warn!(%peer, "a connection thread has stopped; connection dropped");
        }
    }

    /// The steps of a graceful shutdown, once the listener is closed: the connections
    /// close after their current exchange; past `grace` every request's token fires
    /// (`service.cancel_all()`); past `cancel_grace` more, what is left is dropped.
    /// Returns when every thread has stopped.
    pub(crate) async fn shut_down<E: Endpoint>(
        mut self,
        grace: Duration,
        cancel_grace: Duration,
        service: &E,
    ) {
        self.closing.cancel();
        // Closing the queues tells each thread no connection is coming any more.
        self.threads.clear();
        if tokio::time::timeout(grace, self.finished.recv())
            .await
            .is_ok()
        {
            return;
        }
        tracing::debug!("grace period over; cancelling in-flight requests");
        service.cancel_all();
        if tokio::time::timeout(cancel_grace, self.finished.recv())
            .await
            .is_ok()
        {
            return;
        }
        self.abort.0.cancel();
        let _ = self.finished.recv().await;
    }
}

/// One connection thread's loop.
struct Thread<E> {
    incoming: mpsc::UnboundedReceiver<Handoff>,
    /// Whether the thread counts its connections for the idle poll (`idle.rs`).
    idle_poll: bool,
    settings: Arc<Settings<E>>,
    closing: CancellationToken,
    abort: CancellationToken,
    open: Arc<AtomicUsize>,
}

impl<E: Endpoint> Thread<E> {
    async fn run(mut self) {
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                biased;
                () = self.abort.cancelled() => break,
                next = self.incoming.recv() => {
                    let Some((stream, peer, permit)) = next else {
                        // The accept loop is done: finish what is open.
                        tokio::select! {
                            biased;
                            () = self.abort.cancelled() => {}
                            () = drain(&mut connections) => {}
                        }
                        break;
                    };
                    self.serve(&mut connections, stream, peer, permit);
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        connections.abort_all();
        drain(&mut connections).await;
    }

    fn serve(
        &self,
        connections: &mut JoinSet<()>,
        stream: std::net::TcpStream,
        peer: SocketAddr,
        permit: OwnedSemaphorePermit,
    ) {
        let open = Arc::clone(&self.open);
        // The idle poll watches the socket in the thread's own epoll instance; without
        // one (out of descriptors) the connection is served unpolled.
        let watched = if self.idle_poll {
            idle::Watched::arrive(&stream)
        } else {
            idle::Watched::none()
        };
        match TcpStream::from_std(stream) {
            Ok(stream) => {
                let connection =
                    serve_connection(&self.settings, stream, self.closing.clone(), peer);
                connections.spawn(async move {
                    let _watched = watched;
                    connection.await;
                    open.fetch_sub(1, Ordering::Relaxed);
                    drop(permit);
                });
            }
            Err(e) => {
                open.fetch_sub(1, Ordering::Relaxed);
                tracing::debug!(%peer, error = %e, "cannot register the connection");
            }
        }
    }
}
