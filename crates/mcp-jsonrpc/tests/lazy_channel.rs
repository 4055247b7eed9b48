//! `LazyChannel`: a request's notification channel made at its first notification, as
//! the HTTP transport uses it for every request.

use std::future::poll_fn;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use mcp_jsonrpc::{Error, LazyChannel, NotificationSink};

/// Sends a `notifications/message` without params through `sink`.
fn message(sink: &NotificationSink) -> impl Future<Output = Result<(), Error>> + '_ {
    sink.notify::<()>("notifications/message", None)
}

/// A slot for a channel of `capacity` frames and a sink made from it.
fn lazy(capacity: usize) -> (Arc<LazyChannel>, NotificationSink) {
    let slot = Arc::new(LazyChannel::new(capacity));
    let sink = NotificationSink::lazy(Arc::clone(&slot));
    (slot, sink)
}

/// Until a notification is sent there is no receiver; the first one makes it, with the
/// frame in it, and hands it over once.
#[tokio::test]
async fn the_first_notification_makes_the_channel_and_the_receiver_is_handed_over_once() {
    let (slot, sink) = lazy(4);
    let none = poll_fn(|cx| Poll::Ready(slot.poll_receiver(cx))).await;
    assert!(none.is_none(), "no notification, no channel");

    sink.notify("notifications/message", Some(&serde_json::json!({"n": 1})))
        .await
        .unwrap();
    let mut events = poll_fn(|cx| Poll::Ready(slot.poll_receiver(cx)))
        .await
        .expect("the notification made the channel");
    let frame = events.try_recv().unwrap();
    let frame: serde_json::Value = serde_json::from_slice(&frame).unwrap();
    assert_eq!(frame["method"], "notifications/message");
    assert_eq!(frame["params"]["n"], 1);
    let again = poll_fn(|cx| Poll::Ready(slot.poll_receiver(cx))).await;
    assert!(again.is_none(), "the receiver is handed over once");
    assert!(slot.close().is_none(), "and close has none left to return");

    // The channel goes on after the slot is closed, while its receiver lives.
    message(&sink).await.unwrap();
    assert!(events.try_recv().is_ok());
    drop(events);
    let after = message(&sink).await;
    assert!(matches!(after, Err(Error::Closed(_))), "{after:?}");
}

/// A slot closed before any notification refuses the first one at once (no channel that
/// nobody reads, no wait on it).
#[tokio::test]
async fn a_notification_after_close_fails_without_waiting() {
    let (slot, sink) = lazy(1);
    assert!(slot.close().is_none());
    for _ in 0..3 {
        let sent = tokio::time::timeout(Duration::from_secs(5), message(&sink))
            .await
            .expect("a closed slot answers at once");
        assert!(matches!(sent, Err(Error::Closed(_))), "{sent:?}");
    }
}

/// Closing takes the receiver a notification made and nobody took yet, with its frames.
#[tokio::test]
async fn close_returns_a_receiver_not_taken_yet() {
    let (slot, sink) = lazy(2);
    message(&sink).await.unwrap();
    let mut events = slot.close().expect("the channel was made");
    assert!(events.try_recv().is_ok());
}

/// The transport's task waits on the slot; a notification from another task wakes it, and
/// the frame is then in the receiver it takes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_from_another_task_wakes_the_waiting_transport() {
    let (slot, sink) = lazy(8);
    // The notification is sent once the transport has found the slot empty and waits.
    let (waiting, is_waiting) = tokio::sync::oneshot::channel::<()>();
    let mut waiting = Some(waiting);
    let sender = tokio::spawn(async move {
        is_waiting.await.expect("the transport waited");
        sink.notify(
            "notifications/progress",
            Some(&serde_json::json!({"progress": 1})),
        )
        .await
        .unwrap();
        sink
    });
    let mut events = tokio::time::timeout(
        Duration::from_secs(5),
        poll_fn(|cx| {
            if let Some(events) = slot.poll_receiver(cx) {
                return Poll::Ready(events);
            }
            if let Some(waiting) = waiting.take() {
                let _ = waiting.send(());
            }
            Poll::Pending
        }),
    )
    .await
    .expect("the notification woke the waiting task");
    let frame = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        std::str::from_utf8(&frame)
            .unwrap()
            .contains("notifications/progress")
    );
    // The sending half lives in the slot: the channel ends with the slot and its sinks.
    drop(sender.await.unwrap());
    drop(slot);
    let end = tokio::time::timeout(Duration::from_secs(5), events.recv()).await;
    assert!(end.unwrap().is_none(), "every sender is gone");
}

/// Backpressure is the channel's: with capacity one, a second notification waits until
/// the first is read.
#[tokio::test]
async fn a_full_channel_makes_the_sender_wait() {
    let (slot, sink) = lazy(0);
    message(&sink).await.unwrap();
    let second = message(&sink);
    tokio::pin!(second);
    let waited = tokio::time::timeout(Duration::from_millis(50), &mut second).await;
    assert!(
        waited.is_err(),
        "capacity 0 is taken as 1: the second send waits"
    );
    let mut events = slot.close().unwrap();
    assert!(events.try_recv().is_ok());
    tokio::time::timeout(Duration::from_secs(5), second)
        .await
        .expect("reading the first frees a slot")
        .unwrap();
}
