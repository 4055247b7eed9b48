//! The sending side: the write loop, which owns the transport's writer and writes the
//! queued frames, and the write-through of a frame by its sender while the loop is idle
//! ([`PeerConfig::write_through`](super::PeerConfig::write_through)).
//!
//! Queued frames wait for the write loop, which is a task like any other: on a
//! current-thread runtime it runs only after every task already woken. When a burst of
//! answers wakes many callers, each of which sends its next request, the first request
//! would leave only after the last caller has run, and the peer would sit idle all that
//! time, then the two ends would work by turns. Written through, each frame leaves as it
//! is made, so both ends work at once; frames queue for the loop (and go out together,
//! with one flush) only while a write waits on the peer.
//!
//! The order of frames is kept: a sender writes through only when nothing is queued and
//! the loop is not writing, both seen under the lock of the writer's slot. The loop takes a
//! frame from its queues and the writer from the slot in one step under that lock, so a
//! frame it has taken and not yet written cannot be overtaken either. Cancellation notices
//! (the control queue, which senders cannot see into) are counted in
//! `Shared::control_queued` for the same check.

use std::future::poll_fn;
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::{Shared, WIRE_OUT, lock, set_close_reason, wire};
use crate::transport::{FrameWriter, WriteNow};

/// A frame as the queue holds it: whole, or as the three pieces of a large result
/// ([`encode_raw_result_parts`](crate::encode_raw_result_parts)), which the transport may
/// write without joining them ([`FrameWriter::write_frame_parts`]).
pub(super) enum Frame {
    Whole(Bytes),
    Parts([Bytes; 3]),
}

impl From<Bytes> for Frame {
    fn from(frame: Bytes) -> Self {
        Frame::Whole(frame)
    }
}

/// Where the transport's writer is kept: taken by the write loop while it writes, back in
/// the slot while the loop waits for frames, where a sender writing through finds it.
pub(super) struct WriterSlot<W>(Mutex<Option<W>>);

impl<W> WriterSlot<W> {
    pub(super) fn new(writer: W) -> Self {
        WriterSlot(Mutex::new(Some(writer)))
    }
}

/// Empties the slot when the write loop ends, however it ends (a task dropped with its
/// runtime too): the writer lives no longer than the loop, as when the loop owned it,
/// though senders still hold the slot.
struct EmptyOnDrop<'a, W>(&'a WriterSlot<W>);

impl<W> Drop for EmptyOnDrop<'_, W> {
    fn drop(&mut self) {
        drop(lock(&self.0.0).take());
    }
}

/// A writer slot as the senders see it, whatever the transport.
pub(super) trait WriteThrough: Send + Sync {
    /// Writes `frame` now if the write loop is idle, nothing is queued, and the
    /// transport takes it without waiting; otherwise gives it back to be queued.
    fn write_through(&self, frame: Frame, shared: &Shared) -> Result<(), Frame>;
}

impl<W: FrameWriter> WriteThrough for WriterSlot<W> {
    fn write_through(&self, frame: Frame, shared: &Shared) -> Result<(), Frame> {
        // Only a large result comes in pieces, and the transport would not take it at once.
        let Frame::Whole(frame) = frame else {
            return Err(frame);
        };
        let mut slot = lock(&self.0);
        let Some(writer) = slot.as_mut() else {
            return Err(frame.into());
        };
        let queued = shared.outbound.capacity() < shared.outbound.max_capacity()
            || shared.control_queued.load(Ordering::Acquire) > 0;
        if queued {
            return Err(frame.into());
        }
        match writer.write_now(&frame) {
            WriteNow::Sent => {}
            // An empty frame on the control queue has the loop flush the rest; queued
            // before the slot's lock is let go, so no later frame overtakes it.
            WriteNow::Buffered => queue_control(shared, Bytes::new()),
            // A transport may grow ways to decline without changing this one.
            _ => return Err(frame.into()),
        }
        wire(WIRE_OUT, &frame);
        Ok(())
    }
}

/// Queues `frame` on the control queue (ahead of the frames queue), counted before it is
/// queued so that no frame written through overtakes it.
pub(super) fn queue_control(shared: &Shared, frame: Bytes) {
    shared.control_queued.fetch_add(1, Ordering::AcqRel);
    if shared.control.send(frame).is_err() {
        shared.control_queued.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Hands `frame` to the writer: written through when the configuration allows and the
/// loop is idle, else queued at once when the queue has room (the usual case), else
/// waiting for room in a box of its own, so that a caller's future holds a pointer where
/// it held the whole wait. `Err` when the connection is closed.
pub(super) async fn send(shared: &Shared, frame: impl Into<Frame>) -> Result<(), ()> {
    let frame = frame.into();
    let frame = match &shared.through {
        Some(slot) => match slot.write_through(frame, shared) {
            Ok(()) => return Ok(()),
            Err(frame) => frame,
        },
        None => frame,
    };
    match shared.outbound.try_send(frame) {
        Ok(()) => Ok(()),
        Err(mpsc::error::TrySendError::Closed(_)) => Err(()),
        Err(mpsc::error::TrySendError::Full(frame)) => {
            Box::pin(shared.outbound.send(frame)).await.map_err(drop)
        }
    }
}

/// The next queued frame, if any, cancellation notices first.
fn next_queued(
    control: &mut mpsc::UnboundedReceiver<Bytes>,
    frames: &mut mpsc::Receiver<Frame>,
    shared: &Shared,
) -> Option<Frame> {
    if let Ok(frame) = control.try_recv() {
        shared.control_queued.fetch_sub(1, Ordering::AcqRel);
        return Some(frame.into());
    }
    frames.try_recv().ok()
}

/// Writes one frame; the empty frame of a write-through that left bytes buffered only
/// asks for the flush that follows every burst.
async fn write_one<W: FrameWriter>(
    writer: &mut W,
    frame: Frame,
) -> Result<(), crate::TransportError> {
    match frame {
        Frame::Whole(frame) if frame.is_empty() => Ok(()),
        Frame::Whole(frame) => {
            wire(WIRE_OUT, &frame);
            writer.write_frame(frame).await
        }
        Frame::Parts(parts) => {
            // Joined only for the wire log, and only when it is on.
            if tracing::enabled!(target: "mcp_wire", tracing::Level::TRACE) {
                wire(WIRE_OUT, &parts.concat());
            }
            writer.write_frame_parts(parts).await
        }
    }
}

/// The write loop: waits for a frame, writes it and everything queued behind it, flushes
/// once, and at the end writes what was queued before the close and closes the writer.
pub(super) async fn write_loop<W: FrameWriter>(
    slot: Arc<WriterSlot<W>>,
    mut frames: mpsc::Receiver<Frame>,
    mut control: mpsc::UnboundedReceiver<Bytes>,
    shared: Arc<Shared>,
) {
    let _empty = EmptyOnDrop(&slot);
    // One wait for the stop for the whole loop, as in `drive`: made per turn, it joined and
    // left the token's waiters each time the queue ran dry.
    let mut stop = pin!(shared.writer_stop.cancelled());
    loop {
        // The frame and the writer are taken together under the slot's lock (see the
        // module docs); cancellation notices first.
        let next = poll_fn(|cx| {
            let mut writer = lock(&slot.0);
            if let Poll::Ready(Some(frame)) = control.poll_recv(cx) {
                shared.control_queued.fetch_sub(1, Ordering::AcqRel);
                return Poll::Ready(Some((frame.into(), writer.take())));
            }
            match frames.poll_recv(cx) {
                Poll::Ready(Some(frame)) => return Poll::Ready(Some((frame, writer.take()))),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => {}
            }
            stop.as_mut().poll(cx).map(|()| None)
        })
        .await;
        // The writer is only ever taken here, so it is in the slot whenever the loop waits.
        let Some((frame, Some(mut writer))) = next else {
            break;
        };
        // Everything already queued goes out behind this frame, then one flush.
        let mut result = write_one(&mut writer, frame).await;
        while result.is_ok()
            && let Some(next) = next_queued(&mut control, &mut frames, &shared)
        {
            result = write_one(&mut writer, next).await;
        }
        if let Err(e) = match result {
            Ok(()) => writer.flush().await,
            Err(e) => Err(e),
        } {
            tracing::warn!(error = %e, "write failed; closing the connection");
            set_close_reason(&shared, format!("write failed: {e}"));
            shared.stop.cancel();
            return;
        }
        *lock(&slot.0) = Some(writer);
    }
    // Whatever was queued before the close goes out, then the pipe closes.
    let Some(mut writer) = lock(&slot.0).take() else {
        return;
    };
    while let Some(frame) = next_queued(&mut control, &mut frames, &shared) {
        if write_one(&mut writer, frame).await.is_err() {
            return;
        }
    }
    let _ = writer.flush().await;
    let _ = writer.close().await;
}
