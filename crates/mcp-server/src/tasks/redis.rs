//! A [`TaskStore`] in Redis (feature `tasks-redis`), so that a fleet of stateless servers
//! behind a load balancer shares its tasks.
//!
//! Each task is one hash, `<prefix><id>`, with two fields: `v`, the record's revision, and
//! `d`, the record as JSON. Creation and compare-and-set are Lua scripts, so each is one
//! atomic step on the Redis server whatever other servers do meanwhile. The key expires at
//! the record's `expires_ms` (`PEXPIREAT`), so Redis drops finished tasks by itself.
//!
//! The connection is a [`ConnectionManager`]: one multiplexed connection shared by every
//! request, re-established after Redis restarts or the network drops it.

use redis::Script;
use redis::aio::ConnectionManager;

use super::store::{StoreFuture, TaskRecord, TaskStore};
use crate::Error;

/// Creates the hash unless the key exists.
const CREATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'd', ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return 1
";

/// Replaces the hash if its revision is still the expected one.
const REPLACE: &str = r"
if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'd', ARGV[3])
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
return 1
";

/// Tasks kept in Redis, shared by every server that connects to the same one.
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_server::Error> {
/// use mcp_server::tasks::{RedisStore, Tasks};
///
/// let store = RedisStore::connect("redis://127.0.0.1:6379/").await?;
/// let server = mcp_server::Server::builder("fleet", "1.0")
///     .tasks(Tasks::new(store))
///     .build()?;
/// # let _ = server; Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    connection: ConnectionManager,
    prefix: String,
    create: Script,
    replace: Script,
}

mcp_types::debug_fields!(RedisStore { prefix });

fn backend(e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::TaskStore(Box::new(e))
}

impl RedisStore {
    /// Connects to the Redis at `url` (`redis://host:port/db`, `rediss://` with TLS is not
    /// compiled in); keys are named `mcp:task:<id>`.
    pub async fn connect(url: &str) -> Result<Self, Error> {
        let client = redis::Client::open(url).map_err(backend)?;
        let connection = ConnectionManager::new(client).await.map_err(backend)?;
        Ok(RedisStore {
            connection,
            prefix: "mcp:task:".to_owned(),
            create: Script::new(CREATE),
            replace: Script::new(REPLACE),
        })
    }

    /// Names keys `<prefix><id>` instead (to share one Redis between deployments).
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    fn key(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }

    /// Runs `script` (`CREATE` or `REPLACE`) on `record`'s key with the revision expected
    /// (for `REPLACE`), the record's revision, the record and its expiry; its answer.
    async fn write(
        &self,
        script: &Script,
        expected: Option<u64>,
        record: &TaskRecord,
    ) -> Result<i64, Error> {
        let data = encode(record)?;
        let mut connection = self.connection.clone();
        let mut invocation = script.key(self.key(&record.id));
        if let Some(expected) = expected {
            invocation.arg(expected);
        }
        invocation
            .arg(record.revision)
            .arg(data)
            .arg(record.expires_ms)
            .invoke_async(&mut connection)
            .await
            .map_err(backend)
    }
}

fn encode(record: &TaskRecord) -> Result<String, Error> {
    serde_json::to_string(record).map_err(backend)
}

impl TaskStore for RedisStore {
    fn create<'a>(&'a self, record: &'a TaskRecord) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let created = self.write(&self.create, None, record).await?;
            if created == 1 {
                Ok(())
            } else {
                Err(Error::TaskStore("the task id is taken".into()))
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let data: Option<String> = redis::cmd("HGET")
                .arg(self.key(id))
                .arg("d")
                .query_async(&mut connection)
                .await
                .map_err(backend)?;
            data.map(|d| serde_json::from_str(&d).map_err(backend))
                .transpose()
        })
    }

    fn replace<'a>(&'a self, expected: u64, record: &'a TaskRecord) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let replaced = self.write(&self.replace, Some(expected), record).await?;
            Ok(replaced == 1)
        })
    }

    fn is_shared(&self) -> bool {
        true
    }
}
