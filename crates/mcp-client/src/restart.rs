//! A stdio server the client owns and restarts when it crashes.
//!
//! When the connection to the server closes under a request, the supervisor starts the
//! command again (up to the policy's limit). The request that saw the crash is re-sent
//! only when it is safe to run twice: discover, lists, reads, prompts, completion, and tool
//! calls whose annotations say `readOnlyHint` or `idempotentHint`. Any other fails with
//! [`Error::MayHaveRun`]: the server may or may not have done it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use mcp_jsonrpc::Peer;
use mcp_transport_stdio::{ServerCommand, ServerConnection};

use crate::error::Error;
use crate::listen::Router;

/// How often a crashed server is started again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestartPolicy {
    /// Restarts allowed over the client's life (default 3).
    pub max_restarts: u32,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy { max_restarts: 3 }
    }
}

impl RestartPolicy {
    /// A policy allowing `max_restarts` restarts.
    pub fn new(max_restarts: u32) -> Self {
        RestartPolicy { max_restarts }
    }
}

struct Current {
    generation: u64,
    peer: Peer,
    connection: Option<ServerConnection>,
}

pub(crate) struct Supervisor {
    command: ServerCommand,
    router: Router,
    policy: RestartPolicy,
    restarts: AtomicU32,
    current: Mutex<Current>,
    /// Serializes restarts: the first request to see a crash restarts the server; the
    /// others wait for it and then use the new connection.
    gate: tokio::sync::Mutex<()>,
}

mcp_types::debug_fields!(Supervisor { policy });

impl Supervisor {
    pub(crate) fn start(
        command: ServerCommand,
        router: Router,
        policy: RestartPolicy,
    ) -> Result<Self, Error> {
        let (peer, connection) = Self::spawn(&command, &router)?;
        Ok(Supervisor {
            command,
            router,
            policy,
            restarts: AtomicU32::new(0),
            current: Mutex::new(Current {
                generation: 0,
                peer,
                connection: Some(connection),
            }),
            gate: tokio::sync::Mutex::new(()),
        })
    }

    fn spawn(command: &ServerCommand, router: &Router) -> Result<(Peer, ServerConnection), Error> {
        mcp_transport_stdio::connect(
            command,
            router.clone(),
            mcp_transport_stdio::client_config(),
        )
        .map_err(Error::Spawn)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Current> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection in use and its generation.
    pub(crate) fn peer(&self) -> (u64, Peer) {
        let current = self.lock();
        (current.generation, current.peer.clone())
    }

    /// The server process's id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.lock().connection.as_ref().map(|c| c.process().id())
    }

    /// Starts the server again, unless another request already did since `seen`.
    pub(crate) async fn restart(&self, seen: u64) -> Result<(), Error> {
        let _gate = self.gate.lock().await;
        if self.lock().generation != seen {
            return Ok(());
        }
        if self.restarts.fetch_add(1, Ordering::SeqCst) >= self.policy.max_restarts {
            return Err(Error::RestartsExhausted(self.policy.max_restarts));
        }
        tracing::warn!("the server exited; starting it again");
        let (peer, connection) = Self::spawn(&self.command, &self.router)?;
        let old = {
            let mut current = self.lock();
            current.generation += 1;
            current.peer = peer;
            current.connection.replace(connection)
        };
        if let Some(old) = old {
            // It has exited already; this reaps it and its process group.
            let _ = old.shutdown(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    /// Stops the server.
    pub(crate) async fn shutdown(&self, grace: Duration) {
        let connection = self.lock().connection.take();
        if let Some(connection) = connection {
            let _ = connection.shutdown(grace).await;
        }
    }
}
