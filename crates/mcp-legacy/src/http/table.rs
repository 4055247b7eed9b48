//! The open legacy sessions and their caps: all clients together
//! ([`LegacyHttpConfig::max_sessions`]), each authenticated principal
//! ([`max_sessions_per_principal`](LegacyHttpConfig::max_sessions_per_principal)) and the
//! unauthenticated clients of each address
//! ([`max_sessions_per_address`](LegacyHttpConfig::max_sessions_per_address)).
//!
//! A new session that meets a cap takes the place of an idle session under that cap (no
//! request running, no stream being read): one never completed first (an `initialize`
//! nobody followed up), then the least recently used. Only when every session under the
//! cap is busy is the new one refused. So a client that opens sessions and leaves them
//! crowds out nobody but its own idle sessions, and cannot keep anyone out until the
//! idle expiry.
//!
//! The caps are checked, a place is made and the session is inserted under one lock, in
//! one step: concurrent `initialize` requests never take the table past a cap.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::HttpSession;
use super::LegacyHttpConfig;
use super::auth::Caller;
use crate::session::lock;

/// Whose sessions count together against a cap of their own.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Bucket {
    /// An authenticated principal, by its id.
    Principal(Box<str>),
    /// The unauthenticated clients of one address.
    Address(Address),
}

/// An address as the per-address cap counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Address {
    V4(Ipv4Addr),
    /// The /64 prefix of an IPv6 address: a host is commonly given a whole /64, and
    /// counting its addresses one by one would give it 2^64 caps.
    V6Prefix(u64),
    /// Requests that came without the address of their connection (an endpoint called
    /// directly rather than through the server): they share one cap, so that the cap
    /// still bounds them.
    Unknown,
}

impl Bucket {
    /// The bucket of a session created by `caller` from `peer`.
    pub(super) fn of(caller: &Caller, peer: Option<SocketAddr>) -> Bucket {
        if let Some(principal) = caller {
            return Bucket::Principal(Box::from(principal.id()));
        }
        let address = match peer.map(|peer| peer.ip().to_canonical()) {
            Some(IpAddr::V4(v4)) => Address::V4(v4),
            // The upper 64 bits always fit.
            Some(IpAddr::V6(v6)) => {
                Address::V6Prefix(u64::try_from(v6.to_bits() >> 64).unwrap_or(u64::MAX))
            }
            None => Address::Unknown,
        };
        Bucket::Address(address)
    }
}

#[cfg(feature = "session-redis")]
impl Bucket {
    /// The bucket as a shared store names it: `p:<principal>`, `4:<ipv4>`,
    /// `6:<prefix in hex>` or `u`.
    pub(super) fn key(&self) -> String {
        match self {
            Bucket::Principal(id) => format!("p:{id}"),
            Bucket::Address(Address::V4(v4)) => format!("4:{v4}"),
            Bucket::Address(Address::V6Prefix(prefix)) => format!("6:{prefix:x}"),
            Bucket::Address(Address::Unknown) => "u".to_owned(),
        }
    }

    /// The bucket a shared store named [`key`](Self::key); `None` for a name it never
    /// writes.
    pub(super) fn from_key(key: &str) -> Option<Bucket> {
        if key == "u" {
            return Some(Bucket::Address(Address::Unknown));
        }
        let (kind, rest) = key.split_once(':')?;
        match kind {
            "p" => Some(Bucket::Principal(Box::from(rest))),
            "4" => rest.parse().ok().map(|v4| Bucket::Address(Address::V4(v4))),
            "6" => u64::from_str_radix(rest, 16)
                .ok()
                .map(|prefix| Bucket::Address(Address::V6Prefix(prefix))),
            _ => None,
        }
    }
}

/// The caps of the table, from the configuration.
#[derive(Debug, Clone, Copy)]
pub(super) struct Caps {
    total: usize,
    per_principal: usize,
    per_address: usize,
}

impl Caps {
    pub(super) fn new(config: &LegacyHttpConfig) -> Self {
        Caps {
            total: config.max_sessions,
            per_principal: config.max_sessions_per_principal,
            per_address: config.max_sessions_per_address,
        }
    }

    pub(super) fn of(&self, bucket: &Bucket) -> usize {
        match bucket {
            Bucket::Principal(_) => self.per_principal,
            Bucket::Address(_) => self.per_address,
        }
    }
}

/// Every session under a cap the new session meets is busy: it is refused (`503`).
#[derive(Debug)]
pub(super) struct Full;

/// A session in use by a request of the server: while one exists, the session is busy
/// and is never evicted. Dropping the last one makes the session's idle time start
/// again.
pub(super) struct InUse(Arc<HttpSession>);

impl InUse {
    /// Marks `session` in use. Taken under the table's lock when the session is looked
    /// up, so that no eviction can pick the session between finding and using it; a
    /// clone of an existing one needs no lock (the session is already busy).
    fn new(session: &Arc<HttpSession>) -> Self {
        session.users.fetch_add(1, Ordering::AcqRel);
        InUse(Arc::clone(session))
    }
}

impl Clone for InUse {
    fn clone(&self) -> Self {
        InUse::new(&self.0)
    }
}

impl Deref for InUse {
    type Target = Arc<HttpSession>;

    fn deref(&self) -> &Arc<HttpSession> {
        &self.0
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        self.0.touch();
        self.0.users.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The open legacy sessions by id, with how many each bucket holds.
#[derive(Default)]
pub(super) struct SessionTable {
    sessions: HashMap<String, Arc<HttpSession>>,
    counts: HashMap<Bucket, usize>,
}

impl SessionTable {
    pub(super) fn len(&self) -> usize {
        self.sessions.len()
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &Arc<HttpSession>> {
        self.sessions.values()
    }

    /// Session `id`, not marked in use (for routing what another instance forwarded).
    #[cfg(feature = "session-redis")]
    pub(super) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        self.sessions.get(id).cloned()
    }

    /// Whether session `id` is here.
    #[cfg(feature = "session-redis")]
    pub(super) fn contains(&self, id: &str) -> bool {
        self.sessions.contains_key(id)
    }

    /// Session `id`, marked in use, if `accept` takes it.
    pub(super) fn take(
        &self,
        id: &str,
        accept: impl FnOnce(&HttpSession) -> bool,
    ) -> Option<InUse> {
        self.sessions
            .get(id)
            .filter(|session| accept(session))
            .map(InUse::new)
    }

    /// Removes session `id` if `accept` takes it.
    pub(super) fn remove_if(
        &mut self,
        id: &str,
        accept: impl FnOnce(&Arc<HttpSession>) -> bool,
    ) -> Option<Arc<HttpSession>> {
        if !self.sessions.get(id).is_some_and(accept) {
            return None;
        }
        let session = self.sessions.remove(id)?;
        self.uncount(&session.bucket);
        Some(session)
    }

    fn uncount(&mut self, bucket: &Bucket) {
        if let Some(count) = self.counts.get_mut(bucket) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                // No entry is kept for a bucket without sessions: the map stays as small
                // as the table.
                self.counts.remove(bucket);
            }
        }
    }

    fn count(&self, bucket: &Bucket) -> usize {
        self.counts.get(bucket).copied().unwrap_or(0)
    }

    /// The session to evict among those `under` takes: an idle one, never completed
    /// first, then the least recently used. `None` when every one is busy.
    fn victim(&self, under: impl Fn(&HttpSession) -> bool, except: Option<&str>) -> Option<String> {
        self.sessions
            .iter()
            .filter(|(id, session)| {
                except != Some(id.as_str()) && under(session) && !session.busy()
            })
            .min_by_key(|(_, session)| (session.is_completed(), session.last_seen()))
            .map(|(id, _)| id.clone())
    }

    /// The sessions to evict for a new one in `bucket` (none when the caps leave room);
    /// [`Full`] when a cap is met and every session under it is busy.
    fn make_room(&self, bucket: &Bucket, caps: &Caps) -> Result<Vec<String>, Full> {
        let mut victims = Vec::new();
        if self.count(bucket) >= caps.of(bucket) {
            let victim = self.victim(|s| s.bucket == *bucket, None).ok_or(Full)?;
            victims.push(victim);
        }
        if self.sessions.len() - victims.len() >= caps.total {
            let except = victims.first().map(String::as_str);
            let victim = self.victim(|_| true, except).ok_or(Full)?;
            victims.push(victim);
        }
        Ok(victims)
    }

    /// Whether a new session in `bucket` would be admitted now; nothing is reserved.
    /// For refusing early, before the work of an `initialize`: [`admit`](Self::admit)
    /// decides.
    pub(super) fn has_room(&self, bucket: &Bucket, caps: &Caps) -> bool {
        self.make_room(bucket, caps).is_ok()
    }

    /// Inserts `session` under `id`, evicting what the caps require, in one step: the
    /// session, marked in use, and the evicted sessions, for the caller to end once the
    /// table's lock is released.
    pub(super) fn admit(
        &mut self,
        id: String,
        session: &Arc<HttpSession>,
        caps: &Caps,
    ) -> Result<(InUse, Vec<Arc<HttpSession>>), Full> {
        let victims = self.make_room(&session.bucket, caps)?;
        let evicted = victims
            .iter()
            .filter_map(|victim| self.remove_if(victim, |_| true))
            .collect();
        *self.counts.entry(session.bucket.clone()).or_insert(0) += 1;
        self.sessions.insert(id, Arc::clone(session));
        Ok((InUse::new(session), evicted))
    }

    /// Removes the sessions that are over: not completed within `grace` of their start
    /// (unless a request is running on one), or idle for `idle`. Returns them, for the
    /// caller to end once the table's lock is released.
    pub(super) fn expire(&mut self, grace: Duration, idle: Duration) -> Vec<Arc<HttpSession>> {
        let now = Instant::now();
        let over: Vec<String> = self
            .sessions
            .iter()
            .filter(|(_, session)| {
                let unfinished = !session.is_completed()
                    && session.users.load(Ordering::Acquire) == 0
                    && now.saturating_duration_since(session.created) >= grace;
                let idle =
                    !session.busy() && now.saturating_duration_since(session.last_seen()) >= idle;
                unfinished || idle
            })
            .map(|(id, _)| id.clone())
            .collect();
        over.iter()
            .filter_map(|id| self.remove_if(id, |_| true))
            .collect()
    }
}

impl HttpSession {
    /// Whether a request of the server runs on the session or one of its streams is being
    /// read: such a session is never evicted.
    pub(super) fn busy(&self) -> bool {
        self.users.load(Ordering::Acquire) > 0
            || self.get.has_reader()
            || lock(&self.streams).values().any(|log| log.has_reader())
    }

    pub(super) fn is_completed(&self) -> bool {
        self.completed.load(Ordering::Acquire)
    }

    /// Records that the client went on after `initialize`: the session is no longer
    /// subject to [`LegacyHttpConfig::session_grace`].
    pub(super) fn complete(&self) {
        self.completed.store(true, Ordering::Release);
    }

    fn last_seen(&self) -> Instant {
        *lock(&self.last_seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(bucket: Bucket) -> Arc<HttpSession> {
        Arc::new(HttpSession::new(
            None,
            false,
            mcp_jsonrpc::CancellationToken::new(),
            bucket,
        ))
    }

    fn address(last: u8) -> Bucket {
        Bucket::of(&None, Some(SocketAddr::from(([127, 0, 0, last], 1000))))
    }

    /// Admits a new session `id` from the address ending in `from` into `table`.
    fn admit(
        table: &mut SessionTable,
        id: &str,
        from: u8,
        caps: &Caps,
    ) -> Result<(InUse, Vec<Arc<HttpSession>>), Full> {
        table.admit(id.into(), &session(address(from)), caps)
    }

    fn caps(total: usize, per_address: usize) -> Caps {
        Caps {
            total,
            per_principal: per_address,
            per_address,
        }
    }

    #[test]
    fn a_full_bucket_evicts_its_own_idle_session_and_refuses_when_all_are_busy() {
        let caps = caps(10, 2);
        let mut table = SessionTable::default();
        let (first, _) = admit(&mut table, "a", 1, &caps).unwrap();
        let (second, _) = admit(&mut table, "b", 1, &caps).unwrap();
        // At the cap with both busy: refused, and nothing was evicted.
        assert!(admit(&mut table, "c", 1, &caps).is_err());
        assert_eq!(table.len(), 2);
        // Another address is not affected.
        let (_other, evicted) = admit(&mut table, "d", 2, &caps).unwrap();
        assert!(evicted.is_empty());
        // Once idle, the one never completed goes first, whatever its age.
        first.complete();
        drop(first);
        drop(second);
        let (_third, evicted) = admit(&mut table, "e", 1, &caps).unwrap();
        assert_eq!(evicted.len(), 1);
        assert!(!evicted[0].is_completed());
        assert_eq!(table.len(), 3);
        assert!(table.take("b", |_| true).is_none(), "b was evicted");
        assert!(table.take("a", |_| true).is_some());
    }

    #[test]
    fn the_global_cap_evicts_across_buckets_and_counts_are_given_back() {
        let caps = caps(2, 2);
        let mut table = SessionTable::default();
        drop(admit(&mut table, "a", 1, &caps).unwrap());
        let (_b, _) = admit(&mut table, "b", 2, &caps).unwrap();
        let (_c, evicted) = admit(&mut table, "c", 3, &caps).unwrap();
        assert_eq!(
            evicted.len(),
            1,
            "the idle session of another address made room"
        );
        assert_eq!(table.len(), 2);
        assert_eq!(table.count(&address(1)), 0);
        assert!(
            !table.counts.contains_key(&address(1)),
            "no entry kept at 0"
        );
        // Both left are busy now.
        assert!(!table.has_room(&address(4), &caps));
        assert!(admit(&mut table, "d", 4, &caps).is_err());
    }

    #[test]
    fn a_cap_of_zero_refuses_every_session() {
        let mut table = SessionTable::default();
        assert!(admit(&mut table, "a", 1, &caps(0, 5)).is_err());
        assert!(admit(&mut table, "a", 1, &caps(5, 0)).is_err());
        assert_eq!(table.len(), 0);
    }

    #[test]
    fn ipv6_addresses_count_by_their_64_prefix_and_mapped_ipv4_as_ipv4() {
        let of = |ip: &str| Bucket::of(&None, Some(SocketAddr::new(ip.parse().unwrap(), 1)));
        assert_eq!(of("2001:db8::1"), of("2001:db8::ffff:1"));
        assert_ne!(of("2001:db8::1"), of("2001:db8:0:1::1"));
        assert_eq!(of("::ffff:127.0.0.1"), of("127.0.0.1"));
        assert_eq!(Bucket::of(&None, None), Bucket::Address(Address::Unknown));
    }

    #[test]
    fn sessions_not_completed_within_the_grace_expire_and_completed_ones_stay() {
        let mut table = SessionTable::default();
        let caps = caps(10, 10);
        drop(admit(&mut table, "a", 1, &caps).unwrap());
        let (b, _) = admit(&mut table, "b", 1, &caps).unwrap();
        b.complete();
        drop(b);
        let expired = table.expire(Duration::ZERO, Duration::from_hours(1));
        assert_eq!(expired.len(), 1);
        assert!(!expired[0].is_completed());
        assert_eq!(table.len(), 1);
        assert_eq!(table.expire(Duration::ZERO, Duration::ZERO).len(), 1);
        assert_eq!(table.len(), 0);
    }
}
