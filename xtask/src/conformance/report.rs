//! Reading the conformance suite's results and judging them against the baseline.
//!
//! Everything here is a pure function of text and directories, so the tests at the bottom
//! run on output captured from the real suite (`xtask/testdata/conformance/`) without
//! Node.js. The rules mirror the suite's own (`src/expected-failures.ts` of
//! `@modelcontextprotocol/conformance`): a scenario fails when any of its checks is a
//! FAILURE or a WARNING; a whole-scenario baseline entry excuses every failing check of
//! that scenario and is stale when none fails; a `scenario:check-id` entry excuses that
//! check only and is stale when the check passed; only scored scenarios are judged.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The status the suite gives one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CheckStatus {
    Success,
    Failure,
    Warning,
    Skipped,
    Info,
    Other(String),
}

impl CheckStatus {
    fn parse(text: &str) -> Self {
        match text {
            "SUCCESS" => Self::Success,
            "FAILURE" => Self::Failure,
            "WARNING" => Self::Warning,
            "SKIPPED" => Self::Skipped,
            "INFO" => Self::Info,
            other => Self::Other(other.to_owned()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Self::Success => "SUCCESS",
            Self::Failure => "FAILURE",
            Self::Warning => "WARNING",
            Self::Skipped => "SKIPPED",
            Self::Info => "INFO",
            Self::Other(other) => other,
        }
    }

    /// Whether the baseline counts the check as failed: the suite counts a WARNING (a
    /// SHOULD not met, or a requirement it could not exercise) as well as a FAILURE.
    fn is_failing(&self) -> bool {
        matches!(self, Self::Failure | Self::Warning)
    }

    fn severity(&self) -> u8 {
        match self {
            Self::Failure => 3,
            Self::Warning => 2,
            Self::Success => 1,
            _ => 0,
        }
    }
}

/// One check of one scenario, as written in the suite's `checks.json`.
#[derive(Debug, Clone)]
pub(crate) struct Check {
    pub(crate) id: String,
    pub(crate) status: CheckStatus,
    /// The check's `errorMessage`, or its `description` when it has none.
    pub(crate) message: String,
}

/// Parses one `checks.json`: a JSON array of check objects with at least `id` and `status`.
pub(crate) fn parse_checks(text: &str) -> Result<Vec<Check>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Array(items) = value else {
        return Err("expected a JSON array of checks".to_owned());
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let field = |name: &str| item.get(name).and_then(Value::as_str);
            let id = field("id").ok_or_else(|| format!("check {index} has no string `id`"))?;
            let status =
                field("status").ok_or_else(|| format!("check {index} has no string `status`"))?;
            let message = field("errorMessage")
                .filter(|m| !m.trim().is_empty())
                .or_else(|| field("description"))
                .unwrap_or_default();
            Ok(Check {
                id: id.to_owned(),
                status: CheckStatus::parse(status),
                message: message.to_owned(),
            })
        })
        .collect()
}

/// The scenarios of one leg (`server` or `client`) of a requirement set
/// (`requirements/<revision>.yaml` in the suite's package).
#[derive(Debug, Clone, Default)]
pub(crate) struct Requirements {
    /// The scenarios that count, in the file's order.
    pub(crate) scored: Vec<String>,
    /// The scenarios the suite runs and reports but never scores.
    pub(crate) not_scored: Vec<NotScored>,
    /// Extension scenarios judged like scored ones, by the same baseline (see
    /// [`Requirements::judge_extensions`]).
    pub(crate) extensions: Vec<String>,
}

impl Requirements {
    /// Judges the extension scenarios too: moves every `not_scored` entry whose reason is
    /// `extension` into [`Requirements::extensions`] and adds `extra`, the extension
    /// scenarios the requirement set does not name at all (the suite runs those one by
    /// one). The revision never requires an extension, but this workspace implements them,
    /// so a failure is a regression like any other.
    pub(crate) fn judge_extensions(&mut self, extra: &[&str]) {
        let (extensions, rest): (Vec<NotScored>, Vec<NotScored>) =
            std::mem::take(&mut self.not_scored)
                .into_iter()
                .partition(|n| n.reason == "extension");
        self.not_scored = rest;
        for scenario in extensions
            .into_iter()
            .map(|n| n.scenario)
            .chain(extra.iter().map(|&s| s.to_owned()))
        {
            if !self.extensions.contains(&scenario) && !self.scored.contains(&scenario) {
                self.extensions.push(scenario);
            }
        }
    }

    /// The scenarios a baseline entry may name: the scored ones and the judged extensions.
    fn judged(&self) -> impl Iterator<Item = &str> {
        self.scored
            .iter()
            .chain(&self.extensions)
            .map(String::as_str)
    }
}

/// One scenario of `conformance list --server` or `--client`: its name and its tags, the
/// spec revisions it applies at (`2025-11-25`, …) or `extension` for one on no timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    pub(crate) scenario: String,
    pub(crate) tags: Vec<String>,
}

impl Listed {
    /// An extension scenario, on no spec timeline.
    pub(crate) fn is_extension(&self) -> bool {
        self.tags.iter().any(|t| t == "extension")
    }

    /// Whether the scenario applies at `revision` (the suite's `--spec-version` filter).
    pub(crate) fn applies_at(&self, revision: &str) -> bool {
        self.tags.iter().any(|t| t == revision)
    }

    /// A dated scenario that applies only before `revision` (every tag a date earlier
    /// than it; dates compare as text).
    pub(crate) fn only_before(&self, revision: &str) -> bool {
        !self.tags.is_empty()
            && self.tags.iter().all(|t| {
                t.as_str() < revision && t.bytes().all(|b| b.is_ascii_digit() || b == b'-')
            })
    }
}

/// Parses the output of `conformance list --<leg>`: `  - name [tag,tag]` lines under a
/// heading. A line of another shape is an error rather than a scenario quietly dropped.
pub(crate) fn parse_scenario_list(text: &str) -> Result<Vec<Listed>, String> {
    let mut listed = Vec::new();
    for line in text.lines() {
        let Some(item) = line.trim_start().strip_prefix("- ") else {
            if line.trim().is_empty() || line.trim_end().ends_with(':') {
                continue;
            }
            return Err(format!("unexpected line in the scenario list: `{line}`"));
        };
        let (scenario, tags) = item
            .trim_end()
            .strip_suffix(']')
            .and_then(|rest| rest.rsplit_once(" ["))
            .ok_or_else(|| format!("a scenario without tags in the list: `{line}`"))?;
        if scenario.is_empty() || scenario.contains(' ') {
            return Err(format!("not a scenario name: `{line}`"));
        }
        listed.push(Listed {
            scenario: scenario.to_owned(),
            tags: tags.split(',').map(|t| t.trim().to_owned()).collect(),
        });
    }
    if listed.is_empty() {
        return Err("the scenario list is empty".to_owned());
    }
    Ok(listed)
}

#[derive(Debug, Clone)]
pub(crate) struct NotScored {
    pub(crate) scenario: String,
    /// `extension`, `pending` or `added-after-release`.
    pub(crate) reason: String,
}

pub(crate) fn parse_requirements(text: &str, leg: &str) -> Result<Requirements, String> {
    let lists = parse_top_level_lists(text)?;
    let scored = match lists.get(leg) {
        None => Vec::new(),
        Some(None) => return Err(format!("`{leg}` is not a list")),
        Some(Some(items)) => items
            .iter()
            .map(|item| match item {
                Item::Scalar(name) => Ok(name.clone()),
                Item::Map(_) => Err(format!("`{leg}` holds a mapping, not a scenario name")),
            })
            .collect::<Result<_, _>>()?,
    };
    let mut not_scored = Vec::new();
    if let Some(entries) = lists.get("not_scored") {
        for item in entries.as_deref().unwrap_or_default() {
            let Item::Map(pairs) = item else {
                return Err("a `not_scored` entry is not a mapping".to_owned());
            };
            let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
            let scenario = get("scenario").ok_or("a `not_scored` entry has no `scenario`")?;
            if get("leg").as_deref() == Some(leg) {
                let reason = get("reason").unwrap_or_else(|| "not scored".to_owned());
                not_scored.push(NotScored { scenario, reason });
            }
        }
    }
    Ok(Requirements {
        scored,
        not_scored,
        extensions: Vec::new(),
    })
}

/// One line of a baseline (`expected-failures.yml`): `scenario` or `scenario:check-id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BaselineEntry {
    pub(crate) scenario: String,
    /// When set, only this check of the scenario may fail.
    pub(crate) check: Option<String>,
}

impl std::fmt::Display for BaselineEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.check {
            Some(check) => write!(f, "{}:{check}", self.scenario),
            None => f.write_str(&self.scenario),
        }
    }
}

/// Parses the `leg` list of a baseline file, with the suite's rules: an absent list or an
/// empty file is an empty baseline; the first colon splits a scenario from a check id.
pub(crate) fn parse_baseline(text: &str, leg: &str) -> Result<Vec<BaselineEntry>, String> {
    let lists = parse_top_level_lists(text)?;
    let items = match lists.get(leg) {
        None => return Ok(Vec::new()),
        Some(None) => return Err(format!("`{leg}` must be a list of scenario names")),
        Some(Some(items)) => items,
    };
    let mut entries = Vec::new();
    for item in items {
        let text = match item {
            Item::Scalar(text) => text,
            Item::Map(pairs) => {
                let (key, value) = pairs.first().cloned().unwrap_or_default();
                return Err(format!(
                    "`{leg}` entry `{key}: {value}` is a mapping; a per-check entry takes no \
                     space after the colon (`{key}:{value}`)"
                ));
            }
        };
        let entry = match text.split_once(':') {
            None => BaselineEntry {
                scenario: text.clone(),
                check: None,
            },
            Some((scenario, check)) if !scenario.is_empty() && !check.is_empty() => BaselineEntry {
                scenario: scenario.to_owned(),
                check: Some(check.to_owned()),
            },
            Some(_) => {
                return Err(format!(
                    "`{leg}` entry `{text}`: both sides of the colon are required"
                ));
            }
        };
        if entry.scenario.is_empty() {
            return Err(format!("`{leg}` has an empty entry"));
        }
        entries.push(entry);
    }
    let wholesale: BTreeSet<&str> = entries
        .iter()
        .filter(|e| e.check.is_none())
        .map(|e| e.scenario.as_str())
        .collect();
    if let Some(redundant) = entries
        .iter()
        .find(|e| e.check.is_some() && wholesale.contains(e.scenario.as_str()))
    {
        return Err(format!(
            "`{}` expects the whole scenario to fail, so `{redundant}` is redundant",
            redundant.scenario
        ));
    }
    Ok(entries)
}

/// One item of a top-level block list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Scalar(String),
    Map(Vec<(String, String)>),
}

/// Reads the YAML subset that the requirement sets and baselines are written in: top-level
/// keys, each holding a block list (`- item`) or `[]`, whose items are plain or quoted
/// scalars or flat mappings (`- key: value` with further `key: value` lines). Values that
/// continue on more deeply indented lines (`note: >-`) are skipped. Anything else is an
/// error rather than a guess. A top-level key with a scalar value maps to `None`.
fn parse_top_level_lists(text: &str) -> Result<BTreeMap<String, Option<Vec<Item>>>, String> {
    let mut lists: BTreeMap<String, Option<Vec<Item>>> = BTreeMap::new();
    let mut current: Option<String> = None;
    // The indentation of the keys of the mapping item being read, if it is one.
    let mut item_key_indent: Option<usize> = None;
    for (number, raw) in text.lines().enumerate() {
        let number = number + 1;
        let line = strip_comment(raw);
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with('\t') {
            return Err(format!("line {number}: tabs are not YAML indentation"));
        }
        let indent = line.len() - line.trim_start().len();
        let content = line.trim();
        let item = content
            .strip_prefix('-')
            .filter(|rest| rest.is_empty() || rest.starts_with(' '));
        // A block list may sit at its key's own indentation (`server:` then `- x`).
        if indent == 0 && item.is_none() {
            let (key, value) = split_key_value(content)
                .ok_or_else(|| format!("line {number}: expected `key:` at the top level"))?;
            item_key_indent = None;
            let list = match value.as_str() {
                "" => Some(Vec::new()),
                "[]" => {
                    current = None;
                    lists.insert(key, Some(Vec::new()));
                    continue;
                }
                v if v.starts_with('[') => {
                    return Err(format!(
                        "line {number}: write `{key}` as a block list (`- item` lines)"
                    ));
                }
                _ => None,
            };
            current = list.is_some().then(|| key.clone());
            lists.insert(key, list);
            continue;
        }
        let Some(key) = &current else {
            if item.is_some() {
                return Err(format!("line {number}: a list item outside a list"));
            }
            // A continuation of a top-level scalar, such as a folded string.
            continue;
        };
        let list = lists
            .get_mut(key)
            .and_then(Option::as_mut)
            .expect("the current key holds a list");
        if let Some(rest) = item {
            let rest = rest.trim();
            if let Some(pair) = split_key_value(rest) {
                item_key_indent = Some(indent + (content.len() - rest.len()));
                list.push(Item::Map(vec![pair]));
            } else {
                item_key_indent = None;
                list.push(Item::Scalar(unquote(rest)));
            }
            continue;
        }
        match item_key_indent {
            Some(key_indent) if indent == key_indent => {
                let pair = split_key_value(content)
                    .ok_or_else(|| format!("line {number}: expected `key: value`"))?;
                if let Some(Item::Map(pairs)) = list.last_mut() {
                    pairs.push(pair);
                }
            }
            Some(key_indent) if indent > key_indent => {} // a value continued on more lines
            _ => return Err(format!("line {number}: unsupported YAML: `{content}`")),
        }
    }
    Ok(lists)
}

/// `key: value` or `key:` with a plain key; block scalar indicators read as an empty value.
fn split_key_value(text: &str) -> Option<(String, String)> {
    let (key, value) = match text.split_once(": ") {
        Some((key, value)) => (key, value.trim()),
        None => (text.strip_suffix(':')?, ""),
    };
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    if !plain {
        return None;
    }
    let value = if value.starts_with('>') || value.starts_with('|') {
        String::new()
    } else {
        unquote(value)
    };
    Some((key.to_owned(), value))
}

/// Drops a `#` comment that starts the line or follows whitespace outside quotes.
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous_is_space = true;
    for (index, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') if previous_is_space => return &line[..index],
            _ => {}
        }
        previous_is_space = c.is_whitespace();
    }
    line
}

fn unquote(text: &str) -> String {
    let quoted = |q: char| text.len() >= 2 && text.starts_with(q) && text.ends_with(q);
    if quoted('\'') {
        text[1..text.len() - 1].replace("''", "'")
    } else if quoted('"') {
        text[1..text.len() - 1]
            .replace("\\\"", "\"")
            .replace("\\\\", "\\")
    } else {
        text.to_owned()
    }
}

/// What the suite wrote for one scenario.
#[derive(Debug, Clone)]
pub(crate) struct ScenarioResult {
    /// The scenario's result directory.
    pub(crate) dir: PathBuf,
    /// `None` when the directory has no `checks.json`: the suite creates the directory
    /// first and writes the file only when the scenario completes, so the scenario threw.
    pub(crate) checks: Option<Vec<Check>>,
}

/// Reads the suite's `--output-dir`: one directory per scenario,
/// `server-<scenario>-<timestamp>` or (client leg) `<scenario>-<timestamp>`, each with a
/// `checks.json` (the client leg also writes the client's `stdout.txt` and `stderr.txt`). A scenario whose name has
/// a `/` (`auth/…`) lands in nested directories. When a scenario ran more than once, the
/// latest run wins.
pub(crate) fn read_results(
    root: &Path,
    leg: &str,
) -> Result<BTreeMap<String, ScenarioResult>, String> {
    let mut results = BTreeMap::new();
    walk_results(root, root, leg, &mut results)?;
    Ok(results)
}

fn walk_results(
    root: &Path,
    dir: &Path,
    leg: &str,
    results: &mut BTreeMap<String, ScenarioResult>,
) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    for path in dirs {
        let relative = path
            .strip_prefix(root)
            .expect("walked below the root")
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let Some(scenario) = scenario_from_dir(&relative, leg) else {
            walk_results(root, &path, leg, results)?;
            continue;
        };
        let file = path.join("checks.json");
        let checks = if file.is_file() {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("reading {}: {e}", file.display()))?;
            Some(parse_checks(&text).map_err(|e| format!("{}: {e}", file.display()))?)
        } else {
            None
        };
        // Sorted by name, so a later timestamp of the same scenario replaces an earlier one.
        results.insert(scenario, ScenarioResult { dir: path, checks });
    }
    Ok(())
}

/// `server-tools-list-2026-11-29T21-14-42-808Z` → `tools-list` for leg `server`: the
/// server leg names a result directory `server-<scenario>-<ISO time with : and . as ->`;
/// the client leg leaves the prefix out (`tools_call-2026-11-29T21-39-33-412Z`,
/// `auth/metadata-default-…`).
pub(crate) fn scenario_from_dir(relative: &str, leg: &str) -> Option<String> {
    const TIMESTAMP: &str = "0000-00-00T00-00-00-000Z";
    let rest = if leg == "client" {
        relative
    } else {
        relative.strip_prefix(leg)?.strip_prefix('-')?
    };
    let split = rest.len().checked_sub(TIMESTAMP.len() + 1)?;
    let (scenario, stamp) = rest.split_at_checked(split)?;
    let stamp = stamp.strip_prefix('-')?;
    let matches = stamp.len() == TIMESTAMP.len()
        && stamp.bytes().zip(TIMESTAMP.bytes()).all(|(c, pattern)| {
            if pattern == b'0' {
                c.is_ascii_digit()
            } else {
                c == pattern
            }
        });
    (matches && !scenario.is_empty()).then(|| scenario.to_owned())
}

/// The outcome of one scenario, from its checks alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// No check failed or warned.
    Pass,
    /// At least one check is a FAILURE.
    Fail,
    /// No FAILURE, but at least one WARNING, which the baseline counts as a failure.
    Warn,
    /// No `checks.json`: the scenario threw, or did not run.
    NoResult,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "FAIL",
            Self::Warn => "WARN",
            Self::NoResult => "ERROR",
        }
    }
}

/// How an outcome compares with the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Passed, and the baseline does not list it.
    Ok,
    /// Failed as the baseline says it does.
    Expected,
    /// Failed, and the baseline does not excuse (all of) it.
    Unexpected,
    /// The baseline lists it (or one of its checks), and it now passes.
    Stale,
    /// Outside the scored requirement set: reported, never judged.
    NotScored,
}

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Expected => "expected",
            Self::Unexpected => "UNEXPECTED",
            Self::Stale => "STALE",
            Self::NotScored => "-",
        }
    }
}

/// One row of the table: one scenario.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub(crate) scenario: String,
    /// For a scenario outside the scored set, why (`extension`, `pending`, …).
    pub(crate) not_scored: Option<String>,
    /// A judged extension scenario (shown in its own group of the table).
    pub(crate) extension: bool,
    pub(crate) outcome: Outcome,
    pub(crate) verdict: Verdict,
    /// The failing checks, duplicates collapsed, FAILUREs first.
    pub(crate) failing: Vec<Check>,
    pub(crate) dir: Option<PathBuf>,
}

/// The judged results of one run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Report {
    pub(crate) rows: Vec<Row>,
    /// Failures the baseline does not list, as `scenario` or `scenario:check-id`.
    pub(crate) unexpected: Vec<String>,
    /// Baseline entries that now pass, as written in the baseline.
    pub(crate) stale: Vec<String>,
    /// Baseline entries that name no scored scenario, so nothing judges them.
    pub(crate) ignored_baseline: Vec<String>,
}

impl Report {
    /// Whether the run conforms: no unexpected failure and no stale baseline entry.
    pub(crate) fn ok(&self) -> bool {
        self.unexpected.is_empty() && self.stale.is_empty()
    }

    fn scored(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|row| row.not_scored.is_none())
    }

    /// Scored scenarios that passed, that failed unexpectedly (or are stale baseline
    /// entries), and that failed as the baseline expects.
    pub(crate) fn counts(&self) -> (usize, usize, usize) {
        let passed = self
            .scored()
            .filter(|row| row.outcome == Outcome::Pass && row.verdict == Verdict::Ok)
            .count();
        let expected = self
            .scored()
            .filter(|row| row.verdict == Verdict::Expected)
            .count();
        (passed, self.scored().count() - passed - expected, expected)
    }
}

/// Judges the results of every scenario of `requirements` against `baseline`.
pub(crate) fn evaluate(
    requirements: &Requirements,
    results: &BTreeMap<String, ScenarioResult>,
    baseline: &[BaselineEntry],
) -> Report {
    let mut report = Report::default();
    let scored: BTreeSet<&str> = requirements.judged().collect();
    for entry in baseline {
        if !scored.contains(entry.scenario.as_str()) {
            report.ignored_baseline.push(entry.to_string());
        }
    }
    for scenario in &requirements.scored {
        let row = judge(scenario, results.get(scenario), baseline, &mut report);
        report.rows.push(row);
    }
    for scenario in &requirements.extensions {
        let mut row = judge_extension(scenario, results.get(scenario), baseline, &mut report);
        row.extension = true;
        report.rows.push(row);
    }
    let mut reported: BTreeSet<&str> = scored;
    let mut not_scored: Vec<(&str, String)> = requirements
        .not_scored
        .iter()
        .map(|n| (n.scenario.as_str(), n.reason.clone()))
        .collect();
    // A result for a scenario the requirement set does not name is shown, not hidden.
    for scenario in results.keys() {
        if !reported.contains(scenario.as_str())
            && !not_scored.iter().any(|(name, _)| name == scenario)
        {
            not_scored.push((scenario, "not in the requirement set".to_owned()));
        }
    }
    for (scenario, reason) in not_scored {
        if !reported.insert(scenario) {
            continue;
        }
        let result = results.get(scenario);
        let checks = checks_or_synthetic(scenario, result);
        let failing = failing_checks(&checks);
        report.rows.push(Row {
            scenario: scenario.to_owned(),
            not_scored: Some(reason),
            extension: false,
            outcome: outcome(result, &checks),
            verdict: Verdict::NotScored,
            failing,
            dir: result.map(|r| r.dir.clone()),
        });
    }
    report
}

/// An extension scenario is judged like a scored one, except that a run whose every
/// check was SKIPPED because the implementation does not take part fails: the suite skips
/// an extension's checks when a server does not declare the extension ("did not declare")
/// or a client never calls its methods ("never called"), and neither is an implemented
/// extension. A skip for the suite's own reasons (a harness it marks pending, such as
/// `tasks-status-notifications`) stays a skip.
fn judge_extension(
    scenario: &str,
    result: Option<&ScenarioResult>,
    baseline: &[BaselineEntry],
    report: &mut Report,
) -> Row {
    let skipped_only = result
        .and_then(|r| r.checks.as_ref())
        .is_some_and(|checks| {
            let mut judged = checks
                .iter()
                .filter(|c| c.id != "wire-schema-valid" && c.status != CheckStatus::Info)
                .peekable();
            judged.peek().is_some()
                && judged.all(|c| {
                    c.status == CheckStatus::Skipped
                        && (c.message.contains("did not declare")
                            || c.message.contains("never called"))
                })
        });
    let mut checks = checks_or_synthetic(scenario, result);
    if skipped_only {
        checks.push(Check {
            id: scenario.to_owned(),
            status: CheckStatus::Failure,
            message: "every check was skipped: the extension is not declared or never used"
                .to_owned(),
        });
    }
    judge_checks(scenario, result, &checks, baseline, report)
}

fn judge(
    scenario: &str,
    result: Option<&ScenarioResult>,
    baseline: &[BaselineEntry],
    report: &mut Report,
) -> Row {
    let checks = checks_or_synthetic(scenario, result);
    judge_checks(scenario, result, &checks, baseline, report)
}

fn judge_checks(
    scenario: &str,
    result: Option<&ScenarioResult>,
    checks: &[Check],
    baseline: &[BaselineEntry],
    report: &mut Report,
) -> Row {
    let failing = failing_checks(checks);
    let outcome = outcome(result, checks);
    let whole = baseline
        .iter()
        .any(|e| e.scenario == scenario && e.check.is_none());
    let listed_checks: BTreeSet<&str> = baseline
        .iter()
        .filter(|e| e.scenario == scenario)
        .filter_map(|e| e.check.as_deref())
        .collect();
    let verdict = if whole {
        if failing.is_empty() {
            report.stale.push(scenario.to_owned());
            Verdict::Stale
        } else {
            Verdict::Expected
        }
    } else if listed_checks.is_empty() {
        if failing.is_empty() {
            Verdict::Ok
        } else {
            report.unexpected.push(scenario.to_owned());
            Verdict::Unexpected
        }
    } else {
        let collapsed = collapse(checks);
        let mut unexpected = false;
        for check in &failing {
            if !listed_checks.contains(check.id.as_str()) {
                report.unexpected.push(format!("{scenario}:{}", check.id));
                unexpected = true;
            }
        }
        let mut stale = false;
        for id in &listed_checks {
            let passed = collapsed
                .iter()
                .any(|c| c.id == *id && c.status == CheckStatus::Success);
            if passed {
                report.stale.push(format!("{scenario}:{id}"));
                stale = true;
            }
        }
        if unexpected {
            Verdict::Unexpected
        } else if stale {
            Verdict::Stale
        } else if failing.is_empty() {
            Verdict::Ok
        } else {
            Verdict::Expected
        }
    };
    Row {
        scenario: scenario.to_owned(),
        not_scored: None,
        extension: false,
        outcome,
        verdict,
        failing,
        dir: result.map(|r| r.dir.clone()),
    }
}

/// The scenario's checks, or the one failing check the suite itself records for a
/// scenario that threw (its id is the scenario's name).
fn checks_or_synthetic(scenario: &str, result: Option<&ScenarioResult>) -> Vec<Check> {
    if let Some(checks) = result.and_then(|r| r.checks.clone()) {
        return checks;
    }
    let message = if result.is_some() {
        "no checks.json: the scenario threw (its error is in the suite's log)"
    } else {
        "no result directory: the scenario did not run"
    };
    vec![Check {
        id: scenario.to_owned(),
        status: CheckStatus::Failure,
        message: message.to_owned(),
    }]
}

fn outcome(result: Option<&ScenarioResult>, checks: &[Check]) -> Outcome {
    if result.and_then(|r| r.checks.as_ref()).is_none() {
        Outcome::NoResult
    } else if checks.iter().any(|c| c.status == CheckStatus::Failure) {
        Outcome::Fail
    } else if checks.iter().any(|c| c.status == CheckStatus::Warning) {
        Outcome::Warn
    } else {
        Outcome::Pass
    }
}

/// The failing checks, duplicates collapsed, FAILUREs before WARNINGs, each group in order.
fn failing_checks(checks: &[Check]) -> Vec<Check> {
    let mut failing: Vec<Check> = collapse(checks)
        .into_iter()
        .filter(|c| c.status.is_failing())
        .collect();
    failing.sort_by_key(|c| std::cmp::Reverse(c.status.severity()));
    failing
}

/// A check id can repeat within a scenario; keep one per id, the most severe (ties: the
/// last), as the suite does before matching a baseline. INFO checks are all kept.
fn collapse(checks: &[Check]) -> Vec<Check> {
    let mut winner: BTreeMap<&str, usize> = BTreeMap::new();
    for (index, check) in checks.iter().enumerate() {
        if check.status == CheckStatus::Info {
            continue;
        }
        let replace = winner
            .get(check.id.as_str())
            .is_none_or(|&current| check.status.severity() >= checks[current].status.severity());
        if replace {
            winner.insert(&check.id, index);
        }
    }
    checks
        .iter()
        .enumerate()
        .filter(|(index, check)| {
            check.status == CheckStatus::Info || winner.get(check.id.as_str()) == Some(index)
        })
        .map(|(_, check)| check.clone())
        .collect()
}

/// The table: one row per scenario, scored ones first, then the details of every failing
/// check of a scored scenario and the baseline's verdict.
pub(crate) fn render(report: &Report) -> String {
    const REASON_WIDTH: usize = 100;
    let mut out = String::new();
    let name = |row: &Row| match &row.not_scored {
        Some(reason) => format!("{} ({reason})", row.scenario),
        None => row.scenario.clone(),
    };
    let width = report
        .rows
        .iter()
        .map(|row| name(row).len())
        .max()
        .unwrap_or(0)
        .max("scenario".len());
    let line = |out: &mut String, row: &Row| {
        let reason = row
            .failing
            .first()
            .map(|c| one_line(&format!("{}: {}", c.id, c.message), REASON_WIDTH))
            .unwrap_or_default();
        let text = format!(
            "{:width$}  {:6} {:11} {reason}",
            name(row),
            row.outcome.label(),
            row.verdict.label()
        );
        let _ = writeln!(out, "{}", text.trim_end());
    };
    let _ = writeln!(
        out,
        "{:width$}  {:6} {:11} first failing check",
        "scenario", "status", "verdict"
    );
    for row in report.scored().filter(|r| !r.extension) {
        line(&mut out, row);
    }
    if report.rows.iter().any(|r| r.extension) {
        let _ = writeln!(
            out,
            "\nextensions (not required by the revision, judged by the same baseline):"
        );
        for row in report.rows.iter().filter(|r| r.extension) {
            line(&mut out, row);
        }
    }
    if report.rows.iter().any(|r| r.not_scored.is_some()) {
        let _ = writeln!(out, "\nnot scored (run and reported, never judged):");
        for row in report.rows.iter().filter(|r| r.not_scored.is_some()) {
            line(&mut out, row);
        }
    }
    let failing: Vec<&Row> = report
        .scored()
        .filter(|row| !row.failing.is_empty())
        .collect();
    if !failing.is_empty() {
        let _ = writeln!(out, "\nfailing checks of scored scenarios:");
        for row in failing {
            let place = row
                .dir
                .as_ref()
                .map(|d| format!(" ({})", d.display()))
                .unwrap_or_default();
            let _ = writeln!(out, "  {}{place}", row.scenario);
            for check in &row.failing {
                let _ = writeln!(
                    out,
                    "    {:7} {}",
                    check.status.as_str(),
                    one_line(&format!("{}: {}", check.id, check.message), 200)
                );
            }
        }
    }
    for (title, entries) in [
        (
            "unexpected failures (not in the baseline)",
            &report.unexpected,
        ),
        (
            "stale baseline entries (now passing: remove them)",
            &report.stale,
        ),
        (
            "baseline entries naming no scored scenario (ignored)",
            &report.ignored_baseline,
        ),
    ] {
        if !entries.is_empty() {
            let _ = writeln!(out, "\n{title}:");
            for entry in entries {
                let _ = writeln!(out, "  {entry}");
            }
        }
    }
    // The closing line counts baseline failures as skipped: they are known, listed, and
    // not what this run judges (an unexpected failure or a stale entry is `failed`).
    let (passed, failed, expected) = report.counts();
    let _ = writeln!(
        out,
        "\nconformance: {passed} passed, {failed} failed, {expected} skipped"
    );
    out
}

/// Collapses whitespace (messages can hold newlines) and cuts at `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests;
