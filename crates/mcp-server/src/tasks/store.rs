//! Where tasks live: the [`TaskStore`] seam, the record it keeps, and [`MemoryStore`], the
//! default.
//!
//! A store is a map from task id to [`TaskRecord`] with three operations: create (refused
//! if the id exists), get, and replace-if-unchanged (compare-and-set on the record's
//! `revision`). Everything the engine does is built on those, so a store shared by a fleet
//! of stateless servers (Redis, behind the `tasks-redis` feature, or one of the user's own)
//! gives every instance the same view: any of them can answer `tasks/get`, take a
//! `tasks/update` and resume the tool, or record a `tasks/cancel`.
//!
//! A store also drops records once their `expires_ms` has passed; the engine never reads a
//! record past that time either, whatever the store does.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_types::tasks::TaskStatus;
use mcp_types::{InputRequests, InputResponses};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::clock::Clock;
use crate::Error;

/// The future a [`TaskStore`] method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

/// Everything a server keeps about one task: what the client sees (status, times, result or
/// error, outstanding input requests) and what it needs to run the tool again after
/// `tasks/update` (the tool, its arguments, the creating request's `_meta`, the answers so
/// far and the handler's state). Stored as JSON by shared stores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task id: 128 random bits, hex.
    pub id: String,
    /// Who created it ([`Tasks::owner`](super::Tasks::owner)); only requests from the
    /// same owner see it.
    pub owner: String,
    /// The status.
    pub status: TaskStatus,
    /// A message about the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// Creation time, Unix milliseconds.
    pub created_ms: u64,
    /// Last change, Unix milliseconds.
    pub updated_ms: u64,
    /// When the record may be dropped, Unix milliseconds.
    pub expires_ms: u64,
    /// The suggested polling interval.
    pub poll_interval_ms: u64,
    /// Bumped by every change; [`TaskStore::replace`] compares it.
    pub revision: u64,
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// The creating request's `_meta` (without progress token or log level: a task sends
    /// neither).
    pub meta: Value,
    /// The handler's state ([`Context::set_state`](crate::Context::set_state)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// Every answer the client gave, by key.
    #[serde(default)]
    pub answers: InputResponses,
    /// The requests still waiting for an answer (status `input_required`).
    #[serde(default)]
    pub asked: InputRequests,
    /// The final result (status `completed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error (status `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<mcp_types::Error>,
    /// The server whose run of the tool holds the task (status `working`): the random id of
    /// its task engine. Only that server records the run's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_holder: Option<String>,
    /// Until when the holder's lease lasts, Unix milliseconds; a running holder renews it.
    /// Once it has lapsed, another server sharing the store resumes the task from its last
    /// recorded run ([`Tasks::lease`](super::Tasks::lease)).
    #[serde(default)]
    pub lease_until_ms: u64,
    /// How many times the task was resumed after its run's server stopped.
    #[serde(default)]
    pub resumes: u32,
}

/// Where tasks are kept. Implement it to share tasks between servers (every method must be
/// atomic with respect to the others, as a single-key operation of a database is).
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new record. Returns once a `get` of its id from any server sharing the
    /// store would find it (the spec's durable creation); fails if the id is taken or the
    /// store is full ([`Error::TooManyTasks`]).
    fn create<'a>(&'a self, record: &'a TaskRecord) -> StoreFuture<'a, ()>;

    /// The record of `id`, unless there is none or it has expired.
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Replaces the record of `record.id` if its stored revision is still `expected`
    /// (compare-and-set); `false` if it changed meanwhile or is gone.
    fn replace<'a>(&'a self, expected: u64, record: &'a TaskRecord) -> StoreFuture<'a, bool>;

    /// Whether other servers may change these records (then a running task's server looks
    /// for a remote `tasks/cancel` every poll interval, and listeners poll for changes).
    fn is_shared(&self) -> bool {
        false
    }
}

/// Tasks in this process's memory: the default store. Bounded: past `capacity` live tasks,
/// creation fails with [`Error::TooManyTasks`] (expired ones are swept first).
#[derive(Debug, Clone)]
pub struct MemoryStore {
    inner: Arc<Mutex<Memory>>,
    clock: Clock,
}

#[derive(Debug)]
struct Memory {
    records: HashMap<String, TaskRecord>,
    capacity: usize,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new(10_000)
    }
}

impl MemoryStore {
    /// A store holding at most `capacity` tasks (default 10 000).
    pub fn new(capacity: usize) -> Self {
        MemoryStore {
            inner: Arc::new(Mutex::new(Memory {
                records: HashMap::new(),
                capacity: capacity.max(1),
            })),
            clock: Clock::system(),
        }
    }

    /// The same store reading time from `clock` (for tests and simulations).
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many records the store holds, expired ones not yet swept included.
    pub fn len(&self) -> usize {
        self.lock().records.len()
    }

    /// Whether the store holds no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl TaskStore for MemoryStore {
    fn create<'a>(&'a self, record: &'a TaskRecord) -> StoreFuture<'a, ()> {
        let now = self.clock.now_ms();
        let outcome = {
            let mut memory = self.lock();
            if memory.records.len() >= memory.capacity {
                memory.records.retain(|_, r| r.expires_ms > now);
            }
            if memory.records.len() >= memory.capacity {
                Err(Error::TooManyTasks {
                    limit: memory.capacity,
                })
            } else if memory.records.contains_key(&record.id) {
                Err(Error::TaskStore("the task id is taken".into()))
            } else {
                memory.records.insert(record.id.clone(), record.clone());
                Ok(())
            }
        };
        Box::pin(std::future::ready(outcome))
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        let now = self.clock.now_ms();
        let found = {
            let mut memory = self.lock();
            match memory.records.get(id) {
                Some(r) if r.expires_ms <= now => {
                    memory.records.remove(id);
                    None
                }
                other => other.cloned(),
            }
        };
        Box::pin(std::future::ready(Ok(found)))
    }

    fn replace<'a>(&'a self, expected: u64, record: &'a TaskRecord) -> StoreFuture<'a, bool> {
        let replaced = {
            let mut memory = self.lock();
            match memory.records.get_mut(&record.id) {
                Some(current) if current.revision == expected => {
                    *current = record.clone();
                    true
                }
                _ => false,
            }
        };
        Box::pin(std::future::ready(Ok(replaced)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn record(id: &str, expires_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.to_owned(),
            owner: String::new(),
            status: TaskStatus::Working,
            status_message: None,
            created_ms: 0,
            updated_ms: 0,
            expires_ms,
            poll_interval_ms: 1000,
            revision: 0,
            tool: "t".to_owned(),
            arguments: Value::Null,
            meta: Value::Null,
            state: None,
            answers: InputResponses::new(),
            asked: InputRequests::new(),
            result: None,
            error: None,
            lease_holder: None,
            lease_until_ms: 0,
            resumes: 0,
        }
    }

    fn block<T>(f: StoreFuture<'_, T>) -> Result<T, Error> {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn records_expire_and_capacity_is_enforced() {
        let clock = Clock::manual(1_000);
        let store = MemoryStore::new(2).with_clock(clock.clone());
        block(store.create(&record("a", 2_000))).unwrap();
        assert!(
            block(store.create(&record("a", 2_000))).is_err(),
            "an id is never reused"
        );
        block(store.create(&record("b", 5_000))).unwrap();
        assert!(matches!(
            block(store.create(&record("c", 5_000))),
            Err(Error::TooManyTasks { limit: 2 })
        ));
        assert!(block(store.get("a")).unwrap().is_some());
        clock.set(2_000);
        assert!(block(store.get("a")).unwrap().is_none(), "expired");
        // The expired record no longer counts against the capacity.
        block(store.create(&record("c", 5_000))).unwrap();
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn replace_is_compare_and_set() {
        let store = MemoryStore::new(8).with_clock(Clock::manual(0));
        let mut r = record("a", 10);
        block(store.create(&r)).unwrap();
        r.revision = 1;
        r.status = TaskStatus::Completed;
        assert!(block(store.replace(0, &r)).unwrap());
        assert!(
            !block(store.replace(0, &r)).unwrap(),
            "a stale revision loses"
        );
        assert_eq!(
            block(store.get("a")).unwrap().unwrap().status,
            TaskStatus::Completed
        );
        assert!(!block(store.replace(0, &record("missing", 10))).unwrap());
    }
}
