//! [`OrderedMap`]: a JSON object with typed values that keeps its keys in wire order.
//!
//! `serde_json::Map` keeps order (with `preserve_order`) but holds only `Value`s; the
//! schema's typed maps (elicitation form properties, input requests and responses,
//! capability extensions) need typed values, and people see some of them in order.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Above this many entries, duplicate detection sorts the keys instead of scanning.
const LINEAR_LIMIT: usize = 16;

/// A map from string keys to `V` that keeps insertion (wire) order.
///
/// Deserialization refuses a duplicate key: two members with one name are ambiguous, and
/// reading "the last one" is how parsers disagree about what a message says.
///
/// ```
/// use mcp_types::OrderedMap;
///
/// let map: OrderedMap<u32> = serde_json::from_str(r#"{"b":1,"a":2}"#)?;
/// assert_eq!(map.keys().collect::<Vec<_>>(), ["b", "a"]);
/// assert_eq!(map.get("a"), Some(&2));
/// assert!(serde_json::from_str::<OrderedMap<u32>>(r#"{"a":1,"a":2}"#).is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OrderedMap<V> {
    entries: Vec<(String, V)>,
}

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        OrderedMap {
            entries: Vec::new(),
        }
    }
}

impl<V> OrderedMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value for `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value for `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.entries
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`, keeping its position if it was present (and returning the old
    /// value), or appending it.
    pub fn insert(&mut self, key: impl Into<String>, value: V) -> Option<V> {
        let key = key.into();
        if let Some(slot) = self.get_mut(&key) {
            return Some(std::mem::replace(slot, value));
        }
        self.entries.push((key, value));
        None
    }

    /// Removes `key`, keeping the order of the rest.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        let index = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(index).1)
    }

    /// The entries in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &V)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// The values in order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &V> {
        self.entries.iter().map(|(_, v)| v)
    }

    fn first_duplicate(&self) -> Option<&str> {
        if self.entries.len() <= LINEAR_LIMIT {
            return self
                .entries
                .iter()
                .enumerate()
                .find(|(i, (k, _))| self.entries[..*i].iter().any(|(other, _)| other == k))
                .map(|(_, (k, _))| k.as_str());
        }
        let mut keys: Vec<&str> = self.keys().collect();
        keys.sort_unstable();
        keys.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
    }
}

impl<V> FromIterator<(String, V)> for OrderedMap<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        let mut map = OrderedMap::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

impl<V> IntoIterator for OrderedMap<V> {
    type Item = (String, V);
    type IntoIter = std::vec::IntoIter<(String, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MapVisitor(PhantomData))
    }
}

struct MapVisitor<V>(PhantomData<V>);

impl<'de, V: Deserialize<'de>> Visitor<'de> for MapVisitor<V> {
    type Value = OrderedMap<V>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        // The size hint comes from the peer; cap the preallocation.
        let mut entries = Vec::with_capacity(access.size_hint().unwrap_or(0).min(64));
        while let Some((k, v)) = access.next_entry::<String, V>()? {
            entries.push((k, v));
        }
        let map = OrderedMap { entries };
        if let Some(key) = map.first_duplicate() {
            return Err(de::Error::custom(format_args!("duplicate key `{key}`")));
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::OrderedMap;

    #[test]
    fn keeps_order_and_refuses_duplicates_small_and_large() {
        for n in [3usize, 40] {
            let keys: Vec<String> = (0..n).rev().map(|i| format!("k{i}")).collect();
            let body: Vec<String> = keys.iter().map(|k| format!("\"{k}\":1")).collect();
            let json = format!("{{{}}}", body.join(","));
            let map: OrderedMap<u8> = serde_json::from_str(&json).unwrap();
            assert_eq!(map.keys().collect::<Vec<_>>(), keys);
            assert_eq!(serde_json::to_string(&map).unwrap(), json);

            let dup = format!("{{{},\"k1\":2}}", body.join(","));
            let err = serde_json::from_str::<OrderedMap<u8>>(&dup).unwrap_err();
            assert!(err.to_string().contains("duplicate key `k1`"), "{err}");
        }
    }

    #[test]
    fn insert_replaces_in_place() {
        let mut map = OrderedMap::new();
        assert_eq!(map.insert("a", 1), None);
        map.insert("b", 2);
        assert_eq!(map.insert("a", 3), Some(1));
        assert_eq!(map.iter().collect::<Vec<_>>(), [("a", &3), ("b", &2)]);
        assert_eq!(map.remove("a"), Some(3));
        assert_eq!(map.len(), 1);
    }
}
