//! The writer's functions on `serde_json`'s public API alone, written the obvious way: what
//! the workspace runs when built with `--cfg mcp_without="json_writer"`, so that
//! `cargo xtask bench` can measure the hand-written writer against the crate it stands in
//! for, in the same run (`docs/PERFORMANCE.md`, "Kept, and why").

use serde::Serialize;
use serde::ser::Error as _;
use serde_json::value::RawValue;

type Result<T> = std::result::Result<T, serde_json::Error>;

/// As the writer's `write`.
pub fn write<T: Serialize + ?Sized>(out: &mut String, value: &T) -> Result<()> {
    out.push_str(&serde_json::to_string(value)?);
    Ok(())
}

/// As the writer's `write_value`.
pub fn write_value(out: &mut String, value: &serde_json::Value) -> Result<()> {
    write(out, value)
}

/// As the writer's `write_object`.
pub fn write_object(
    out: &mut String,
    members: &serde_json::Map<String, serde_json::Value>,
) -> Result<()> {
    write(out, members)
}

/// As the writer's `to_string`.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    serde_json::to_string(value)
}

/// As the writer's `to_vec`.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value)
}

/// As the writer's `to_raw_value`.
pub fn to_raw_value<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>> {
    serde_json::value::to_raw_value(value)
}

/// As the writer's `to_raw_object_led_by`.
pub fn to_raw_object_led_by<T: Serialize + ?Sized>(
    key: &str,
    first: &RawValue,
    value: &T,
) -> Result<Box<RawValue>> {
    let rest = serde_json::to_string(value)?;
    let members = match rest.as_bytes() {
        b"{}" => "",
        [b'{', ..] => &rest[1..rest.len() - 1],
        _ => return Err(serde_json::Error::custom("the value is not a JSON object")),
    };
    let mut out = String::with_capacity(rest.len() + first.get().len() + key.len() + 4);
    out.push('{');
    write(&mut out, key)?;
    out.push(':');
    out.push_str(first.get());
    if !members.is_empty() {
        out.push(',');
        out.push_str(members);
    }
    out.push('}');
    RawValue::from_string(out)
}
