//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640; feature `skills`):
//! [Agent Skills](https://agentskills.io/specification) served as resources.
//!
//! A [`Skill`] is a directory of files, built in memory ([`Skill::builder`]) or read from
//! disk ([`Skill::from_dir`], or every skill under a root with [`Skills::from_root`]). Its
//! `SKILL.md` opens with YAML frontmatter holding at least `name` and `description`. Each
//! file is served at `skill://<skill-path>/<file-path>` through the ordinary
//! `resources/list` and `resources/read` (a `SKILL.md` listed as `text/markdown` with the
//! frontmatter's `name` and `description`), and [`ServerBuilder::skills`] declares the
//! extension and answers:
//!
//! - `skills/list`: one entry per skill (the frontmatter as JSON, and the manifest of every
//!   file with its `sha256:` digest and size), paginated by whole entries
//!   ([`Skills::page_size`]) so an entry is never split across pages;
//! - `skills/get`: one entry by the URI of its `SKILL.md`, -32602 for any other URI;
//! - with [`Skills::directory_read`], `resources/directory/read`: the direct children of any
//!   directory of the skill namespace (`skill://pdf-processing`,
//!   `skill://pdf-processing/templates`, ...), subdirectories as `inode/directory`, -32602
//!   for a file or an unknown URI.
//!
//! Everything is checked and computed once, when the skill is built: the naming rules (the
//! final skill-path segment is the frontmatter `name`, 1 to 64 lowercase letters, digits
//! and single hyphens), the frontmatter (`name` and a `description` of at most 1024
//! characters, no `metadata` key under the reserved `io.modelcontextprotocol/` prefix), safe
//! relative file paths, and the limits every host accepts (512 files, 16 MiB). A skill that
//! breaks a rule is refused with [`Error::InvalidSkill`] rather than served. Digests and
//! sizes are computed from the bytes that `resources/read` will serve, so they cannot
//! disagree.
//!
//! The extension's methods are served whether or not a request declares the extension:
//! the SEP binds them to the server's declaration alone (a client calls them after seeing
//! it in `server/discover`). Results carry the cache policy of `resources/list`
//! (`skills/list`, `resources/directory/read`) or `resources/read` (`skills/get`), see
//! [`ServerBuilder::cache_for`].
//!
//! ```
//! use mcp_server::Server;
//! use mcp_server::skills::{Skill, Skills};
//!
//! let skill = Skill::builder("pdf-processing")
//!     .file("SKILL.md", "---\nname: pdf-processing\ndescription: Fill PDF forms\n---\n# PDF\nSee references/FORMS.md.\n")
//!     .file("references/FORMS.md", "# Forms\n")
//!     .build();
//! let server = Server::builder("docs", "1.0")
//!     .skills(Skills::new().skill(skill).directory_read(true))
//!     .build()?;
//! let declared = &server.capabilities().extensions.as_ref().unwrap()["io.modelcontextprotocol/skills"];
//! assert_eq!(declared["directoryRead"], true);
//! # Ok::<(), mcp_server::Error>(())
//! ```
//!
//! [`ServerBuilder::skills`]: crate::ServerBuilder::skills
//! [`ServerBuilder::cache_for`]: crate::ServerBuilder::cache_for

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use mcp_types::JsonObject;
use mcp_types::skills::{
    self as wire, MAX_DESCRIPTION_LEN, MAX_RESOURCES_PER_SKILL, MAX_SKILL_BYTES,
    RESERVED_METADATA_PREFIX, SKILL_MD, SkillEntry, SkillFile, SkillResources,
};
use sha2::{Digest, Sha256};

use crate::error::Error;

mod disk;

/// One file of a skill, as served.
#[derive(Debug, Clone)]
pub(crate) struct ServedFile {
    /// The file's resource URI.
    pub(crate) uri: String,
    /// Its path within the skill, `/`-separated, as given.
    pub(crate) path: String,
    /// The raw bytes `resources/read` serves.
    pub(crate) bytes: Arc<[u8]>,
    /// The `mimeType` it is served with.
    pub(crate) mime_type: String,
    /// `sha256:` and the hex of the bytes' hash.
    pub(crate) digest: String,
}

/// A skill: its `SKILL.md` and supporting files, checked and digested.
#[derive(Debug, Clone)]
pub struct Skill {
    /// The skill path (`acme/billing/refunds`).
    pub(crate) path: String,
    /// The URI of its `SKILL.md`.
    pub(crate) uri: String,
    /// The frontmatter as JSON.
    pub(crate) frontmatter: JsonObject,
    /// The files, `SKILL.md` first.
    pub(crate) files: Vec<ServedFile>,
}

impl Skill {
    /// Starts building the skill at `path` (`git-workflow`, or with an organizational
    /// prefix, `acme/billing/refunds`; the final segment is the skill's name) from files in
    /// memory.
    pub fn builder(path: impl Into<String>) -> SkillBuilder {
        SkillBuilder {
            path: path.into(),
            scheme: wire::SCHEME.to_owned(),
            files: BTreeMap::new(),
        }
    }

    /// Reads the skill at `path` from the directory `dir` (its `SKILL.md` at the top, every
    /// regular file below it a supporting file). Symbolic links are not followed, and the
    /// reading stops past the limits (512 files, 16 MiB), so a hostile directory cannot make
    /// the server read without bound.
    pub fn from_dir(
        path: impl Into<String>,
        dir: impl AsRef<std::path::Path>,
    ) -> Result<Skill, Error> {
        let path = path.into();
        let files = disk::read_skill_dir(&path, dir.as_ref())?;
        let mut builder = Skill::builder(path);
        for (file, bytes) in files {
            builder = builder.file(file, bytes);
        }
        builder.build()
    }

    /// The URI of the skill's `SKILL.md`.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The skill's name (the frontmatter's `name`, the final skill-path segment).
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The frontmatter, as `skills/list` publishes it.
    pub fn frontmatter(&self) -> &JsonObject {
        &self.frontmatter
    }

    /// The entry `skills/list` and `skills/get` serve.
    pub fn entry(&self) -> SkillEntry {
        let files = self
            .files
            .iter()
            .map(|f| SkillFile::new(&f.uri, &f.digest, f.bytes.len() as u64))
            .collect();
        SkillEntry::new(
            &self.uri,
            self.frontmatter.clone(),
            SkillResources::Files(files),
        )
    }
}

/// Builds a [`Skill`] from files in memory.
#[derive(Debug, Clone)]
pub struct SkillBuilder {
    path: String,
    scheme: String,
    files: BTreeMap<String, (Vec<u8>, Option<String>)>,
}

impl SkillBuilder {
    /// Serves the skill under another URI scheme than `skill` (such as a scheme native to
    /// the server's domain); the structure of the URIs stays the same.
    #[must_use]
    pub fn scheme(mut self, scheme: impl Into<String>) -> Self {
        self.scheme = scheme.into();
        self
    }

    /// Adds the file at `path` (relative, `/`-separated: `SKILL.md`,
    /// `references/FORMS.md`), its MIME type guessed from its extension. Adding a path again
    /// replaces the file.
    #[must_use]
    pub fn file(mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.insert(path.into(), (bytes.into(), None));
        self
    }

    /// Adds the file at `path` with an explicit MIME type.
    #[must_use]
    pub fn file_with_mime_type(
        mut self,
        path: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
        mime_type: impl Into<String>,
    ) -> Self {
        self.files
            .insert(path.into(), (bytes.into(), Some(mime_type.into())));
        self
    }

    /// Checks the skill and computes its digests.
    pub fn build(self) -> Result<Skill, Error> {
        let invalid = |reason: String| Error::InvalidSkill {
            skill: self.path.clone(),
            reason,
        };
        check_scheme(&self.scheme).map_err(|r| invalid(r.to_owned()))?;
        check_skill_path(&self.path).map_err(&invalid)?;
        let root = format!("{}://{}", self.scheme, encode_path(&self.path));
        let uri = format!("{root}/{SKILL_MD}");
        if self.files.len() > MAX_RESOURCES_PER_SKILL {
            return Err(invalid(format!(
                "{} files, more than the {MAX_RESOURCES_PER_SKILL} every host accepts",
                self.files.len()
            )));
        }
        let total: u64 = self.files.values().map(|(b, _)| b.len() as u64).sum();
        if total > MAX_SKILL_BYTES {
            return Err(invalid(format!(
                "{total} bytes, more than the {MAX_SKILL_BYTES} every host accepts"
            )));
        }
        let Some((skill_md, _)) = self.files.get(SKILL_MD) else {
            return Err(invalid(format!("no {SKILL_MD} at the root")));
        };
        let frontmatter = check_skill_md(skill_md, &self.path).map_err(&invalid)?;
        let mut files = Vec::with_capacity(self.files.len());
        for (path, (bytes, mime_type)) in &self.files {
            check_file_path(path).map_err(|r| invalid(format!("file {path:?}: {r}")))?;
            let mime_type = mime_type
                .clone()
                .unwrap_or_else(|| guess_mime_type(path, bytes));
            let file = ServedFile {
                uri: format!("{root}/{}", encode_path(path)),
                path: path.clone(),
                digest: wire::format_digest(&Sha256::digest(bytes).into()),
                bytes: Arc::from(bytes.as_slice()),
                mime_type,
            };
            // SKILL.md first: the entry a host loads before anything else.
            if path == SKILL_MD {
                files.insert(0, file);
            } else {
                files.push(file);
            }
        }
        Ok(Skill {
            path: self.path,
            uri,
            frontmatter,
            files,
        })
    }
}

/// A set of skills to serve, with the extension's settings.
#[derive(Debug, Default)]
#[allow(clippy::struct_field_names, reason = "`skills` is the set's own list")]
pub struct Skills {
    pub(crate) skills: Vec<Skill>,
    pub(crate) directory_read: bool,
    pub(crate) page_size: Option<usize>,
    pub(crate) error: Option<Error>,
}

impl Skills {
    /// No skills yet, `directoryRead` off, pages of 100.
    pub fn new() -> Self {
        Skills::default()
    }

    /// Every skill under `root`: each directory holding a `SKILL.md` is a skill whose path
    /// is the directory's path below `root` (`root/acme/billing/refunds` serves
    /// `skill://acme/billing/refunds/SKILL.md`). A skill nested in another is served as a
    /// skill of its own and, being files of the outer skill, in the outer skill's manifest
    /// too (the SEP's nested skills).
    pub fn from_root(root: impl AsRef<std::path::Path>) -> Result<Skills, Error> {
        let mut skills = Skills::new();
        for (path, dir) in disk::find_skills(root.as_ref())? {
            skills = skills.skill(Skill::from_dir(path, dir));
        }
        match skills.error.take() {
            Some(error) => Err(error),
            None => Ok(skills),
        }
    }

    /// Adds a skill; an invalid one (or one whose URI is already taken) is an error when the
    /// server is built.
    #[must_use]
    pub fn skill(mut self, skill: Result<Skill, Error>) -> Self {
        match skill {
            Ok(skill) if self.skills.iter().any(|s| s.uri == skill.uri) => {
                let name = skill.uri;
                self.fail(Error::Duplicate {
                    kind: "skill",
                    name,
                });
            }
            Ok(skill) => {
                if let Some(other) = self.skills.iter().find(|s| s.name() == skill.name()) {
                    tracing::warn!(
                        name = skill.name(),
                        first = other.uri,
                        second = skill.uri,
                        "two skills share a name; hosts have to tell them apart by URI"
                    );
                }
                self.skills.push(skill);
            }
            Err(e) => self.fail(e),
        }
        self
    }

    /// Declares and serves `resources/directory/read` (default off).
    #[must_use]
    pub fn directory_read(mut self, on: bool) -> Self {
        self.directory_read = on;
        self
    }

    /// Sets how many entries a `skills/list` page and how many children a
    /// `resources/directory/read` page hold (default 100).
    #[must_use]
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = Some(size.max(1));
        self
    }

    /// The skills, in the order they are listed.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    fn fail(&mut self, error: Error) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }
}

/// A URI scheme: a letter, then letters, digits, `+`, `-` or `.` (RFC 3986).
fn check_scheme(scheme: &str) -> Result<(), &'static str> {
    let mut bytes = scheme.bytes();
    let first = bytes.next().is_some_and(|b| b.is_ascii_alphabetic());
    if first && bytes.all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) {
        Ok(())
    } else {
        Err("the URI scheme is not a valid scheme")
    }
}

/// A skill path: segments that are plain names, the first a valid authority (RFC 3986
/// `reg-name`), the last a valid skill name.
fn check_skill_path(path: &str) -> Result<(), String> {
    let segments: Vec<&str> = path.split('/').collect();
    if segments.iter().any(|s| !is_plain(s)) {
        return Err(format!(
            "the skill path {path:?} has an empty, `.` or `..` segment"
        ));
    }
    let first = segments[0];
    if !first
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&b))
    {
        return Err(format!(
            "the first skill-path segment {first:?} is not a valid URI authority"
        ));
    }
    let name = segments[segments.len() - 1];
    if !wire::is_valid_name(name) {
        return Err(format!(
            "the skill name {name:?} breaks the naming rules (1 to 64 lowercase letters, digits and single hyphens, no hyphen first or last)"
        ));
    }
    Ok(())
}

fn is_plain(segment: &str) -> bool {
    !segment.is_empty() && segment != "." && segment != ".."
}

/// A file path within the skill: relative, `/`-separated plain segments.
fn check_file_path(path: &str) -> Result<(), &'static str> {
    if path.contains('\\') || path.contains('\0') {
        return Err("the path holds a backslash or a NUL");
    }
    if !path.split('/').all(is_plain) {
        return Err("the path is not relative or has an empty, `.` or `..` segment");
    }
    Ok(())
}

/// The frontmatter of a skill's `SKILL.md`, checked against the Agent Skills rules and the
/// skill's path.
fn check_skill_md(bytes: &[u8], path: &str) -> Result<JsonObject, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| format!("{SKILL_MD} is not UTF-8"))?;
    let frontmatter =
        wire::parse_frontmatter(text).map_err(|e| format!("{SKILL_MD} frontmatter: {e}"))?;
    let text_field = |field: &str| match frontmatter.get(field) {
        Some(serde_json::Value::String(s)) if !s.is_empty() => Ok(s.as_str()),
        _ => Err(format!(
            "{SKILL_MD} frontmatter has no non-empty string `{field}`"
        )),
    };
    let name = text_field("name")?;
    let description = text_field("description")?;
    let last = path.rsplit('/').next().unwrap_or(path);
    if name != last {
        return Err(format!(
            "the frontmatter name {name:?} is not the final skill-path segment {last:?}"
        ));
    }
    if description.chars().count() > MAX_DESCRIPTION_LEN {
        return Err(format!(
            "the description is longer than {MAX_DESCRIPTION_LEN} characters"
        ));
    }
    if let Some(serde_json::Value::Object(metadata)) = frontmatter.get("metadata")
        && let Some(key) = metadata
            .keys()
            .find(|k| k.starts_with(RESERVED_METADATA_PREFIX))
    {
        return Err(format!(
            "metadata key {key:?} uses the prefix reserved for MCP extensions"
        ));
    }
    Ok(frontmatter)
}

/// Percent-encodes what a URI path segment cannot hold as it is (RFC 3986 `pchar`),
/// segment by segment.
pub(crate) fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// The MIME type of a file from its extension; text without a known extension is
/// `text/plain`, other bytes `application/octet-stream`.
fn guess_mime_type(path: &str, bytes: &[u8]) -> String {
    let extension = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let known = match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" | "bash" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/typescript",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    };
    known.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill_md(name: &str, extra: &str) -> String {
        format!("---\nname: {name}\ndescription: Does things\n{extra}---\n# Body\n")
    }

    #[test]
    fn a_valid_skill_gets_uris_digests_and_sizes() {
        let skill = Skill::builder("acme/billing/refunds")
            .file("SKILL.md", skill_md("refunds", "license: MIT\n"))
            .file("examples/email template.md", "hi")
            .build()
            .unwrap();
        assert_eq!(skill.uri(), "skill://acme/billing/refunds/SKILL.md");
        assert_eq!(skill.name(), "refunds");
        let entry = skill.entry();
        let files = entry.resources.files().unwrap();
        assert_eq!(files[0].uri, skill.uri());
        assert_eq!(
            files[1].uri,
            "skill://acme/billing/refunds/examples/email%20template.md"
        );
        assert_eq!(files[1].size, 2);
        // sha256("hi")
        assert_eq!(
            files[1].digest,
            "sha256:8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4"
        );
        assert_eq!(entry.frontmatter["license"], "MIT");
    }

    #[test]
    fn skills_breaking_a_rule_are_refused() {
        let cases: Vec<(&str, SkillBuilder)> = vec![
            ("no SKILL.md", Skill::builder("a").file("README.md", "x")),
            (
                "name is not the last segment",
                Skill::builder("a").file("SKILL.md", skill_md("b", "")),
            ),
            (
                "bad name",
                Skill::builder("Bad").file("SKILL.md", skill_md("Bad", "")),
            ),
            (
                "double hyphen",
                Skill::builder("a--b").file("SKILL.md", skill_md("a--b", "")),
            ),
            (
                "empty segment",
                Skill::builder("x//a").file("SKILL.md", skill_md("a", "")),
            ),
            (
                "dot-dot file",
                Skill::builder("a")
                    .file("SKILL.md", skill_md("a", ""))
                    .file("../escape", "x"),
            ),
            (
                "absolute file",
                Skill::builder("a")
                    .file("SKILL.md", skill_md("a", ""))
                    .file("/etc/passwd", "x"),
            ),
            (
                "no description",
                Skill::builder("a").file("SKILL.md", "---\nname: a\n---\n"),
            ),
            (
                "no frontmatter",
                Skill::builder("a").file("SKILL.md", "# just text"),
            ),
            (
                "reserved metadata",
                Skill::builder("a").file(
                    "SKILL.md",
                    skill_md("a", "metadata:\n  io.modelcontextprotocol/x: 1\n"),
                ),
            ),
            (
                "long description",
                Skill::builder("a").file(
                    "SKILL.md",
                    format!("---\nname: a\ndescription: {}\n---\n", "d".repeat(1025)),
                ),
            ),
            (
                "too large",
                Skill::builder("a")
                    .file("SKILL.md", skill_md("a", ""))
                    .file("big.bin", vec![0u8; 16 * 1024 * 1024]),
            ),
            (
                "bad scheme",
                Skill::builder("a")
                    .scheme("1x")
                    .file("SKILL.md", skill_md("a", "")),
            ),
        ];
        for (case, builder) in cases {
            assert!(
                matches!(builder.build(), Err(Error::InvalidSkill { .. })),
                "{case}"
            );
        }
        let mut many = Skill::builder("a").file("SKILL.md", skill_md("a", ""));
        for i in 0..MAX_RESOURCES_PER_SKILL {
            many = many.file(format!("f{i}.txt"), "x");
        }
        assert!(matches!(many.build(), Err(Error::InvalidSkill { .. })));
    }

    #[test]
    fn a_skill_at_the_limits_is_served() {
        let mut builder = Skill::builder("a").file("SKILL.md", skill_md("a", ""));
        let room = usize::try_from(MAX_SKILL_BYTES).unwrap() - skill_md("a", "").len();
        builder = builder.file("big.bin", vec![7u8; room]);
        for i in 0..MAX_RESOURCES_PER_SKILL - 2 {
            builder = builder.file(format!("f{i}.txt"), "");
        }
        let skill = builder.build().unwrap();
        assert_eq!(
            skill.entry().resources.files().unwrap().len(),
            MAX_RESOURCES_PER_SKILL
        );
    }

    #[test]
    fn duplicate_skills_are_refused() {
        let make = || {
            Skill::builder("a")
                .file("SKILL.md", skill_md("a", ""))
                .build()
        };
        let skills = Skills::new().skill(make()).skill(make());
        assert!(matches!(
            skills.error,
            Some(Error::Duplicate { kind: "skill", .. })
        ));
    }
}
