//! How a `CallToolResult` becomes each vendor's tool-result content: text as text, media
//! as the vendor's own parts where its API takes them, and a line of description where it
//! does not, so that nothing is dropped without the model being told.
//!
//! Media (images, audio, binary resources) come from the server as base64 text, which is
//! untrusted: a piece is passed on only if it is at most [`DEFAULT_MAX_MEDIA_LEN`] (or the
//! outcome's own limit) long, decodes as standard base64, and has a well-formed MIME type.
//! Anything else is described.

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mcp_types::{CallToolResult, ContentBlock, EmbeddedResourceResource};
use serde_json::{Value, json};

/// The default of [`ToolOutcome::max_media_len`](crate::ToolOutcome::max_media_len): the
/// longest image, audio clip or binary resource, in bytes of base64 (4 MiB, about 3 MiB
/// of data), that a result passes to a model as data. A longer one is described in a line
/// of text instead. It stays under the smallest per-item limit of the vendors (Anthropic's
/// 5 MB per image) and well under their request sizes.
pub const DEFAULT_MAX_MEDIA_LEN: usize = 4 * 1024 * 1024;

/// The image types OpenAI (Chat and Responses) and Anthropic both document.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

const PDF: &str = "application/pdf";

/// Where a piece of media came from, for its description.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    Image,
    Audio,
    Resource { uri: &'a str },
}

/// An image, audio clip or binary resource that passed the checks.
#[derive(Debug)]
struct Media<'a> {
    source: Source<'a>,
    /// The MIME type's essence in lower case (`image/png`), checked to be `type/subtype`
    /// of token characters, so it is safe inside a data URL.
    mime: String,
    /// Standard base64, non-empty, checked to decode, at most the limit long.
    data: &'a str,
}

/// One piece of a result, vendor-neutral.
#[derive(Debug)]
enum Piece<'a> {
    Text(Cow<'a, str>),
    Media(Media<'a>),
}

/// When `structuredContent` also goes to the model as JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StructuredText {
    /// Only when no block is text (Gemini, which gets the value itself besides).
    WithoutText,
    /// Unless a text block already holds the same JSON, as the spec asks servers to send
    /// it: then it would only be said twice.
    UnlessRepeated,
}

/// The result as pieces: text blocks as they are, embedded text resources as their text,
/// media that pass the checks as media, everything else described in a line of text, and
/// `structuredContent` as JSON text per `structured`.
fn pieces(
    result: &CallToolResult,
    max_media_len: usize,
    structured: StructuredText,
) -> Vec<Piece<'_>> {
    let mut out = Vec::with_capacity(result.content.len() + 1);
    for block in &result.content {
        out.push(match block {
            ContentBlock::TextContent(t) => Piece::Text(Cow::Borrowed(&t.text)),
            ContentBlock::ImageContent(i) => {
                media(Source::Image, Some(&i.mime_type), &i.data, max_media_len)
            }
            ContentBlock::AudioContent(a) => {
                media(Source::Audio, Some(&a.mime_type), &a.data, max_media_len)
            }
            ContentBlock::ResourceLink(link) => Piece::Text(Cow::Owned(format!(
                "[resource link: {} <{}>]",
                link.name, link.uri
            ))),
            ContentBlock::EmbeddedResource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    Piece::Text(Cow::Borrowed(&t.text))
                }
                EmbeddedResourceResource::BlobResourceContents(b) => media(
                    Source::Resource { uri: &b.uri },
                    b.mime_type.as_deref(),
                    &b.blob,
                    max_media_len,
                ),
                _ => Piece::Text(Cow::Borrowed("[resource of an unknown kind]")),
            },
            _ => Piece::Text(Cow::Borrowed("[content of an unknown kind]")),
        });
    }
    if let Some(value) = &result.structured_content {
        let texts = result.content.iter().filter_map(|b| match b {
            ContentBlock::TextContent(t) => Some(t.text.as_str()),
            _ => None,
        });
        let add = match structured {
            StructuredText::WithoutText => texts.count() == 0,
            StructuredText::UnlessRepeated => !texts.into_iter().any(|t| is_same_json(t, value)),
        };
        if add {
            out.push(Piece::Text(Cow::Owned(value.to_string())));
        }
    }
    out
}

/// Whether `text` is `value` written as JSON (in any layout).
fn is_same_json(text: &str, value: &Value) -> bool {
    let trimmed = text.trim_start();
    // Only an object or array can be structured content; anything else is not worth
    // parsing.
    (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<Value>(trimmed).is_ok_and(|parsed| &parsed == value)
}

/// A piece of media, or its description when it cannot be passed on at all.
fn media<'a>(
    source: Source<'a>,
    mime: Option<&'a str>,
    data: &'a str,
    max_len: usize,
) -> Piece<'a> {
    let problem = if data.len() > max_len {
        Some(format!("over the {max_len}-byte limit"))
    } else if data.is_empty() {
        Some("empty".to_owned())
    } else if !is_base64(data) {
        Some("not valid base64".to_owned())
    } else {
        None
    };
    match (problem, mime.and_then(essence)) {
        (None, Some(mime)) => Piece::Media(Media { source, mime, data }),
        // Without a usable type no vendor can take the data; the description says so by
        // showing the type as it came, or none.
        (problem, _) => Piece::Text(Cow::Owned(describe(
            source,
            mime,
            data.len(),
            problem.as_deref(),
        ))),
    }
}

/// `[image: image/png, 12 bytes of base64 not shown]`, with `: why` before the bracket
/// when there is a reason beyond the vendor not taking it.
fn describe(source: Source<'_>, mime: Option<&str>, len: usize, why: Option<&str>) -> String {
    let why = why.map(|w| format!(": {w}")).unwrap_or_default();
    format!(
        "[{}, {len} bytes of base64 not shown{why}]",
        what(source, mime)
    )
}

/// The head of a description: `image: image/png`, `binary resource <uri>, application/pdf`.
fn what(source: Source<'_>, mime: Option<&str>) -> String {
    let mime = mime.unwrap_or_default();
    match source {
        Source::Image => format!("image: {mime}"),
        Source::Audio => format!("audio: {mime}"),
        Source::Resource { uri } if mime.is_empty() => format!("binary resource <{uri}>"),
        Source::Resource { uri } => format!("binary resource <{uri}>, {mime}"),
    }
}

/// The essence of a MIME type (`type/subtype`, parameters dropped) in lower case, if it is
/// one: both halves non-empty and made of RFC 6838 name characters.
fn essence(mime: &str) -> Option<String> {
    let essence = mime.split(';').next().unwrap_or_default().trim();
    let (kind, subtype) = essence.split_once('/')?;
    let name = |s: &str| {
        !s.is_empty()
            && s.len() <= 127
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b))
    };
    (name(kind) && name(subtype)).then(|| essence.to_ascii_lowercase())
}

/// Whether `data` is standard base64 with canonical padding, checked by decoding it in
/// chunks on the stack, so that a large piece costs no allocation.
fn is_base64(data: &str) -> bool {
    const CHUNK: usize = 4096;
    let bytes = data.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    let mut out = [0u8; CHUNK / 4 * 3];
    let mut rest = bytes;
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(rest.len().min(CHUNK));
        // A chunk decoded alone accepts padding at its own end; only the last may have it.
        if !tail.is_empty() && chunk.last() == Some(&b'=') {
            return false;
        }
        if STANDARD.decode_slice(chunk, &mut out).is_err() {
            return false;
        }
        rest = tail;
    }
    true
}

impl Media<'_> {
    /// `data:<mime>;base64,<data>`.
    fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.mime, self.data)
    }

    /// The description of media a vendor does not take.
    fn describe(&self) -> String {
        describe(self.source, Some(&self.mime), self.data.len(), None)
    }

    /// A line saying where the media went, for the text that stays in place.
    fn placeholder(&self, place: &str) -> String {
        format!("[{}, {place}]", what(self.source, Some(&self.mime)))
    }

    fn is_image(&self) -> bool {
        IMAGE_TYPES.contains(&self.mime.as_str())
    }

    fn is_pdf(&self) -> bool {
        self.mime == PDF
    }

    /// The `format` of an OpenAI Chat `input_audio` part, which takes only WAV and MP3.
    fn openai_audio_format(&self) -> Option<&'static str> {
        match self.mime.as_str() {
            "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => Some("wav"),
            "audio/mpeg" | "audio/mp3" => Some("mp3"),
            _ => None,
        }
    }

    /// A file name for the vendors that want one with a file: the last segment of the
    /// resource's URI (without query or fragment), else `attachment`, with `.pdf` added to
    /// a PDF's name without it (OpenAI reads the type from the extension). Cut to 128
    /// characters: the URI is the server's text.
    fn filename(&self) -> String {
        let segment = match self.source {
            Source::Resource { uri } => uri
                .split(['?', '#'])
                .next()
                .unwrap_or_default()
                .rsplit('/')
                .next()
                .unwrap_or_default(),
            Source::Image | Source::Audio => "",
        };
        let mut name: String = if segment.is_empty() {
            "attachment".to_owned()
        } else {
            segment.chars().take(128).collect()
        };
        if self.is_pdf() && !name.to_ascii_lowercase().ends_with(".pdf") {
            name.push_str(".pdf");
        }
        name
    }
}

/// `Error: ` before the first text of an error result, for the vendors without an error
/// flag (OpenAI).
fn error_prefixed(text: String, is_error: bool) -> String {
    if is_error {
        format!("Error: {text}")
    } else {
        text
    }
}

/// OpenAI Chat Completions: the tool message's text, and the parts (images, WAV and MP3
/// audio, PDFs) for the user message that follows the tool messages, since a tool
/// message's content can only be text.
pub(crate) fn openai_chat(
    result: &CallToolResult,
    max_media_len: usize,
    is_error: bool,
) -> (String, Vec<Value>) {
    let mut lines = Vec::new();
    let mut parts = Vec::new();
    for piece in pieces(result, max_media_len, StructuredText::UnlessRepeated) {
        let media = match piece {
            Piece::Text(text) => {
                lines.push(text.into_owned());
                continue;
            }
            Piece::Media(media) => media,
        };
        let part = if media.is_image() {
            Some(json!({"type": "image_url", "image_url": {"url": media.data_url()}}))
        } else if let Some(format) = media.openai_audio_format() {
            Some(
                json!({"type": "input_audio", "input_audio": {"data": media.data, "format": format}}),
            )
        } else if media.is_pdf() {
            Some(
                json!({"type": "file", "file": {"filename": media.filename(), "file_data": media.data_url()}}),
            )
        } else {
            None
        };
        match part {
            Some(part) => {
                lines.push(media.placeholder("in the user message after the tool results"));
                parts.push(part);
            }
            None => lines.push(media.describe()),
        }
    }
    (error_prefixed(lines.join("\n"), is_error), parts)
}

/// A piece in a vendor's content array: text, or the vendor's own part for media.
enum Part {
    Text(String),
    Other(Value),
}

/// OpenAI Responses: a `function_call_output`'s `output`, a string when every piece is
/// text (as before media were passed), else an array of `input_text`, `input_image` and
/// `input_file` (PDF) items.
pub(crate) fn openai_responses(
    result: &CallToolResult,
    max_media_len: usize,
    is_error: bool,
) -> Value {
    let mut parts: Vec<Part> = pieces(result, max_media_len, StructuredText::UnlessRepeated)
        .into_iter()
        .map(|piece| match piece {
            Piece::Text(text) => Part::Text(text.into_owned()),
            Piece::Media(m) if m.is_image() => {
                Part::Other(json!({"type": "input_image", "image_url": m.data_url()}))
            }
            Piece::Media(m) if m.is_pdf() => Part::Other(
                json!({"type": "input_file", "filename": m.filename(), "file_data": m.data_url()}),
            ),
            Piece::Media(m) => Part::Text(m.describe()),
        })
        .collect();
    if parts.iter().all(|p| matches!(p, Part::Text(_))) {
        let lines: Vec<String> = parts
            .into_iter()
            .filter_map(|p| match p {
                Part::Text(text) => Some(text),
                Part::Other(_) => None,
            })
            .collect();
        return Value::String(error_prefixed(lines.join("\n"), is_error));
    }
    if is_error {
        match parts.first_mut() {
            Some(Part::Text(text)) => *text = format!("Error: {text}"),
            _ => parts.insert(0, Part::Text("Error:".to_owned())),
        }
    }
    Value::Array(
        parts
            .into_iter()
            .map(|part| match part {
                Part::Text(text) => json!({"type": "input_text", "text": text}),
                Part::Other(item) => item,
            })
            .collect(),
    )
}

/// Anthropic: the `tool_result`'s content blocks, with images as `image` blocks and PDFs
/// as `document` blocks (both with a base64 `source`); audio and other types described.
pub(crate) fn anthropic(result: &CallToolResult, max_media_len: usize) -> Vec<Value> {
    pieces(result, max_media_len, StructuredText::UnlessRepeated)
        .into_iter()
        .map(|piece| match piece {
            Piece::Text(text) => json!({"type": "text", "text": text}),
            Piece::Media(m) if m.is_image() || m.is_pdf() => json!({
                "type": if m.is_image() { "image" } else { "document" },
                "source": {"type": "base64", "media_type": m.mime, "data": m.data}
            }),
            Piece::Media(m) => json!({"type": "text", "text": m.describe()}),
        })
        .collect()
}

/// Gemini: the text for the `functionResponse`'s `response`, and its `parts`, one
/// `inlineData` each for every piece of media (Gemini takes images, audio and other
/// binary data inline).
pub(crate) fn gemini(result: &CallToolResult, max_media_len: usize) -> (String, Vec<Value>) {
    let mut lines = Vec::new();
    let mut parts = Vec::new();
    for piece in pieces(result, max_media_len, StructuredText::WithoutText) {
        match piece {
            Piece::Text(text) => lines.push(text.into_owned()),
            Piece::Media(m) => {
                lines.push(m.placeholder("in the parts of this response"));
                parts.push(json!({"inlineData": {"mimeType": m.mime, "data": m.data}}));
            }
        }
    }
    (lines.join("\n"), parts)
}

#[cfg(test)]
mod tests {
    use mcp_types::{CallToolResult, ContentBlock};
    use serde_json::json;

    use super::*;
    use crate::ToolOutcome;

    /// What an image of `data` becomes in a result with a media limit of `max`: the data
    /// passed on, or the description.
    fn image(data: &str, max: usize) -> Result<String, String> {
        let result = CallToolResult::new(vec![ContentBlock::image(data, "image/png")]);
        match pieces(&result, max, StructuredText::UnlessRepeated).pop() {
            Some(Piece::Media(m)) => Ok(m.data.to_owned()),
            Some(Piece::Text(text)) => Err(text.into_owned()),
            None => Err("nothing".to_owned()),
        }
    }

    #[test]
    fn media_at_the_limit_pass_and_past_it_are_described() {
        assert_eq!(image("AAAAAAAA", 8), Ok("AAAAAAAA".to_owned()));
        // The length is checked first: one byte more is over the limit, whatever it holds.
        assert_eq!(
            image("AAAAAAAAA", 8),
            Err(
                "[image: image/png, 9 bytes of base64 not shown: over the 8-byte limit]".to_owned()
            )
        );
        let at = "A".repeat(DEFAULT_MAX_MEDIA_LEN);
        assert!(image(&at, DEFAULT_MAX_MEDIA_LEN).is_ok());
        let past = "A".repeat(DEFAULT_MAX_MEDIA_LEN + 1);
        let described = image(&past, DEFAULT_MAX_MEDIA_LEN).unwrap_err();
        assert!(
            described.ends_with("over the 4194304-byte limit]"),
            "{described}"
        );
    }

    #[test]
    fn every_vendor_describes_media_past_the_outcome_s_limit() {
        let result = CallToolResult::new(vec![ContentBlock::image("AAAAAAAA", "image/png")]);
        let described = "[image: image/png, 8 bytes of base64 not shown: over the 4-byte limit]";
        let small = ToolOutcome::new("c", "s__t", result.clone()).with_max_media_len(4);
        assert_eq!(small.to_openai_chat()["content"], described);
        assert_eq!(small.to_openai_chat_follow_up(), None);
        assert_eq!(small.to_openai_responses()["output"], described);
        assert_eq!(small.to_anthropic()["content"][0]["text"], described);
        assert_eq!(
            small.to_gemini()["functionResponse"]["response"]["content"],
            described
        );
        assert!(small.to_gemini()["functionResponse"].get("parts").is_none());
        let exact = ToolOutcome::new("c", "s__t", result).with_max_media_len(8);
        assert_eq!(exact.to_anthropic()["content"][0]["type"], "image");
        assert!(exact.to_openai_chat_follow_up().is_some());
    }

    #[test]
    fn only_canonical_standard_base64_is_data() {
        let valid = [
            "AAAA".to_owned(),
            "QQ==".to_owned(),
            "QUE=".to_owned(),
            "iVBORw0KGgo=".to_owned(),
            "+/+/".to_owned(),
            // Padding right after the first 4096-character chunk.
            format!("{}QQ==", "A".repeat(4096)),
            "A".repeat(3 * 4096),
        ];
        for data in &valid {
            assert!(is_base64(data), "{data:.20}");
        }
        let invalid = [
            "AAA".to_owned(),
            "AAAAA".to_owned(),
            "AA=A".to_owned(),
            "====".to_owned(),
            "AA==AA==".to_owned(),
            "AAA*".to_owned(),
            "AAAA\n".to_owned(),
            "AAA\u{e9}".to_owned(),
            "-_-_".to_owned(),
            // Non-zero bits after the last byte: not what an encoder writes.
            "QR==".to_owned(),
            // Padding at the end of a chunk that is not the last one.
            format!("{}QQ==AAAA", "A".repeat(4092)),
            format!("{}*AAA", "A".repeat(8192)),
        ];
        for data in &invalid {
            assert!(!is_base64(data), "{data:.20}");
        }
        assert_eq!(
            image("AA=A", 100),
            Err("[image: image/png, 4 bytes of base64 not shown: not valid base64]".to_owned())
        );
        assert_eq!(
            image("", 100),
            Err("[image: image/png, 0 bytes of base64 not shown: empty]".to_owned())
        );
    }

    #[test]
    fn mime_types_are_checked_and_normalised() {
        assert_eq!(essence("image/png").as_deref(), Some("image/png"));
        assert_eq!(essence(" Image/PNG ; q=1").as_deref(), Some("image/png"));
        assert_eq!(
            essence("application/vnd.ms-excel").as_deref(),
            Some("application/vnd.ms-excel")
        );
        for bad in [
            "",
            "image",
            "image/",
            "/png",
            "image/png,evil",
            "image/p ng",
            "a/b/c",
            "\u{e9}/x",
        ] {
            assert_eq!(essence(bad), None, "{bad}");
        }
        // Data whose type cannot go into a data URL is described, with the type as it came.
        let result = CallToolResult::new(vec![ContentBlock::audio("AAAA", "audio/wav,x")]);
        let outcome = ToolOutcome::new("c", "s__t", result);
        assert_eq!(
            outcome.to_anthropic()["content"][0]["text"],
            "[audio: audio/wav,x, 4 bytes of base64 not shown]"
        );
        assert!(
            outcome.to_gemini()["functionResponse"]
                .get("parts")
                .is_none()
        );
    }

    #[test]
    fn file_names_come_from_the_resource_uri() {
        let name = |uri: &str, mime: &str| {
            let result = CallToolResult::new(vec![ContentBlock::embedded_blob(
                uri,
                Some(mime.into()),
                "AAAA",
            )]);
            match pieces(&result, 100, StructuredText::UnlessRepeated).pop() {
                Some(Piece::Media(m)) => m.filename(),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(name("file:///docs/report.pdf", PDF), "report.pdf");
        assert_eq!(name("https://x/a/b.PDF?x=1#y", PDF), "b.PDF");
        assert_eq!(name("db://rows/7", PDF), "7.pdf");
        assert_eq!(name("file:///dir/", PDF), "attachment.pdf");
        assert_eq!(name("file:///x.bin", "application/octet-stream"), "x.bin");
        assert_eq!(
            name(&format!("file:///{}", "\u{e9}".repeat(500)), PDF)
                .chars()
                .count(),
            132
        );
    }

    #[test]
    fn no_input_panics() {
        let data = [
            "",
            "A",
            "AAAA",
            "AA==",
            "\u{0}",
            "\u{1F600}\u{1F600}",
            "=",
            "AAAA====",
            "A=AA",
        ];
        let mimes = [
            "",
            "/",
            "image/png",
            "audio/mpeg",
            PDF,
            "x/y;",
            ";",
            "\u{e9}/\u{e9}",
            "image/svg+xml",
        ];
        let mut blocks = Vec::new();
        for d in data {
            for m in mimes {
                blocks.push(ContentBlock::image(d, m));
                blocks.push(ContentBlock::audio(d, m));
                blocks.push(ContentBlock::embedded_blob(m, Some(m.into()), d));
                blocks.push(ContentBlock::embedded_blob(d, None, d));
                blocks.push(ContentBlock::embedded_text(m, None, d));
                blocks.push(ContentBlock::text(d));
            }
        }
        let mut result = CallToolResult::new(blocks);
        result.structured_content = Some(json!({"deep": [[[{"x": null}]]]}));
        for max in [0, 1, 4, 100] {
            for is_error in [None, Some(true), Some(false)] {
                let mut result = result.clone();
                result.is_error = is_error;
                let outcome = ToolOutcome::new("c", "s__t", result).with_max_media_len(max);
                for vendor in crate::Vendor::ALL {
                    let _ = outcome.to_vendor(vendor);
                }
                let _ = ToolOutcome::openai_chat_messages(std::slice::from_ref(&outcome));
            }
        }
    }
}
