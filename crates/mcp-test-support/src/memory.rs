//! The bare far end of an in-memory connection (`mcp_jsonrpc::memory`): every frame the
//! engine under test sends is observed exactly, and the test writes whatever it likes.

use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::memory::{self, MemoryReader, MemoryWriter};
use mcp_jsonrpc::{FrameReader as _, FrameWriter as _};
use serde_json::{Value, json};

/// One end of an in-memory duplex, speaking JSON-RPC by hand.
pub struct MemoryWire {
    reader: MemoryReader,
    writer: MemoryWriter,
    next: i64,
    wait: Duration,
}

impl MemoryWire {
    /// A duplex of `capacity` frames: this end, and the other end's reader and writer for
    /// the engine under test. A frame is awaited at most `wait` (of tokio's clock, so a
    /// paused test does not wait for real).
    pub fn pair(capacity: usize, wait: Duration) -> (MemoryWire, (MemoryReader, MemoryWriter)) {
        let ((reader, writer), other) = memory::pair(capacity);
        (
            MemoryWire {
                reader,
                writer,
                next: 0,
                wait,
            },
            other,
        )
    }

    /// Sends one message.
    pub async fn send(&mut self, value: Value) {
        self.send_bytes(value.to_string().as_bytes()).await;
    }

    /// Sends the request `method` with `id` and no params.
    pub async fn request(&mut self, id: impl serde::Serialize, method: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method}))
            .await;
    }

    /// Sends the request `method` with `id` and `params`.
    pub async fn request_with(&mut self, id: impl serde::Serialize, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
    }

    /// Sends one frame of any bytes.
    pub async fn send_bytes(&mut self, frame: impl AsRef<[u8]>) {
        self.writer
            .write_frame(Bytes::copy_from_slice(frame.as_ref()))
            .await
            .unwrap();
    }

    /// The next frame, as JSON; fails the test if none comes within the wait or the other
    /// end closed.
    pub async fn recv(&mut self) -> Value {
        serde_json::from_slice(&self.recv_frame().await).unwrap()
    }

    /// The next frame as it was written.
    pub async fn recv_frame(&mut self) -> Bytes {
        tokio::time::timeout(self.wait, self.reader.read_frame())
            .await
            .unwrap_or_else(|_| panic!("a frame within {:?}", self.wait))
            .expect("connection open")
            .unwrap()
    }

    /// The next frame, or `None` once the other end closed.
    pub async fn recv_or_end(&mut self) -> Option<Value> {
        let frame = tokio::time::timeout(self.wait, self.reader.read_frame())
            .await
            .unwrap_or_else(|_| panic!("a frame or the end within {:?}", self.wait))?
            .unwrap();
        Some(serde_json::from_slice(&frame).unwrap())
    }

    /// Asserts that nothing arrives while the clock advances by `wait`.
    pub async fn silent_for(&mut self, wait: Duration) {
        if let Ok(frame) = tokio::time::timeout(wait, self.reader.read_frame()).await {
            panic!("expected silence, got {frame:?}");
        }
    }

    /// Sends a request with the next id and returns (the messages before its response,
    /// the response).
    pub async fn call(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let mut notes = Vec::new();
        loop {
            let message = self.recv().await;
            if message.get("id") == Some(&json!(id)) {
                return (notes, message);
            }
            notes.push(message);
        }
    }

    /// The result of a request that must succeed.
    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let (_, response) = self.call(method, params).await;
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// The error of a request that must fail.
    pub async fn error(&mut self, method: &str, params: Value) -> Value {
        let (_, response) = self.call(method, params).await;
        response
            .get("error")
            .cloned()
            .unwrap_or_else(|| panic!("{method}: expected an error, got {response}"))
    }
}
