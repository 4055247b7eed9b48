//! Why a skill could not be listed, loaded or read.

/// Why a skill could not be listed, loaded or read (the Skills extension, module `skills`,
/// feature `skills`): what [`Error::Skill`](crate::Error::Skill) carries, as its source.
/// Whatever failed verification is dropped: no variant carries the content.
///
/// It exists without the `skills` feature, so that code matching on `Error::Skill`
/// compiles whatever features are on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillErrorKind {
    /// The entry breaks the extension's rules; nothing was fetched.
    #[error("the entry of {uri} is invalid: {reason}")]
    InvalidEntry {
        /// The entry's `uri`.
        uri: String,
        /// What is wrong.
        reason: String,
    },
    /// The entry exceeds the limits every host supports (512 files, 16 MiB); nothing was
    /// fetched.
    #[error("the skill {uri} exceeds the limits: {reason}")]
    TooLarge {
        /// The entry's `uri`.
        uri: String,
        /// Which limit.
        reason: String,
    },
    /// The file is not in the skill's manifest (or not within the skill, for a dynamic
    /// one); it was not fetched.
    #[error("{uri} is not a file of the skill {skill}")]
    NotListed {
        /// The skill's `uri`.
        skill: String,
        /// The file asked for.
        uri: String,
    },
    /// The server answered the read without content for the file.
    #[error("the read of {uri} returned no content")]
    NoContent {
        /// The file.
        uri: String,
    },
    /// The file's byte count is not the entry's `size`.
    #[error("{uri} is {actual} bytes, the entry says {expected}")]
    SizeMismatch {
        /// The file.
        uri: String,
        /// The entry's `size`.
        expected: u64,
        /// The bytes read.
        actual: u64,
    },
    /// The file's SHA-256 is not the entry's `digest`.
    #[error("{uri} does not match its digest {expected} (got {actual})")]
    DigestMismatch {
        /// The file.
        uri: String,
        /// The entry's digest.
        expected: String,
        /// The digest of the bytes read.
        actual: String,
    },
    /// The `SKILL.md` has no readable YAML frontmatter.
    #[error("the frontmatter of {uri} is unreadable: {reason}")]
    Frontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// What the reader reported.
        reason: String,
    },
    /// The `SKILL.md` frontmatter differs from the entry's.
    #[error("the frontmatter of {uri} differs from the entry's in `{field}`")]
    FrontmatterMismatch {
        /// The `SKILL.md`.
        uri: String,
        /// The first field that differs.
        field: String,
    },
    /// `skills/list` kept returning new cursors past `skills::MAX_SKILL_PAGES` (1000) pages.
    #[error("skills/list did not end within {0} pages")]
    TooManyPages(usize),
    /// The server did not declare `directoryRead: true`, so `resources/directory/read`
    /// must not be called.
    #[error("the server does not declare resources/directory/read")]
    DirectoryReadNotDeclared,
}
