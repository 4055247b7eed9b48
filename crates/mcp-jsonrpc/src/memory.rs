//! An in-memory transport: two connected ends over bounded channels.
//!
//! For tests and benchmarks of the engine without pipes or sockets, and for running a
//! client and a server in one process.

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::transport::{FrameReader, FrameWriter, TransportError};

/// The receiving half of one end.
#[derive(Debug)]
pub struct MemoryReader {
    rx: mpsc::Receiver<Bytes>,
}

/// The sending half of one end.
#[derive(Debug)]
pub struct MemoryWriter {
    tx: Option<mpsc::Sender<Bytes>>,
}

/// Two connected ends; each direction holds at most `capacity` frames in flight, so a side
/// that stops reading stops its peer's writes (backpressure, not unbounded memory).
#[allow(clippy::type_complexity)]
pub fn pair(capacity: usize) -> ((MemoryReader, MemoryWriter), (MemoryReader, MemoryWriter)) {
    let (a_tx, b_rx) = mpsc::channel(capacity.max(1));
    let (b_tx, a_rx) = mpsc::channel(capacity.max(1));
    (
        (MemoryReader { rx: a_rx }, MemoryWriter { tx: Some(a_tx) }),
        (MemoryReader { rx: b_rx }, MemoryWriter { tx: Some(b_tx) }),
    )
}

impl FrameReader for MemoryReader {
    async fn read_frame(&mut self) -> Option<Result<Bytes, TransportError>> {
        self.rx.recv().await.map(Ok)
    }
}

impl FrameWriter for MemoryWriter {
    async fn write_frame(&mut self, frame: Bytes) -> Result<(), TransportError> {
        let tx = self.tx.as_ref().ok_or(TransportError::Closed(None))?;
        tx.send(frame)
            .await
            .map_err(|_| TransportError::Closed(None))
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.tx = None;
        Ok(())
    }
}
