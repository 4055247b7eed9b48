//! The `requestState` key ring of a fleet in Redis (feature `state-keys-redis`): see
//! [`RedisStateKeys`].

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};

use crate::{Error, StateKeys};

/// Folds a due `next` into `current`, then reads the ring.
const READ: &str = r"
local next = redis.call('HGET', KEYS[1], 'next')
if next then
  local at = tonumber(redis.call('HGET', KEYS[1], 'at'))
  if at and at <= tonumber(ARGV[1]) then
    redis.call('HSET', KEYS[1], 'current', next)
    redis.call('HDEL', KEYS[1], 'next', 'at')
  end
end
return redis.call('HMGET', KEYS[1], 'current', 'next', 'at')
";

/// Starts a rotation: a pending `next` that is due becomes `current` first.
const ROTATE: &str = r"
local next = redis.call('HGET', KEYS[1], 'next')
if next then
  local at = tonumber(redis.call('HGET', KEYS[1], 'at'))
  if at and at <= tonumber(ARGV[1]) then
    redis.call('HSET', KEYS[1], 'current', next)
  else
    return 0
  end
end
redis.call('HSET', KEYS[1], 'next', ARGV[2], 'at', ARGV[3])
return 1
";

/// The `requestState` key ring of a fleet, kept in Redis (feature `state-keys-redis`), so
/// that every server seals and opens with the same keys and a rotation needs no restart.
///
/// The ring is one hash, `<prefix>` (default `mcp:state-keys`): `current`, the current key
/// (hex), and, while a rotation is under way, `next` (hex) and `at` (Unix milliseconds).
/// [`RedisStateKeys::rotate`] writes a new random `next` with `at` three refresh intervals
/// ahead. Each server reads the hash every [`interval`](RedisStateKeysBuilder::interval):
/// it stages `next` at once (accepted for opening) and rotates to it once `at` has come,
/// so state sealed under the new key by a server that rotated first opens on every other,
/// and state sealed under the old key keeps opening for the ring's overlap. The first
/// server of a fleet writes a random `current` if there is none (`HSETNX`, so two first
/// servers agree). Whoever reads the hash after `at` folds `next` into `current`.
///
/// **Trust.** The keys are in Redis in the clear: whoever can read the hash can open and
/// forge `requestState` (though not make a handler do more than its inputs allow). Give the
/// fleet a Redis of its own, or an ACL user limited to the prefix.
///
/// **Degraded mode.** A server that cannot reach Redis at start fails to start
/// ([`connect`](RedisStateKeysBuilder::connect) returns the error). Once running, while
/// Redis is unreachable it keeps the keys it has and logs at `warn` after each failed read:
/// a rotation started meanwhile reaches it once Redis is back, and until then state sealed
/// under the new key by other servers is refused here (fail closed), never accepted unread.
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_server::Error> {
/// use mcp_server::{RedisStateKeys, Server};
///
/// let keys = RedisStateKeys::builder("redis://127.0.0.1:6379/").connect().await?;
/// let server = Server::builder("fleet", "1.0").state_keys(keys.keys()).build()?;
/// // Later, from any server or an operator's tool: every server rotates, no restart.
/// keys.rotate().await?;
/// # let _ = server; Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisStateKeys {
    shared: Arc<Shared>,
}

struct Shared {
    connection: ConnectionManager,
    prefix: String,
    interval: Duration,
    keys: StateKeys,
    read: Script,
    rotate: Script,
}

mcp_types::debug_fields!(RedisStateKeys {});

/// Settings for [`RedisStateKeys`].
#[derive(Debug, Clone)]
pub struct RedisStateKeysBuilder {
    url: String,
    prefix: String,
    interval: Duration,
    overlap: Duration,
}

fn backend(e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::StateKeyStore(Box::new(e))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn hex_key(key: &[u8; 32]) -> String {
    key.iter().fold(String::with_capacity(64), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A key as the hash holds it; anything but 64 hex digits is refused.
fn parse_key(hex: &str) -> Result<[u8; 32], Error> {
    let invalid = || Error::InvalidStateKeys {
        reason: "a key in Redis is not 64 hex digits",
    };
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(invalid());
    }
    let mut key = [0u8; 32];
    for (byte, pair) in key.iter_mut().zip(hex.as_bytes().chunks_exact(2)) {
        let pair = std::str::from_utf8(pair).map_err(|_| invalid())?;
        *byte = u8::from_str_radix(pair, 16).map_err(|_| invalid())?;
    }
    Ok(key)
}

fn random_key() -> Result<[u8; 32], Error> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|_| Error::Random)?;
    Ok(key)
}

impl RedisStateKeys {
    /// Settings for the ring in the Redis at `url`.
    #[must_use]
    pub fn builder(url: impl Into<String>) -> RedisStateKeysBuilder {
        RedisStateKeysBuilder {
            url: url.into(),
            prefix: "mcp:state-keys".to_owned(),
            interval: Duration::from_secs(2),
            overlap: StateKeys::DEFAULT_OVERLAP,
        }
    }

    /// The ring this server seals and opens with: give it to
    /// [`ServerBuilder::state_keys`](crate::ServerBuilder::state_keys). It follows the
    /// fleet's rotations for as long as it, or this handle, is held.
    #[must_use]
    pub fn keys(&self) -> StateKeys {
        self.shared.keys.clone()
    }

    /// Starts a rotation of the whole fleet to a new random key: every server stages it
    /// within one refresh interval and makes it current after three. A rotation already
    /// under way is not interrupted: this returns `false` and changes nothing.
    ///
    /// # Errors
    /// [`Error::StateKeyStore`] when Redis cannot be reached; [`Error::Random`] when the
    /// random source fails.
    pub async fn rotate(&self) -> Result<bool, Error> {
        let key = random_key()?;
        let shared = &self.shared;
        let now = now_ms();
        let delay =
            u64::try_from(shared.interval.saturating_mul(3).as_millis()).unwrap_or(u64::MAX);
        let started: i64 = shared
            .rotate
            .key(&shared.prefix)
            .arg(now)
            .arg(hex_key(&key))
            .arg(now.saturating_add(delay))
            .invoke_async(&mut shared.connection.clone())
            .await
            .map_err(backend)?;
        if started == 1 {
            shared.refresh().await?;
        }
        Ok(started == 1)
    }
}

impl Shared {
    /// Reads the hash and brings the local ring in line with it.
    async fn refresh(&self) -> Result<(), Error> {
        let now = now_ms();
        let (current, next, at): (Option<String>, Option<String>, Option<u64>) = self
            .read
            .key(&self.prefix)
            .arg(now)
            .invoke_async(&mut self.connection.clone())
            .await
            .map_err(backend)?;
        let current = current.ok_or(Error::InvalidStateKeys {
            reason: "the key ring in Redis has no current key",
        })?;
        self.keys.rotate(parse_key(&current)?)?;
        if let Some(next) = next {
            let next = parse_key(&next)?;
            if at.is_some_and(|at| at <= now) {
                self.keys.rotate(next)?;
            } else {
                self.keys.stage(next)?;
            }
        }
        Ok(())
    }
}

impl RedisStateKeysBuilder {
    /// The hash holding the ring (default `mcp:state-keys`); servers sharing it share keys.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How often each server reads the ring (default 2 s, at least 10 ms); a rotation
    /// takes three of these to become current.
    #[must_use]
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval.max(Duration::from_millis(10));
        self
    }

    /// How long a replaced key still opens state (default
    /// [`StateKeys::DEFAULT_OVERLAP`]); see [`StateKeys::with_overlap`].
    #[must_use]
    pub fn overlap(mut self, overlap: Duration) -> Self {
        self.overlap = overlap;
        self
    }

    /// Connects, reads the fleet's ring (writing a random first key if there is none) and
    /// starts following it.
    ///
    /// # Errors
    /// [`Error::StateKeyStore`] when Redis cannot be reached; [`Error::InvalidStateKeys`]
    /// when the hash holds something that is not a key.
    pub async fn connect(self) -> Result<RedisStateKeys, Error> {
        let client = redis::Client::open(self.url.as_str()).map_err(backend)?;
        let mut connection = ConnectionManager::new(client).await.map_err(backend)?;
        let first = random_key()?;
        let _: bool = connection
            .hset_nx(&self.prefix, "current", hex_key(&first))
            .await
            .map_err(backend)?;
        let shared = Arc::new(Shared {
            connection,
            prefix: self.prefix,
            interval: self.interval,
            // Replaced by the fleet's current key at the first refresh below.
            keys: StateKeys::new(first).with_overlap(self.overlap),
            read: Script::new(READ),
            rotate: Script::new(ROTATE),
        });
        shared.refresh().await?;
        // The key this server drew is forgotten unless the fleet took it.
        shared.keys.drop_previous();
        shared.refresh().await?;
        // The refresher follows the fleet for as long as a server holds the ring or a
        // handle can rotate it.
        let refresher = Arc::clone(&shared);
        tokio::spawn(async move {
            let mut failing = false;
            loop {
                tokio::time::sleep(refresher.interval).await;
                if Arc::strong_count(&refresher) == 1 && !refresher.keys.is_shared() {
                    return;
                }
                match refresher.refresh().await {
                    Ok(()) if failing => {
                        failing = false;
                        tracing::info!("the requestState key ring in Redis is readable again");
                    }
                    Ok(()) => {}
                    Err(e) => {
                        failing = true;
                        tracing::warn!(error = %e, "cannot read the requestState key ring in Redis; keeping the keys held");
                    }
                }
            }
        });
        Ok(RedisStateKeys { shared })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_as_hex_and_anything_else_is_refused() {
        let key = [0xab; 32];
        assert_eq!(parse_key(&hex_key(&key)).unwrap(), key);
        assert!(parse_key("ab").is_err());
        assert!(parse_key(&"zz".repeat(32)).is_err());
        assert!(parse_key(&"é".repeat(32)).is_err());
    }
}
