//! Zero-sized types for the schema's `const` members, and the tag reading that discriminated
//! unions share.
//!
//! Each type here serializes as its single value and refuses every other value, so a struct
//! that holds one (the `type` of a content block, the `method` of a request, the `jsonrpc`
//! version) round-trips on its own and cannot be read from a message of another kind.

use std::fmt;

use serde::de::{self, Visitor};

/// Defines a zero-sized type that (de)serializes as exactly `$value` (a `$ty`), written
/// with the serializer's `$serialize` and read with the deserializer's `$deserialize`
/// through the visitor `$visitor`, which refuses every other value.
macro_rules! const_tag {
    (
        $name:ident,
        $value:literal: $ty:ty,
        $doc:expr,
        $serialize:ident,
        $deserialize:ident,
        $visitor:ident $(,)?
    ) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name;

        impl $name {
            /// The one value this type stands for.
            pub const VALUE: $ty = $value;
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.$serialize($value)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer
                    .$deserialize($crate::tag::$visitor($value))
                    .map(|()| $name)
            }
        }
    };
}

/// Defines a zero-sized type that (de)serializes as exactly one string.
macro_rules! string_tag {
    ($name:ident, $value:literal) => {
        $crate::tag::const_tag!(
            $name,
            $value: &'static str,
            concat!("The constant `\"", $value, "\"`."),
            serialize_str,
            deserialize_str,
            StrTag,
        );
    };
}

/// Defines a zero-sized type that (de)serializes as exactly one integer.
macro_rules! integer_tag {
    ($name:ident, $value:literal) => {
        $crate::tag::const_tag!(
            $name,
            $value: i64,
            concat!("The constant `", stringify!($value), "`."),
            serialize_i64,
            deserialize_i64,
            IntTag,
        );
    };
}

/// Implements `Serialize` as the type's `as_str()` and `Deserialize` from a string
/// (borrowed where the input allows) through `$from`, a `fn(&str) -> Result<Self, E>`
/// whose error is the deserializer's custom error.
macro_rules! serde_as_str {
    ($name:ty, $from:expr) => {
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s =
                    <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
                $from(&*s).map_err(serde::de::Error::custom)
            }
        }
    };
}

pub(crate) use {const_tag, integer_tag, serde_as_str, string_tag};

/// Accepts one exact string.
#[doc(hidden)]
pub struct StrTag(pub &'static str);

impl Visitor<'_> for StrTag {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the string {:?}", self.0)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        if v == self.0 {
            Ok(())
        } else {
            Err(E::invalid_value(de::Unexpected::Str(v), &self))
        }
    }
}

/// Accepts one exact integer.
#[doc(hidden)]
pub struct IntTag(pub i64);

impl Visitor<'_> for IntTag {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the integer {}", self.0)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        if v == self.0 {
            Ok(())
        } else {
            Err(E::invalid_value(de::Unexpected::Signed(v), &self))
        }
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        match i64::try_from(v) {
            Ok(v) => self.visit_i64(v),
            Err(_) => Err(E::invalid_value(de::Unexpected::Unsigned(v), &self)),
        }
    }
}

/// The string value of a discriminated union's tag member, if present.
///
/// Fails when the value is not an object, or when the tag is present but not a string.
pub(crate) fn tag_of<'v>(
    value: &'v serde_json::Value,
    tag: &str,
    union: &str,
) -> Result<Option<&'v str>, String> {
    let Some(object) = value.as_object() else {
        return Err(format!("expected a JSON object for `{union}`"));
    };
    match object.get(tag) {
        None => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("`{tag}` of `{union}` must be a string")),
    }
}

/// Whether `value` may be read as one variant of an untagged union.
///
/// In the `strict` pass the value must be an object with every `required` member and, unless
/// the variant keeps unknown members (`open`), no member outside `known`; the loose pass
/// skips those checks. In both, `input_required` pins `resultType`: `Some(true)` only
/// `"input_required"`, `Some(false)` anything else (absent included).
#[doc(hidden)]
pub fn fits(
    value: &serde_json::Value,
    strict: bool,
    known: &[&str],
    required: &[&str],
    open: bool,
    input_required: Option<bool>,
) -> bool {
    let Some(object) = value.as_object() else {
        return false;
    };
    if let Some(want) = input_required {
        let is =
            object.get("resultType").and_then(serde_json::Value::as_str) == Some("input_required");
        if is != want {
            return false;
        }
    }
    !strict
        || (required.iter().all(|r| object.contains_key(*r))
            && (open || object.keys().all(|k| known.contains(&k.as_str()))))
}

include!("generated/tags.rs");
