//! The far end of a line-framed pipe (stdio's framing): it reads one JSON message a line
//! and writes whatever bytes the test likes.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};

/// One end of a byte pipe that carries one JSON message a line.
pub struct JsonLines {
    lines: BufReader<Box<dyn AsyncRead + Send + Unpin>>,
    writer: Box<dyn AsyncWrite + Send + Unpin>,
    wait: Duration,
    peer: &'static str,
}

impl JsonLines {
    /// The end over `read` (what the peer writes) and `write` (what it reads). A line is
    /// awaited at most `wait` (of tokio's clock); `peer` names the other side in a failure
    /// ("the client", "the server").
    pub fn new(
        read: impl AsyncRead + Send + Unpin + 'static,
        write: impl AsyncWrite + Send + Unpin + 'static,
        wait: Duration,
        peer: &'static str,
    ) -> Self {
        JsonLines {
            lines: BufReader::new(Box::new(read)),
            writer: Box::new(write),
            wait,
            peer,
        }
    }

    /// The next message the peer writes, as JSON; `None` at the end of the stream. Each must
    /// be one whole line of JSON, and come in time (the peer must not hang).
    pub async fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        let read = tokio::time::timeout(self.wait, self.lines.read_line(&mut line))
            .await
            .unwrap_or_else(|_| panic!("{} must write within {:?}", self.peer, self.wait))
            .unwrap();
        if read == 0 {
            return None;
        }
        assert!(line.ends_with('\n'), "every frame is one whole line");
        Some(
            serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("{} writes only JSON: {e}: {line}", self.peer)),
        )
    }

    /// The next message; the peer must keep the pipe open.
    pub async fn message(&mut self) -> Value {
        let peer = self.peer;
        self.next()
            .await
            .unwrap_or_else(|| panic!("{peer} keeps the pipe open"))
    }

    /// Writes `bytes` as they are.
    pub async fn write(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// Writes `bytes` and a newline.
    pub async fn line(&mut self, bytes: &[u8]) {
        self.write(&[bytes, b"\n"].concat()).await;
    }

    /// Writes one message.
    pub async fn send(&mut self, message: &Value) {
        self.line(message.to_string().as_bytes()).await;
    }

    /// Ends this side's output (end of stream for the peer): shuts the writer down and
    /// drops it.
    pub async fn close(&mut self) {
        self.writer.shutdown().await.unwrap();
        self.writer = Box::new(tokio::io::sink());
    }
}
