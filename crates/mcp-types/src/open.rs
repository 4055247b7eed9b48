//! What the generated `Deserialize` of an open object (a struct with an `extra` map) is
//! made of.
//!
//! serde's `#[serde(flatten)]` would keep the unknown members too, but it reads the whole
//! object into serde's private buffer first and then reads each field from that: every key
//! and every string is allocated once more. `_meta` is an open object on every request, so
//! the generated code reads open objects in one pass instead: known members go
//! straight to their fields, the others into `extra`, with the errors serde's derive gives
//! (a missing required member, a member given twice).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

/// An object key read by a hand-written `Visitor::visit_map`, borrowed from the input when
/// it has no escapes (serde's own `Cow<str>` always allocates). The generated open objects,
/// the engine's envelope and the HTTP transport's mirror checks read keys with it.
#[derive(Debug)]
pub struct ObjectKey<'de>(pub Cow<'de, str>);

pub(crate) use ObjectKey as Key;

impl ObjectKey<'_> {
    /// The key's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key as an owned string.
    pub fn into_string(self) -> String {
        self.0.into_owned()
    }
}

impl<'de> Deserialize<'de> for ObjectKey<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;

        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = ObjectKey<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<ObjectKey<'de>, E> {
                Ok(ObjectKey(Cow::Borrowed(v)))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<ObjectKey<'de>, E> {
                Ok(ObjectKey(Cow::Owned(v.to_owned())))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<ObjectKey<'de>, E> {
                Ok(ObjectKey(Cow::Owned(v)))
            }
        }

        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Reads the value of member `name` into `slot`, refusing a member given twice.
pub(crate) fn field<'de, A, T>(
    map: &mut A,
    slot: &mut Option<T>,
    name: &'static str,
) -> Result<(), A::Error>
where
    A: MapAccess<'de>,
    T: Deserialize<'de>,
{
    if slot.is_some() {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// The value of a required member, or serde's "missing field" error.
pub(crate) fn required<T, E: de::Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(name))
}
