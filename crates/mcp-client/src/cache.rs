//! A cache of results that carry `ttlMs` and `cacheScope`
//! (<https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching>).
//!
//! A result is kept for `ttlMs` after it arrives (0 means not at all). `private` entries
//! are keyed by the authorization context in use, so a change of credentials never serves
//! another principal's result; `public` ones are shared. `input_required` results and the
//! results of retries are never stored. Change notifications from a subscription evict
//! what they make stale. The cache is bounded: past its capacity, expired entries go
//! first, then the ones closest to expiry.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;

use crate::listen::ListenEvent;

/// How many results the cache holds at most.
const CAPACITY: usize = 256;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    method: &'static str,
    /// The cursor of a list page, or the URI of a read.
    target: String,
    /// `None` for public entries; the authorization context for private ones.
    context: Option<String>,
}

#[derive(Debug)]
struct Entry {
    expires: Instant,
    raw: Box<RawValue>,
}

/// The cache hints a result carried.
#[derive(serde::Deserialize)]
struct Hints {
    #[serde(rename = "ttlMs")]
    ttl_ms: Option<u64>,
    #[serde(rename = "cacheScope")]
    cache_scope: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: Mutex<HashMap<Key, Entry>>,
}

impl Cache {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A fresh stored result for `method` and `target`, in `context` or shared.
    pub(crate) fn get(
        &self,
        method: &'static str,
        target: &str,
        context: &str,
    ) -> Option<Box<RawValue>> {
        let now = Instant::now();
        let entries = self.lock();
        [None, Some(context.to_owned())]
            .into_iter()
            .find_map(|context| {
                let key = Key {
                    method,
                    target: target.to_owned(),
                    context,
                };
                entries
                    .get(&key)
                    .filter(|e| e.expires > now)
                    .map(|e| e.raw.clone())
            })
    }

    /// Stores a complete result if its hints allow.
    pub(crate) fn put(&self, method: &'static str, target: &str, context: &str, raw: &RawValue) {
        let Ok(hints) = serde_json::from_str::<Hints>(raw.get()) else {
            return;
        };
        let Some(ttl) = hints.ttl_ms.filter(|&ms| ms > 0) else {
            return;
        };
        let context = match hints.cache_scope.as_deref() {
            Some("public") => None,
            // Private, or unknown: only within this authorization context.
            _ => Some(context.to_owned()),
        };
        let now = Instant::now();
        let mut entries = self.lock();
        if entries.len() >= CAPACITY {
            entries.retain(|_, e| e.expires > now);
            if entries.len() >= CAPACITY
                && let Some(soonest) = entries
                    .iter()
                    .min_by_key(|(_, e)| e.expires)
                    .map(|(k, _)| k.clone())
            {
                entries.remove(&soonest);
            }
        }
        entries.insert(
            Key {
                method,
                target: target.to_owned(),
                context,
            },
            Entry {
                expires: now + Duration::from_millis(ttl),
                raw: raw.to_owned(),
            },
        );
    }

    /// Evicts what a change notification makes stale.
    pub(crate) fn invalidate(&self, event: &ListenEvent) {
        use mcp_types::method;
        let mut entries = self.lock();
        match event {
            ListenEvent::ToolsListChanged => entries.retain(|k, _| k.method != method::TOOLS_LIST),
            ListenEvent::PromptsListChanged => {
                entries.retain(|k, _| k.method != method::PROMPTS_LIST);
            }
            ListenEvent::ResourcesListChanged => entries.retain(|k, _| {
                k.method != method::RESOURCES_LIST && k.method != method::RESOURCES_TEMPLATES_LIST
            }),
            ListenEvent::ResourceUpdated(uri) => {
                entries.retain(|k, _| {
                    !(k.method == method::RESOURCES_READ && k.target.starts_with(uri.as_str()))
                });
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::to_raw_value;

    use super::Cache;
    use crate::listen::ListenEvent;

    #[test]
    fn hints_decide_what_is_kept_and_for_whom() {
        let cache = Cache::default();
        let public = to_raw_value(
            &serde_json::json!({"ttlMs": 60_000, "cacheScope": "public", "tools": []}),
        )
        .unwrap();
        let private = to_raw_value(
            &serde_json::json!({"ttlMs": 60_000, "cacheScope": "private", "contents": []}),
        )
        .unwrap();
        let stale =
            to_raw_value(&serde_json::json!({"ttlMs": 0, "cacheScope": "public", "prompts": []}))
                .unwrap();
        cache.put("tools/list", "", "alice", &public);
        cache.put("resources/read", "file:///a", "alice", &private);
        cache.put("prompts/list", "", "alice", &stale);

        assert!(
            cache.get("tools/list", "", "bob").is_some(),
            "public entries are shared"
        );
        assert!(cache.get("resources/read", "file:///a", "alice").is_some());
        assert!(
            cache.get("resources/read", "file:///a", "bob").is_none(),
            "private ones are not"
        );
        assert!(
            cache.get("prompts/list", "", "alice").is_none(),
            "ttlMs 0 is never kept"
        );
        assert!(
            cache.get("tools/list", "cursor", "alice").is_none(),
            "another page is another entry"
        );

        cache.invalidate(&ListenEvent::ResourceUpdated("file:///".to_owned()));
        assert!(
            cache.get("resources/read", "file:///a", "alice").is_none(),
            "an update below evicts"
        );
        cache.invalidate(&ListenEvent::ToolsListChanged);
        assert!(cache.get("tools/list", "", "bob").is_none());
    }

    #[test]
    fn the_cache_is_bounded() {
        let cache = Cache::default();
        let raw =
            to_raw_value(&serde_json::json!({"ttlMs": 60_000, "cacheScope": "public"})).unwrap();
        for n in 0..1_000 {
            cache.put("resources/read", &format!("file:///{n}"), "", &raw);
        }
        assert!(cache.lock().len() <= super::CAPACITY);
    }

    #[test]
    fn the_cache_holds_capacity_entries_and_one_more_replaces_one() {
        let cache = Cache::default();
        let raw =
            to_raw_value(&serde_json::json!({"ttlMs": 60_000, "cacheScope": "public"})).unwrap();
        for n in 0..super::CAPACITY {
            cache.put("resources/read", &format!("file:///{n}"), "", &raw);
        }
        // At the limit: every entry is kept.
        assert_eq!(cache.lock().len(), super::CAPACITY);
        assert!((0..super::CAPACITY).all(|n| {
            cache
                .get("resources/read", &format!("file:///{n}"), "")
                .is_some()
        }));
        // Past it: the new entry is kept in place of one.
        cache.put("resources/read", "file:///new", "", &raw);
        assert_eq!(cache.lock().len(), super::CAPACITY);
        assert!(cache.get("resources/read", "file:///new", "").is_some());
    }
}
