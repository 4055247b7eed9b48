//! A compact JSON writer for outgoing messages, byte for byte what `serde_json::to_writer`
//! writes, with a faster string escaper.
//!
//! `serde_json` looks every byte of a string up in its escape table. A tool result is
//! mostly strings (the text blocks a model reads), and for a 64 KiB text that lookup was a
//! third of a `tools/call`'s instructions. The writer here checks
//! words of eight bytes, two a round, for the bytes JSON must escape (`"`, `\` and the
//! controls below U+0020, <https://modelcontextprotocol.io/specification/2026-07-28/basic> carries JSON text as RFC 8259
//! defines it) and copies the runs between them whole. Everything else — numbers, floats, the
//! escapes themselves, map keys — is written exactly as `serde_json` writes it (floats
//! and integers by `serde_json` itself), and `serde_json::value::RawValue` passes through
//! verbatim, so frames do not change: the tests compare both writers over the spec's
//! example messages and generated values, and a fuzz target does so on any input.
//!
//! ```
//! let value = serde_json::json!({"text": "line\none \"quoted\"", "n": 1.5});
//! let ours = mcp_json::to_vec(&value)?;
//! assert_eq!(ours, serde_json::to_vec(&value)?);
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::cell::RefCell;

use serde::ser::{self, Serialize};
use serde_json::value::RawValue;

type Error = serde_json::Error;
type Result<T> = std::result::Result<T, Error>;

/// The struct name under which `serde_json` serializes a `RawValue` (a struct of one
/// field of the same name holding the JSON text). `serde_json`'s own writer knows it; so
/// does this one, or a raw result inside a message would be written as an object. The
/// tests fail if a `serde_json` release changes it.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";
/// The same for a `Number` under `serde_json`'s `arbitrary_precision` feature.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// A scratch buffer larger than this is not kept between calls of [`to_raw_value`].
const SCRATCH_KEEP: usize = 1 << 20;

/// Serializes `value` as compact JSON onto the end of `out`.
///
/// # Errors
///
/// What `serde_json` would return: a map key that is not a string, a number or a bool, a
/// non-finite float key, or an error of `value`'s own `Serialize`. On an error `out`
/// holds what was written before it.
pub fn write<T: Serialize + ?Sized>(out: &mut String, value: &T) -> Result<()> {
    value.serialize(&mut Writer { out })
}

/// A JSON value as [`write()`] writes it, byte for byte, without serde's machinery for its
/// strings, arrays and objects (a tool's arguments, written with every call); numbers are
/// written by [`write()`].
pub fn write_value(out: &mut String, value: &serde_json::Value) -> Result<()> {
    use serde_json::Value;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(_) => write(out, value)?,
        Value::String(text) => write_str(out, text),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item)?;
            }
            out.push(']');
        }
        Value::Object(members) => write_object(out, members)?,
    }
    Ok(())
}

/// A JSON object as [`write()`] writes it, byte for byte: [`write_value`] for a map.
pub fn write_object(
    out: &mut String,
    members: &serde_json::Map<String, serde_json::Value>,
) -> Result<()> {
    out.push('{');
    for (i, (name, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(out, name);
        out.push(':');
        write_value(out, value)?;
    }
    out.push('}');
    Ok(())
}

/// Serializes `value` as compact JSON into a new string.
///
/// # Errors
///
/// As [`write()`].
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    let mut out = String::with_capacity(128);
    write(&mut out, value)?;
    Ok(out)
}

/// Serializes `value` as compact JSON into a new buffer.
///
/// # Errors
///
/// As [`write()`].
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    to_string(value).map(String::into_bytes)
}

/// Serializes `value` as a `RawValue`, as `serde_json::value::to_raw_value` does.
///
/// The JSON is written into a per-thread scratch buffer that keeps its capacity between
/// calls, then copied once into a `RawValue` of the exact size: a large result does not
/// grow a fresh buffer by doubling each time.
///
/// # Errors
///
/// As [`write()`].
pub fn to_raw_value<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>> {
    raw_written(|out| write(out, value))
}

/// Serializes `value`, which must serialize as a JSON object, as a `RawValue` with
/// `"key": first` written as its first member: what a struct with `first` beside
/// `#[serde(flatten)] value` writes, without serde's flattening (which sends every member
/// of `value` through the map-key path, its name checked for escapes each time). `value`
/// must not write `key` itself.
///
/// ```
/// # use serde_json::value::RawValue;
/// let meta = RawValue::from_string(r#"{"v":1}"#.to_owned())?;
/// let value = serde_json::json!({"a": true});
/// let raw = mcp_json::to_raw_object_led_by("_meta", &meta, &value)?;
/// assert_eq!(raw.get(), r#"{"_meta":{"v":1},"a":true}"#);
/// let empty = mcp_json::to_raw_object_led_by("_meta", &meta, &serde_json::json!({}))?;
/// assert_eq!(empty.get(), r#"{"_meta":{"v":1}}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// # Errors
///
/// As [`write()`], and an error when `value` does not serialize as an object.
pub fn to_raw_object_led_by<T: Serialize + ?Sized>(
    key: &str,
    first: &RawValue,
    value: &T,
) -> Result<Box<RawValue>> {
    raw_written(|out| {
        out.push('{');
        write(out, key)?;
        out.push(':');
        out.push_str(first.get());
        let at = out.len();
        write(out, value)?;
        match out.as_bytes().get(at..) {
            Some(b"{}") => {
                out.truncate(at);
                out.push('}');
            }
            // The value's opening brace becomes the separator after the first member.
            Some([b'{', ..]) => out.replace_range(at..=at, ","),
            _ => {
                return Err(<Error as ser::Error>::custom(
                    "the value is not a JSON object",
                ));
            }
        }
        Ok(())
    })
}

/// The text `write_into` writes into an empty buffer, as a `RawValue` (the text must be
/// this writer's, valid JSON).
fn raw_written(write_into: impl FnOnce(&mut String) -> Result<()>) -> Result<Box<RawValue>> {
    thread_local! {
        static SCRATCH: RefCell<String> = const { RefCell::new(String::new()) };
    }
    SCRATCH.with(|scratch| {
        // A handler's `Serialize` could itself call this function; the inner call then
        // takes a buffer of its own rather than the one in use.
        let Ok(mut buf) = scratch.try_borrow_mut() else {
            let mut out = String::with_capacity(128);
            write_into(&mut out)?;
            return raw_from_owned(out);
        };
        buf.clear();
        let written = write_into(&mut buf);
        if written.is_err() || buf.len() < HAND_OVER {
            let raw = written.and_then(|()| raw_from(&buf));
            if buf.capacity() > SCRATCH_KEEP {
                *buf = String::new();
            }
            return raw;
        }
        // A large text is handed over rather than copied: the scratch buffer becomes the
        // value (shrunk to its length, in place when the allocator can: glibc's does for
        // any shrink, mimalloc's when the block stays at least half used), and a fresh
        // buffer a quarter larger than this text takes its place, so that a next value of
        // about this size neither grows it by doubling nor leaves it half empty.
        let next = buf.len().saturating_add(buf.len() / 4);
        let fresh = if next > SCRATCH_KEEP {
            String::new()
        } else {
            String::with_capacity(next)
        };
        raw_from_owned(std::mem::replace(&mut *buf, fresh))
    })
}

/// Below this many bytes [`to_raw_value`] copies the text out of its scratch buffer; from
/// it on, it hands the buffer itself over (a copy of a 64 KiB result was 8% of the
/// server's instructions for a 64 KiB echo).
const HAND_OVER: usize = 16 * 1024;

/// `json`, text this writer wrote, as a `RawValue` without parsing or copying it: the
/// `String` moves into the value (`serde_json` builds a `Box<RawValue>` from the `String`
/// its deserializer is handed, `into_boxed_str`).
fn raw_from_owned(json: String) -> Result<Box<RawValue>> {
    use serde::de::value::{Error as PlainError, MapDeserializer};
    let entry = std::iter::once((RAW_TOKEN, json));
    <Box<RawValue> as serde::Deserialize>::deserialize(MapDeserializer::<_, PlainError>::new(entry))
        // Not reachable with the serde_json this crate builds against (the map holds the one
        // entry its `RawValue` asks for); a test pins that down.
        .map_err(|e| <Error as ser::Error>::custom(format_args!("cannot hand over the text: {e}")))
}

/// What this writer wrote, as a `RawValue`, without parsing it again: copied once into
/// an allocation of its exact size. (`serde_json::value::to_raw_value` would write it
/// into a 128-byte buffer, grow that by doubling, then shrink it to fit.)
fn raw_from(json: &str) -> Result<Box<RawValue>> {
    raw_from_owned(json.to_owned())
}

// ---- strings ----

/// Ones in every byte.
const ONES: u64 = u64::from_ne_bytes([1; 8]);
/// The high bit of every byte.
const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);

/// Whether a byte of `word` (read little-endian) needs an escape, as a mask with the high
/// bit of each such byte set. Only the lowest set bit is exact (a borrow can mark bytes
/// above a true one), which is all [`next_escape`] reads.
///
/// Flipping bit 1 maps `"` (0x22) to 0x20 and keeps the controls (0x00–0x1f) below it,
/// while every other byte lands at 0x21 or above: so one "less than 0x21" test finds both,
/// and a second test finds `\`.
#[inline]
fn escapes_in(word: u64) -> u64 {
    let flipped = word ^ (ONES * 0x02);
    let below = flipped.wrapping_sub(ONES * 0x21) & !flipped;
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (below | backslash) & HIGHS
}

/// The index of the first byte at or after `from` that JSON must escape, or `bytes.len()`.
#[inline]
fn next_escape(bytes: &[u8], from: usize) -> usize {
    let len = bytes.len();
    let Some(rest) = bytes.get(from..) else {
        return len;
    };
    if rest.len() < 8 {
        return rest
            .iter()
            .position(|&b| ESCAPE[usize::from(b)])
            .map_or(len, |i| from + i);
    }
    // Two words a round: one branch per sixteen bytes.
    let (words, _) = rest.as_chunks::<8>();
    let mut pairs = words.chunks_exact(2);
    for (i, pair) in (&mut pairs).enumerate() {
        let [low, high] = pair else { break };
        let (low, high) = (
            escapes_in(u64::from_le_bytes(*low)),
            escapes_in(u64::from_le_bytes(*high)),
        );
        if low | high != 0 {
            let (word, found) = if low == 0 { (8, high) } else { (0, low) };
            return from + i * 16 + word + (found.trailing_zeros() / 8) as usize;
        }
    }
    if let [word] = pairs.remainder() {
        let found = escapes_in(u64::from_le_bytes(*word));
        if found != 0 {
            return from + (words.len() - 1) * 8 + (found.trailing_zeros() / 8) as usize;
        }
    }
    let left = rest.len() % 8;
    if left == 0 {
        return len;
    }
    // The last eight bytes, of which the first `8 - left` were checked above (and hold
    // no escape, so they cannot mark a byte above them): `rest` is at least a word long.
    let (last, _) = bytes[len - 8..].as_chunks::<8>();
    let found = last.first().map_or(0, |word| {
        escapes_in(u64::from_le_bytes(*word)) >> ((8 - left) * 8)
    });
    if found == 0 {
        len
    } else {
        len - left + (found.trailing_zeros() / 8) as usize
    }
}

/// The bytes JSON must escape.
static ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Writes `s` as a JSON string, with `serde_json`'s escapes: the short forms for `"`,
/// `\`, backspace, form feed, newline, carriage return and tab, `\u00xx` (lower-case hex)
/// for the other controls, everything else as it is.
#[inline]
fn write_str(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut at = next_escape(bytes, 0);
    out.reserve(bytes.len() + 2);
    out.push('"');
    if at == bytes.len() {
        out.push_str(s);
    } else {
        let mut start = 0;
        loop {
            // `at` is an ASCII byte or the end, so a character boundary.
            out.push_str(s.get(start..at).unwrap_or_default());
            let Some(&byte) = bytes.get(at) else { break };
            escape(out, byte);
            start = at + 1;
            at = next_escape(bytes, start);
        }
    }
    out.push('"');
}

fn escape(out: &mut String, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match byte {
        b'"' => out.push_str("\\\""),
        b'\\' => out.push_str("\\\\"),
        0x08 => out.push_str("\\b"),
        0x0c => out.push_str("\\f"),
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'\t' => out.push_str("\\t"),
        _ => {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
    }
}

// ---- the serializer ----

struct Writer<'a> {
    out: &'a mut String,
}

impl Writer<'_> {
    /// A number as `serde_json` writes it (its integer and float formatting, `null` for
    /// a non-finite float).
    fn number<N: Serialize>(&mut self, n: N) -> Result<()> {
        write_number(self.out, n)
    }

    /// An integer, formatted by `itoa` as `serde_json` formats it, straight onto the
    /// output (a request id, every call: through `serde_json`'s writer it cost five times
    /// as much).
    fn integer<I: itoa::Integer>(&mut self, n: I) {
        self.out.push_str(itoa::Buffer::new().format(n));
    }
}

/// A number as `serde_json` writes it, through a buffer on the stack: the longest
/// (`i128::MIN`) takes 40 bytes.
fn write_number<N: Serialize>(out: &mut String, n: N) -> Result<()> {
    let mut buf = [0u8; 64];
    let mut rest = &mut buf[..];
    serde_json::to_writer(&mut rest, &n)?;
    let written = 64 - rest.len();
    let text = buf
        .get(..written)
        .and_then(|b| std::str::from_utf8(b).ok())
        .ok_or_else(|| <Error as ser::Error>::custom("a number serde_json wrote is not UTF-8"))?;
    out.push_str(text);
    Ok(())
}

/// The longest member name [`Compound::key`] checks byte by byte.
const SHORT_KEY: usize = 32;

/// A sequence or map being written; `first` is whether no element has been yet.
struct Compound<'w, 'a> {
    writer: &'w mut Writer<'a>,
    first: bool,
    /// Closing bytes: `]`, `}`, or `]}` / `}}` for an enum variant's contents.
    close: &'static str,
    /// A `RawValue` (or an arbitrary-precision number) whose text is written verbatim.
    raw: bool,
}

impl Compound<'_, '_> {
    #[inline]
    fn comma(&mut self) {
        if self.first {
            self.first = false;
        } else {
            self.writer.out.push(',');
        }
    }

    #[inline]
    fn key(&mut self, key: &str) {
        self.comma();
        let out = &mut *self.writer.out;
        // A member name is nearly always a short one without escapes (a struct's field,
        // every time it is written): looked at byte by byte and copied with its quotes and
        // colon, rather than through the string scan.
        if key.len() <= SHORT_KEY && !key.bytes().any(|b| ESCAPE[usize::from(b)]) {
            out.reserve(key.len() + 3);
            out.push('"');
            out.push_str(key);
            out.push_str("\":");
        } else {
            write_str(out, key);
            out.push(':');
        }
    }
}

impl<'w, 'a> ser::Serializer for &'w mut Writer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'w, 'a>;
    type SerializeTuple = Compound<'w, 'a>;
    type SerializeTupleStruct = Compound<'w, 'a>;
    type SerializeTupleVariant = Compound<'w, 'a>;
    type SerializeMap = Compound<'w, 'a>;
    type SerializeStruct = Compound<'w, 'a>;
    type SerializeStructVariant = Compound<'w, 'a>;

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.out.push_str(if v { "true" } else { "false" });
        Ok(())
    }

    fn serialize_i8(self, v: i8) -> Result<()> {
        self.integer(v);
        Ok(())
    }

    fn serialize_i16(self, v: i16) -> Result<()> {
        self.integer(v);
        Ok(())
    }

    fn serialize_i32(self, v: i32) -> Result<()> {
        self.integer(v);
        Ok(())
    }

    fn serialize_i64(self, v: i64) -> Result<()> {
        self.integer(v);
        Ok(())
    }

    fn serialize_i128(self, v: i128) -> Result<()> {
        self.integer(v);
        Ok(())
    }

    fn serialize_u8(self, v: u8) -> Result<()> {
        self.integer(v);
        Ok(())
    }

    fn serialize_u16(self, v: u16) -> Result<()> {
        self.integer(v);
        Ok(())
    }

    fn serialize_u32(self, v: u32) -> Result<()> {
        self.integer(v);
        Ok(())
    }

    fn serialize_u64(self, v: u64) -> Result<()> {
        self.integer(v);
        Ok(())
    }

    fn serialize_u128(self, v: u128) -> Result<()> {
        self.integer(v);
        Ok(())
    }

    fn serialize_f32(self, v: f32) -> Result<()> {
        self.number(v)
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        self.number(v)
    }

    fn serialize_char(self, v: char) -> Result<()> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<()> {
        write_str(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        self.out.push('[');
        for (i, byte) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.number(*byte)?;
        }
        self.out.push(']');
        Ok(())
    }

    fn serialize_none(self) -> Result<()> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        self.out.push_str("null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        write_str(self.out, variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.out.push('{');
        write_str(self.out, variant);
        self.out.push(':');
        value.serialize(&mut *self)?;
        self.out.push('}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'w, 'a>> {
        self.out.push('[');
        Ok(Compound {
            writer: self,
            first: true,
            close: "]",
            raw: false,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'w, 'a>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'w, 'a>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'w, 'a>> {
        self.out.push('{');
        write_str(self.out, variant);
        self.out.push_str(":[");
        Ok(Compound {
            writer: self,
            first: true,
            close: "]}",
            raw: false,
        })
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'w, 'a>> {
        self.out.push('{');
        Ok(Compound {
            writer: self,
            first: true,
            close: "}",
            raw: false,
        })
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Compound<'w, 'a>> {
        if name == RAW_TOKEN || name == NUMBER_TOKEN {
            return Ok(Compound {
                writer: self,
                first: true,
                close: "",
                raw: true,
            });
        }
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'w, 'a>> {
        self.out.push('{');
        write_str(self.out, variant);
        self.out.push_str(":{");
        Ok(Compound {
            writer: self,
            first: true,
            close: "}}",
            raw: false,
        })
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.comma();
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<()> {
        self.writer.out.push_str(self.close);
        Ok(())
    }
}

/// Tuples of every kind are written as sequences.
macro_rules! as_sequence {
    ($($trait:ident::$method:ident),*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;

            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                ser::SerializeSeq::serialize_element(self, value)
            }

            fn end(self) -> Result<()> {
                ser::SerializeSeq::end(self)
            }
        }
    )*};
}

as_sequence!(
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.comma();
        key.serialize(KeyWriter {
            out: &mut *self.writer.out,
        })?;
        self.writer.out.push(':');
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<()> {
        self.writer.out.push_str(self.close);
        Ok(())
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        if self.raw {
            return value.serialize(RawWriter {
                out: &mut *self.writer.out,
            });
        }
        self.key(key);
        value.serialize(&mut *self.writer)
    }

    fn end(self) -> Result<()> {
        self.writer.out.push_str(self.close);
        Ok(())
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }

    fn end(self) -> Result<()> {
        ser::SerializeStruct::end(self)
    }
}

/// The compound methods of a serializer that writes only a scalar: each refuses with
/// `$error()`.
macro_rules! refuse_compounds {
    ($error:ident) => {
        fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
            Err($error())
        }

        fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
            Err($error())
        }

        fn serialize_tuple_struct(
            self,
            _name: &'static str,
            _len: usize,
        ) -> Result<Self::SerializeTupleStruct> {
            Err($error())
        }

        fn serialize_tuple_variant(
            self,
            _name: &'static str,
            _index: u32,
            _variant: &'static str,
            _len: usize,
        ) -> Result<Self::SerializeTupleVariant> {
            Err($error())
        }

        fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
            Err($error())
        }

        fn serialize_struct(
            self,
            _name: &'static str,
            _len: usize,
        ) -> Result<Self::SerializeStruct> {
            Err($error())
        }

        fn serialize_struct_variant(
            self,
            _name: &'static str,
            _index: u32,
            _variant: &'static str,
            _len: usize,
        ) -> Result<Self::SerializeStructVariant> {
            Err($error())
        }
    };
}

// ---- map keys ----

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

/// A map key: a string as it is; a bool, an integer or a finite float in quotes; a unit
/// variant by name; anything else refused, as `serde_json` does.
struct KeyWriter<'a> {
    out: &'a mut String,
}

impl KeyWriter<'_> {
    fn quoted<N: Serialize>(self, n: N) -> Result<()> {
        self.out.push('"');
        write_number(self.out, n)?;
        self.out.push('"');
        Ok(())
    }

    fn float<F: Serialize>(self, finite: bool, f: F) -> Result<()> {
        if finite {
            self.quoted(f)
        } else {
            Err(ser::Error::custom(
                "float key must be finite (got NaN or +/-inf)",
            ))
        }
    }
}

impl ser::Serializer for KeyWriter<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<()> {
        write_str(self.out, v);
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<()> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_i8(self, v: i8) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_i16(self, v: i16) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_i32(self, v: i32) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_i64(self, v: i64) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_i128(self, v: i128) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_u8(self, v: u8) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_u16(self, v: u16) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_u32(self, v: u32) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_u64(self, v: u64) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_u128(self, v: u128) -> Result<()> {
        self.quoted(v)
    }

    fn serialize_f32(self, v: f32) -> Result<()> {
        self.float(v.is_finite(), v)
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        self.float(v.is_finite(), v)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        write_str(self.out, variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_none(self) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit(self) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        Err(key_must_be_a_string())
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(key_must_be_a_string())
    }

    refuse_compounds!(key_must_be_a_string);
}

// ---- raw JSON text ----

fn not_raw() -> Error {
    ser::Error::custom("a raw JSON value must be serialized from its text")
}

/// The one field of a `RawValue`: its text, written as it is.
struct RawWriter<'a> {
    out: &'a mut String,
}

macro_rules! refuse {
    ($($method:ident($($arg:ty),*);)*) => {$(
        fn $method(self, $(_: $arg),*) -> Result<()> {
            Err(not_raw())
        }
    )*};
}

impl ser::Serializer for RawWriter<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<()> {
        self.out.push_str(v);
        Ok(())
    }

    refuse! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<()> {
        Err(not_raw())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(not_raw())
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(not_raw())
    }

    refuse_compounds!(not_raw);
}

#[cfg(test)]
mod tests;
