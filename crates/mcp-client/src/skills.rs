//! The Skills extension on the client (`io.modelcontextprotocol/skills`, SEP-2640; feature
//! `skills`): listing a server's skills, and loading one with every byte verified.
//!
//! [`Client::list_skills_all`] (or one page, [`Client::list_skills`]) and
//! [`Client::get_skill`] return skill entries: a skill's frontmatter and the manifest of its
//! files (URI, `sha256:` digest, size). Nothing is fetched ahead of need: listing reads no
//! file, and [`Client::load_skill`] fetches the `SKILL.md` alone, when the host loads the
//! skill. A supporting file is fetched when it is read, with [`Client::read_skill_file`],
//! which only reads files of a loaded skill.
//!
//! Every read is verified against the entry the skill was loaded from, and refused with
//! [`Error::Skill`] and a [`SkillErrorKind`] saying what differs (the content is dropped,
//! never returned) on any discrepancy:
//!
//! - the entry itself must be sound before anything is fetched: its `uri` a `SKILL.md`
//!   whose final skill-path segment is the frontmatter `name`, a `description`, a manifest
//!   that lists the `SKILL.md`, each file once, within the skill, with well-formed digests,
//!   and within the limits every host supports (512 files, 16 MiB);
//! - a file must be listed in the manifest ([`SkillErrorKind::NotListed`]: an unlisted file is
//!   a change to the skill, and is not fetched);
//! - its byte count must be the entry's `size` ([`SkillErrorKind::SizeMismatch`], checked
//!   before hashing), then its SHA-256 the entry's `digest` ([`SkillErrorKind::DigestMismatch`]);
//! - a `SKILL.md`'s YAML frontmatter must equal the entry's `frontmatter` field by field
//!   ([`SkillErrorKind::FrontmatterMismatch`]), so what was approved from the listing is what
//!   the model receives.
//!
//! A skill whose `resources` is `"dynamic"` has no manifest: its files are checked to lie
//! within the skill and within the size limit, its `SKILL.md` frontmatter is still compared,
//! and the content says it is unverified ([`SkillContent::verified`]).
//!
//! ```no_run
//! # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::Error> {
//! let skills = client.list_skills_all().await?; // reads no file
//! if let Some(entry) = skills.iter().find(|s| s.name() == Some("pdf-processing")) {
//!     let skill = client.load_skill(entry).await?; // SKILL.md, verified
//!     println!("{}", skill.skill_md().text().unwrap_or_default());
//!     let forms = client.read_skill_file(&skill, "references/FORMS.md").await?; // verified too
//!     println!("{} bytes", forms.bytes().len());
//! }
//! # Ok(())
//! # }
//! ```

use std::collections::HashSet;

use base64::Engine as _;
use mcp_types::skills::{
    self as wire, GetSkillRequestParams, GetSkillResult, ListSkillsResult, MAX_RESOURCES_PER_SKILL,
    MAX_SKILL_BYTES, ReadDirectoryRequestParams, ReadDirectoryResult, SkillEntry, SkillResources,
    SkillsSettings, method as skill_method,
};
use mcp_types::{EmbeddedResourceResource, JsonObject, PaginatedRequestParams};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::client::Client;
use crate::error::{Error, SkillErrorKind};

/// The most `skills/list` pages [`Client::list_skills_all`] follows.
pub const MAX_SKILL_PAGES: usize = 1000;

/// A file's verified content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillContent {
    uri: String,
    bytes: Vec<u8>,
    mime_type: Option<String>,
    verified: bool,
}

impl SkillContent {
    /// The file's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes as text, when they are UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// The MIME type the server gave.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    /// Whether the bytes were checked against a digest: `false` only for a skill whose
    /// `resources` is `"dynamic"`.
    pub fn verified(&self) -> bool {
        self.verified
    }
}

/// A skill loaded from its entry: the entry every later read is verified against, and its
/// verified `SKILL.md`.
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    entry: SkillEntry,
    skill_md: SkillContent,
}

impl LoadedSkill {
    /// The entry the skill was loaded from.
    pub fn entry(&self) -> &SkillEntry {
        &self.entry
    }

    /// The verified `SKILL.md`.
    pub fn skill_md(&self) -> &SkillContent {
        &self.skill_md
    }

    /// The skill's root (`skill://pdf-processing`), which relative references resolve
    /// against.
    pub fn root(&self) -> &str {
        wire::skill_root(&self.entry.uri).unwrap_or(&self.entry.uri)
    }

    /// The URI of `reference`: a full URI as it is, a relative path (`references/FORMS.md`)
    /// below the skill's root.
    pub fn resolve(&self, reference: &str) -> String {
        if reference.contains("://") {
            reference.to_owned()
        } else {
            format!("{}/{}", self.root(), reference.trim_start_matches("./"))
        }
    }
}

impl Client {
    /// The server's Skills settings from `server/discover`, `None` when it does not declare
    /// the extension (a client calls the extension's methods only after seeing it).
    pub async fn skills_settings(&self) -> Result<Option<SkillsSettings>, Error> {
        let discovered = self.discover().await?;
        let settings = discovered
            .capabilities
            .extensions
            .as_ref()
            .and_then(|e| e.get(wire::EXTENSION_ID));
        Ok(settings.map(|s| serde_json::from_value(s.clone()).unwrap_or_default()))
    }

    /// One page of `skills/list`.
    pub async fn list_skills(&self, cursor: Option<&str>) -> Result<ListSkillsResult, Error> {
        self.cached(
            skill_method::SKILLS_LIST,
            Some(cursor.unwrap_or("")),
            |meta| {
                let mut params = PaginatedRequestParams::new(meta);
                params.cursor = cursor.map(str::to_owned);
                params
            },
        )
        .await
    }

    /// Every skill entry, following cursors (at most [`MAX_SKILL_PAGES`] pages, and never
    /// a cursor twice). Reads no file.
    pub async fn list_skills_all(&self) -> Result<Vec<SkillEntry>, Error> {
        let mut all = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_SKILL_PAGES {
            let page = self.list_skills(cursor.as_deref()).await?;
            all.extend(page.skills);
            match page.next_cursor {
                Some(next) if !next.is_empty() && seen.insert(next.clone()) => cursor = Some(next),
                _ => return Ok(all),
            }
        }
        Err(Error::Skill(SkillErrorKind::TooManyPages(MAX_SKILL_PAGES)))
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`, listed or not.
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, Error> {
        let result: GetSkillResult = self
            .cached(skill_method::SKILLS_GET, Some(uri), |meta| {
                GetSkillRequestParams::new(meta, uri)
            })
            .await?;
        Ok(result.skill)
    }

    /// One page of `resources/directory/read`; refused without a request unless the server
    /// declared `directoryRead: true`.
    pub async fn read_directory(
        &self,
        uri: &str,
        cursor: Option<&str>,
    ) -> Result<ReadDirectoryResult, Error> {
        if !self
            .skills_settings()
            .await?
            .is_some_and(|s| s.directory_read())
        {
            return Err(Error::Skill(SkillErrorKind::DirectoryReadNotDeclared));
        }
        let target = format!("{uri}\n{}", cursor.unwrap_or(""));
        self.cached(
            skill_method::RESOURCES_DIRECTORY_READ,
            Some(&target),
            |meta| {
                let mut params = ReadDirectoryRequestParams::new(meta, uri);
                params.cursor = cursor.map(str::to_owned);
                params
            },
        )
        .await
    }

    /// Loads the skill of `entry`: checks the entry, fetches its `SKILL.md` (and nothing
    /// else), and verifies it: size, digest, then frontmatter field by field.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<LoadedSkill, Error> {
        check_entry(entry).map_err(Error::Skill)?;
        let skill_md = self.fetch_verified(entry, &entry.uri).await?;
        Ok(LoadedSkill {
            entry: entry.clone(),
            skill_md,
        })
    }

    /// Reads a file of a loaded skill (`reference` relative to its root, or a full URI),
    /// verified against the entry it was loaded from. A file the entry does not list is
    /// refused without being fetched.
    pub async fn read_skill_file(
        &self,
        skill: &LoadedSkill,
        reference: &str,
    ) -> Result<SkillContent, Error> {
        let uri = skill.resolve(reference);
        self.fetch_verified(&skill.entry, &uri).await
    }

    async fn fetch_verified(&self, entry: &SkillEntry, uri: &str) -> Result<SkillContent, Error> {
        expected(entry, uri).map_err(Error::Skill)?;
        let read = self.read_resource(uri).await?;
        let content = read
            .contents
            .into_iter()
            .map(|c| match c {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    (t.uri, Some(t.text.into_bytes()), t.mime_type)
                }
                EmbeddedResourceResource::BlobResourceContents(b) => (
                    b.uri,
                    base64::engine::general_purpose::STANDARD
                        .decode(b.blob.as_bytes())
                        .ok(),
                    b.mime_type,
                ),
                // A content shape of a later revision: no bytes this client can verify.
                _ => (String::new(), None, None),
            })
            .find(|(u, _, _)| u == uri);
        let Some((_, Some(bytes), mime_type)) = content else {
            return Err(Error::Skill(SkillErrorKind::NoContent {
                uri: uri.to_owned(),
            }));
        };
        let verified = verify(entry, uri, &bytes).map_err(Error::Skill)?;
        Ok(SkillContent {
            uri: uri.to_owned(),
            bytes,
            mime_type,
            verified,
        })
    }
}

/// Checks an entry before anything of it is fetched.
pub(crate) fn check_entry(entry: &SkillEntry) -> Result<(), SkillErrorKind> {
    let uri = &entry.uri;
    let invalid = |reason: String| SkillErrorKind::InvalidEntry {
        uri: uri.clone(),
        reason,
    };
    let Some(name) = wire::skill_name(uri) else {
        return Err(invalid(
            "the uri is not a SKILL.md under a skill path".to_owned(),
        ));
    };
    match entry.name() {
        Some(n) if n == name && wire::is_valid_name(n) => {}
        Some(n) => {
            return Err(invalid(format!(
                "the frontmatter name {n:?} is not a valid name equal to the final segment {name:?}"
            )));
        }
        None => return Err(invalid("the frontmatter has no string name".to_owned())),
    }
    if entry.description().is_none_or(str::is_empty) {
        return Err(invalid("the frontmatter has no description".to_owned()));
    }
    let SkillResources::Files(files) = &entry.resources else {
        return Ok(());
    };
    if files.len() > MAX_RESOURCES_PER_SKILL {
        return Err(SkillErrorKind::TooLarge {
            uri: uri.clone(),
            reason: format!("{} files", files.len()),
        });
    }
    let total = files.iter().fold(0u64, |sum, f| sum.saturating_add(f.size));
    if total > MAX_SKILL_BYTES {
        return Err(SkillErrorKind::TooLarge {
            uri: uri.clone(),
            reason: format!("{total} bytes"),
        });
    }
    let mut seen = HashSet::new();
    for file in files {
        if !seen.insert(file.uri.as_str()) {
            return Err(invalid(format!("{} is listed twice", file.uri)));
        }
        if !wire::is_within_skill(uri, &file.uri) {
            return Err(invalid(format!("{} is outside the skill", file.uri)));
        }
        if !wire::is_valid_digest(&file.digest) {
            return Err(invalid(format!("{} has a malformed digest", file.uri)));
        }
    }
    if !seen.contains(uri.as_str()) {
        return Err(invalid(
            "the manifest does not list the SKILL.md".to_owned(),
        ));
    }
    Ok(())
}

/// Refuses, before fetching, a file the entry does not allow reading.
fn expected(entry: &SkillEntry, uri: &str) -> Result<(), SkillErrorKind> {
    let listed = match entry.resources.files() {
        Some(files) => files.iter().any(|f| f.uri == uri),
        None => wire::is_within_skill(&entry.uri, uri),
    };
    if listed {
        Ok(())
    } else {
        Err(SkillErrorKind::NotListed {
            skill: entry.uri.clone(),
            uri: uri.to_owned(),
        })
    }
}

/// Verifies `bytes` read from `uri` against `entry`: size first, then digest, then, for the
/// skill's `SKILL.md`, the frontmatter. Whether a digest vouched for them.
pub(crate) fn verify(entry: &SkillEntry, uri: &str, bytes: &[u8]) -> Result<bool, SkillErrorKind> {
    expected(entry, uri)?;
    let actual = bytes.len() as u64;
    let verified = match entry.resources.file(uri) {
        Some(file) => {
            if actual != file.size {
                return Err(SkillErrorKind::SizeMismatch {
                    uri: uri.to_owned(),
                    expected: file.size,
                    actual,
                });
            }
            let digest = wire::format_digest(&Sha256::digest(bytes).into());
            if digest != file.digest {
                return Err(SkillErrorKind::DigestMismatch {
                    uri: uri.to_owned(),
                    expected: file.digest.clone(),
                    actual: digest,
                });
            }
            true
        }
        None if actual > MAX_SKILL_BYTES => {
            return Err(SkillErrorKind::TooLarge {
                uri: entry.uri.clone(),
                reason: format!("{uri} is {actual} bytes"),
            });
        }
        None => false,
    };
    if uri == entry.uri {
        compare_frontmatter(entry, uri, bytes)?;
    }
    Ok(verified)
}

/// Parses the `SKILL.md`'s frontmatter and compares it with the entry's, field by field.
fn compare_frontmatter(entry: &SkillEntry, uri: &str, bytes: &[u8]) -> Result<(), SkillErrorKind> {
    let unreadable = |reason: String| SkillErrorKind::Frontmatter {
        uri: uri.to_owned(),
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|_| unreadable("not UTF-8".to_owned()))?;
    let file = wire::parse_frontmatter(text).map_err(|e| unreadable(e.to_string()))?;
    if let Some(field) = first_difference(&file, &entry.frontmatter) {
        return Err(SkillErrorKind::FrontmatterMismatch {
            uri: uri.to_owned(),
            field,
        });
    }
    Ok(())
}

/// The first field (in the file's order, then the entry's) whose values differ.
fn first_difference(file: &JsonObject, entry: &JsonObject) -> Option<String> {
    file.keys()
        .chain(entry.keys().filter(|k| !file.contains_key(*k)))
        .find(|k| match (file.get(*k), entry.get(*k)) {
            (Some(a), Some(b)) => !same(a, b),
            _ => true,
        })
        .cloned()
}

/// JSON equality with numbers compared by value (`1` equals `1.0`: the same YAML number
/// may reach the client as either, depending on the server's JSON writer).
fn same(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Number(l), Value::Number(r)) => match (l.as_i64(), r.as_i64()) {
            (Some(li), Some(ri)) => li == ri,
            _ => match (l.as_u64(), r.as_u64()) {
                (Some(lu), Some(ru)) => lu == ru,
                _ => l.as_f64() == r.as_f64(),
            },
        },
        (Value::Array(l), Value::Array(r)) => {
            l.len() == r.len() && l.iter().zip(r).all(|(lv, rv)| same(lv, rv))
        }
        (Value::Object(l), Value::Object(r)) => {
            l.len() == r.len()
                && l.iter()
                    .all(|(k, lv)| r.get(k).is_some_and(|rv| same(lv, rv)))
        }
        _ => left == right,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_types::skills::SkillFile;
    use serde_json::json;

    const SKILL_MD: &str = "---\nname: pdf\ndescription: PDF forms\nmetadata:\n  version: 2.1.0\n  n: 1.0\n---\nBody\n";
    const FORMS: &str = "forms";

    fn digest(bytes: &[u8]) -> String {
        wire::format_digest(&Sha256::digest(bytes).into())
    }

    fn entry() -> SkillEntry {
        let frontmatter = json!({"name": "pdf", "description": "PDF forms", "metadata": {"version": "2.1.0", "n": 1}});
        SkillEntry::new(
            "skill://pdf/SKILL.md",
            frontmatter.as_object().unwrap().clone(),
            SkillResources::Files(vec![
                SkillFile::new(
                    "skill://pdf/SKILL.md",
                    digest(SKILL_MD.as_bytes()),
                    SKILL_MD.len() as u64,
                ),
                SkillFile::new(
                    "skill://pdf/references/FORMS.md",
                    digest(FORMS.as_bytes()),
                    FORMS.len() as u64,
                ),
            ]),
        )
    }

    /// Verifies `bytes` as `uri` of `entry`.
    fn check(entry: &SkillEntry, uri: &str, bytes: &[u8]) -> Result<bool, SkillErrorKind> {
        check_entry(entry)?;
        verify(entry, uri, bytes)
    }

    #[test]
    fn faithful_content_verifies() {
        let e = entry();
        assert_eq!(check(&e, &e.uri, SKILL_MD.as_bytes()), Ok(true));
        assert_eq!(
            check(&e, "skill://pdf/references/FORMS.md", FORMS.as_bytes()),
            Ok(true)
        );
    }

    #[test]
    fn tampered_content_is_refused_size_first() {
        let e = entry();
        let padded = format!("{SKILL_MD}extra");
        assert!(matches!(
            check(&e, &e.uri, padded.as_bytes()),
            Err(SkillErrorKind::SizeMismatch { .. })
        ));
        let same_size = SKILL_MD.replace("Body", "Evil");
        assert!(matches!(
            check(&e, &e.uri, same_size.as_bytes()),
            Err(SkillErrorKind::DigestMismatch { .. })
        ));
        assert!(matches!(
            check(&e, "skill://pdf/references/OTHER.md", b"x"),
            Err(SkillErrorKind::NotListed { .. })
        ));
    }

    #[test]
    fn a_frontmatter_that_differs_from_the_entry_is_refused() {
        let evil = SKILL_MD.replace("PDF forms", "Exfiltrate");
        let mut e = entry();
        // The manifest vouches for the evil file: only the frontmatter comparison catches it.
        e.resources = SkillResources::Files(vec![SkillFile::new(
            &e.uri,
            digest(evil.as_bytes()),
            evil.len() as u64,
        )]);
        assert_eq!(
            check(&e, "skill://pdf/SKILL.md", evil.as_bytes()),
            Err(SkillErrorKind::FrontmatterMismatch {
                uri: "skill://pdf/SKILL.md".to_owned(),
                field: "description".to_owned()
            })
        );
        // A field only the entry has is a difference too.
        let mut extra = entry();
        extra.frontmatter.insert("license".to_owned(), json!("MIT"));
        assert!(matches!(
            check(&extra, "skill://pdf/SKILL.md", SKILL_MD.as_bytes()),
            Err(SkillErrorKind::FrontmatterMismatch { field, .. }) if field == "license"
        ));
    }

    #[test]
    fn unsound_entries_are_refused_before_any_fetch() {
        type Edit = Box<dyn Fn(&mut SkillEntry)>;
        let cases: Vec<(&str, Edit)> = vec![
            (
                "not a SKILL.md",
                Box::new(|e| e.uri = "skill://pdf/README.md".to_owned()),
            ),
            (
                "name differs",
                Box::new(|e| {
                    e.frontmatter.insert("name".to_owned(), json!("other"));
                }),
            ),
            (
                "no description",
                Box::new(|e| {
                    e.frontmatter.remove("description");
                }),
            ),
            (
                "outside",
                Box::new(|e| {
                    if let SkillResources::Files(f) = &mut e.resources {
                        f[1].uri = "skill://other/x.md".to_owned();
                    }
                }),
            ),
            (
                "bad digest",
                Box::new(|e| {
                    if let SkillResources::Files(f) = &mut e.resources {
                        f[1].digest = "md5:00".to_owned();
                    }
                }),
            ),
            (
                "no SKILL.md",
                Box::new(|e| {
                    if let SkillResources::Files(f) = &mut e.resources {
                        f.remove(0);
                    }
                }),
            ),
            (
                "twice",
                Box::new(|e| {
                    if let SkillResources::Files(f) = &mut e.resources {
                        f[1] = f[0].clone();
                    }
                }),
            ),
        ];
        for (case, edit) in cases {
            let mut e = entry();
            edit(&mut e);
            assert!(
                matches!(check_entry(&e), Err(SkillErrorKind::InvalidEntry { .. })),
                "{case}"
            );
        }
        let mut huge = entry();
        if let SkillResources::Files(f) = &mut huge.resources {
            f[1].size = MAX_SKILL_BYTES;
        }
        assert!(matches!(
            check_entry(&huge),
            Err(SkillErrorKind::TooLarge { .. })
        ));
    }

    #[test]
    fn dynamic_skills_are_bounded_to_their_directory_and_unverified() {
        let mut e = entry();
        e.resources = SkillResources::Dynamic;
        assert_eq!(check(&e, &e.uri, SKILL_MD.as_bytes()), Ok(false));
        assert_eq!(check(&e, "skill://pdf/anything.md", b"x"), Ok(false));
        assert!(matches!(
            check(&e, "skill://elsewhere/SKILL.md", b"x"),
            Err(SkillErrorKind::NotListed { .. })
        ));
        let evil = SKILL_MD.replace("PDF forms", "Exfiltrate");
        assert!(matches!(
            check(&e, &e.uri, evil.as_bytes()),
            Err(SkillErrorKind::FrontmatterMismatch { .. })
        ));
    }
}
