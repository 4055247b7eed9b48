//! The inbound side of a peer: the driver that reads frames, routes responses to their
//! waiting callers, and dispatches requests and notifications to the [`Handler`].

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use mcp_types::{CancelledNotificationParams, ErrorCode, ProgressNotificationParams, RequestId};
use serde_json::value::RawValue;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::task::TaskTracker;

use super::write::Frame;
use super::{
    CANCELLED, CancelSlot, Handler, InFlight, Overload, PROGRESS, Peer, RequestContext, Shared,
    WIRE_IN, abort_inbound, cancel_inbound, close_pending, lock, set_close_reason, wire,
};
use crate::error::Error;
use crate::message::{
    Decoded, ErrorObject, Message, Notification, RawResult, Request, Response, SPLIT_RESULT_AT,
    decode, encode_error, encode_raw_result, encode_raw_result_parts,
};
use crate::sink::NotificationSink;
use crate::transport::{FrameReader, TransportError};

pub(super) async fn drive<R: FrameReader, H: Handler>(
    mut reader: R,
    handler: Arc<H>,
    shared: Arc<Shared>,
    writer_task: JoinHandle<()>,
    grace: Arc<Mutex<Option<Duration>>>,
) {
    let peer = Peer {
        shared: Arc::clone(&shared),
    };
    let permits = Arc::new(Semaphore::new(shared.config.max_concurrency.max(1)));
    let tracker = TaskTracker::new();
    // One wait for shutdown for the whole loop: a `cancelled()` made per frame joined and
    // left the token's list of waiters (a lock each way, on every
    // request). A frame the reader has at hand is taken without polling it; shutdown is
    // then seen at the top of the next turn.
    let reason = {
        let stop = shared.stop.cancelled();
        tokio::pin!(stop);
        loop {
            if shared.stop.is_cancelled() {
                break "shut down".to_owned();
            }
            let next = tokio::select! {
                biased;
                next = reader.read_frame() => next,
                () = &mut stop => break "shut down".to_owned(),
            };
            match next {
                None => break "the peer closed the connection".to_owned(),
                Some(Err(e)) if e.is_recoverable() => {
                    tracing::warn!(error = %e, "discarded an unreadable frame");
                    if shared.config.reply_to_malformed {
                        let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, e.to_string());
                        let _ = super::write::send(&shared, encode_error(None, &error)).await;
                    }
                }
                Some(Err(e)) => break closed_reason(&e),
                Some(Ok(frame)) => {
                    wire(WIRE_IN, &frame);
                    let dispatch = Dispatch {
                        peer: &peer,
                        handler: &handler,
                        permits: &permits,
                        tracker: &tracker,
                    };
                    if dispatch.frame(&frame).await.is_err() {
                        break "shut down".to_owned();
                    }
                }
            }
        }
    };

    // Every outbound request still waiting fails now: no answer can arrive any more.
    set_close_reason(&shared, reason);
    close_pending(&shared);

    // In-flight inbound requests may finish within the grace; then they are cancelled, and
    // the ones that ignore cancellation are aborted.
    tracker.close();
    let grace = lock(&grace).take().unwrap_or(shared.config.eof_grace);
    if tokio::time::timeout(grace, tracker.wait()).await.is_err() {
        cancel_inbound(&shared);
        if tokio::time::timeout(Duration::from_millis(100), tracker.wait())
            .await
            .is_err()
        {
            abort_inbound(&shared);
            tracker.wait().await;
        }
    }
    shared.stop.cancel();
    shared.writer_stop.cancel();
    let _ = writer_task.await;
}

fn closed_reason(e: &TransportError) -> String {
    match e {
        TransportError::Closed(Some(reason)) => reason.clone(),
        other => other.to_string(),
    }
}

/// The reader's view while it dispatches one frame.
struct Dispatch<'a, H> {
    peer: &'a Peer,
    handler: &'a Arc<H>,
    permits: &'a Arc<Semaphore>,
    tracker: &'a TaskTracker,
}

/// Reading must stop (shutdown arrived while waiting for a concurrency slot).
struct Stop;

impl<H: Handler> Dispatch<'_, H> {
    async fn frame(&self, frame: &Bytes) -> Result<(), Stop> {
        let shared = &self.peer.shared;
        match decode(frame, shared.config.decode) {
            // What needs no waiting is done here; the rest (a request, a batch, a malformed
            // frame answered) waits in a box of its own. This future is moved into the
            // reader's state once per frame, copied whole: with those paths inline it was
            // twice the size, and `memmove` a noticeable share of a stdio server's samples.
            Ok(Decoded::Single(Message::Response(response))) => {
                self.response(response);
                Ok(())
            }
            Ok(Decoded::Single(Message::Notification(notification))) => {
                self.notification(notification);
                Ok(())
            }
            decoded => Box::pin(self.decoded(decoded)).await,
        }
    }

    /// A decoded frame that may have to wait: a request, a batch, or a malformed frame.
    async fn decoded(&self, decoded: Result<Decoded, crate::DecodeError>) -> Result<(), Stop> {
        match decoded {
            Ok(Decoded::Single(message)) => self.message(message).await,
            Ok(Decoded::Batch(messages)) => {
                for message in messages {
                    match message {
                        Ok(message) => self.message(message).await?,
                        Err(e) => self.malformed(&e).await,
                    }
                }
                Ok(())
            }
            Err(e) => {
                self.malformed(&e).await;
                Ok(())
            }
        }
    }

    async fn malformed(&self, e: &crate::DecodeError) {
        let shared = &self.peer.shared;
        tracing::warn!(error = %e, "received a malformed message");
        if shared.config.reply_to_malformed {
            let _ =
                super::write::send(shared, encode_error(e.id.as_ref(), &e.to_error_object())).await;
        }
    }

    async fn message(&self, message: Message) -> Result<(), Stop> {
        match message {
            Message::Response(response) => {
                self.response(response);
                Ok(())
            }
            Message::Notification(notification) => {
                self.notification(notification);
                Ok(())
            }
            Message::Request(request) => self.request(request).await,
        }
    }

    fn response(&self, response: Response) {
        let shared = &self.peer.shared;
        let Some(id) = response.id else {
            if let Err(error) = response.outcome {
                tracing::warn!(%error, "the peer reported an error without an id");
            }
            return;
        };
        let waiter = lock(&shared.pending).remove(&id);
        if let Some(waiter) = waiter {
            let _ = waiter
                .tx
                .send(response.outcome.map(RawResult::from).map_err(Error::Remote));
        } else {
            tracing::warn!(%id, "dropped a response to no pending request");
        }
    }

    fn notification(&self, notification: Notification) {
        let shared = &self.peer.shared;
        let params = notification.params.as_deref().map(RawValue::get);
        match notification.method.as_str() {
            CANCELLED => {
                let parsed = params
                    .and_then(|p| serde_json::from_str::<CancelledNotificationParams>(p).ok());
                if let Some(id) = parsed.map(|p| p.request_id) {
                    let in_flight = lock(&shared.inbound).get(&id).map(|f| f.cancel.clone());
                    if let Some(cancel) = in_flight {
                        cancel.cancel();
                        return;
                    }
                }
            }
            PROGRESS => {
                let parsed =
                    params.and_then(|p| serde_json::from_str::<ProgressNotificationParams>(p).ok());
                if let Some(progress) = parsed {
                    let watch = lock(&shared.pending)
                        .by_progress_token(&progress.progress_token)
                        .and_then(|w| w.progress.clone());
                    if let Some(watch) = watch {
                        watch.notify.notify_one();
                        if let Some(callback) = &watch.callback {
                            callback(&progress);
                        }
                        return;
                    }
                }
            }
            _ => {}
        }
        self.handler.notification(notification, self.peer);
    }

    /// Waits for a concurrency slot ([`Overload::Wait`]), or for shutdown.
    async fn wait_for_slot(&self) -> Result<OwnedSemaphorePermit, Stop> {
        tokio::select! {
            biased;
            () = self.peer.shared.stop.cancelled() => Err(Stop),
            permit = Arc::clone(self.permits).acquire_owned() => permit.map_err(|_| Stop),
        }
    }

    async fn request(&self, request: Request) -> Result<(), Stop> {
        let shared = &self.peer.shared;
        if lock(&shared.inbound).contains_key(&request.id) {
            let error = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("request id {} is already in flight", request.id),
            );
            let _ = super::write::send(shared, encode_error(Some(&request.id), &error)).await;
            return Ok(());
        }
        // A free slot is only looked at here, and taken if the handler has to wait (below):
        // this reader is the only one that takes slots (tasks only give them back), so a
        // slot free now is still free then, and a request answered on its first poll (most
        // are) never takes and gives back a permit, whose return locks the semaphore's
        // waiter list (1.7 % of the stdio server's time per small call). With no slot
        // free, one is waited for, or the request refused, before the handler runs.
        let mut permit: Option<OwnedSemaphorePermit> = None;
        if self.permits.available_permits() == 0 {
            permit = Some(match shared.config.overload {
                // Boxed, to keep this future small (see `frame`).
                Overload::Wait => Box::pin(self.wait_for_slot()).await?,
                Overload::Reject => {
                    let error = ErrorObject::internal(format!(
                        "too many concurrent requests (limit {}); retry later",
                        shared.config.max_concurrency
                    ));
                    let _ =
                        super::write::send(shared, encode_error(Some(&request.id), &error)).await;
                    return Ok(());
                }
            });
        }

        let id = request.id.clone();
        // A token of its own, not a child of a connection-wide one: a child joins and
        // leaves its parent's list under two locks, on every request.
        // Going away, the connection cancels the requests still in flight through the
        // in-flight table (`cancel_inbound`); one answered on its first poll is never in
        // it, and nothing could have cancelled it meanwhile. The token itself is made
        // only if the handler asks for it or the request is cancelled (`CancelSlot`).
        let cancel = CancelSlot::default();
        let cx = RequestContext {
            id: id.clone(),
            cancel: cancel.clone(),
            sink: NotificationSink::peer(self.peer.clone()),
            transport: None,
        };
        // The handler's state machine lives in one box: a handler future can be many
        // kilobytes, and the task's stage is moved (copied) as the task runs.
        let owner = Arc::clone(self.handler);
        // The box is allocated before the future is made, so the future is written into
        // it: `Box::pin(future)` made it on the stack and copied all of it (the size of
        // its largest state, over a kilobyte) when only its captures were set.
        let slot = Box::new_uninit();
        let mut handler =
            Box::into_pin(Box::write(
                slot,
                async move { owner.request(request, cx).await },
            ));
        // Polled once here first: a handler that answers without waiting (most do) is
        // answered without a task of its own, a spawn and a hand-off fewer per request.
        // Nothing can cancel it meanwhile (cancellations arrive on this task), so it
        // enters the in-flight table only if it has to wait. A panic is contained here as
        // it would be in a task, and answered.
        let first =
            std::future::poll_fn(|task| Poll::Ready(poll_caught(handler.as_mut(), task))).await;
        if let Poll::Ready(outcome) = first {
            drop(permit);
            if !cancel.is_cancelled() {
                // (Only the handler itself can have fired its token by now; a cancelled
                // request gets no response, as from a task.)
                let _ = super::write::send(shared, response_frame(&id, outcome)).await;
            }
            return Ok(());
        }
        let permit = match permit {
            Some(permit) => permit,
            None => match Arc::clone(self.permits).try_acquire_owned() {
                Ok(permit) => permit,
                // Not reached (the slot seen free above is still free), but waited for
                // rather than assumed.
                Err(_) => Box::pin(self.wait_for_slot()).await?,
            },
        };
        lock(&shared.inbound).insert(
            id.clone(),
            InFlight {
                cancel: cancel.clone(),
                abort: None,
            },
        );
        let task_shared = Arc::clone(shared);
        let task_id = id.clone();
        let task = self.tracker.spawn(async move {
            let _permit = permit;
            let outcome = std::future::poll_fn(|task| poll_caught(handler.as_mut(), task)).await;
            lock(&task_shared.inbound).remove(&task_id);
            if cancel.is_cancelled() {
                // The peer cancelled it (or the connection is going away): no response.
                return;
            }
            let _ = super::write::send(&task_shared, response_frame(&task_id, outcome)).await;
        });
        if let Some(in_flight) = lock(&shared.inbound).get_mut(&id) {
            in_flight.abort = Some(task.abort_handle());
        }
        Ok(())
    }
}

/// A handler that panicked: the panic is contained and the request answered with -32603.
struct Panicked;

/// Polls a handler's future, containing a panic the way a task would, so the request can
/// still be answered (and leaves the in-flight table).
fn poll_caught<F: Future + ?Sized>(
    future: Pin<&mut F>,
    task: &mut std::task::Context<'_>,
) -> Poll<Result<F::Output, Panicked>> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| future.poll(task))) {
        Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
        Ok(Poll::Pending) => Poll::Pending,
        Err(_) => Poll::Ready(Err(Panicked)),
    }
}

/// The response frame for a handler's outcome.
fn response_frame(
    id: &RequestId,
    outcome: Result<Result<Box<RawValue>, ErrorObject>, Panicked>,
) -> Frame {
    match outcome {
        Ok(Ok(result)) if result.get().len() >= SPLIT_RESULT_AT => {
            Frame::Parts(encode_raw_result_parts(id, result))
        }
        Ok(Ok(result)) => encode_raw_result(id, &result).into(),
        Ok(Err(error)) => encode_error(Some(id), &error).into(),
        Err(Panicked) => {
            tracing::error!(%id, "a request handler panicked");
            encode_error(
                Some(id),
                &ErrorObject::internal("the request handler failed"),
            )
            .into()
        }
    }
}
