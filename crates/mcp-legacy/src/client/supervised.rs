//! A stdio server the dual-era client owns: started again when it crashes, and probed
//! again each time, so that a server whose new process speaks another era is still
//! reached (the verdict holds for one server process).
//!
//! The client is built over [`Supervised`], a [`CustomTransport`] that delegates each
//! request to the current process's session: the legacy translation for a legacy server,
//! the request untouched for a modern one. When the connection closes under a request,
//! the command is started again (within the [`RestartPolicy`]), probed and, if legacy,
//! initialized; the request is re-sent only if it is safe to run twice (discover, lists,
//! reads, prompts, completion), and any other fails with
//! [`mcp_client::Error::MayHaveRun`]. Subscriptions are carried by the process that
//! opened them and end with it: the consumer sees the end, its cue to listen again.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_client::{BoxFuture, CustomTransport, EventSink, InputHandlers, RestartPolicy};
use mcp_jsonrpc::{Peer, RequestOptions};
use mcp_transport_stdio::{ServerCommand, ServerConnection};
use mcp_types::{Era, RequestId, method};
use serde_json::Value;
use serde_json::value::RawValue;

use super::session::Session;
use super::stdio::{Plan, StdioHandler, StdioWire, open};
use super::{Connector, Error, Verdict};

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether running `method` twice is harmless (a tool call may not be: its annotations
/// are the client core's to judge, so it is never re-sent here).
fn retry_safe(method: &str) -> bool {
    matches!(
        method,
        method::SERVER_DISCOVER
            | method::TOOLS_LIST
            | method::PROMPTS_LIST
            | method::RESOURCES_LIST
            | method::RESOURCES_TEMPLATES_LIST
            | method::RESOURCES_READ
            | method::PROMPTS_GET
            | method::COMPLETION_COMPLETE
    )
}

/// One server process and the session on it.
struct Generation {
    number: u64,
    peer: Peer,
    handler: StdioHandler,
    session: Option<Session<StdioWire>>,
    verdict: Verdict,
    server: Mutex<Option<ServerConnection>>,
}

impl Generation {
    async fn send(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, mcp_client::Error> {
        match &self.session {
            Some(session) => session.request(method, params, options).await,
            None => self
                .peer
                .request(method, Some(&params), options)
                .await
                .map_err(mcp_client::Error::from),
        }
    }
}

/// The supervisor: the command, the era choice, and the current process.
pub(super) struct Supervised {
    command: ServerCommand,
    handlers: InputHandlers,
    pinned: Option<Era>,
    probe_timeout: Duration,
    offer: Vec<String>,
    policy: RestartPolicy,
    restarts: AtomicU32,
    generations: AtomicU64,
    current: Mutex<Arc<Generation>>,
    /// Serializes restarts: the first request to see a crash restarts the server.
    gate: tokio::sync::Mutex<()>,
}

/// A handle on a supervised server: its current verdict, process id and restarts.
#[derive(Clone)]
pub struct StdioSupervisor(Arc<Supervised>);

impl std::fmt::Debug for StdioSupervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioSupervisor")
            .field("verdict", &self.verdict())
            .field("restarts", &self.restarts())
            .finish_non_exhaustive()
    }
}

impl StdioSupervisor {
    /// What the current server process speaks (probed again after each restart).
    pub fn verdict(&self) -> Verdict {
        self.0.current().verdict.clone()
    }

    /// The current server process's id.
    pub fn pid(&self) -> Option<u32> {
        lock(&self.0.current().server)
            .as_ref()
            .map(|s| s.process().id())
    }

    /// How many times the server was started again.
    pub fn restarts(&self) -> u32 {
        self.0
            .restarts
            .load(Ordering::SeqCst)
            .min(self.0.policy.max_restarts)
    }
}

/// A client that owns its stdio server, in whichever era each process speaks.
#[derive(Debug)]
#[non_exhaustive]
pub struct SupervisedStdio {
    /// The client; [`Client::shutdown`](mcp_client::Client::shutdown) stops the server.
    pub client: mcp_client::Client,
    /// The supervisor, to see the current verdict.
    pub supervisor: StdioSupervisor,
}

impl Supervised {
    fn current(&self) -> Arc<Generation> {
        Arc::clone(&lock(&self.current))
    }

    fn plan(&self) -> Plan<'_> {
        Plan {
            handlers: &self.handlers,
            pinned: self.pinned,
            probe_timeout: self.probe_timeout,
            offer: &self.offer,
        }
    }

    async fn generation(&self) -> Result<Generation, Error> {
        let number = self.generations.fetch_add(1, Ordering::SeqCst);
        open_generation(&self.command, &self.plan(), number).await
    }

    /// Starts the server again (and probes it), unless another request already did
    /// since generation `seen`.
    async fn restart(&self, seen: u64) -> Result<(), mcp_client::Error> {
        let _gate = self.gate.lock().await;
        if self.current().number != seen {
            return Ok(());
        }
        if self.restarts.fetch_add(1, Ordering::SeqCst) >= self.policy.max_restarts {
            return Err(mcp_client::Error::RestartsExhausted(
                self.policy.max_restarts,
            ));
        }
        tracing::warn!("the server exited; starting it again and probing its era");
        let fresh = self.generation().await.map_err(|e| match e {
            Error::Spawn(e) => mcp_client::Error::Spawn(e),
            Error::Handshake(e) | Error::Client(e) => e,
            other => {
                mcp_client::Error::Transport(mcp_jsonrpc::Error::Closed(Some(other.to_string())))
            }
        })?;
        let old = std::mem::replace(&mut *lock(&self.current), Arc::new(fresh));
        let server = lock(&old.server).take();
        if let Some(server) = server {
            // It has exited already; this reaps it and its process group.
            let _ = server.shutdown(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    async fn request(
        self: Arc<Self>,
        method: String,
        params: Value,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, mcp_client::Error> {
        let generation = self.current();
        match generation
            .send(&method, params.clone(), options.clone())
            .await
        {
            Err(mcp_client::Error::Transport(e)) if e.is_closed() => {
                self.restart(generation.number).await?;
                if retry_safe(&method) {
                    self.current().send(&method, params, options).await
                } else {
                    Err(mcp_client::Error::MayHaveRun { method })
                }
            }
            other => other,
        }
    }

    async fn listen(self: Arc<Self>, params: Value, events: EventSink) {
        let generation = self.current();
        if let Some(session) = &generation.session {
            return session.listen(params, events).await;
        }
        // A modern server: the listen request on this process's connection, its
        // notifications routed by the request's id.
        let router = generation.handler.router.clone();
        let registered: Arc<Mutex<Option<RequestId>>> = Arc::default();
        let mut options = RequestOptions::default();
        options.timeout = Some(Duration::from_hours(365 * 24));
        options.max_timeout = options.timeout;
        let (registering, sink, slot) = (router.clone(), events.clone(), Arc::clone(&registered));
        options.on_id = Some(Arc::new(move |id: &RequestId| {
            registering.register(id.clone(), &sink);
            *lock(&slot) = Some(id.clone());
        }));
        let _unregister = Unregister {
            router,
            id: registered,
        };
        let outcome = generation
            .peer
            .request(method::SUBSCRIPTIONS_LISTEN, Some(&params), options)
            .await;
        if let Err(e) = outcome {
            tracing::debug!(error = %e, "subscription ended");
        }
    }
}

/// Stops routing a modern subscription's notifications, however its listen ends.
struct Unregister {
    router: mcp_client::ListenRouter,
    id: Arc<Mutex<Option<RequestId>>>,
}

impl Drop for Unregister {
    fn drop(&mut self) {
        if let Some(id) = lock(&self.id).take() {
            self.router.unregister(&id);
        }
    }
}

impl CustomTransport for StdioSupervisor {
    fn request(
        &self,
        method: &str,
        params: Value,
        options: RequestOptions,
    ) -> BoxFuture<Result<Box<RawValue>, mcp_client::Error>> {
        Box::pin(Arc::clone(&self.0).request(method.to_owned(), params, options))
    }

    fn listen(&self, params: Value, events: EventSink) -> BoxFuture<()> {
        Box::pin(Arc::clone(&self.0).listen(params, events))
    }

    fn shutdown(&self, grace: Duration) -> BoxFuture<()> {
        let supervised = Arc::clone(&self.0);
        Box::pin(async move {
            let generation = supervised.current();
            generation.handler.shared.ended.cancel();
            let server = lock(&generation.server).take();
            if let Some(server) = server {
                let _ = server.shutdown(grace).await;
            }
        })
    }
}

async fn open_generation(
    command: &ServerCommand,
    plan: &Plan<'_>,
    number: u64,
) -> Result<Generation, Error> {
    let opened = open(command, plan).await?;
    Ok(Generation {
        number,
        peer: opened.peer,
        handler: opened.handler,
        session: opened.session,
        verdict: opened.verdict,
        server: Mutex::new(Some(opened.server)),
    })
}

pub(super) async fn spawn(
    connector: Connector,
    command: ServerCommand,
    policy: RestartPolicy,
) -> Result<SupervisedStdio, Error> {
    let handlers = connector.builder.input_handlers();
    let pinned = connector.pinned_era();
    let plan = Plan {
        handlers: &handlers,
        pinned,
        probe_timeout: connector.probe_timeout,
        offer: &connector.legacy_offer,
    };
    let first = open_generation(&command, &plan, 0).await?;
    let supervised = Supervised {
        handlers: handlers.clone(),
        pinned,
        probe_timeout: connector.probe_timeout,
        offer: connector.legacy_offer.clone(),
        policy,
        restarts: AtomicU32::new(0),
        generations: AtomicU64::new(1),
        current: Mutex::new(Arc::new(first)),
        gate: tokio::sync::Mutex::new(()),
        command,
    };
    let supervisor = StdioSupervisor(Arc::new(supervised));
    let client = connector
        .builder
        .connect_custom(Arc::new(supervisor.clone()));
    Ok(SupervisedStdio { client, supervisor })
}
