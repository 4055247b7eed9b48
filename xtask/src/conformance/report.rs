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
    Ok(Requirements { scored, not_scored })
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
    let scored: BTreeSet<&str> = requirements.scored.iter().map(String::as_str).collect();
    for entry in baseline {
        if !scored.contains(entry.scenario.as_str()) {
            report.ignored_baseline.push(entry.to_string());
        }
    }
    for scenario in &requirements.scored {
        let row = judge(scenario, results.get(scenario), baseline, &mut report);
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
            outcome: outcome(result, &checks),
            verdict: Verdict::NotScored,
            failing,
            dir: result.map(|r| r.dir.clone()),
        });
    }
    report
}

fn judge(
    scenario: &str,
    result: Option<&ScenarioResult>,
    baseline: &[BaselineEntry],
    report: &mut Report,
) -> Row {
    let checks = checks_or_synthetic(scenario, result);
    let failing = failing_checks(&checks);
    let outcome = outcome(result, &checks);
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
        let collapsed = collapse(&checks);
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
    for row in report.rows.iter().filter(|r| r.not_scored.is_none()) {
        line(&mut out, row);
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
mod tests {
    use super::*;

    fn testdata() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/conformance")
    }

    fn requirements() -> Requirements {
        let text = std::fs::read_to_string(testdata().join("requirements-2026-07-28.yaml"))
            .expect("the captured requirement set");
        parse_requirements(&text, "server").expect("parses")
    }

    fn results() -> BTreeMap<String, ScenarioResult> {
        read_results(&testdata().join("server-results"), "server").expect("reads")
    }

    fn row<'a>(report: &'a Report, scenario: &str) -> &'a Row {
        report
            .rows
            .iter()
            .find(|r| r.scenario == scenario)
            .unwrap_or_else(|| panic!("no row for {scenario}"))
    }

    #[test]
    fn reads_the_real_requirement_set() {
        let req = requirements();
        assert_eq!(req.scored.len(), 37);
        assert_eq!(
            req.scored.first().map(String::as_str),
            Some("server-stateless")
        );
        assert_eq!(
            req.scored.last().map(String::as_str),
            Some("input-required-result-validate-input")
        );
        assert!(req.scored.iter().any(|s| s == "dns-rebinding-protection"));
        let not_scored: Vec<(&str, &str)> = req
            .not_scored
            .iter()
            .map(|n| (n.scenario.as_str(), n.reason.as_str()))
            .collect();
        assert_eq!(not_scored.len(), 13, "{not_scored:?}");
        assert_eq!(not_scored[0], ("tasks-lifecycle", "extension"));
        assert!(not_scored.contains(&("json-schema-2020-12", "pending")));
        assert!(not_scored.contains(&("http-custom-header-server-validation", "pending")));
        // Client-leg entries of not_scored belong to the other leg.
        assert!(!not_scored.iter().any(|(s, _)| s.starts_with("auth/")));
        let client = parse_requirements(
            &std::fs::read_to_string(testdata().join("requirements-2026-07-28.yaml")).unwrap(),
            "client",
        )
        .unwrap();
        assert_eq!(
            client.scored.first().map(String::as_str),
            Some("tools_call")
        );
        assert!(client.not_scored.iter().any(|n| n.scenario == "auth/dpop"));
    }

    #[test]
    fn names_scenarios_from_result_directories() {
        let cases = [
            (
                "server-tools-list-2026-11-29T21-14-42-808Z",
                Some("tools-list"),
            ),
            (
                "server-server-stateless-2026-11-29T21-14-42-652Z",
                Some("server-stateless"),
            ),
            (
                "server-auth/basic-cimd-2026-11-29T21-14-42-652Z",
                Some("auth/basic-cimd"),
            ),
            ("client-tools_call-2026-11-29T21-14-42-652Z", None),
            ("server-tools-list", None),
            ("server-2026-11-29T21-14-42-808Z", None),
            ("server-tools-list-2026-11-29T21:14:42.808Z", None),
            ("server-é2026-11-29T21-14-42-808Z", None),
        ];
        for (dir, expected) in cases {
            assert_eq!(
                scenario_from_dir(dir, "server").as_deref(),
                expected,
                "{dir}"
            );
        }
    }

    #[test]
    fn parses_captured_checks() {
        let results = results();
        assert_eq!(results.len(), 9);
        let simple = &results["tools-call-simple-text"];
        let checks = simple.checks.as_ref().expect("has checks.json");
        let ids: Vec<&str> = checks.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["tools-call-simple-text", "wire-schema-valid"]);
        assert!(checks.iter().all(|c| c.status == CheckStatus::Success));
        assert_eq!(checks[0].message, "Tool returns simple text content");
        // The scenario that threw left its directory without checks.json.
        assert!(results["tasks-capability-negotiation"].checks.is_none());
        let list = results["tools-list"].checks.as_ref().unwrap();
        assert_eq!(list[0].status, CheckStatus::Failure);
        assert_eq!(list[0].message, "Tool 1: missing description");
        assert_eq!(list[1].status, CheckStatus::Warning);
    }

    #[test]
    fn judges_the_capture_against_an_empty_baseline() {
        let report = evaluate(&requirements(), &results(), &[]);
        let scored: Vec<&Row> = report
            .rows
            .iter()
            .filter(|r| r.not_scored.is_none())
            .collect();
        assert_eq!(scored.len(), 37);
        assert_eq!(scored[0].scenario, "server-stateless");

        let simple = row(&report, "tools-call-simple-text");
        assert_eq!(
            (simple.outcome, simple.verdict),
            (Outcome::Pass, Verdict::Ok)
        );
        // INFO does not fail a scenario.
        let streams = row(&report, "server-sse-multiple-streams");
        assert_eq!(
            (streams.outcome, streams.verdict),
            (Outcome::Pass, Verdict::Ok)
        );
        // FAILURE first, then WARNING.
        let list = row(&report, "tools-list");
        assert_eq!(
            (list.outcome, list.verdict),
            (Outcome::Fail, Verdict::Unexpected)
        );
        let failing: Vec<&str> = list.failing.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(failing, ["tools-list", "tools-name-format"]);
        // A WARNING alone fails a scenario, as the suite's baseline counts it.
        let rerequest = row(&report, "input-required-result-missing-input-response");
        assert_eq!(
            (rerequest.outcome, rerequest.verdict),
            (Outcome::Warn, Verdict::Unexpected)
        );
        // A scored scenario without results is a failure.
        let missing = row(&report, "completion-complete");
        assert_eq!(
            (missing.outcome, missing.verdict),
            (Outcome::NoResult, Verdict::Unexpected)
        );

        // Not-scored scenarios are reported, never judged.
        let threw = row(&report, "tasks-capability-negotiation");
        assert_eq!(threw.outcome, Outcome::NoResult);
        assert_eq!(threw.verdict, Verdict::NotScored);
        assert_eq!(threw.not_scored.as_deref(), Some("extension"));
        let skipped = row(&report, "tasks-status-notifications");
        assert_eq!(skipped.outcome, Outcome::Pass);
        assert!(!report.unexpected.iter().any(|e| e.starts_with("tasks-")));

        assert_eq!(
            report.counts(),
            (2, 35, 0),
            "an empty baseline expects nothing"
        );
        assert_eq!(report.unexpected.len(), 35);
        assert!(report.stale.is_empty());
        assert!(!report.ok());

        let table = render(&report);
        assert!(table.starts_with("scenario "), "{table}");
        let list_line = table
            .lines()
            .find(|l| l.starts_with("tools-list "))
            .expect("a row for tools-list");
        let columns: Vec<&str> = list_line.split_whitespace().take(3).collect();
        assert_eq!(columns, ["tools-list", "FAIL", "UNEXPECTED"]);
        assert!(list_line.ends_with("tools-list: Tool 1: missing description"));
        assert!(table.contains("tasks-lifecycle (extension)"));
        assert!(
            table
                .trim_end()
                .ends_with("conformance: 2 passed, 35 failed, 0 skipped")
        );
    }

    #[test]
    fn judges_baseline_entries_like_the_suite() {
        let mut req = requirements();
        req.scored.retain(|s| {
            [
                "tools-list",
                "tools-call-simple-text",
                "sep-2164-resource-not-found",
                "caching",
                "input-required-result-missing-input-response",
            ]
            .contains(&s.as_str())
        });
        let baseline = parse_baseline(
            "server:\n\
             \x20 - tools-list                 # the whole scenario may fail\n\
             \x20 - tools-call-simple-text     # passes now: stale\n\
             \x20 - sep-2164-resource-not-found:sep-2164-error-code\n\
             \x20 - caching:sep-2549-tools-list-caching-hints\n\
             \x20 - caching:sep-2549-prompts-list-caching-hints\n\
             \x20 - caching:sep-2549-resources-list-caching-hints\n\
             \x20 - caching:sep-2549-resources-templates-list-caching-hints\n\
             \x20 - 'input-required-result-missing-input-response'\n\
             \x20 - no-such-scenario\n",
            "server",
        )
        .unwrap();
        let report = evaluate(&req, &results(), &baseline);
        assert_eq!(row(&report, "tools-list").verdict, Verdict::Expected);
        assert_eq!(
            row(&report, "tools-call-simple-text").verdict,
            Verdict::Stale
        );
        // One listed warning does not excuse the other.
        assert_eq!(
            row(&report, "sep-2164-resource-not-found").verdict,
            Verdict::Unexpected
        );
        // Every failing check listed, plus one that passed: stale.
        assert_eq!(row(&report, "caching").verdict, Verdict::Stale);
        assert_eq!(
            row(&report, "input-required-result-missing-input-response").verdict,
            Verdict::Expected
        );
        assert_eq!(
            report.unexpected,
            ["sep-2164-resource-not-found:sep-2164-data-uri"]
        );
        assert_eq!(
            report.stale,
            [
                "tools-call-simple-text",
                "caching:sep-2549-tools-list-caching-hints"
            ]
        );
        assert_eq!(report.ignored_baseline, ["no-such-scenario"]);
        assert!(!report.ok());
    }

    #[test]
    fn parses_baselines() {
        let empty = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/expected-failures.yml"),
        )
        .expect("the project's baseline");
        assert_eq!(parse_baseline(&empty, "server").unwrap(), []);
        assert_eq!(parse_baseline(&empty, "client").unwrap(), []);
        assert_eq!(parse_baseline("", "server").unwrap(), []);
        assert_eq!(parse_baseline("# nothing\n", "server").unwrap(), []);
        assert_eq!(
            parse_baseline("client:\n  - tools_call\n", "server").unwrap(),
            []
        );
        let entries = parse_baseline(
            "server:\n  - caching\n  - \"tools-list:tools-name-format\"\n  - auth/x:y\nclient: []\n",
            "server",
        )
        .unwrap();
        let written: Vec<String> = entries.iter().map(ToString::to_string).collect();
        assert_eq!(
            written,
            ["caching", "tools-list:tools-name-format", "auth/x:y"]
        );
        assert_eq!(entries[1].check.as_deref(), Some("tools-name-format"));
        // A list may sit at its key's indentation; comments may follow an entry.
        let flush = parse_baseline("server:\n- caching # why\n- tools-list\n", "server").unwrap();
        let written: Vec<String> = flush.iter().map(ToString::to_string).collect();
        assert_eq!(written, ["caching", "tools-list"]);

        for bad in [
            "server:\n  - tools-list: tools-name-format\n",
            "server:\n  - tools-list:\n",
            "server:\n  - :check\n",
            "server: tools-list\n",
            "server: [tools-list]\n",
            "server:\n  - caching\n  - caching:sep-2549-ttl-non-negative\n",
            "server:\n\t- caching\n",
            "- caching\n",
        ] {
            assert!(parse_baseline(bad, "server").is_err(), "accepted {bad:?}");
        }
    }

    fn client_requirements() -> Requirements {
        let text = std::fs::read_to_string(testdata().join("requirements-2026-07-28.yaml"))
            .expect("the captured requirement set");
        parse_requirements(&text, "client").expect("parses")
    }

    fn client_results() -> BTreeMap<String, ScenarioResult> {
        read_results(&testdata().join("client-results"), "client").expect("reads")
    }

    #[test]
    fn reads_the_client_leg_of_the_requirement_set() {
        let req = client_requirements();
        assert_eq!(req.scored.len(), 32);
        let auth = req.scored.iter().filter(|s| s.starts_with("auth/")).count();
        assert_eq!(auth, 25);
        let others: Vec<&str> = req
            .scored
            .iter()
            .map(String::as_str)
            .filter(|s| !s.starts_with("auth/"))
            .collect();
        assert_eq!(
            others,
            [
                "tools_call",
                "request-metadata",
                "sep-2322-client-request-state",
                "http-standard-headers",
                "http-custom-headers",
                "http-invalid-tool-headers",
                "json-schema-ref-no-deref",
            ]
        );
        let not_scored: Vec<(&str, &str)> = req
            .not_scored
            .iter()
            .map(|n| (n.scenario.as_str(), n.reason.as_str()))
            .collect();
        assert_eq!(not_scored.len(), 7, "{not_scored:?}");
        assert!(not_scored.contains(&("auth/dpop", "extension")));
        assert!(not_scored.contains(&("json-schema-2020-12-preservation", "added-after-release")));
    }

    #[test]
    fn names_client_scenarios_from_result_directories() {
        let cases = [
            ("tools_call-2026-11-29T21-39-33-412Z", Some("tools_call")),
            (
                "auth/metadata-default-2026-11-29T21-39-33-413Z",
                Some("auth/metadata-default"),
            ),
            ("auth", None),
            ("tools_call", None),
            ("2026-11-29T21-39-33-412Z", None),
        ];
        for (dir, expected) in cases {
            assert_eq!(
                scenario_from_dir(dir, "client").as_deref(),
                expected,
                "{dir}"
            );
        }
    }

    #[test]
    fn parses_captured_client_checks() {
        let results = client_results();
        assert_eq!(
            results.len(),
            12,
            "{:?}",
            results.keys().collect::<Vec<_>>()
        );
        // `auth/…` scenarios land in nested directories.
        let migration = results["auth/authorization-server-migration"]
            .checks
            .as_ref()
            .unwrap();
        let statuses: Vec<(&str, &CheckStatus)> = migration
            .iter()
            .map(|c| (c.id.as_str(), &c.status))
            .collect();
        assert_eq!(
            statuses,
            [
                ("sep-2352-reregister-on-as-change", &CheckStatus::Failure),
                ("sep-2352-no-reuse-on-as-change", &CheckStatus::Success),
                (
                    "sep-2352-no-cross-as-credential-reuse",
                    &CheckStatus::Success
                ),
            ]
        );
        let metadata = results["request-metadata"].checks.as_ref().unwrap();
        assert_eq!(metadata.len(), 8);
        assert!(metadata[0].message.starts_with("Check was not observed"));
        // A client that sent nothing leaves every standard-header check SKIPPED.
        let headers = results["http-standard-headers"].checks.as_ref().unwrap();
        assert_eq!(headers.len(), 11);
        assert!(headers.iter().all(|c| c.status == CheckStatus::Skipped));
    }

    #[test]
    fn judges_the_client_capture_against_a_baseline_of_the_auth_scenarios() {
        // The project's client baseline held these 25 entries until issue #9 emptied it;
        // the capture below predates that, so it is judged against them.
        let text = "client:\n  - auth/metadata-default\n  - auth/metadata-var1\n  - auth/metadata-var2\n  - auth/metadata-var3\n  - auth/basic-cimd\n  - auth/scope-from-www-authenticate\n  - auth/scope-from-scopes-supported\n  - auth/scope-omitted-when-undefined\n  - auth/scope-step-up\n  - auth/scope-retry-limit\n  - auth/token-endpoint-auth-basic\n  - auth/token-endpoint-auth-post\n  - auth/token-endpoint-auth-none\n  - auth/pre-registration\n  - auth/resource-mismatch\n  - auth/offline-access-scope\n  - auth/offline-access-not-supported\n  - auth/authorization-server-migration\n  - auth/iss-supported\n  - auth/iss-not-advertised\n  - auth/iss-supported-missing\n  - auth/iss-wrong-issuer\n  - auth/iss-unexpected\n  - auth/iss-normalized\n  - auth/metadata-issuer-mismatch\n";
        let baseline = parse_baseline(text, "client").unwrap();
        assert_eq!(baseline.len(), 25);
        assert!(
            baseline
                .iter()
                .all(|e| e.scenario.starts_with("auth/") && e.check.is_none())
        );
        let requirements = client_requirements();
        let report = evaluate(&requirements, &client_results(), &baseline);

        assert_eq!(row(&report, "tools_call").verdict, Verdict::Unexpected);
        assert_eq!(
            row(&report, "auth/metadata-default").verdict,
            Verdict::Expected
        );
        // Two of three checks pass; the scenario still fails as a whole.
        assert_eq!(
            row(&report, "auth/authorization-server-migration").verdict,
            Verdict::Expected
        );
        // Listed but not captured: no result directory counts as failing, so not stale.
        let missing = row(&report, "auth/iss-supported");
        assert_eq!(
            (missing.outcome, missing.verdict),
            (Outcome::NoResult, Verdict::Expected)
        );
        // The stub passes this one vacuously: every check is SKIPPED.
        let vacuous = row(&report, "http-standard-headers");
        assert_eq!(
            (vacuous.outcome, vacuous.verdict),
            (Outcome::Pass, Verdict::Ok)
        );
        assert_eq!(
            row(&report, "auth/dpop").not_scored.as_deref(),
            Some("extension")
        );
        assert_eq!(
            report.unexpected,
            [
                "tools_call",
                "request-metadata",
                "sep-2322-client-request-state",
                "http-custom-headers",
                "http-invalid-tool-headers",
                "json-schema-ref-no-deref",
            ]
        );
        assert!(report.stale.is_empty());
        assert!(report.ignored_baseline.is_empty());
        let (passed, failed, expected) = report.counts();
        assert_eq!((passed, failed + expected), (1, 31));
        assert!(!report.ok());
        let table = render(&report);
        assert!(table.contains("json-schema-2020-12-preservation (added-after-release)"));
    }

    #[test]
    fn flattens_and_cuts_messages() {
        assert_eq!(one_line("a\n  b\tc", 10), "a b c");
        assert_eq!(one_line("abcdefghij", 5), "abcd…");
    }
}
