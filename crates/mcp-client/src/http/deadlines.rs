//! The timeouts of the calls in flight over one HTTP transport, kept by one sweeper task.
//!
//! A `tokio::time::Sleep` per call (registered in tokio's timer wheel at the call's first
//! wait, removed when it is answered) was a measurable share of our client's time per call
//! over HTTP. Here a call's deadline is a slot in a table, and one task per transport sleeps
//! to the earliest deadline and wakes the calls whose time is up. It is woken only for a
//! deadline earlier than the one it sleeps to: while calls keep the same timeout, each new
//! deadline is later, so it sleeps through them and looks at the table about once a
//! timeout. The stdio client keeps its timeouts the same way, in its pending table
//! (`mcp-jsonrpc`, `pending.rs`).
//!
//! The sweeper is spawned at the first wait, on the runtime of the call that waits; when
//! that runtime ends, the next wait spawns another. The table's lock is held for a few
//! field writes only, never across an await, and no waker is woken or dropped under it.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use tokio::sync::Notify;
use tokio::time::Instant;

/// The deadlines of one transport's calls; dropping it ends its sweeper.
#[derive(Debug, Default)]
pub(crate) struct Deadlines {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    table: Mutex<Table>,
    /// Wakes the sweeper: an earlier deadline, or the end.
    sweeper: Notify,
}

#[derive(Debug, Default)]
struct Table {
    slots: Vec<Slot>,
    /// The indices of the free slots.
    free: Vec<usize>,
    /// When the sweeper next looks at the table (`None`: it waits to be woken). It may be
    /// earlier than every deadline left (their calls were answered): the sweeper then wakes
    /// for nothing once and looks again.
    armed: Option<Instant>,
    /// Whether a sweeper task is alive.
    sweeping: bool,
    /// The transport is gone: the sweeper ends.
    closed: bool,
}

#[derive(Debug)]
struct Slot {
    deadline: Instant,
    /// The waiting call's waker; `None` once it has been woken for its deadline (or while
    /// the slot is free).
    waker: Option<Waker>,
    /// The deadline has passed (the call was woken for it), or the slot is free: either
    /// way the sweeper passes it by.
    expired: bool,
}

fn lock(table: &Mutex<Table>) -> MutexGuard<'_, Table> {
    table.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Table {
    /// Whether the sweeper must be woken to see `deadline`: it is earlier than the one the
    /// sweeper sleeps to, or it sleeps to none. The sweeper is then taken to sleep to it,
    /// so that the calls made before it wakes do not wake it again.
    fn arm(&mut self, deadline: Instant) -> bool {
        if self.armed.is_none_or(|armed| deadline < armed) {
            self.armed = Some(deadline);
            true
        } else {
            false
        }
    }

    fn insert(&mut self, deadline: Instant, waker: Waker) -> usize {
        let slot = Slot {
            deadline,
            waker: Some(waker),
            expired: false,
        };
        if let Some(index) = self.free.pop() {
            self.slots[index] = slot;
            index
        } else {
            self.slots.push(slot);
            self.slots.len() - 1
        }
    }

    /// Frees slot `index`, giving back its waker (to be dropped after the lock).
    fn remove(&mut self, index: usize) -> Option<Waker> {
        let waker = self.slots[index].waker.take();
        self.slots[index].expired = true;
        self.free.push(index);
        waker
    }

    /// Marks every waiting slot whose deadline is at or before `now` expired and takes its
    /// waker; gives the earliest deadline left, which the sweeper is then taken to sleep to.
    fn expire(&mut self, now: Instant, due: &mut Vec<Waker>) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        for slot in &mut self.slots {
            // A free slot, or one whose call was already woken for its deadline.
            if slot.expired || slot.waker.is_none() {
                continue;
            }
            if slot.deadline <= now {
                slot.expired = true;
                due.extend(slot.waker.take());
            } else {
                next = Some(next.map_or(slot.deadline, |at| at.min(slot.deadline)));
            }
        }
        self.armed = next;
        next
    }
}

impl Deadlines {
    /// A deadline at `at` for one call, registered at its first wait.
    pub(crate) fn deadline(&self, at: Instant) -> Deadline<'_> {
        Deadline {
            shared: &self.shared,
            at,
            slot: None,
        }
    }
}

impl Drop for Deadlines {
    fn drop(&mut self) {
        lock(&self.shared.table).closed = true;
        self.shared.sweeper.notify_one();
    }
}

/// One call's deadline: [`poll_expired`](Self::poll_expired) is ready once it has passed.
/// Dropping it withdraws the call from the table.
#[derive(Debug)]
pub(crate) struct Deadline<'a> {
    shared: &'a Arc<Shared>,
    at: Instant,
    /// The call's slot, from its first wait on.
    slot: Option<usize>,
}

impl Deadline<'_> {
    /// Ready once the deadline has passed; otherwise `cx`'s task is woken when it passes.
    pub(crate) fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let mut table = lock(&self.shared.table);
        let Some(index) = self.slot else {
            let index = table.insert(self.at, cx.waker().clone());
            self.slot = Some(index);
            let wake = table.arm(self.at);
            // (Not closed: the table outlives this deadline, which borrows it.)
            let spawn = !table.sweeping;
            if spawn {
                table.sweeping = true;
            }
            drop(table);
            if spawn {
                self.spawn_sweeper();
            } else if wake {
                self.shared.sweeper.notify_one();
            }
            return Poll::Pending;
        };
        let slot = &mut table.slots[index];
        if slot.expired {
            return Poll::Ready(());
        }
        let stale = match &slot.waker {
            Some(waker) if waker.will_wake(cx.waker()) => None,
            _ => slot.waker.replace(cx.waker().clone()),
        };
        drop(table);
        drop(stale);
        Poll::Pending
    }

    /// Moves the deadline to `at` (progress arrived).
    pub(crate) fn reset(&mut self, at: Instant) {
        self.at = at;
        let Some(index) = self.slot else { return };
        let mut table = lock(&self.shared.table);
        if table.slots[index].expired {
            return;
        }
        table.slots[index].deadline = at;
        let wake = table.arm(at);
        drop(table);
        if wake {
            self.shared.sweeper.notify_one();
        }
    }

    fn spawn_sweeper(&self) {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(sweep(Arc::clone(self.shared)));
            }
            // Not on a runtime (the call's IO needs one, so this is not reached): the next
            // wait tries again.
            Err(_) => lock(&self.shared.table).sweeping = false,
        }
    }
}

impl Drop for Deadline<'_> {
    fn drop(&mut self) {
        let Some(index) = self.slot else { return };
        let waker = lock(&self.shared.table).remove(index);
        drop(waker);
    }
}

/// Marks the table without a sweeper when the sweeper's task ends, or is dropped with its
/// runtime, so that the next wait spawns another.
struct Sweeping<'a>(&'a Shared);

impl Drop for Sweeping<'_> {
    fn drop(&mut self) {
        let mut table = lock(&self.0.table);
        table.sweeping = false;
        table.armed = None;
    }
}

/// Sleeps to the earliest deadline, wakes the calls whose time is up, and again; ends
/// when the transport is dropped.
async fn sweep(shared: Arc<Shared>) {
    let _sweeping = Sweeping(&shared);
    let mut due = Vec::new();
    loop {
        let next = {
            let mut table = lock(&shared.table);
            if table.closed {
                return;
            }
            table.expire(Instant::now(), &mut due)
        };
        for waker in due.drain(..) {
            waker.wake();
        }
        match next {
            Some(at) => {
                tokio::select! {
                    biased;
                    () = shared.sweeper.notified() => {}
                    () = tokio::time::sleep_until(at) => {}
                }
            }
            None => shared.sweeper.notified().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use std::time::Duration;

    /// Ready once `deadline` expires.
    async fn wait(deadline: &mut Deadline<'_>) {
        poll_fn(|cx| deadline.poll_expired(cx)).await;
    }

    /// Polls `deadline` once (registering it at its first poll); whether it is pending.
    async fn pending(deadline: &mut Deadline<'_>) -> bool {
        poll_fn(|cx| Poll::Ready(deadline.poll_expired(cx)))
            .await
            .is_pending()
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadline_expires_at_its_time_and_not_before() {
        let deadlines = Deadlines::default();
        let start = Instant::now();
        let mut deadline = deadlines.deadline(start + Duration::from_secs(5));
        wait(&mut deadline).await;
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_secs(5) && waited < Duration::from_millis(5_010),
            "expired after {waited:?}"
        );
        // Ready again when polled again.
        wait(&mut deadline).await;
    }

    #[tokio::test(start_paused = true)]
    async fn an_earlier_deadline_wakes_a_sweeper_sleeping_to_a_later_one() {
        let deadlines = Deadlines::default();
        let start = Instant::now();
        let mut long = deadlines.deadline(start + Duration::from_mins(1));
        // The sweeper is spawned, and sleeps to the long deadline.
        assert!(pending(&mut long).await);
        tokio::task::yield_now().await;
        let mut short = deadlines.deadline(start + Duration::from_secs(1));
        wait(&mut short).await;
        let waited = start.elapsed();
        assert!(
            waited < Duration::from_secs(2),
            "the short one took {waited:?}"
        );
        assert!(pending(&mut long).await);
        wait(&mut long).await;
        assert!(start.elapsed() >= Duration::from_mins(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_reset_moves_the_deadline_either_way() {
        let deadlines = Deadlines::default();
        let start = Instant::now();
        let mut deadline = deadlines.deadline(start + Duration::from_secs(2));
        assert!(pending(&mut deadline).await);
        tokio::time::sleep(Duration::from_secs(1)).await;
        deadline.reset(start + Duration::from_secs(10));
        wait(&mut deadline).await;
        assert!(start.elapsed() >= Duration::from_secs(10));

        let start = Instant::now();
        let mut deadline = deadlines.deadline(start + Duration::from_secs(30));
        assert!(pending(&mut deadline).await);
        deadline.reset(start + Duration::from_secs(3));
        wait(&mut deadline).await;
        let waited = start.elapsed();
        assert!(waited < Duration::from_secs(4), "took {waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn dropped_deadlines_free_their_slots_and_never_fire() {
        let deadlines = Deadlines::default();
        let start = Instant::now();
        for round in 0..3 {
            let mut calls: Vec<_> = (0..8)
                .map(|i| deadlines.deadline(start + Duration::from_secs(100 + i)))
                .collect();
            for call in &mut calls {
                assert!(pending(call).await);
            }
            drop(calls);
            let table = lock(&deadlines.shared.table);
            assert_eq!(table.slots.len(), 8, "round {round}: slots reused");
            assert_eq!(table.free.len(), 8);
        }
        // The sweeper wakes at the first old deadline, finds nothing, and sleeps to none.
        tokio::time::sleep(Duration::from_secs(200)).await;
        let table = lock(&deadlines.shared.table);
        assert_eq!(table.armed, None);
        assert!(table.slots.iter().all(|slot| slot.waker.is_none()));
    }

    #[tokio::test(start_paused = true)]
    async fn many_calls_expire_in_deadline_order() {
        let deadlines = Arc::new(Deadlines::default());
        let start = Instant::now();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = tokio::task::JoinSet::new();
        for i in [5u64, 1, 4, 2, 3] {
            let (deadlines, order) = (Arc::clone(&deadlines), Arc::clone(&order));
            tasks.spawn(async move {
                let mut deadline = deadlines.deadline(start + Duration::from_secs(i));
                wait(&mut deadline).await;
                order.lock().unwrap().push((i, start.elapsed().as_secs()));
            });
        }
        while tasks.join_next().await.is_some() {}
        let order = order.lock().unwrap().clone();
        assert_eq!(order, vec![(1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]);
    }

    #[test]
    fn a_sweeper_is_spawned_again_on_a_new_runtime() {
        let deadlines = Deadlines::default();
        for _ in 0..2 {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap();
            runtime.block_on(async {
                let mut deadline = deadlines.deadline(Instant::now() + Duration::from_millis(20));
                wait(&mut deadline).await;
            });
            drop(runtime);
            assert!(
                !lock(&deadlines.shared.table).sweeping,
                "the sweeper ended with its runtime"
            );
        }
    }

    #[tokio::test]
    async fn dropping_the_table_ends_the_sweeper() {
        let deadlines = Deadlines::default();
        let shared = Arc::clone(&deadlines.shared);
        let mut deadline = deadlines.deadline(Instant::now() + Duration::from_mins(1));
        assert!(pending(&mut deadline).await);
        drop(deadline);
        drop(deadlines);
        for _ in 0..100 {
            if Arc::strong_count(&shared) == 1 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("the sweeper still holds the table");
    }
}
