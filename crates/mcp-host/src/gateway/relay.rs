//! Questions from an upstream server to the downstream user, whatever the two eras.
//!
//! An upstream asks for input in one of two ways: a 2026-07-28 server answers
//! `input_required` and the client's MRTR loop calls its handlers inside the call's own
//! future; an initialize-era server sends `elicitation/create`, `sampling/createMessage` or
//! `roots/list`, which the connection's reading task hands to the same handlers. Either
//! way the handler ([`ask`]) passes the question to the downstream call that is running
//! the upstream one, found through a task-local ([`ASKER`]) or, for a question that came
//! on a reading task, as the only call in flight to that upstream.
//!
//! The downstream call then asks its own client through `Context::elicit` and friends,
//! which end the round with `input_required` (a 2026-07-28 client) or become
//! server-to-client requests (an initialize-era session, through `mcp-legacy`). Meanwhile
//! the upstream call keeps waiting, parked ([`Parked`]) under a random id that travels in
//! the downstream `requestState` (sealed by the server's key ring); the retry takes it
//! back, hands the answer to the waiting handler, and goes on.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcp_server::{Context, ToolError};
use mcp_types::{
    CallToolResult, ClientCapabilities, InputRequest, InputResponse, ProgressNotificationParams,
};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// How many upstream calls may wait for a downstream answer at once, by default.
pub const DEFAULT_MAX_PARKED: usize = 1024;
/// How long an upstream call waits for the downstream answer, by default, before its
/// question is declined.
pub const DEFAULT_PARK_TTL: Duration = Duration::from_mins(10);
/// The `requestState` key that holds a parked call's id.
const STATE_KEY: &str = "gateway";
/// How many events (questions, progress) of one call are buffered.
const EVENTS: usize = 64;

/// What a running upstream call tells the downstream call that runs it.
pub(crate) enum Event {
    /// A question, and where its answer goes.
    Ask(InputRequest, oneshot::Sender<Result<InputResponse, String>>),
    /// A progress update.
    Progress(ProgressNotificationParams),
    /// The upstream runs the call as a task: the downstream call may become one too.
    Task,
}

/// What a running upstream call can tell its downstream call besides questions.
#[derive(Clone)]
pub(crate) struct Hooks {
    events: mpsc::Sender<Event>,
}

impl Hooks {
    /// Passes on a progress update. Progress is advisory: when the buffer is full, an
    /// update is dropped.
    pub(crate) fn progress(&self, params: &ProgressNotificationParams) {
        let _ = self.events.try_send(Event::Progress(params.clone()));
    }

    /// Says that the upstream answered with a task.
    pub(crate) async fn task(&self) {
        let _ = self.events.send(Event::Task).await;
    }
}

/// The sending end of a call's events.
#[derive(Clone)]
pub(crate) struct Asker(mpsc::Sender<Event>);

tokio::task_local! {
    /// The call whose future is running: a 2026-07-28 upstream's questions are asked
    /// within it.
    static ASKER: Asker;
}

/// The calls in flight to one upstream, for questions that arrive outside any call's
/// future (an initialize-era server's requests).
#[derive(Default)]
pub(crate) struct InFlight {
    next: std::sync::atomic::AtomicU64,
    calls: Mutex<HashMap<u64, Asker>>,
}

impl InFlight {
    fn register(self: &Arc<Self>, asker: Asker) -> Registration {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, asker);
        Registration {
            calls: Arc::clone(self),
            id,
        }
    }

    /// The only call in flight, if there is exactly one.
    fn only(&self) -> Option<Asker> {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        if calls.len() == 1 {
            calls.values().next().cloned()
        } else {
            None
        }
    }
}

/// Removes a call from [`InFlight`] when it ends, however it ends.
struct Registration {
    calls: Arc<InFlight>,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.calls
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

/// The upstream client's handler for every question: passes it to the downstream call
/// that asked and waits for the answer. A question that cannot be tied to one call is
/// declined rather than shown to the wrong user.
pub(crate) async fn ask(
    in_flight: &InFlight,
    request: InputRequest,
) -> Result<InputResponse, String> {
    let asker = ASKER
        .try_with(Clone::clone)
        .ok()
        .or_else(|| in_flight.only());
    let Some(asker) = asker else {
        return Err("the gateway cannot tell which of its calls this request belongs to".into());
    };
    let (reply, answer) = oneshot::channel();
    asker
        .0
        .send(Event::Ask(request, reply))
        .await
        .map_err(|_| "the call that asked has ended".to_owned())?;
    answer
        .await
        .map_err(|_| "the downstream client gave no answer".to_owned())?
}

/// An upstream call running on its own task.
pub(crate) struct Run {
    events: mpsc::Receiver<Event>,
    done: JoinHandle<Result<CallToolResult, String>>,
    /// How many questions it asked, for their keys.
    asked: u32,
    _registration: Registration,
}

impl Drop for Run {
    fn drop(&mut self) {
        // A call nobody waits for any more (cancelled, expired, refused) stops upstream.
        self.done.abort();
    }
}

impl Run {
    /// Starts `call` on its own task, with its questions and progress routed to the
    /// returned run.
    pub(crate) fn start<F, Fut>(in_flight: &Arc<InFlight>, call: F) -> Run
    where
        F: FnOnce(Hooks) -> Fut,
        Fut: Future<Output = Result<CallToolResult, String>> + Send + 'static,
    {
        let (tx, events) = mpsc::channel(EVENTS);
        let asker = Asker(tx);
        let hooks = Hooks {
            events: asker.0.clone(),
        };
        let registration = in_flight.register(asker.clone());
        let done = tokio::spawn(ASKER.scope(asker, call(hooks)));
        Run {
            events,
            done,
            asked: 0,
            _registration: registration,
        }
    }
}

/// A run waiting for the downstream answer to its question.
struct Parked {
    run: Run,
    key: String,
    request: InputRequest,
    reply: oneshot::Sender<Result<InputResponse, String>>,
    since: Instant,
}

/// The parked runs, under random ids.
pub(crate) struct ParkingLot {
    runs: Mutex<HashMap<String, Parked>>,
    max: usize,
    ttl: Duration,
}

impl ParkingLot {
    pub(crate) fn new(max: usize, ttl: Duration) -> Self {
        ParkingLot {
            runs: Mutex::default(),
            max,
            ttl,
        }
    }

    /// Parks `parked`, first dropping those past their time; `None` when full.
    fn park(&self, parked: Parked) -> Option<String> {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        let ttl = self.ttl;
        // Dropping an expired run declines its question (its reply sender goes) and
        // stops its upstream call.
        runs.retain(|_, p| p.since.elapsed() < ttl);
        if runs.len() >= self.max {
            return None;
        }
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).ok()?;
        let id = bytes.iter().fold(String::new(), |mut id, b| {
            let _ = write!(id, "{b:02x}");
            id
        });
        runs.insert(id.clone(), parked);
        Some(id)
    }

    fn take(&self, id: &str) -> Option<Parked> {
        let parked = self
            .runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)?;
        (parked.since.elapsed() < self.ttl).then_some(parked)
    }

    /// How many runs are parked.
    pub(crate) fn len(&self) -> usize {
        self.runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// The id of the run a retried call left parked, from its `requestState`.
fn parked_id(cx: &Context) -> Option<String> {
    cx.state()?.get(STATE_KEY)?.as_str().map(str::to_owned)
}

/// Whether the downstream client can be asked `request`.
fn can_ask(caps: &ClientCapabilities, request: &InputRequest) -> bool {
    match request {
        InputRequest::Elicit(_) => caps.elicitation.is_some(),
        InputRequest::CreateMessage(_) => caps.sampling.is_some(),
        InputRequest::ListRoots(_) => caps.roots.is_some(),
        _ => false,
    }
}

/// Asks the downstream client `request` under `key`: its answer if this retry carries
/// one, else `Err(InputRequired)` (the round ends and the client is asked).
fn ask_downstream(
    cx: &Context,
    key: &str,
    request: &InputRequest,
) -> Result<InputResponse, ToolError> {
    Ok(match request {
        InputRequest::Elicit(r) => InputResponse::Elicit(cx.elicit(key, r.params.clone())?),
        InputRequest::CreateMessage(r) => {
            InputResponse::CreateMessage(cx.sample(key, r.params.clone())?)
        }
        InputRequest::ListRoots(_) => InputResponse::ListRoots(cx.roots(key)?),
        _ => {
            return Err(ToolError::failed(
                "an upstream asked for an unknown kind of input",
            ));
        }
    })
}

/// The run this call continues: the parked one its `requestState` names, its question
/// answered from this retry; `None` for a first round.
pub(crate) fn resume(lot: &ParkingLot, cx: &Context) -> Result<Option<Run>, ToolError> {
    let Some(id) = parked_id(cx) else {
        return Ok(None);
    };
    let Some(parked) = lot.take(&id) else {
        return Err(ToolError::failed(
            "the gateway no longer holds this call (it waited too long for input, the \
             gateway restarted, or the retry reached another gateway of a fleet); call the \
             tool again",
        ));
    };
    match ask_downstream(cx, &parked.key, &parked.request) {
        Ok(answer) => {
            let _ = parked.reply.send(Ok(answer));
            Ok(Some(parked.run))
        }
        Err(ToolError::InputRequired) => {
            // The retry did not carry this answer: ask again, under a new id.
            let key = parked.key.clone();
            let request = parked.request.clone();
            let Some(id) = lot.park(Parked {
                since: Instant::now(),
                ..parked
            }) else {
                return Err(ToolError::failed(
                    "too many gateway calls are waiting for input",
                ));
            };
            cx.set_state(serde_json::json!({ STATE_KEY: id }));
            ask_downstream(cx, &key, &request).map(|_| None)
        }
        Err(other) => Err(other),
    }
}

/// Drives `run` to its end: forwards its progress, and parks it when it asks a question,
/// ending this round with `input_required`.
pub(crate) async fn drive(
    lot: &ParkingLot,
    cx: &Context,
    mut run: Run,
) -> Result<CallToolResult, ToolError> {
    loop {
        let event = tokio::select! {
            // Events first: the progress a call sent before it ended goes down before its
            // result.
            biased;
            event = run.events.recv() => event,
            () = cx.cancellation().cancelled() => {
                return Err(ToolError::failed("the call was cancelled"));
            }
            done = &mut run.done => {
                return match done {
                    Ok(Ok(result)) => Ok(result),
                    Ok(Err(message)) => Err(ToolError::failed(message)),
                    Err(_) => Err(ToolError::failed("the upstream call failed unexpectedly")),
                };
            }
        };
        match event {
            Some(Event::Task) => {
                // A client that declared the Tasks extension gets a task of its own, which
                // follows the upstream's; for any other this does nothing, and the call
                // goes on until the upstream task ends.
                cx.escalate().await?;
            }
            Some(Event::Progress(p)) => {
                let total = p.total.as_ref().and_then(serde_json::Number::as_f64);
                if let Some(progress) = p.progress.as_f64() {
                    cx.progress(progress, total, p.message.as_deref()).await;
                }
            }
            Some(Event::Ask(request, reply)) => {
                if !can_ask(cx.client_capabilities(), &request) {
                    let _ = reply.send(Err(
                        "the downstream client does not support this kind of request".into(),
                    ));
                    continue;
                }
                let key = format!("upstream-{}", run.asked);
                run.asked = run.asked.saturating_add(1);
                let parked = Parked {
                    run,
                    key: key.clone(),
                    request: request.clone(),
                    reply,
                    since: Instant::now(),
                };
                let Some(id) = lot.park(parked) else {
                    return Err(ToolError::failed(
                        "too many gateway calls are waiting for input",
                    ));
                };
                cx.set_state(serde_json::json!({ STATE_KEY: id }));
                return ask_downstream(cx, &key, &request).map(|_| {
                    // Not reached: a first ask under a fresh key has no answer yet.
                    CallToolResult::error("the gateway lost its place in this call")
                });
            }
            None => {
                // Every sender is gone, so the call has ended: its result is next.
                return match (&mut run.done).await {
                    Ok(Ok(result)) => Ok(result),
                    Ok(Err(message)) => Err(ToolError::failed(message)),
                    Err(_) => Err(ToolError::failed("the upstream call failed unexpectedly")),
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::ListRootsRequest;

    fn parked(in_flight: &Arc<InFlight>) -> Parked {
        let run = Run::start(in_flight, |_| {
            std::future::pending::<Result<CallToolResult, String>>()
        });
        let (reply, _) = oneshot::channel();
        Parked {
            run,
            key: "upstream-0".to_owned(),
            request: InputRequest::ListRoots(ListRootsRequest::new()),
            reply,
            since: Instant::now(),
        }
    }

    #[tokio::test]
    async fn the_lot_holds_calls_up_to_its_limit() {
        let in_flight = Arc::new(InFlight::default());
        let lot = ParkingLot::new(2, DEFAULT_PARK_TTL);
        let first = lot.park(parked(&in_flight)).unwrap();
        assert!(lot.park(parked(&in_flight)).is_some(), "at the limit");
        assert!(lot.park(parked(&in_flight)).is_none(), "past the limit");
        assert_eq!(lot.len(), 2);
        // A call taken back frees its place, and is not there twice.
        assert!(lot.take(&first).is_some());
        assert!(lot.take(&first).is_none());
        assert!(lot.park(parked(&in_flight)).is_some());
    }

    #[tokio::test]
    async fn a_call_that_waited_too_long_is_dropped_and_its_question_declined() {
        let in_flight = Arc::new(InFlight::default());
        let lot = ParkingLot::new(2, Duration::ZERO);
        let mut waiting = parked(&in_flight);
        let (reply, answer) = oneshot::channel();
        waiting.reply = reply;
        let id = lot.park(waiting).unwrap();
        assert!(lot.take(&id).is_none(), "an expired call is not resumed");
        // Dropped, its question gets no answer (the upstream sees it declined) and its
        // call no longer counts as in flight.
        assert!(answer.await.is_err());
        assert!(in_flight.only().is_none());
    }

    #[test]
    fn ids_are_random_and_unguessable() {
        let lot = ParkingLot::new(DEFAULT_MAX_PARKED, DEFAULT_PARK_TTL);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let _guard = runtime.enter();
        let in_flight = Arc::new(InFlight::default());
        let a = lot.park(parked(&in_flight)).unwrap();
        let b = lot.park(parked(&in_flight)).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
    }
}
