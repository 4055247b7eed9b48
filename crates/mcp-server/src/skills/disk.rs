//! Reading skills from disk, bounded: symbolic links are never followed, hidden entries
//! (names starting with `.`, such as `.git`) are skipped, and a walk stops with an error
//! past the limits instead of reading on.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use mcp_types::skills::{MAX_RESOURCES_PER_SKILL, MAX_SKILL_BYTES, SKILL_MD};

use crate::error::Error;

/// The most directories one walk visits (a skill root or a skill).
const MAX_DIRECTORIES: usize = 10_000;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::SkillIo {
        path: path.to_owned(),
        source,
    }
}

fn invalid(skill: &str, reason: String) -> Error {
    Error::InvalidSkill {
        skill: skill.to_owned(),
        reason,
    }
}

/// The visible entries of `dir` (name, path, whether a directory, whether a regular file),
/// in name order so that listings do not depend on the file system.
fn entries(dir: &Path) -> Result<Vec<(String, PathBuf, bool, bool)>, Error> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        // `file_type` does not follow symbolic links: a link is neither.
        let kind = entry.file_type().map_err(io(&path))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            return Err(Error::SkillIo {
                path,
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8"),
            });
        };
        if !name.starts_with('.') {
            out.push((name, path, kind.is_dir(), kind.is_file()));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// `name` under the relative path `prefix` (empty at the root).
fn join(prefix: &str, name: String) -> String {
    if prefix.is_empty() {
        name
    } else {
        format!("{prefix}/{name}")
    }
}

/// A walk of the directories under a root, last pushed first, that fails past
/// [`MAX_DIRECTORIES`] directories: it hands over each directory with its path relative
/// to the root, and the caller pushes the subdirectories to visit.
struct Walk<'a> {
    /// What a failure names: the skill, or the root.
    label: &'a str,
    pending: Vec<(PathBuf, String)>,
    visited: usize,
}

impl<'a> Walk<'a> {
    fn new(root: &Path, label: &'a str) -> Self {
        Walk {
            label,
            pending: vec![(root.to_owned(), String::new())],
            visited: 0,
        }
    }

    /// The next directory to visit and its relative path, if any is left.
    fn next_dir(&mut self) -> Result<Option<(PathBuf, String)>, Error> {
        let Some(next) = self.pending.pop() else {
            return Ok(None);
        };
        self.visited += 1;
        if self.visited > MAX_DIRECTORIES {
            return Err(invalid(
                self.label,
                format!("more than {MAX_DIRECTORIES} directories"),
            ));
        }
        Ok(Some(next))
    }

    /// Visits the directory `path`, at the relative path `relative`, later.
    fn push(&mut self, path: PathBuf, relative: String) {
        self.pending.push((path, relative));
    }
}

/// Every regular file under `dir` with its path relative to `dir`, for the skill `skill`.
pub(super) fn read_skill_dir(skill: &str, dir: &Path) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let mut files = Vec::new();
    let mut total: u64 = 0;
    let mut walk = Walk::new(dir, skill);
    while let Some((path, prefix)) = walk.next_dir()? {
        for (name, child, is_dir, is_file) in entries(&path)? {
            let relative = join(&prefix, name);
            if is_dir {
                walk.push(child, relative);
                continue;
            }
            if !is_file {
                continue;
            }
            if files.len() == MAX_RESOURCES_PER_SKILL {
                return Err(invalid(
                    skill,
                    format!("more than {MAX_RESOURCES_PER_SKILL} files"),
                ));
            }
            let room = MAX_SKILL_BYTES - total;
            let mut bytes = Vec::new();
            std::fs::File::open(&child)
                .and_then(|f| f.take(room + 1).read_to_end(&mut bytes))
                .map_err(io(&child))?;
            total += bytes.len() as u64;
            if total > MAX_SKILL_BYTES {
                return Err(invalid(skill, format!("more than {MAX_SKILL_BYTES} bytes")));
            }
            files.push((relative, bytes));
        }
    }
    Ok(files)
}

/// Every directory under `root` holding a `SKILL.md`, with its skill path.
pub(super) fn find_skills(root: &Path) -> Result<Vec<(String, PathBuf)>, Error> {
    let mut found = Vec::new();
    let label = root.display().to_string();
    let mut walk = Walk::new(root, &label);
    while let Some((path, prefix)) = walk.next_dir()? {
        let children = entries(&path)?;
        if !prefix.is_empty() && children.iter().any(|(n, _, _, f)| *f && n == SKILL_MD) {
            found.push((prefix.clone(), path.clone()));
        }
        // Depth first, in name order.
        for (name, child, is_dir, _) in children.into_iter().rev() {
            if is_dir {
                walk.push(child, join(&prefix, name));
            }
        }
    }
    found.sort();
    Ok(found)
}
