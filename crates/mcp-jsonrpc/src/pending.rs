//! The table of our requests awaiting a response: plain data, no IO.
//!
//! It allocates ids, maps each id to whatever the caller parks there (a waiter), maps
//! progress tokens to ids, and closes once: after `close` every insert fails and every
//! parked waiter has been handed back for the caller to fail. Keeping it free of IO (like
//! rust-analyzer's `req_queue.rs`) means it is tested without a runtime, and its lock is
//! never held across an await.
//!
//! It also keeps each request's deadline, for the connection's one timeout sweeper
//! (`peer/mod.rs`, `sweep`): a timer per request (registered in tokio's wheel when the request
//! starts waiting, removed when it is answered) was a measurable share of a client's work
//! per call. [`PendingTable::set_deadline`] says when
//! the sweeper must be woken (a deadline earlier than the one it sleeps to), and
//! [`PendingTable::expire`] hands it the requests whose time is up.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use mcp_types::{ProgressToken, RequestId};
use tokio::time::Instant;

/// Outbound requests in flight.
#[derive(Debug)]
pub(crate) struct PendingTable<W> {
    next_id: i64,
    /// By the integer of the id: every id this table hands out is an integer.
    waiters: HashMap<i64, Entry<W>, BuildHasherDefault<IdHasher>>,
    by_token: HashMap<ProgressToken, RequestId>,
    closed: bool,
    /// When the sweeper next looks at the deadlines (`None`: it waits to be woken). It may
    /// be earlier than every deadline left (their requests were answered): the sweeper then
    /// wakes for nothing once and looks again.
    armed: Option<Instant>,
}

#[derive(Debug)]
struct Entry<W> {
    waiter: W,
    token: Option<ProgressToken>,
    /// When the request times out; `None` until its frame is sent.
    deadline: Option<Instant>,
}

/// The table is closed: the connection has ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Closed;

impl<W> Default for PendingTable<W> {
    fn default() -> Self {
        PendingTable {
            next_id: 1,
            waiters: HashMap::default(),
            by_token: HashMap::new(),
            closed: false,
            armed: None,
        }
    }
}

impl<W> PendingTable<W> {
    /// Parks `waiter` under a fresh id, returning the id.
    ///
    /// Ids are increasing integers, never reused within a connection, so a late response to
    /// an abandoned request can never be mistaken for the answer to a newer one.
    pub(crate) fn insert(
        &mut self,
        waiter: W,
        token: Option<ProgressToken>,
    ) -> Result<RequestId, Closed> {
        if self.closed {
            return Err(Closed);
        }
        let n = self.next_id;
        self.next_id += 1;
        let id = RequestId::Integer(n);
        if let Some(token) = &token {
            self.by_token.insert(token.clone(), id.clone());
        }
        self.waiters.insert(
            n,
            Entry {
                waiter,
                token,
                deadline: None,
            },
        );
        Ok(id)
    }

    /// Sets (or moves) when request `id` times out. Returns whether the sweeper must be
    /// woken to see it: the deadline is earlier than the one it sleeps to, or it sleeps to
    /// none. The sweeper is then taken to sleep to this deadline, so that the requests
    /// made before it wakes do not wake it again.
    pub(crate) fn set_deadline(&mut self, id: &RequestId, deadline: Instant) -> bool {
        let RequestId::Integer(n) = id else {
            return false;
        };
        let Some(entry) = self.waiters.get_mut(n) else {
            return false;
        };
        entry.deadline = Some(deadline);
        if self.armed.is_none_or(|armed| deadline < armed) {
            self.armed = Some(deadline);
            true
        } else {
            false
        }
    }

    /// Takes every request whose deadline is at or before `now`, and returns them with the
    /// earliest deadline left, which the sweeper is then taken to sleep to. After
    /// [`close`](Self::close), nothing.
    pub(crate) fn expire(&mut self, now: Instant) -> (Vec<(RequestId, W)>, Option<Instant>) {
        let due: Vec<i64> = self
            .waiters
            .iter()
            .filter(|(_, entry)| entry.deadline.is_some_and(|at| at <= now))
            .map(|(&n, _)| n)
            .collect();
        let expired = due
            .into_iter()
            .filter_map(|n| {
                let id = RequestId::Integer(n);
                self.remove(&id).map(|waiter| (id, waiter))
            })
            .collect();
        let next = self
            .waiters
            .values()
            .filter_map(|entry| entry.deadline)
            .min();
        self.armed = next;
        (expired, next)
    }

    /// Whether [`close`](Self::close) has been called.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Takes the waiter for `id` (the response arrived, or the caller gave up).
    pub(crate) fn remove(&mut self, id: &RequestId) -> Option<W> {
        // A string id is never one of ours.
        let RequestId::Integer(n) = id else {
            return None;
        };
        let entry = self.waiters.remove(n)?;
        if let Some(token) = entry.token {
            self.by_token.remove(&token);
        }
        Some(entry.waiter)
    }

    /// The waiter a progress token belongs to, if its request is still pending.
    pub(crate) fn by_progress_token(&self, token: &ProgressToken) -> Option<&W> {
        let RequestId::Integer(n) = self.by_token.get(token)? else {
            return None;
        };
        self.waiters.get(n).map(|e| &e.waiter)
    }

    /// Closes the table, handing back every parked waiter.
    pub(crate) fn close(&mut self) -> Vec<W> {
        self.closed = true;
        self.by_token.clear();
        self.waiters.drain().map(|(_, e)| e.waiter).collect()
    }

    /// How many requests are pending.
    pub(crate) fn len(&self) -> usize {
        self.waiters.len()
    }
}

/// The hasher of the waiters' table. Its keys are the ids this table hands out, one after
/// another (a peer only looks them up), so a multiplication spreads them over the table's
/// buckets, high bits and low, at a fraction of SipHash's cost; no key a peer chooses is
/// ever inserted, so there is no collision to provoke.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

/// An odd constant near 2^64 / φ (Fibonacci hashing).
const SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(SPREAD);
        }
    }

    fn write_i64(&mut self, n: i64) {
        self.0 = (self.0 ^ n.cast_unsigned()).wrapping_mul(SPREAD);
    }
}

#[cfg(test)]
mod tests {
    use mcp_types::RequestId;

    use super::{Closed, PendingTable};

    #[test]
    fn ids_spread_over_the_buckets() {
        use std::hash::BuildHasher;
        let build = std::hash::BuildHasherDefault::<super::IdHasher>::default();
        // Consecutive ids land in distinct buckets of a small table, and their top seven
        // bits (hashbrown's tag) are not all alike.
        let hashes: Vec<u64> = (1..=16_i64).map(|n| build.hash_one(n)).collect();
        let mut buckets: Vec<u64> = hashes.iter().map(|h| h & 31).collect();
        buckets.sort_unstable();
        buckets.dedup();
        assert!(buckets.len() >= 12, "{buckets:?}");
        let mut tags: Vec<u64> = hashes.iter().map(|h| h >> 57).collect();
        tags.sort_unstable();
        tags.dedup();
        assert!(tags.len() >= 12, "{tags:?}");
    }

    #[test]
    fn a_string_id_finds_no_waiter() {
        let mut table = PendingTable::default();
        let id = table.insert("a", None).unwrap();
        let RequestId::Integer(n) = id else {
            panic!("ids are integers")
        };
        assert_eq!(table.remove(&RequestId::String(n.to_string())), None);
        assert_eq!(table.remove(&id), Some("a"));
    }

    #[test]
    fn ids_are_fresh_and_responses_find_their_waiter_once() {
        let mut table = PendingTable::default();
        let a = table.insert("a", None).unwrap();
        let b = table.insert("b", Some(RequestId::from("tok"))).unwrap();
        assert_ne!(a, b);
        assert_eq!(table.by_progress_token(&RequestId::from("tok")), Some(&"b"));
        assert_eq!(table.remove(&b), Some("b"));
        assert_eq!(
            table.remove(&b),
            None,
            "a second response for one id finds nothing"
        );
        assert_eq!(table.by_progress_token(&RequestId::from("tok")), None);
        assert_eq!(
            table.remove(&RequestId::Integer(999)),
            None,
            "unknown ids are ignored"
        );
        let c = table.insert("c", None).unwrap();
        assert!(c != a && c != b, "ids are never reused");
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn closing_hands_back_every_waiter_and_refuses_new_ones() {
        let mut table = PendingTable::default();
        table.insert(1, None).unwrap();
        table.insert(2, Some(RequestId::Integer(7))).unwrap();
        let mut waiters = table.close();
        waiters.sort_unstable();
        assert_eq!(waiters, [1, 2]);
        assert_eq!(table.insert(3, None), Err(Closed));
        assert_eq!(table.len(), 0);
    }

    /// Deadlines: the sweeper is woken only for one earlier than it sleeps to; it takes
    /// the requests whose time is up (not those without a deadline, or answered) and
    /// sleeps to the earliest left.
    #[test]
    fn deadlines_wake_the_sweeper_only_when_earlier_and_expire_in_time() {
        use std::time::Duration;

        use tokio::time::Instant;

        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut table = PendingTable::default();
        let a = table.insert("a", None).unwrap();
        let b = table.insert("b", Some(RequestId::from("tok"))).unwrap();
        let c = table.insert("c", None).unwrap();
        let unsent = table.insert("unsent", None).unwrap();

        assert!(
            table.set_deadline(&a, at(10)),
            "the sweeper slept to nothing"
        );
        assert!(
            !table.set_deadline(&b, at(20)),
            "later than the one it sleeps to"
        );
        assert!(table.set_deadline(&c, at(5)), "earlier");
        assert!(
            !table.set_deadline(&RequestId::Integer(99), at(1)),
            "not pending"
        );
        assert!(
            !table.set_deadline(&RequestId::from("x"), at(1)),
            "not ours"
        );

        // Nothing is due yet: the earliest deadline is the next wake-up.
        let (expired, next) = table.expire(at(4));
        assert!(expired.is_empty());
        assert_eq!(next, Some(at(5)));

        // `c` answered meanwhile; at 10 s only `a` is due.
        assert_eq!(table.remove(&c), Some("c"));
        let (expired, next) = table.expire(at(10));
        assert_eq!(expired, [(a, "a")]);
        assert_eq!(next, Some(at(20)));

        // Progress moves `b` later; an earlier deadline than the armed one wakes.
        assert!(!table.set_deadline(&b, at(30)));
        let (expired, next) = table.expire(at(25));
        assert!(expired.is_empty());
        assert_eq!(next, Some(at(30)));
        let (expired, next) = table.expire(at(30));
        assert_eq!(expired, [(b, "b")]);
        assert!(table.by_progress_token(&RequestId::from("tok")).is_none());
        assert_eq!(next, None, "`unsent` has no deadline");
        assert_eq!(table.len(), 1);
        assert!(
            table.set_deadline(&unsent, at(40)),
            "the sweeper sleeps to nothing again"
        );

        assert!(!table.is_closed());
        table.close();
        assert!(table.is_closed());
        assert_eq!(table.expire(at(50)), (Vec::new(), None));
    }
}
