use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::{next_escape, to_raw_value, to_vec, write};

/// Both writers' output (or both errors' messages) for `value`.
fn both<T: Serialize + ?Sized>(value: &T) -> (Result<String, String>, Result<String, String>) {
    let ours = super::to_string(value).map_err(|e| e.to_string());
    let theirs = serde_json::to_string(value).map_err(|e| e.to_string());
    (ours, theirs)
}

#[track_caller]
fn same<T: Serialize + ?Sized>(value: &T) {
    let (ours, theirs) = both(value);
    assert_eq!(ours, theirs);
}

#[test]
fn every_ascii_byte_at_every_offset_of_a_word_is_escaped_as_serde_json_does() {
    for byte in 0u8..0x80 {
        let c = char::from(byte);
        for len in 0..40 {
            for at in 0..=len {
                let mut s: String = "a".repeat(len);
                s.insert(at, c);
                same(&s);
            }
        }
    }
}

#[test]
fn escapes_among_their_neighbour_bytes_are_found_at_every_offset() {
    // The word scan tests "below 0x21 after flipping bit 1" and "equal to `\\`": the
    // bytes around 0x20, 0x22 and 0x5c, DEL and the bytes of a multi-byte character are
    // where a wrong mask or a stray borrow would show.
    for filler in [" ", "!", "#", "[", "]", "]\u{7f}", "é", "\u{2028}", "😀"] {
        for c in ['"', '\\', '\u{0}', '\u{1f}', '\n'] {
            for len in 0..34 {
                for at in 0..=len {
                    let mut s: String = filler.repeat(len);
                    let at = s.char_indices().nth(at).map_or(s.len(), |(i, _)| i);
                    s.insert(at, c);
                    same(&s);
                }
            }
            same(&filler.repeat(40));
        }
    }
}

#[test]
fn two_escapes_at_every_pair_of_offsets_are_escaped_as_serde_json_does() {
    for (a, b) in [
        ('\u{0}', ' '),
        ('"', '\\'),
        ('\u{1f}', '!'),
        ('\n', '\u{7f}'),
    ] {
        for len in 0..20 {
            for i in 0..=len {
                for j in i..=len + 1 {
                    let mut s: String = "x".repeat(len);
                    s.insert(i, a);
                    s.insert(j, b);
                    same(&s);
                }
            }
        }
    }
}

#[test]
fn multibyte_text_and_lone_escapes_are_written_as_they_are() {
    for s in [
        "",
        "é",
        "日本語のテキスト",
        "emoji 🦀 and \u{7f} delete",
        "\u{2028}\u{2029}",
        "\"",
        "\\",
        "\u{0}",
        "\u{1f}",
        "a\"b\\c\nd\re\tf\u{8}g\u{c}h\u{1}",
        "12345678\"",
        "1234567\"8",
        "\n\n\n\n\n\n\n\n\n\n",
    ] {
        same(s);
        same(&json!({ s: s }));
    }
}

#[test]
fn next_escape_finds_the_first_escape_past_a_lower_false_mark() {
    // A control byte borrows into the byte above it in the word arithmetic; the first
    // escape found must still be the real first one.
    let bytes = b"ab\x00\x01\"cdefghij";
    assert_eq!(next_escape(bytes, 0), 2);
    assert_eq!(next_escape(bytes, 3), 3);
    assert_eq!(next_escape(bytes, 5), bytes.len());
    assert_eq!(next_escape(b"\x20\x21\x7f\xff\x80abc", 0), 8);
}

/// A small deterministic generator (xorshift), so the cases are the same on every run.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn string(&mut self) -> String {
        const PIECES: &[&str] = &[
            "a", "bc", "defghijk", "\"", "\\", "\n", "\u{0}", "\u{1b}", "/", "é", "🦀", "\u{7f}",
            " ", "\t", "\u{ffff}",
        ];
        let n = self.below(40);
        (0..n)
            .map(|_| PIECES[usize::try_from(self.below(PIECES.len() as u64)).unwrap_or(0)])
            .collect()
    }

    fn value(&mut self, depth: u32) -> Value {
        let pick = if depth >= 5 {
            self.below(5)
        } else {
            self.below(7)
        };
        match pick {
            0 => Value::Null,
            1 => Value::Bool(self.below(2) == 1),
            2 => match self.below(3) {
                0 => json!(self.next()),
                1 => json!(i64::from_ne_bytes(self.next().to_ne_bytes())),
                _ => json!(f64::from_bits(self.next() >> 2) * 1e-10),
            },
            3 | 4 => Value::String(self.string()),
            5 => Value::Array((0..self.below(6)).map(|_| self.value(depth + 1)).collect()),
            _ => Value::Object(
                (0..self.below(6))
                    .map(|_| (self.string(), self.value(depth + 1)))
                    .collect(),
            ),
        }
    }
}

#[test]
fn generated_values_are_written_byte_for_byte_as_serde_json_writes_them() {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let value = g.value(0);
        same(&value);
        // And without serde's machinery, the same.
        let mut direct = String::new();
        super::write_value(&mut direct, &value).expect("a value writes");
        assert_eq!(
            Ok(direct),
            serde_json::to_string(&value).map_err(|e| e.to_string())
        );
        if let Value::Object(members) = &value {
            let mut object = String::new();
            super::write_object(&mut object, members).expect("an object writes");
            assert_eq!(object, serde_json::to_string(members).unwrap());
        }
    }
}

fn example_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the examples directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            example_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

#[test]
fn the_specs_example_messages_are_written_as_serde_json_writes_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp-types/tests/data");
    let mut files = Vec::new();
    example_files(&dir, &mut files);
    assert!(files.len() > 200, "found only {} examples", files.len());
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let value: Value = serde_json::from_str(&text).expect("an example is JSON");
        let (ours, theirs) = both(&value);
        assert_eq!(ours, theirs, "{}", file.display());
    }
}

#[derive(Serialize)]
enum Shape {
    Unit,
    Newtype(u8),
    Tuple(i32, String),
    Struct { a: Option<bool>, b: char },
}

#[derive(Serialize)]
struct Unit;

#[derive(Serialize)]
struct Inner {
    z: u128,
    y: i128,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum Tagged {
    Text {
        text: String,
    },
    Other {
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    },
}

#[derive(Serialize)]
struct Everything<'a> {
    unit: (),
    unit_struct: Unit,
    shapes: Vec<Shape>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<u8>,
    none: Option<u8>,
    tuple: (u8, &'a str, f32),
    #[serde(with = "serde_bytes_like")]
    bytes: &'a [u8],
    floats: Vec<f64>,
    #[serde(flatten)]
    inner: Inner,
    raw: &'a serde_json::value::RawValue,
    tagged: Vec<Tagged>,
    int_keys: BTreeMap<i64, u8>,
    bool_keys: BTreeMap<bool, u8>,
    char_keys: BTreeMap<char, u8>,
}

/// `serialize_bytes`, which derive does not reach for a slice on its own.
mod serde_bytes_like {
    pub(super) fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }
}

#[test]
fn every_serde_shape_is_written_as_serde_json_writes_it() {
    let raw = serde_json::value::RawValue::from_string(r#"{ "kept" : [1, 2 ] }"#.to_owned())
        .expect("raw json");
    let value = Everything {
        unit: (),
        unit_struct: Unit,
        shapes: vec![
            Shape::Unit,
            Shape::Newtype(7),
            Shape::Tuple(-3, "t\"".into()),
            Shape::Struct {
                a: Some(true),
                b: '\n',
            },
        ],
        skipped: None,
        none: None,
        tuple: (1, "two", 3.5),
        bytes: &[0, 127, 255],
        floats: vec![0.0, -0.0, 1.5e300, f64::NAN, f64::INFINITY, 1e-7, 0.1],
        inner: Inner {
            z: u128::MAX,
            y: i128::MIN,
        },
        raw: &raw,
        tagged: vec![
            Tagged::Text { text: "hi".into() },
            Tagged::Other {
                rest: BTreeMap::from([("k".to_owned(), json!([1, "x"]))]),
            },
        ],
        int_keys: BTreeMap::from([(-1, 1), (2, 2)]),
        bool_keys: BTreeMap::from([(false, 0), (true, 1)]),
        char_keys: BTreeMap::from([('"', 0)]),
    };
    let (ours, theirs) = both(&value);
    assert!(
        ours.as_ref()
            .is_ok_and(|s| s.contains(r#"{ "kept" : [1, 2 ] }"#))
    );
    assert_eq!(ours, theirs);
}

#[test]
fn keys_serde_json_refuses_are_refused_with_its_message() {
    let mut float_keys = BTreeMap::new();
    float_keys.insert(ordered(1.5), 1);
    same(&float_keys);
    let mut bad = BTreeMap::new();
    bad.insert(ordered(f64::NAN), 1);
    let (ours, theirs) = both(&bad);
    assert!(ours.is_err());
    assert_eq!(ours, theirs);
    let unit_keys = BTreeMap::from([((), 1)]);
    let (ours, theirs) = both(&unit_keys);
    assert!(
        ours.as_ref()
            .is_err_and(|e| e.contains("key must be a string"))
    );
    assert_eq!(ours, theirs);
    let vec_keys = BTreeMap::from([(vec![1], 1)]);
    let (ours, theirs) = both(&vec_keys);
    assert!(ours.is_err());
    assert_eq!(ours, theirs);
}

/// An `f64` map key (`f64` is not `Ord`; the maps here hold one key each).
#[derive(Serialize)]
#[serde(transparent)]
struct Ordered(f64);

impl PartialEq for Ordered {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ordered {}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

fn ordered(f: f64) -> Ordered {
    Ordered(f)
}

#[test]
fn a_raw_value_is_made_without_a_second_parse_and_matches_serde_jsons() {
    let value = json!({"content": [{"type": "text", "text": "x\n".repeat(5000)}]});
    let ours = to_raw_value(&value).expect("serializes");
    let theirs = serde_json::value::to_raw_value(&value).expect("serializes");
    assert_eq!(ours.get(), theirs.get());
    // Twice on the same thread: the scratch buffer is reused and cleared.
    let small = to_raw_value(&json!([1])).expect("serializes");
    assert_eq!(small.get(), "[1]");
}

#[test]
fn a_large_raw_value_takes_the_scratch_buffer_and_the_next_one_gets_a_fresh_one() {
    // Past the hand-over size the buffer itself becomes the value; the thread's next
    // values (large, then small) still come out whole and right.
    let first = json!({"text": "a\"b".repeat(super::HAND_OVER)});
    let second = json!({"text": "c".repeat(super::HAND_OVER * 3)});
    let a = to_raw_value(&first).expect("serializes");
    let b = to_raw_value(&second).expect("serializes");
    let c = to_raw_value(&json!({"n": 1})).expect("serializes");
    assert_eq!(a.get(), serde_json::to_string(&first).expect("serializes"));
    assert_eq!(b.get(), serde_json::to_string(&second).expect("serializes"));
    assert_eq!(c.get(), r#"{"n":1}"#);
    assert!(a.get().len() >= super::HAND_OVER && b.get().len() >= super::HAND_OVER);
    // The hand-over builds serde_json's own `RawValue`: it serializes as the text.
    let wrapped = serde_json::to_string(&json!({"r": serde_json::to_value(&b).expect("value")}))
        .expect("serializes");
    assert!(wrapped.starts_with(r#"{"r":{"text":"ccc"#));
}

/// A value whose `Serialize` itself makes a raw value, as a handler's type might.
struct Nested;

impl Serialize for Nested {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let inner = to_raw_value(&json!({"inner": true})).map_err(serde::ser::Error::custom)?;
        inner.serialize(s)
    }
}

#[test]
fn a_nested_call_takes_a_buffer_of_its_own() {
    let direct = to_raw_value(&[Nested, Nested]).expect("serializes");
    assert_eq!(direct.get(), r#"[{"inner":true},{"inner":true}]"#);
}

#[test]
fn write_appends_to_what_is_there() -> Result<(), serde_json::Error> {
    let mut out = "prefix:".to_owned();
    write(&mut out, &json!({"a": [true, null]})).expect("serializes");
    assert_eq!(out, r#"prefix:{"a":[true,null]}"#);
    assert_eq!(to_vec(&json!([1.5]))?, b"[1.5]");
    Ok(())
}

/// What serde's flattening writes for `first` under `key` followed by `value`'s members.
#[derive(Serialize)]
struct Flattened<'a, T> {
    #[serde(rename = "_meta")]
    first: &'a serde_json::value::RawValue,
    #[serde(flatten)]
    value: &'a T,
}

#[test]
fn an_object_led_by_a_member_is_what_flattening_writes() {
    let first = to_raw_value(&json!({"io.modelcontextprotocol/serverInfo": {"name": "s"}}))
        .expect("serializes");
    let values = [
        json!({}),
        json!({"content": [{"type": "text", "text": "a\"b\n"}], "isError": false}),
        json!({"nested": {"{": "}"}, "n": 1.5}),
    ];
    for value in &values {
        let ours = super::to_raw_object_led_by("_meta", &first, value).expect("serializes");
        let theirs = serde_json::to_string(&Flattened {
            first: &first,
            value,
        })
        .expect("serializes");
        assert_eq!(ours.get(), theirs);
    }
    // A large value goes through the hand-over path and comes out the same.
    let large = json!({"text": "x".repeat(super::HAND_OVER * 2)});
    let ours = super::to_raw_object_led_by("_meta", &first, &large).expect("serializes");
    assert!(
        ours.get()
            .starts_with(r#"{"_meta":{"io.modelcontextprotocol/serverInfo""#)
    );
    assert!(ours.get().ends_with(r#"xx"}"#));
    assert_eq!(
        ours.get().len(),
        first.get().len() + super::HAND_OVER * 2 + 20
    );
}

#[test]
fn an_object_led_by_a_member_refuses_a_value_that_is_not_an_object() {
    let first = to_raw_value(&json!(1)).expect("serializes");
    for value in [json!([1]), json!("text"), json!(null), json!(2)] {
        let error = super::to_raw_object_led_by("k", &first, &value).expect_err("not an object");
        assert!(error.to_string().contains("not a JSON object"), "{error}");
    }
}

/// Member names with what must be escaped, short and past the byte-by-byte check's length,
/// and names that need nothing.
#[derive(Serialize)]
struct Names {
    #[serde(rename = "quote\"d")]
    quote: u8,
    #[serde(rename = "back\\slash")]
    backslash: u8,
    #[serde(rename = "tab\there\u{1}")]
    control: u8,
    #[serde(rename = "a member name longer than thirty-two bytes, with \"escapes\" past them")]
    long_escaped: u8,
    #[serde(rename = "a member name longer than thirty-two bytes and plain")]
    long_plain: u8,
    #[serde(rename = "é🦀\u{7f}")]
    unicode: u8,
    plain: u8,
}

#[test]
fn member_names_are_written_as_serde_json_writes_them() {
    same(&Names {
        quote: 1,
        backslash: 2,
        control: 3,
        long_escaped: 4,
        long_plain: 5,
        unicode: 6,
        plain: 7,
    });
}
