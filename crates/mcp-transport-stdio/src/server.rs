//! Serving on this process's stdin and stdout.
//!
//! <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>: the server reads messages from stdin and
//! writes them to stdout, one per line, and MUST NOT write anything to stdout that is not a
//! valid message. This module writes nothing else; the handler must not either (log
//! through `tracing` to stderr). At EOF on stdin the connection ends: in-flight requests get
//! [`PeerConfig::eof_grace`] to finish, then are cancelled.

use mcp_jsonrpc::{Connection, Handler, Peer, PeerConfig};

use crate::framing::stdio;

/// Serves `handler` on stdin and stdout. Await [`Connection::closed`] to run until the
/// client closes stdin.
///
/// ```no_run
/// use mcp_jsonrpc::{NoHandler, PeerConfig};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let (_peer, connection) = mcp_transport_stdio::serve(NoHandler, PeerConfig::default());
///     connection.closed().await;
/// }
/// ```
pub fn serve<H: Handler>(handler: H, config: PeerConfig) -> (Peer, Connection) {
    let (reader, writer) = stdio();
    Peer::connect(reader, writer, handler, config)
}
