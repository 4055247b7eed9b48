//! The Skills extension's messages (`io.modelcontextprotocol/skills`, SEP-2640), written by
//! hand from the SEP (`seps/2640-skills-extension.md` of the specification repository; the
//! extension has no schema among the five revisions `cargo xtask codegen` reads).
//!
//! A skill is a directory of files served as resources, minimally a `SKILL.md` that opens
//! with YAML frontmatter (`name`, `description`). A server that declares the extension
//! answers `skills/list` ([`ListSkillsResult`], one [`SkillEntry`] per skill, never split
//! across pages) and `skills/get` ([`GetSkillResult`]); with `directoryRead` it also answers
//! `resources/directory/read` ([`ReadDirectoryResult`]). An entry carries the skill's
//! frontmatter rendered as JSON and its complete file manifest ([`SkillResources`]): every
//! file's URI, SHA-256 digest and size, which a client verifies each file against when it
//! reads it through the ordinary `resources/read`.
//!
//! Beside the types sit the extension's context-free rules, so that the server (which
//! refuses a skill breaking them) and the client (which refuses content breaking them)
//! cannot drift apart: [`is_valid_name`], [`is_valid_digest`], [`skill_root`],
//! [`skill_name`], [`split_frontmatter`], the limits, and with the `frontmatter` feature
//! [`parse_frontmatter`], the one YAML reading of a `SKILL.md` both sides use.
//!
//! ```
//! use mcp_types::skills::{ListSkillsResult, SkillResources};
//!
//! let wire = r#"{"resultType":"complete","ttlMs":0,"cacheScope":"public","skills":[{
//!     "uri":"skill://git-workflow/SKILL.md",
//!     "frontmatter":{"name":"git-workflow","description":"Follow the team's Git conventions"},
//!     "resources":[{"uri":"skill://git-workflow/SKILL.md","size":2314,
//!         "digest":"sha256:a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"}]}]}"#;
//! let list: ListSkillsResult = serde_json::from_str(wire)?;
//! let entry = &list.skills[0];
//! assert_eq!(entry.name(), Some("git-workflow"));
//! assert!(matches!(&entry.resources, SkillResources::Files(files) if files[0].size == 2314));
//! # Ok::<(), serde_json::Error>(())
//! ```

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::tag::{JsonRpcVersion, string_tag};
use crate::tasks::request;
use crate::{
    CacheScope, JsonObject, PaginatedRequestParams, RequestId, RequestMetaObject, Resource,
    ResultMetaObject, ResultType,
};

#[cfg(feature = "frontmatter")]
mod frontmatter;

#[cfg(feature = "frontmatter")]
pub use frontmatter::{FrontmatterError, MAX_FRONTMATTER_NODES, parse_frontmatter};

/// The extension's identifier, the key under `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/skills";

/// The URI scheme servers should serve skills under (`skill://<skill-path>/<file-path>`).
pub const SCHEME: &str = "skill";

/// The file every skill has at its root.
pub const SKILL_MD: &str = "SKILL.md";

/// The `mimeType` of a `SKILL.md` resource.
pub const SKILL_MD_MIME_TYPE: &str = "text/markdown";

/// The `mimeType` of a directory resource (`resources/directory/read`).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// The prefix of the `_meta` keys of skill resources.
pub const META_PREFIX: &str = "io.modelcontextprotocol.skills/";

/// The prefix of the frontmatter `metadata` keys reserved for MCP extensions (this extension
/// defines none).
pub const RESERVED_METADATA_PREFIX: &str = "io.modelcontextprotocol/";

/// The most entries a skill's `resources` should have, `SKILL.md` included (Limits).
pub const MAX_RESOURCES_PER_SKILL: usize = 512;

/// The most bytes a skill's files should add up to, 16 MiB (Limits).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The longest skill name the Agent Skills specification allows.
pub const MAX_NAME_LEN: usize = 64;

/// The longest skill description the Agent Skills specification allows.
pub const MAX_DESCRIPTION_LEN: usize = 1024;

/// The value of `resources` for a skill whose content is generated and cannot be digested.
pub const DYNAMIC: &str = "dynamic";

/// The extension's method names.
pub mod method {
    /// `skills/list`
    pub const SKILLS_LIST: &str = "skills/list";
    /// `skills/get`
    pub const SKILLS_GET: &str = "skills/get";
    /// `resources/directory/read` (only with `directoryRead: true`)
    pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";
}

string_tag!(SkillsListMethod, "skills/list");
string_tag!(SkillsGetMethod, "skills/get");
string_tag!(ResourcesDirectoryReadMethod, "resources/directory/read");

/// The extension's settings under `capabilities.extensions["io.modelcontextprotocol/skills"]`
/// (Capability Declaration). An empty object declares the extension with no optional
/// feature.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillsSettings {
    /// Whether the server implements `resources/directory/read` (default `false`).
    #[serde(
        rename = "directoryRead",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub directory_read: Option<bool>,
}

impl SkillsSettings {
    /// No optional feature.
    pub fn new() -> Self {
        SkillsSettings::default()
    }

    /// Whether `resources/directory/read` may be called.
    pub fn directory_read(&self) -> bool {
        self.directory_read == Some(true)
    }
}

/// One file of a skill's manifest: its URI, the SHA-256 of its raw bytes and their count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's resource URI: the skill's `SKILL.md` or a file within its directory.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits ([`is_valid_digest`]).
    pub digest: String,
    /// The length in bytes of the file's raw content, the bytes the digest covers.
    pub size: u64,
}

impl SkillFile {
    /// A manifest entry.
    pub fn new(uri: impl Into<String>, digest: impl Into<String>, size: u64) -> Self {
        SkillFile {
            uri: uri.into(),
            digest: digest.into(),
            size,
        }
    }
}

/// A skill's `resources`: its complete manifest, or `"dynamic"` for a skill whose content
/// is generated and offers no integrity. Any other value (a missing member included) is an
/// invalid entry and does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillResources {
    /// Every file of the skill, each once, `SKILL.md` included.
    Files(Vec<SkillFile>),
    /// `"dynamic"`: no manifest.
    Dynamic,
}

impl SkillResources {
    /// The manifest, unless the skill is dynamic.
    pub fn files(&self) -> Option<&[SkillFile]> {
        match self {
            SkillResources::Files(files) => Some(files),
            SkillResources::Dynamic => None,
        }
    }

    /// The manifest entry of `uri`.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        self.files()?.iter().find(|f| f.uri == uri)
    }
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(files) => files.serialize(serializer),
            SkillResources::Dynamic => serializer.serialize_str(DYNAMIC),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ResourcesVisitor;

        impl<'de> Visitor<'de> for ResourcesVisitor {
            type Value = SkillResources;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of {uri, digest, size} or the string \"dynamic\"")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<SkillResources, E> {
                if v == DYNAMIC {
                    Ok(SkillResources::Dynamic)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }

            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<SkillResources, A::Error> {
                Vec::<SkillFile>::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(SkillResources::Files)
            }
        }

        deserializer.deserialize_any(ResourcesVisitor)
    }
}

/// A skill entry of `skills/list` and `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SkillEntry {
    /// The resource URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` YAML frontmatter rendered verbatim as JSON: every field the author
    /// wrote, `name` and `description` always among them.
    pub frontmatter: JsonObject,
    /// The skill's files.
    pub resources: SkillResources,
}

impl SkillEntry {
    /// An entry.
    pub fn new(uri: impl Into<String>, frontmatter: JsonObject, resources: SkillResources) -> Self {
        SkillEntry {
            uri: uri.into(),
            frontmatter,
            resources,
        }
    }

    /// The frontmatter's `name`, when it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name")?.as_str()
    }

    /// The frontmatter's `description`, when it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description")?.as_str()
    }
}

/// Declares a result that is one page of a listing, as the extension's listings all are:
/// `_meta`, `resultType` (always `"complete"`), the page's items, the next cursor and the
/// list-caching attributes, with `new` for a page of the items alone.
macro_rules! page_result {
    (
        $(#[$doc:meta])*
        $name:ident,
        $(#[$items_doc:meta])*
        $items:ident: $item:ty,
        $new_doc:literal $(,)?
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[non_exhaustive]
        pub struct $name {
            /// Metadata (`_meta`).
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
            pub meta: Option<ResultMetaObject>,
            /// Always `"complete"`.
            #[serde(rename = "resultType", default)]
            pub result_type: ResultType,
            $(#[$items_doc])*
            pub $items: Vec<$item>,
            /// The cursor of the next page.
            #[serde(
                rename = "nextCursor",
                default,
                skip_serializing_if = "Option::is_none"
            )]
            pub next_cursor: Option<String>,
            /// How long the listing stays fresh, in milliseconds.
            #[serde(rename = "ttlMs", default, skip_serializing_if = "Option::is_none")]
            pub ttl_ms: Option<u64>,
            /// Who may share a cached copy.
            #[serde(
                rename = "cacheScope",
                default,
                skip_serializing_if = "Option::is_none"
            )]
            pub cache_scope: Option<CacheScope>,
        }

        impl $name {
            #[doc = $new_doc]
            pub fn new($items: Vec<$item>) -> Self {
                $name {
                    meta: None,
                    result_type: ResultType::Complete,
                    $items,
                    next_cursor: None,
                    ttl_ms: None,
                    cache_scope: None,
                }
            }
        }
    };
}

page_result!(
    /// The result of `skills/list`: a page of entries, with the list-caching attributes.
    ListSkillsResult,
    /// The entries of this page; an entry is never split across pages.
    skills: SkillEntry,
    "A page of `skills`.",
);

/// The params of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetSkillRequestParams {
    /// Metadata (`_meta`).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
}

impl GetSkillRequestParams {
    /// Params naming the skill at `uri`.
    pub fn new(meta: RequestMetaObject, uri: impl Into<String>) -> Self {
        GetSkillRequestParams {
            meta,
            uri: uri.into(),
        }
    }
}

/// The result of `skills/get`: one entry, no cursor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GetSkillResult {
    /// Metadata (`_meta`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// Always `"complete"`.
    #[serde(rename = "resultType", default)]
    pub result_type: ResultType,
    /// The entry.
    pub skill: SkillEntry,
    /// How long the entry stays fresh, in milliseconds.
    #[serde(rename = "ttlMs", default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may share a cached copy.
    #[serde(
        rename = "cacheScope",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub cache_scope: Option<CacheScope>,
}

impl GetSkillResult {
    /// The result for `skill`.
    pub fn new(skill: SkillEntry) -> Self {
        GetSkillResult {
            meta: None,
            result_type: ResultType::Complete,
            skill,
            ttl_ms: None,
            cache_scope: None,
        }
    }
}

/// The params of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadDirectoryRequestParams {
    /// Metadata (`_meta`).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The directory's URI, without a trailing slash.
    pub uri: String,
    /// The cursor of the page to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl ReadDirectoryRequestParams {
    /// Params for the first page of the directory `uri`.
    pub fn new(meta: RequestMetaObject, uri: impl Into<String>) -> Self {
        ReadDirectoryRequestParams {
            meta,
            uri: uri.into(),
            cursor: None,
        }
    }
}

page_result!(
    /// The result of `resources/directory/read`: the directory's direct children, files with
    /// their resource metadata and subdirectories with `mimeType` [`DIRECTORY_MIME_TYPE`].
    ReadDirectoryResult,
    /// The children of this page.
    resources: Resource,
    "A page of `resources`.",
);

request!(
    /// `skills/list`: a page of the skills the server serves.
    ListSkillsRequest,
    SkillsListMethod,
    PaginatedRequestParams,
    ListSkillsResult,
    method::SKILLS_LIST
);
request!(
    /// `skills/get`: the entry of one skill, listed or not.
    GetSkillRequest,
    SkillsGetMethod,
    GetSkillRequestParams,
    GetSkillResult,
    method::SKILLS_GET
);
request!(
    /// `resources/directory/read`: the direct children of a directory resource.
    ReadDirectoryRequest,
    ResourcesDirectoryReadMethod,
    ReadDirectoryRequestParams,
    ReadDirectoryResult,
    method::RESOURCES_DIRECTORY_READ
);

/// Whether `name` follows the Agent Skills naming rules: 1 to 64 characters, lowercase
/// ASCII letters, digits and hyphens, no leading, trailing or consecutive hyphen.
///
/// ```
/// use mcp_types::skills::is_valid_name;
///
/// assert!(is_valid_name("pdf-processing"));
/// for bad in ["", "PDF", "-pdf", "pdf-", "pdf--x", "pdf_x", "index.json"] {
///     assert!(!is_valid_name(bad), "{bad}");
/// }
/// ```
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// Whether `digest` is `sha256:` followed by 64 lowercase hexadecimal digits.
pub fn is_valid_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Formats a SHA-256 hash as a digest (`sha256:` and lowercase hex).
pub fn format_digest(hash: &[u8; 32]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

/// The skill's root directory from the URI of its `SKILL.md`: the URI without `/SKILL.md`,
/// when there is at least one skill-path segment before it.
///
/// ```
/// use mcp_types::skills::{skill_name, skill_root};
///
/// assert_eq!(skill_root("skill://acme/billing/refunds/SKILL.md"), Some("skill://acme/billing/refunds"));
/// assert_eq!(skill_name("skill://acme/billing/refunds/SKILL.md"), Some("refunds"));
/// assert_eq!(skill_root("skill://SKILL.md"), None);
/// assert_eq!(skill_root("skill://refunds/README.md"), None);
/// ```
pub fn skill_root(uri: &str) -> Option<&str> {
    let root = uri.strip_suffix(SKILL_MD)?.strip_suffix('/')?;
    let (_, path) = root.split_once("://")?;
    (!path.is_empty() && path.split('/').all(|s| !s.is_empty())).then_some(root)
}

/// The skill's name as its URI states it: the final skill-path segment.
pub fn skill_name(uri: &str) -> Option<&str> {
    let root = skill_root(uri)?;
    root.rsplit('/').next()
}

/// Whether `uri` is the skill's `SKILL.md` (`skill_uri`) or a file within its directory.
pub fn is_within_skill(skill_uri: &str, uri: &str) -> bool {
    uri == skill_uri
        || skill_root(skill_uri).is_some_and(|root| {
            uri.strip_prefix(root)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|path| !path.is_empty() && path.split('/').all(is_plain_segment))
        })
}

/// A path segment that names an entry rather than moving around (`.`, `..`, empty).
fn is_plain_segment(segment: &str) -> bool {
    !segment.is_empty() && segment != "." && segment != ".."
}

/// The YAML frontmatter of a `SKILL.md` and the body after it, or `None` when the text does
/// not open with a frontmatter block.
///
/// The block is what the conformance suite and common frontmatter readers accept: an
/// optional byte-order mark, a first line that is exactly `---`, and everything up to the
/// first later line that is `---` (trailing spaces and tabs allowed); `\r\n` line ends
/// work as `\n` ones.
///
/// ```
/// use mcp_types::skills::split_frontmatter;
///
/// let (yaml, body) = split_frontmatter("---\nname: a\ndescription: b\n---\n# A\n").unwrap();
/// assert_eq!((yaml, body), ("name: a\ndescription: b", "# A\n"));
/// assert!(split_frontmatter("# no frontmatter").is_none());
/// ```
pub fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut from = 0;
    while let Some(found) = rest[from..].find("\n---") {
        let newline = from + found;
        let after = &rest[newline + 4..];
        let trimmed = after.trim_start_matches([' ', '\t']);
        let body = if trimmed.is_empty() {
            Some("")
        } else {
            trimmed
                .strip_prefix('\n')
                .or_else(|| trimmed.strip_prefix("\r\n"))
        };
        if let Some(body) = body {
            let yaml = &rest[..newline];
            return Some((yaml.strip_suffix('\r').unwrap_or(yaml), body));
        }
        from = newline + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_formatted_and_checked_alike() {
        let digest = format_digest(&[0xab; 32]);
        assert!(is_valid_digest(&digest));
        assert_eq!(digest.len(), 71);
        for bad in [
            "sha256:",
            "sha1:abcd",
            &digest.to_uppercase(),
            &digest[..70],
            &format!("{digest}0"),
        ] {
            assert!(!is_valid_digest(bad), "{bad}");
        }
    }

    #[test]
    fn frontmatter_blocks_end_at_the_first_closing_line() {
        assert_eq!(
            split_frontmatter("\u{feff}---\r\nname: a\r\n---  \r\nbody"),
            Some(("name: a", "body"))
        );
        // The closing line may end the text; `----` and `--- x` do not close.
        assert_eq!(
            split_frontmatter("---\na: 1\n----\nb: 2\n--- x\n---"),
            Some(("a: 1\n----\nb: 2\n--- x", ""))
        );
        for none in [
            "---\n---\n",
            "--- \na: 1\n---\n",
            "a: 1\n---\n",
            "---\na: 1\n",
        ] {
            assert_eq!(split_frontmatter(none), None, "{none:?}");
        }
    }

    #[test]
    fn files_within_a_skill_are_under_its_root() {
        let skill = "skill://pdf/SKILL.md";
        assert!(is_within_skill(skill, skill));
        assert!(is_within_skill(skill, "skill://pdf/references/FORMS.md"));
        for outside in [
            "skill://pdf",
            "skill://pdf/",
            "skill://pdfx/SKILL.md",
            "skill://pdf/../other/SKILL.md",
            "skill://pdf/a//b",
            "skill://other/pdf/x",
        ] {
            assert!(!is_within_skill(skill, outside), "{outside}");
        }
    }

    #[test]
    fn resources_read_as_a_manifest_or_dynamic_and_nothing_else() {
        let dynamic: SkillResources = serde_json::from_str("\"dynamic\"").unwrap();
        assert_eq!(dynamic, SkillResources::Dynamic);
        assert_eq!(serde_json::to_string(&dynamic).unwrap(), "\"dynamic\"");
        let files: SkillResources =
            serde_json::from_str(r#"[{"uri":"skill://a/SKILL.md","digest":"sha256:00","size":3}]"#)
                .unwrap();
        assert_eq!(files.file("skill://a/SKILL.md").map(|f| f.size), Some(3));
        for bad in [
            "\"static\"",
            "null",
            "{}",
            "3",
            r#"[{"uri":"x","digest":"y"}]"#,
        ] {
            assert!(
                serde_json::from_str::<SkillResources>(bad).is_err(),
                "{bad}"
            );
        }
        let missing = r#"{"uri":"skill://a/SKILL.md","frontmatter":{}}"#;
        assert!(serde_json::from_str::<SkillEntry>(missing).is_err());
    }
}
