//! Write-through (`PeerConfig::write_through`): a sender writes its frame itself while the
//! writer is idle and nothing is queued; otherwise the frame waits for the write loop, and
//! frames keep their order either way.
//!
//! The writer here records every call the engine makes on it, and answers `write_now` as
//! the test scripts it, so each path is seen exactly.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mcp_jsonrpc::memory::{self, MemoryReader, MemoryWriter};
use mcp_jsonrpc::{
    ErrorObject, FrameReader, FrameWriter, Handler, NoHandler, Peer, PeerConfig, Request,
    RequestContext, RequestOptions, TransportError, WriteNow,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// One call the engine made on the writer, with the frame's method or id.
#[derive(Debug, Clone, PartialEq)]
enum Call {
    /// `write_now` that took the frame (`Sent` or `Buffered`).
    Now(String),
    /// `write_now` that declined it (`Later`).
    Declined(String),
    /// `write_frame`.
    Frame(String),
    /// `write_frame_parts`.
    Pieces(String),
    Flush,
}

#[derive(Default)]
struct Script {
    calls: Vec<Call>,
    /// What the next `write_now` calls answer; `Sent` when empty.
    answers: VecDeque<WriteNow>,
}

/// Records calls; frames that reach it (by either path) go on to the other side.
#[derive(Clone)]
struct Recorder {
    script: Arc<Mutex<Script>>,
    out: Arc<Mutex<Option<MemoryWriter>>>,
}

fn label(frame: &[u8]) -> String {
    let value: Value = serde_json::from_slice(frame).unwrap();
    match (&value["method"], &value["id"]) {
        (Value::String(method), Value::Null) => method.clone(),
        (Value::String(method), id) => format!("{method}#{id}"),
        (_, id) => format!("response#{id}"),
    }
}

impl Recorder {
    fn calls(&self) -> Vec<Call> {
        self.script.lock().unwrap().calls.clone()
    }

    fn answer(&self, answers: &[WriteNow]) {
        self.script.lock().unwrap().answers.extend(answers);
    }

    fn record(&self, call: Call) {
        self.script.lock().unwrap().calls.push(call);
    }

    /// Hands a frame to the other side without waiting (the memory pair has room).
    fn deliver(&self, frame: &[u8]) {
        let mut out = self.out.lock().unwrap();
        let writer = out.as_mut().unwrap();
        let mut send = std::pin::pin!(writer.write_frame(Bytes::copy_from_slice(frame)));
        let waker = std::task::Waker::noop();
        let polled = send
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker));
        assert!(polled.is_ready(), "the memory pair has room");
    }
}

use std::future::Future;

impl FrameWriter for Recorder {
    fn write_now(&mut self, frame: &[u8]) -> WriteNow {
        let answer = self
            .script
            .lock()
            .unwrap()
            .answers
            .pop_front()
            .unwrap_or(WriteNow::Sent);
        if answer == WriteNow::Later {
            self.record(Call::Declined(label(frame)));
        } else {
            self.record(Call::Now(label(frame)));
            self.deliver(frame);
        }
        answer
    }

    async fn write_frame(&mut self, frame: Bytes) -> Result<(), TransportError> {
        self.record(Call::Frame(label(&frame)));
        self.deliver(&frame);
        Ok(())
    }

    async fn write_frame_parts(&mut self, parts: [Bytes; 3]) -> Result<(), TransportError> {
        let frame = parts.concat();
        self.record(Call::Pieces(label(&frame)));
        self.deliver(&frame);
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), TransportError> {
        self.record(Call::Flush);
        Ok(())
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.out.lock().unwrap().take();
        Ok(())
    }
}

/// A client peer whose writer is a recorder, and the other side's reader and writer.
fn connect(
    write_through: bool,
) -> (
    Peer,
    mcp_jsonrpc::Connection,
    Recorder,
    MemoryReader,
    MemoryWriter,
) {
    let ((a_read, a_write), (b_read, b_write)) = memory::pair(64);
    let recorder = Recorder {
        script: Arc::default(),
        out: Arc::new(Mutex::new(Some(a_write))),
    };
    let mut config = PeerConfig::default();
    config.write_through = write_through;
    let (peer, conn) = Peer::connect(a_read, recorder.clone(), NoHandler, config);
    (peer, conn, recorder, b_read, b_write)
}

async fn recv(reader: &mut MemoryReader) -> Value {
    let frame = tokio::time::timeout(Duration::from_secs(5), reader.read_frame())
        .await
        .expect("a frame within 5 s")
        .expect("open")
        .unwrap();
    serde_json::from_slice(&frame).unwrap()
}

async fn answer(writer: &mut MemoryWriter, id: &Value) {
    let reply = json!({"jsonrpc": "2.0", "id": id, "result": {"ok": true}});
    writer
        .write_frame(Bytes::from(reply.to_string()))
        .await
        .unwrap();
}

#[tokio::test]
async fn an_idle_writer_takes_the_frame_from_its_sender() {
    let (peer, conn, recorder, mut theirs, mut to_us) = connect(true);
    let call = tokio::spawn({
        let peer = peer.clone();
        async move {
            peer.request("ping", None::<&Value>, RequestOptions::default())
                .await
        }
    });
    let request = recv(&mut theirs).await;
    answer(&mut to_us, &request["id"]).await;
    call.await.unwrap().unwrap();
    // Written by the sender: the write loop neither wrote nor flushed anything.
    assert_eq!(
        recorder.calls(),
        [Call::Now(format!("ping#{}", request["id"]))]
    );
    conn.shutdown(Duration::from_secs(1)).await;
}

/// Sends `methods` as notifications one after another from this task, with the
/// writer's `write_now` answering `answers`; checks that they arrive in order, and gives
/// the writer's calls once the write loop has had its turns.
async fn notify_in_turn(write_through: bool, answers: &[WriteNow], methods: &[&str]) -> Vec<Call> {
    let (peer, conn, recorder, mut theirs, _to_us) = connect(write_through);
    recorder.answer(answers);
    for method in methods {
        peer.notify(method, None::<&Value>).await.unwrap();
    }
    for method in methods {
        assert_eq!(recv(&mut theirs).await["method"], *method);
    }
    // On this one thread the write loop runs within a turn or two.
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
    let calls = recorder.calls();
    conn.shutdown(Duration::from_secs(1)).await;
    calls
}

/// One sending in turn: what it is, whether write-through is on, what `write_now`
/// answers, the notifications sent, and the writer's calls expected.
type InTurn = (
    &'static str,
    bool,
    &'static [WriteNow],
    &'static [&'static str],
    Vec<Call>,
);

#[tokio::test]
async fn notifications_sent_in_turn_reach_the_writer_as_expected() {
    let one = || "notifications/one".to_owned();
    let cases: Vec<InTurn> = vec![
        (
            "off, the writer is never asked",
            false,
            &[],
            &["notifications/one"],
            vec![Call::Frame(one()), Call::Flush],
        ),
        (
            "a declined frame goes through the write loop",
            true,
            &[WriteNow::Later],
            &["notifications/one"],
            vec![Call::Declined(one()), Call::Frame(one()), Call::Flush],
        ),
        // The loop flushes without writing anything of its own (the empty marker frame
        // is never handed to the transport).
        (
            "a frame left in the buffer is flushed by the loop",
            true,
            &[WriteNow::Buffered],
            &["notifications/one"],
            vec![Call::Now(one()), Call::Flush],
        ),
        // On one thread: the second notification is sent before the loop has flushed
        // the first, so it must be queued, not written through.
        (
            "nothing overtakes a frame left buffered",
            true,
            &[WriteNow::Buffered],
            &["notifications/one", "notifications/two"],
            vec![
                Call::Now(one()),
                Call::Frame("notifications/two".into()),
                Call::Flush,
            ],
        ),
    ];
    for (case, write_through, answers, methods, expected) in cases {
        let calls = notify_in_turn(write_through, answers, methods).await;
        assert_eq!(calls, expected, "{case}");
    }
}

#[tokio::test]
async fn a_burst_is_written_by_its_senders_until_a_write_waits() {
    let (peer, conn, recorder, mut theirs, _to_us) = connect(true);
    // The third write leaves bytes buffered: from then on, until the write loop has
    // flushed them, frames are queued and go out behind them with one flush.
    recorder.answer(&[WriteNow::Sent, WriteNow::Sent, WriteNow::Buffered]);
    // Spawned tasks on this thread run one after another, before the write loop.
    let tasks: Vec<_> = (0..5)
        .map(|i| {
            let peer = peer.clone();
            tokio::spawn(async move {
                peer.notify(&format!("notifications/n{i}"), None::<&Value>)
                    .await
                    .unwrap();
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    for i in 0..5 {
        assert_eq!(
            recv(&mut theirs).await["method"],
            format!("notifications/n{i}")
        );
    }
    let mut expected: Vec<_> = (0..3)
        .map(|i| Call::Now(format!("notifications/n{i}")))
        .collect();
    expected.extend((3..5).map(|i| Call::Frame(format!("notifications/n{i}"))));
    expected.push(Call::Flush);
    assert_eq!(recorder.calls(), expected);
    conn.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_queued_cancellation_notice_is_not_overtaken() {
    let (peer, conn, recorder, mut theirs, mut to_us) = connect(true);
    // A request in flight, then abandoned: its notice goes to the control queue, and the
    // request sent right after it, before the write loop runs, must follow the notice.
    let mut first = Box::pin(peer.request("slow", None::<&Value>, RequestOptions::default()));
    assert!(poll_once(&mut first).is_none());
    drop(first);
    let mut second = Box::pin(peer.request("ping", None::<&Value>, RequestOptions::default()));
    assert!(poll_once(&mut second).is_none());
    let slow = recv(&mut theirs).await;
    let notice = recv(&mut theirs).await;
    assert_eq!(notice["method"], "notifications/cancelled");
    assert_eq!(notice["params"]["requestId"], slow["id"]);
    let ping = recv(&mut theirs).await;
    assert_eq!(ping["method"], "ping");
    answer(&mut to_us, &ping["id"]).await;
    second.await.unwrap();
    assert_eq!(
        recorder.calls(),
        [
            Call::Now(format!("slow#{}", slow["id"])),
            Call::Frame("notifications/cancelled".into()),
            Call::Frame(format!("ping#{}", ping["id"])),
            Call::Flush
        ]
    );
    conn.shutdown(Duration::from_secs(1)).await;
}

/// A writer that says when it is dropped.
struct Dropped(Arc<std::sync::atomic::AtomicBool>);

impl FrameWriter for Dropped {
    async fn write_frame(&mut self, _frame: Bytes) -> Result<(), TransportError> {
        Ok(())
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        Ok(())
    }
}

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn the_writer_goes_with_its_loop_though_a_peer_remains() {
    // The slot is shared with the senders; the writer in it must still be dropped (for
    // stdio: the pipe closed) when the write loop's task is, here with its runtime.
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (peer, conn) = runtime.block_on(async {
        let ((a_read, _a_write), _other) = memory::pair(8);
        let (peer, conn) = Peer::connect(
            a_read,
            Dropped(Arc::clone(&dropped)),
            NoHandler,
            PeerConfig::default(),
        );
        tokio::task::yield_now().await;
        (peer, conn)
    });
    assert!(!dropped.load(std::sync::atomic::Ordering::SeqCst));
    drop(runtime);
    assert!(dropped.load(std::sync::atomic::Ordering::SeqCst));
    drop((peer, conn));
}

/// Polls a future once with a waker that does nothing: `Some` when it finished.
fn poll_once<F: Future + Unpin>(future: &mut F) -> Option<F::Output> {
    let waker = std::task::Waker::noop();
    match std::pin::Pin::new(future).poll(&mut std::task::Context::from_waker(waker)) {
        std::task::Poll::Ready(output) => Some(output),
        std::task::Poll::Pending => None,
    }
}

/// A writer that keeps every frame it is given, by either path, in the order taken, and
/// takes, buffers or declines `write_now` frames in turn.
#[derive(Clone, Default)]
struct Sink {
    taken: Arc<Mutex<Vec<Bytes>>>,
    turn: Arc<std::sync::atomic::AtomicUsize>,
}

impl FrameWriter for Sink {
    fn write_now(&mut self, frame: &[u8]) -> WriteNow {
        match self.turn.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 3 {
            0 => WriteNow::Later,
            turn => {
                self.taken
                    .lock()
                    .unwrap()
                    .push(Bytes::copy_from_slice(frame));
                if turn == 1 {
                    WriteNow::Sent
                } else {
                    WriteNow::Buffered
                }
            }
        }
    }

    async fn write_frame(&mut self, frame: Bytes) -> Result<(), TransportError> {
        // A write that waits now and then, so that senders find the writer busy.
        tokio::task::yield_now().await;
        self.taken.lock().unwrap().push(frame);
        Ok(())
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn senders_on_many_threads_lose_nothing_and_keep_their_order() {
    const TASKS: usize = 8;
    const EACH: usize = 300;
    let ((a_read, _a_write), _other) = memory::pair(8);
    let sink = Sink::default();
    let (peer, conn) = Peer::connect(a_read, sink.clone(), NoHandler, PeerConfig::default());
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let peer = peer.clone();
            tokio::spawn(async move {
                for n in 0..EACH {
                    let params = json!({"task": task, "n": n});
                    peer.notify("notifications/seq", Some(&params))
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    conn.shutdown(Duration::from_secs(5)).await;
    let taken = sink.taken.lock().unwrap();
    assert_eq!(taken.len(), TASKS * EACH, "every frame written once");
    let mut next = [0; TASKS];
    for frame in taken.iter() {
        let value: Value = serde_json::from_slice(frame).unwrap();
        let task = usize::try_from(value["params"]["task"].as_u64().unwrap()).unwrap();
        let n = usize::try_from(value["params"]["n"].as_u64().unwrap()).unwrap();
        assert_eq!(n, next[task], "task {task}'s frames out of order");
        next[task] += 1;
    }
}

/// Answers each request with a result whose `text` is as long as the request's id.
struct Sized;

impl Handler for Sized {
    async fn request(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let len = match &request.id {
            mcp_types::RequestId::Integer(n) => usize::try_from(*n).unwrap(),
            mcp_types::RequestId::String(_) => 0,
        };
        Ok(serde_json::value::to_raw_value(&json!({"text": "x".repeat(len)})).unwrap())
    }
}

#[tokio::test]
async fn a_large_result_goes_to_the_writer_in_pieces() {
    let ((a_read, a_write), (b_read, mut b_write)) = memory::pair(64);
    let recorder = Recorder {
        script: Arc::default(),
        out: Arc::new(Mutex::new(Some(a_write))),
    };
    let (_peer, conn) = Peer::connect(a_read, recorder.clone(), Sized, PeerConfig::default());
    let mut theirs = b_read;
    // The result of id N is `{"text":"…"}`, eleven bytes more than N: 16 KiB and more
    // is split, less is one frame.
    let (below, at) = ((16 << 10) - 12, (16 << 10) - 11);
    for id in [below, at, 300_000] {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "get"});
        b_write
            .write_frame(Bytes::from(request.to_string()))
            .await
            .unwrap();
        let reply = recv(&mut theirs).await;
        assert_eq!(reply["id"], id);
        assert_eq!(reply["result"]["text"].as_str().unwrap().len(), id);
    }
    let calls: Vec<Call> = recorder
        .calls()
        .into_iter()
        .filter(|call| *call != Call::Flush)
        .collect();
    assert_eq!(
        calls,
        [
            Call::Now(format!("response#{below}")),
            Call::Pieces(format!("response#{at}")),
            Call::Pieces("response#300000".to_owned()),
        ]
    );
    conn.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn pieces_are_joined_for_a_writer_that_takes_whole_frames() {
    // The memory transport keeps `write_frame_parts`'s default.
    let ((a_read, a_write), (mut b_read, mut b_write)) = memory::pair(64);
    let (_peer, conn) = Peer::connect(a_read, a_write, Sized, PeerConfig::default());
    let request = json!({"jsonrpc": "2.0", "id": 100_000, "method": "get"});
    b_write
        .write_frame(Bytes::from(request.to_string()))
        .await
        .unwrap();
    let frame = b_read.read_frame().await.unwrap().unwrap();
    let id = mcp_types::RequestId::Integer(100_000);
    let result = serde_json::value::to_raw_value(&json!({"text": "x".repeat(100_000)})).unwrap();
    assert_eq!(frame, mcp_jsonrpc::encode_raw_result(&id, &result));
    conn.shutdown(Duration::from_secs(1)).await;
}
