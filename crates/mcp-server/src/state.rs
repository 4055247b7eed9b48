//! `requestState`: sealed, bound and expiring
//! (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>).
//!
//! The state a handler carries across an `input_required` round trip comes back from the
//! client, so it is attacker-controlled, and it holds what the handler chose to keep and
//! every answer of earlier rounds, which the client need not be able to read. It is sealed
//! with XChaCha20-Poly1305 (encrypted and authenticated) under the current key of a
//! [`StateKeys`] ring, with a random 192-bit nonce per seal, and bound to the method, the
//! tool/prompt/resource name, a digest of the arguments (keys sorted, so a client that
//! re-serializes them in another order still matches) and the authenticated principal when
//! the transport authenticated the request: the binding is the AEAD's associated data, so
//! it is never sent but must be the same to open. The expiry is inside the sealed payload.
//! Anything that fails to open is refused with -32602: malformed, tampered, sealed for
//! another request or principal, expired, or sealed under a key the ring does not accept.
//!
//! Wire form: `base64url(version ‖ key id ‖ nonce ‖ ciphertext ‖ tag)`: one version byte
//! (1), the 4-byte id of the key that sealed it (so opening picks the key without trying
//! each), the 24-byte nonce, then the payload `{"exp": unix seconds, "app": <handler
//! state>}` encrypted, and the 16-byte tag.

use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{Key, Tag, XChaCha20Poly1305, XNonce};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::Error;

/// The format of the sealed form; another value is refused.
const VERSION: u8 = 1;
const KEY_ID_LEN: usize = 4;
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;
/// Version, key id and nonce.
const HEADER_LEN: usize = 1 + KEY_ID_LEN + NONCE_LEN;
/// How many retired keys a ring remembers. Rotations faster than the overlap would
/// otherwise grow it without bound; past this the oldest is forgotten early, which only
/// refuses state sealed under it (fail closed).
const MAX_PREVIOUS: usize = 8;

/// The keys that seal `requestState`: one current key that seals, and the keys it replaced,
/// each still accepted for opening for an overlap after its rotation, so that state handed
/// out just before a rotation can still come back.
///
/// A cheap-to-clone handle: every clone sees the same ring, so keep one to
/// [`rotate`](Self::rotate) the key of a running server (give another to
/// [`ServerBuilder::state_keys`](crate::ServerBuilder::state_keys), or take the server's
/// with [`Server::state_keys`](crate::Server::state_keys)). A fleet of servers behind a load
/// balancer gives each the same keys (and rotates each to the same next key), so any of
/// them can take a retry. A key's id is derived from the key, so servers given the same
/// key agree on its id without configuring one.
///
/// ```
/// use std::time::Duration;
/// use mcp_server::{Server, StateKeys};
///
/// let keys = StateKeys::new([7; 32]).with_overlap(Duration::from_mins(30));
/// let server = Server::builder("demo", "1.0.0").state_keys(keys.clone()).build().unwrap();
/// // Later, without a restart: new state is sealed under the new key, and state sealed
/// // under the old one is still accepted for 30 minutes.
/// keys.rotate([8; 32]).unwrap();
/// assert_eq!(server.state_keys().current_id(), keys.current_id());
/// ```
#[derive(Clone)]
pub struct StateKeys {
    ring: Arc<RwLock<Ring>>,
}

struct Ring {
    current: SealKey,
    /// Retired keys, oldest first.
    previous: Vec<Retired>,
    overlap: Duration,
}

#[derive(Clone, PartialEq, Eq)]
struct SealKey {
    id: [u8; KEY_ID_LEN],
    key: [u8; 32],
}

struct Retired {
    key: SealKey,
    /// The last second (Unix time) at which it still opens state.
    until: u64,
}

impl std::fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Key ids only: they are public (every sealed state carries one), the keys are not.
        let ring = self.read();
        f.debug_struct("StateKeys")
            .field("current", &u32::from_be_bytes(ring.current.id))
            .field(
                "previous",
                &ring
                    .previous
                    .iter()
                    .map(|r| u32::from_be_bytes(r.key.id))
                    .collect::<Vec<_>>(),
            )
            .field("overlap", &ring.overlap)
            .finish()
    }
}

/// Where a key stands in a ring.
enum Place {
    Current,
    /// Among the previous keys, at this index.
    Previous(usize),
    New,
}

impl Ring {
    /// Where `next` stands; an error when another key of the ring has its id (opening could
    /// not tell the two apart).
    fn place(&self, next: &SealKey) -> Result<Place, Error> {
        let clash = Error::InvalidStateKeys {
            reason: "another key in the ring has the same id",
        };
        if self.current == *next {
            return Ok(Place::Current);
        }
        if self.current.id == next.id {
            return Err(clash);
        }
        match self.previous.iter().position(|r| r.key.id == next.id) {
            Some(at) if self.previous[at].key != *next => Err(clash),
            Some(at) => Ok(Place::Previous(at)),
            None => Ok(Place::New),
        }
    }

    /// Keeps `key` opening state for the overlap from `now`, forgetting keys past theirs
    /// and the oldest past [`MAX_PREVIOUS`].
    fn retire(&mut self, key: SealKey, now: u64) {
        let until = now.saturating_add(self.overlap.as_secs());
        self.previous.push(Retired { key, until });
        self.previous.retain(|r| r.until >= now);
        if self.previous.len() > MAX_PREVIOUS {
            let excess = self.previous.len() - MAX_PREVIOUS;
            self.previous.drain(..excess);
        }
    }
}

impl SealKey {
    fn new(key: [u8; 32]) -> Self {
        // Domain-separated, so the id says nothing about the key that could serve elsewhere.
        let digest = Sha256::new()
            .chain_update(b"mcp-server requestState key id\0")
            .chain_update(key)
            .finalize();
        let mut id = [0u8; KEY_ID_LEN];
        id.copy_from_slice(&digest[..KEY_ID_LEN]);
        SealKey { id, key }
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(&Key::from(self.key))
    }
}

impl StateKeys {
    /// How long a replaced key still opens state by default: longer than the lifetime of
    /// the state it sealed (10 minutes), with room for clocks that differ across a fleet.
    pub const DEFAULT_OVERLAP: Duration = Duration::from_mins(15);

    /// A ring whose current key is `key`, with no previous key.
    #[must_use]
    pub fn new(key: [u8; 32]) -> Self {
        StateKeys {
            ring: Arc::new(RwLock::new(Ring {
                current: SealKey::new(key),
                previous: Vec::new(),
                overlap: Self::DEFAULT_OVERLAP,
            })),
        }
    }

    /// A ring with a key drawn from the operating system's random source (what a server
    /// uses when given no key).
    ///
    /// # Errors
    /// [`Error::Random`] when the random source fails.
    pub fn random() -> Result<Self, Error> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|_| Error::Random)?;
        Ok(StateKeys::new(key))
    }

    /// Sets how long a key replaced by [`rotate`](Self::rotate) still opens state (default
    /// [`DEFAULT_OVERLAP`](Self::DEFAULT_OVERLAP)). It should be at least the state's
    /// lifetime, or state handed out just before a rotation expires early;
    /// [`ServerBuilder::build`](crate::ServerBuilder::build) refuses a shorter one. Applies
    /// to later rotations, and to every clone of this handle.
    #[must_use]
    pub fn with_overlap(self, overlap: Duration) -> Self {
        self.write().overlap = overlap;
        self
    }

    /// The overlap of [`with_overlap`](Self::with_overlap).
    #[must_use]
    pub fn overlap(&self) -> Duration {
        self.read().overlap
    }

    /// The id of the current key, as carried in the state it seals. Servers sharing keys
    /// show the same id.
    #[must_use]
    pub fn current_id(&self) -> u32 {
        u32::from_be_bytes(self.read().current.id)
    }

    /// Makes `key` the current key: state is sealed under it from now on, on every server
    /// holding a clone of this handle. The key it replaces keeps opening state for the
    /// overlap, then is refused. Rotating to the current key changes nothing; rotating back
    /// to a previous key makes it current again.
    ///
    /// # Errors
    /// [`Error::InvalidStateKeys`] when `key` is another key with the id of a key in the
    /// ring (ids are 32 bits of a hash of the key, so this is a chance of about one in
    /// four billion): opening could not tell the two apart. The ring is unchanged.
    pub fn rotate(&self, key: [u8; 32]) -> Result<(), Error> {
        self.rotate_at(key, now())
    }

    fn rotate_at(&self, key: [u8; 32], now: u64) -> Result<(), Error> {
        let next = SealKey::new(key);
        let mut ring = self.write();
        match ring.place(&next)? {
            Place::Current => return Ok(()),
            Place::Previous(at) => {
                ring.previous.remove(at);
            }
            Place::New => {}
        }
        let replaced = std::mem::replace(&mut ring.current, next);
        ring.retire(replaced, now);
        Ok(())
    }

    /// Accepts `key` for opening state before it becomes current, for the overlap: the
    /// first step of a rotation across a fleet. Stage the next key on every server, then
    /// [`rotate`](Self::rotate) each to it: state sealed by a server that rotated first then
    /// opens on those that have not rotated yet. Staging the current key changes nothing.
    ///
    /// # Errors
    /// [`Error::InvalidStateKeys`] as for [`rotate`](Self::rotate).
    pub fn stage(&self, key: [u8; 32]) -> Result<(), Error> {
        let next = SealKey::new(key);
        let now = now();
        let mut ring = self.write();
        match ring.place(&next)? {
            Place::Current => {}
            Place::Previous(at) => {
                let until = now.saturating_add(ring.overlap.as_secs());
                let staged = &mut ring.previous[at];
                staged.until = staged.until.max(until);
            }
            Place::New => ring.retire(next, now),
        }
        Ok(())
    }

    /// Forgets every previous key at once, so that only state sealed under the current key
    /// opens: for a key that may have leaked, rotate away from it and then call this.
    pub fn drop_previous(&self) {
        self.write().previous.clear();
    }

    /// Whether another handle than this one shares the ring.
    #[cfg(feature = "state-keys-redis")]
    pub(crate) fn is_shared(&self) -> bool {
        Arc::strong_count(&self.ring) > 1
    }

    fn read(&self) -> RwLockReadGuard<'_, Ring> {
        self.ring.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Ring> {
        self.ring.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Seals `app` (the handler's state) for `binding`, valid for `ttl`.
    pub(crate) fn seal(
        &self,
        binding: &Binding<'_>,
        app: &Value,
        ttl: Duration,
    ) -> Result<String, SealError> {
        // A predictable or repeated nonce would reuse the key stream, so nothing is sealed
        // without a fresh one from the OS.
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|_| SealError::Random)?;
        self.seal_with(binding, app, ttl, now(), nonce)
    }

    fn seal_with(
        &self,
        binding: &Binding<'_>,
        app: &Value,
        ttl: Duration,
        now: u64,
        nonce: [u8; NONCE_LEN],
    ) -> Result<String, SealError> {
        let exp = now.saturating_add(ttl.as_secs());
        let payload = serde_json::json!({ "exp": exp, "app": app }).to_string();
        let key = self.read().current.clone();
        let mut sealed = Vec::with_capacity(HEADER_LEN + payload.len() + TAG_LEN);
        sealed.push(VERSION);
        sealed.extend_from_slice(&key.id);
        sealed.extend_from_slice(&nonce);
        let ad = associated_data(&sealed, binding);
        sealed.extend_from_slice(payload.as_bytes());
        let tag = key
            .cipher()
            .encrypt_inout_detached(
                &XNonce::from(nonce),
                &ad,
                (&mut sealed[HEADER_LEN..]).into(),
            )
            .map_err(|_| SealError::TooLong)?;
        sealed.extend_from_slice(&tag);
        Ok(URL_SAFE_NO_PAD.encode(sealed))
    }

    /// Opens a state the client sent back and returns the handler's state.
    pub(crate) fn open(&self, binding: &Binding<'_>, sealed: &str) -> Result<Value, StateError> {
        self.open_at(binding, sealed, now())
    }

    fn open_at(&self, binding: &Binding<'_>, sealed: &str, now: u64) -> Result<Value, StateError> {
        let mut bytes = URL_SAFE_NO_PAD
            .decode(sealed)
            .map_err(|_| StateError::Malformed)?;
        let text_len = bytes
            .len()
            .checked_sub(HEADER_LEN + TAG_LEN)
            .ok_or(StateError::Malformed)?;
        if bytes[0] != VERSION {
            return Err(StateError::Malformed);
        }
        let id = &bytes[1..=KEY_ID_LEN];
        let key = {
            let ring = self.read();
            if ring.current.id == id {
                ring.current.clone()
            } else {
                ring.previous
                    .iter()
                    .find(|r| r.key.id == id && now <= r.until)
                    .map(|r| r.key.clone())
                    .ok_or(StateError::UnknownKey)?
            }
        };
        let ad = associated_data(&bytes[..HEADER_LEN], binding);
        let (header, rest) = bytes.split_at_mut(HEADER_LEN);
        let (text, tag) = rest.split_at_mut(text_len);
        let nonce =
            XNonce::try_from(&header[1 + KEY_ID_LEN..]).map_err(|_| StateError::Malformed)?;
        let tag = Tag::try_from(&*tag).map_err(|_| StateError::Malformed)?;
        // The tag is checked (in constant time, by the AEAD) before any byte is decrypted
        // or returned: a wrong key, binding or byte all end here.
        key.cipher()
            .decrypt_inout_detached(&nonce, &ad, (&mut *text).into(), &tag)
            .map_err(|_| StateError::Forged)?;
        let value: Value = serde_json::from_slice(text).map_err(|_| StateError::Malformed)?;
        let exp = value
            .get("exp")
            .and_then(Value::as_u64)
            .ok_or(StateError::Malformed)?;
        if now > exp {
            return Err(StateError::Expired);
        }
        Ok(value.get("app").cloned().unwrap_or(Value::Null))
    }
}

/// Why a state could not be sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SealError {
    /// The OS's random source gave no nonce.
    #[error("the random source gave no nonce")]
    Random,
    /// The payload is longer than the cipher can seal (256 GiB).
    #[error("the state is too long to seal")]
    TooLong,
}

/// What the state is bound to.
pub(crate) struct Binding<'a> {
    pub(crate) method: &'a str,
    pub(crate) name: &'a str,
    pub(crate) arguments: Option<&'a Value>,
    /// The [`id`](mcp_jsonrpc::Principal::id) of the principal that made the request, when
    /// the transport authenticated it.
    pub(crate) principal: Option<&'a str>,
}

/// Why a `requestState` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StateError {
    /// Not the sealed form: bad base64url, too short, another version, or a payload that
    /// is not what this module seals.
    Malformed,
    /// The tag does not verify: tampered, or sealed for another request or principal.
    Forged,
    /// Past its expiry.
    Expired,
    /// Sealed under a key the ring does not hold, or one retired longer than the overlap.
    UnknownKey,
}

impl StateError {
    pub(crate) fn message(self) -> &'static str {
        match self {
            StateError::Malformed => "requestState is malformed",
            StateError::Forged => "requestState does not belong to this request",
            StateError::Expired => "requestState has expired",
            StateError::UnknownKey => "requestState was sealed under a key no longer accepted",
        }
    }
}

/// The AEAD's associated data: the header (so the version and key id cannot be changed)
/// and the binding, every variable-length part prefixed by its length so that no two
/// bindings give the same bytes.
fn associated_data(header: &[u8], binding: &Binding<'_>) -> Vec<u8> {
    fn field(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
        out.extend_from_slice(bytes);
    }
    let mut ad = Vec::with_capacity(128);
    ad.extend_from_slice(header);
    field(&mut ad, binding.method.as_bytes());
    field(&mut ad, binding.name.as_bytes());
    ad.extend_from_slice(&arguments_digest(binding.arguments));
    match binding.principal {
        None => ad.push(0),
        Some(principal) => {
            ad.push(1);
            field(&mut ad, principal.as_bytes());
        }
    }
    ad
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// SHA-256 of the arguments with object keys sorted at every level.
fn arguments_digest(arguments: Option<&Value>) -> [u8; 32] {
    fn canonical(value: &Value, out: &mut Vec<u8>) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push(b'{');
                for key in keys {
                    out.extend_from_slice(Value::String(key.clone()).to_string().as_bytes());
                    out.push(b':');
                    canonical(&map[key], out);
                    out.push(b',');
                }
                out.push(b'}');
            }
            Value::Array(items) => {
                out.push(b'[');
                for item in items {
                    canonical(item, out);
                    out.push(b',');
                }
                out.push(b']');
            }
            other => out.extend_from_slice(other.to_string().as_bytes()),
        }
    }
    let mut bytes = Vec::new();
    if let Some(arguments) = arguments {
        canonical(arguments, &mut bytes);
    }
    Sha256::digest(&bytes).into()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use serde_json::{Value, json};

    use super::{Binding, HEADER_LEN, KEY_ID_LEN, NONCE_LEN, StateError, StateKeys};

    const T0: u64 = 1_000_000;

    fn seal_at(keys: &StateKeys, binding: &Binding<'_>, app: &Value, ttl: u64, now: u64) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).unwrap();
        keys.seal_with(binding, app, Duration::from_secs(ttl), now, nonce)
            .unwrap()
    }

    fn book(args: &Value) -> Binding<'_> {
        Binding {
            method: "tools/call",
            name: "book",
            arguments: Some(args),
            principal: None,
        }
    }

    #[test]
    fn sealed_state_hides_the_handler_state_and_the_answers() {
        let keys = StateKeys::new([7; 32]);
        let args = json!({"city": "Oslo"});
        let marker = "PLAINTEXT-MARKER-q7Zx";
        let app = json!({"h": {"note": marker}, "a": {"when": {"action": "accept",
            "content": {"date": format!("{marker}-answer")}}}});
        let sealed = keys
            .seal(&book(&args), &app, Duration::from_mins(1))
            .unwrap();
        assert!(!sealed.contains(marker));
        assert!(!sealed.contains('.'), "one base64url token");
        let bytes = URL_SAFE_NO_PAD.decode(&sealed).unwrap();
        let readable = String::from_utf8_lossy(&bytes);
        for plain in [marker, "answer", "\"exp\"", "\"app\"", "accept", "{\""] {
            assert!(
                !readable.contains(plain),
                "{plain} readable in {readable:?}"
            );
        }
        // Nor in base64 at any alignment: the marker base64-encoded after 0, 1 and 2 other
        // bytes, less the characters that straddle its ends, is absent from the token.
        for pad in ["", "x", "xy"] {
            let encoded = URL_SAFE_NO_PAD.encode(format!("{pad}{marker}"));
            assert!(!sealed.contains(&encoded[4..encoded.len() - 4]), "{pad:?}");
        }
        // A fresh nonce each time: the same state sealed twice is two different tokens.
        let again = keys
            .seal(&book(&args), &app, Duration::from_mins(1))
            .unwrap();
        assert_ne!(sealed, again);
        assert_eq!(keys.open(&book(&args), &sealed), Ok(app.clone()));
        assert_eq!(keys.open(&book(&args), &again), Ok(app));
    }

    #[test]
    fn sealed_state_opens_only_for_its_binding_and_before_expiry() {
        let keys = StateKeys::new([7; 32]);
        let args = json!({"b": 1, "a": [1, {"y": 2, "x": 1}]});
        let binding = book(&args);
        let sealed = keys
            .seal(&binding, &json!({"step": 2}), Duration::from_mins(1))
            .unwrap();

        assert_eq!(keys.open(&binding, &sealed), Ok(json!({"step": 2})));
        // The same arguments in another key order still match.
        let reordered = json!({"a": [1, {"x": 1, "y": 2}], "b": 1});
        assert_eq!(
            keys.open(&book(&reordered), &sealed),
            Ok(json!({"step": 2}))
        );

        let other_args = json!({"b": 2, "a": [1, {"y": 2, "x": 1}]});
        let cases = [
            book(&other_args),
            Binding {
                arguments: None,
                ..book(&args)
            },
            Binding {
                name: "other",
                ..book(&args)
            },
            Binding {
                method: "prompts/get",
                ..book(&args)
            },
            // The length prefixes keep a byte from moving between method and name.
            Binding {
                method: "tools/cal",
                name: "lbook",
                ..book(&args)
            },
            // The same request by an authenticated principal: unbound state is not theirs.
            Binding {
                principal: Some("https://as.example\nalice"),
                ..book(&args)
            },
        ];
        for other in &cases {
            assert_eq!(keys.open(other, &sealed), Err(StateError::Forged));
        }

        // Every single byte changed, header, ciphertext or tag, is refused.
        let bytes = URL_SAFE_NO_PAD.decode(&sealed).unwrap();
        for at in 0..bytes.len() {
            let mut tampered = bytes.clone();
            tampered[at] ^= 0x01;
            let tampered = URL_SAFE_NO_PAD.encode(&tampered);
            assert!(keys.open(&binding, &tampered).is_err(), "byte {at}");
        }
        // Cut short or extended.
        for cut in [
            &bytes[..bytes.len() - 1],
            &bytes[..HEADER_LEN + 16],
            &bytes[..3],
        ] {
            assert!(keys.open(&binding, &URL_SAFE_NO_PAD.encode(cut)).is_err());
        }
        assert!(keys.open(&binding, &format!("{sealed}A")).is_err());
        assert!(keys.open(&binding, &format!("{sealed}AAAA")).is_err());
        for garbage in ["", ".", "no-dot", "!!.!!", "eyJ9.AAAA", "AQ"] {
            assert_eq!(
                keys.open(&binding, garbage),
                Err(StateError::Malformed),
                "{garbage}"
            );
        }

        let sealed_at = seal_at(&keys, &binding, &json!(null), 30, T0);
        assert_eq!(keys.open_at(&binding, &sealed_at, T0 + 30), Ok(json!(null)));
        assert_eq!(
            keys.open_at(&binding, &sealed_at, T0 + 31),
            Err(StateError::Expired)
        );
    }

    #[test]
    fn state_sealed_for_one_principal_is_refused_for_another() {
        let keys = StateKeys::new([7; 32]);
        let args = json!({"path": "/tmp/a"});
        let binding = |principal| Binding {
            method: "tools/call",
            name: "delete",
            arguments: Some(&args),
            principal,
        };
        let alice = binding(Some("https://as.example\nalice"));
        let sealed = keys
            .seal(&alice, &json!({"confirmed": true}), Duration::from_mins(1))
            .unwrap();
        assert_eq!(keys.open(&alice, &sealed), Ok(json!({"confirmed": true})));
        for other in [
            Some("https://as.example\nbob"),
            Some("https://as.example\nalic"),
            Some("https://other.example\nalice"),
            Some(""),
            None,
        ] {
            assert_eq!(
                keys.open(&binding(other), &sealed),
                Err(StateError::Forged),
                "{other:?}"
            );
        }
    }

    #[test]
    fn a_rotated_key_opens_state_until_its_overlap_ends() {
        let keys = StateKeys::new([1; 32]).with_overlap(Duration::from_mins(15));
        let args = json!({});
        let binding = book(&args);
        let old_id = keys.current_id();
        let old = seal_at(&keys, &binding, &json!("old"), 3_600, T0);

        keys.rotate_at([2; 32], T0).unwrap();
        assert_ne!(keys.current_id(), old_id);
        // New state is sealed under the new key, and names it.
        let new = seal_at(&keys, &binding, &json!("new"), 3_600, T0);
        let id = |token: &str| {
            let bytes = URL_SAFE_NO_PAD.decode(token).unwrap();
            u32::from_be_bytes(bytes[1..=KEY_ID_LEN].try_into().unwrap())
        };
        assert_eq!(id(&old), old_id);
        assert_eq!(id(&new), keys.current_id());

        // The old key: at the last second of its overlap, and one second past it.
        assert_eq!(keys.open_at(&binding, &old, T0 + 900), Ok(json!("old")));
        assert_eq!(
            keys.open_at(&binding, &old, T0 + 901),
            Err(StateError::UnknownKey)
        );
        assert_eq!(keys.open_at(&binding, &new, T0 + 901), Ok(json!("new")));

        // A clone is the same ring: a rotation through it is seen by every holder.
        let elsewhere = keys.clone();
        elsewhere.rotate_at([3; 32], T0 + 10).unwrap();
        assert_eq!(keys.current_id(), elsewhere.current_id());
        assert_eq!(keys.open_at(&binding, &new, T0 + 20), Ok(json!("new")));

        // Rotating back to a previous key makes it current again; to the current key, nothing.
        keys.rotate_at([2; 32], T0 + 30).unwrap();
        assert_eq!(id(&new), keys.current_id());
        keys.rotate_at([2; 32], T0 + 40).unwrap();
        assert_eq!(id(&new), keys.current_id());

        // Dropping the previous keys refuses their state at once.
        keys.drop_previous();
        assert_eq!(
            keys.open_at(&binding, &old, T0 + 50),
            Err(StateError::UnknownKey)
        );
        assert_eq!(keys.open_at(&binding, &new, T0 + 50), Ok(json!("new")));
    }

    #[test]
    fn a_staged_key_opens_state_before_it_seals_and_a_clash_is_refused() {
        let now = super::now();
        let (early, late) = (StateKeys::new([1; 32]), StateKeys::new([1; 32]));
        let args = json!({});
        let binding = book(&args);
        // One server rotated first; the other has only staged the key.
        early.rotate([2; 32]).unwrap();
        let sealed = seal_at(&early, &binding, &json!("next"), 60, now);
        assert_eq!(
            late.open_at(&binding, &sealed, now),
            Err(StateError::UnknownKey),
            "not yet staged"
        );
        late.stage([2; 32]).unwrap();
        assert_eq!(late.open_at(&binding, &sealed, now), Ok(json!("next")));
        // Staging does not seal: the late server still seals under its current key.
        let current = late.current_id();
        assert_eq!(late.current_id(), StateKeys::new([1; 32]).current_id());
        late.stage([2; 32]).unwrap();
        late.stage([1; 32]).unwrap();
        assert_eq!(
            late.current_id(),
            current,
            "staging twice, or the current key, changes nothing"
        );
        // Rotating to the staged key makes it current; the old one still opens.
        let old = seal_at(&late, &binding, &json!("old"), 60, now);
        late.rotate([2; 32]).unwrap();
        assert_eq!(late.current_id(), early.current_id());
        assert_eq!(late.open_at(&binding, &old, now), Ok(json!("old")));
    }

    #[test]
    fn state_under_an_unknown_key_id_is_refused() {
        let keys = StateKeys::new([1; 32]);
        let stranger = StateKeys::new([9; 32]);
        let args = json!({});
        let binding = book(&args);
        let foreign = seal_at(&stranger, &binding, &json!(1), 60, T0);
        assert_eq!(
            keys.open_at(&binding, &foreign, T0),
            Err(StateError::UnknownKey)
        );
        // A genuine state whose key id is changed to one the ring does not hold.
        let ours = seal_at(&keys, &binding, &json!(1), 60, T0);
        let mut bytes = URL_SAFE_NO_PAD.decode(&ours).unwrap();
        bytes[1] ^= 0xff;
        assert_eq!(
            keys.open_at(&binding, &URL_SAFE_NO_PAD.encode(&bytes), T0),
            Err(StateError::UnknownKey)
        );
        // Another version is not read at all.
        let mut bytes = URL_SAFE_NO_PAD.decode(&ours).unwrap();
        bytes[0] = 2;
        assert_eq!(
            keys.open_at(&binding, &URL_SAFE_NO_PAD.encode(&bytes), T0),
            Err(StateError::Malformed)
        );
    }

    #[test]
    fn the_ring_stays_bounded_and_forgets_expired_keys() {
        let keys = StateKeys::new([0; 32]).with_overlap(Duration::from_secs(100));
        let args = json!({});
        let binding = book(&args);
        let first = seal_at(&keys, &binding, &json!(0), 10_000, T0);
        for n in 1..=u8::try_from(super::MAX_PREVIOUS).unwrap() {
            keys.rotate_at([n; 32], T0).unwrap();
        }
        // Exactly MAX_PREVIOUS retired keys: the first still opens.
        assert_eq!(keys.open_at(&binding, &first, T0), Ok(json!(0)));
        // One more pushes the oldest out before its overlap ends.
        keys.rotate_at([100; 32], T0).unwrap();
        assert_eq!(
            keys.open_at(&binding, &first, T0),
            Err(StateError::UnknownKey)
        );
        assert_eq!(keys.read().previous.len(), super::MAX_PREVIOUS);
        // A rotation after the overlap drops the keys it outlived.
        keys.rotate_at([101; 32], T0 + 101).unwrap();
        assert_eq!(keys.read().previous.len(), 1);
    }
}
