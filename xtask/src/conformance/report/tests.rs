//! Tests of the report: parsing, judging and rendering, on captured suite output.
use super::*;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/conformance")
}

/// The captured requirement set's `leg` (`server` or `client`).
fn requirements(leg: &str) -> Requirements {
    let text = std::fs::read_to_string(testdata().join("requirements-2026-07-28.yaml"))
        .expect("the captured requirement set");
    parse_requirements(&text, leg).expect("parses")
}

/// The captured results of `leg`.
fn results(leg: &str) -> BTreeMap<String, ScenarioResult> {
    read_results(&testdata().join(format!("{leg}-results")), leg).expect("reads")
}

/// The scenario each result directory of `leg` names, if any.
fn assert_scenarios(leg: &str, cases: &[(&str, Option<&str>)]) {
    for &(dir, expected) in cases {
        assert_eq!(scenario_from_dir(dir, leg).as_deref(), expected, "{dir}");
    }
}

/// Asserts the verdict of `scenario`'s row.
fn assert_verdict(report: &Report, scenario: &str, verdict: Verdict) {
    assert_eq!(row(report, scenario).verdict, verdict, "{scenario}");
}

/// Asserts the outcome and verdict of `scenario`'s row.
fn assert_judged(report: &Report, scenario: &str, outcome: Outcome, verdict: Verdict) {
    let row = row(report, scenario);
    assert_eq!((row.outcome, row.verdict), (outcome, verdict), "{scenario}");
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
    let req = requirements("server");
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
    assert_scenarios("server", &cases);
}

#[test]
fn parses_captured_checks() {
    let results = results("server");
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
    let report = evaluate(&requirements("server"), &results("server"), &[]);
    let scored: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| r.not_scored.is_none())
        .collect();
    assert_eq!(scored.len(), 37);
    assert_eq!(scored[0].scenario, "server-stateless");

    assert_judged(
        &report,
        "tools-call-simple-text",
        Outcome::Pass,
        Verdict::Ok,
    );
    // INFO does not fail a scenario.
    assert_judged(
        &report,
        "server-sse-multiple-streams",
        Outcome::Pass,
        Verdict::Ok,
    );
    // FAILURE first, then WARNING.
    assert_judged(&report, "tools-list", Outcome::Fail, Verdict::Unexpected);
    let failing: Vec<&str> = row(&report, "tools-list")
        .failing
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(failing, ["tools-list", "tools-name-format"]);
    // A WARNING alone fails a scenario, as the suite's baseline counts it.
    assert_judged(
        &report,
        "input-required-result-missing-input-response",
        Outcome::Warn,
        Verdict::Unexpected,
    );
    // A scored scenario without results is a failure.
    assert_judged(
        &report,
        "completion-complete",
        Outcome::NoResult,
        Verdict::Unexpected,
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
    let mut req = requirements("server");
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
    let report = evaluate(&req, &results("server"), &baseline);
    assert_verdict(&report, "tools-list", Verdict::Expected);
    assert_verdict(&report, "tools-call-simple-text", Verdict::Stale);
    // One listed warning does not excuse the other.
    assert_verdict(&report, "sep-2164-resource-not-found", Verdict::Unexpected);
    // Every failing check listed, plus one that passed: stale.
    assert_verdict(&report, "caching", Verdict::Stale);
    assert_verdict(
        &report,
        "input-required-result-missing-input-response",
        Verdict::Expected,
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
    // The project's baseline lists no scored scenario of either leg: at most extension
    // scenarios still being implemented.
    let project = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/expected-failures.yml"),
    )
    .expect("the project's baseline");
    let text = std::fs::read_to_string(testdata().join("requirements-2026-07-28.yaml"))
        .expect("the captured requirement set");
    for leg in ["server", "client"] {
        let req = parse_requirements(&text, leg).unwrap();
        for entry in parse_baseline(&project, leg).unwrap() {
            assert!(
                !req.scored.contains(&entry.scenario)
                    && (entry.scenario.starts_with("sep-2640-")
                        || req
                            .not_scored
                            .iter()
                            .any(|n| n.scenario == entry.scenario && n.reason == "extension")),
                "{leg}: {entry} is not an extension scenario"
            );
        }
    }
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

#[test]
fn reads_the_client_leg_of_the_requirement_set() {
    let req = requirements("client");
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
    assert_scenarios("client", &cases);
}

#[test]
fn parses_captured_client_checks() {
    let results = results("client");
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
    // The project's client baseline held these 25 entries until the client's OAuth support
    // emptied it; the capture below predates that, so it is judged against them.
    let text = "client:\n  - auth/metadata-default\n  - auth/metadata-var1\n  - auth/metadata-var2\n  - auth/metadata-var3\n  - auth/basic-cimd\n  - auth/scope-from-www-authenticate\n  - auth/scope-from-scopes-supported\n  - auth/scope-omitted-when-undefined\n  - auth/scope-step-up\n  - auth/scope-retry-limit\n  - auth/token-endpoint-auth-basic\n  - auth/token-endpoint-auth-post\n  - auth/token-endpoint-auth-none\n  - auth/pre-registration\n  - auth/resource-mismatch\n  - auth/offline-access-scope\n  - auth/offline-access-not-supported\n  - auth/authorization-server-migration\n  - auth/iss-supported\n  - auth/iss-not-advertised\n  - auth/iss-supported-missing\n  - auth/iss-wrong-issuer\n  - auth/iss-unexpected\n  - auth/iss-normalized\n  - auth/metadata-issuer-mismatch\n";
    let baseline = parse_baseline(text, "client").unwrap();
    assert_eq!(baseline.len(), 25);
    assert!(
        baseline
            .iter()
            .all(|e| e.scenario.starts_with("auth/") && e.check.is_none())
    );
    let requirements = requirements("client");
    let report = evaluate(&requirements, &results("client"), &baseline);

    assert_verdict(&report, "tools_call", Verdict::Unexpected);
    assert_verdict(&report, "auth/metadata-default", Verdict::Expected);
    // Two of three checks pass; the scenario still fails as a whole.
    assert_verdict(
        &report,
        "auth/authorization-server-migration",
        Verdict::Expected,
    );
    // Listed but not captured: no result directory counts as failing, so not stale.
    assert_judged(
        &report,
        "auth/iss-supported",
        Outcome::NoResult,
        Verdict::Expected,
    );
    // The stub passes this one vacuously: every check is SKIPPED.
    assert_judged(&report, "http-standard-headers", Outcome::Pass, Verdict::Ok);
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

fn check(id: &str, status: CheckStatus) -> Check {
    Check {
        id: id.to_owned(),
        status,
        message: String::new(),
    }
}

#[test]
fn judged_extensions_leave_not_scored_and_join_the_verdict() {
    let mut req = requirements("server");
    req.judge_extensions(&["sep-2640-skills-enumeration", "tasks-lifecycle"]);
    assert!(req.not_scored.iter().all(|n| n.reason != "extension"));
    assert!(req.not_scored.iter().any(|n| n.reason == "pending"));
    assert_eq!(
        req.extensions.first().map(String::as_str),
        Some("tasks-lifecycle")
    );
    assert_eq!(
        req.extensions
            .iter()
            .filter(|s| *s == "tasks-lifecycle")
            .count(),
        1,
        "named twice, judged once"
    );
    assert_eq!(
        req.extensions.last().map(String::as_str),
        Some("sep-2640-skills-enumeration")
    );

    let mut results = BTreeMap::new();
    let dir = PathBuf::from("unused");
    // Skipped for the suite's own reason (a pending harness): still a pass.
    results.insert(
        "tasks-status-notifications".to_owned(),
        ScenarioResult {
            dir: dir.clone(),
            checks: Some(vec![Check {
                message: "Skipped: the harness needs a rewrite".to_owned(),
                ..check("tasks-status-notifications", CheckStatus::Skipped)
            }]),
        },
    );
    // Declared and passing.
    results.insert(
        "tasks-lifecycle".to_owned(),
        ScenarioResult {
            dir: dir.clone(),
            checks: Some(vec![check("tasks-lifecycle-create", CheckStatus::Success)]),
        },
    );
    // Not declared: the suite skips every check but the wire check.
    results.insert(
        "sep-2640-skills-enumeration".to_owned(),
        ScenarioResult {
            dir,
            checks: Some(vec![
                Check {
                    message: "Server did not declare the io.modelcontextprotocol/skills \
                              extension; enumeration checks not applicable."
                        .to_owned(),
                    ..check("sep-2640-skills-list-implemented", CheckStatus::Skipped)
                },
                check("wire-schema-valid", CheckStatus::Success),
            ]),
        },
    );
    let baseline = parse_baseline("server:\n  - tasks-wire-fields\n", "server").unwrap();
    let report = evaluate(&req, &results, &baseline);
    assert!(
        report.ignored_baseline.is_empty(),
        "{:?}",
        report.ignored_baseline
    );
    let lifecycle = row(&report, "tasks-lifecycle");
    assert!(lifecycle.extension && lifecycle.not_scored.is_none());
    assert_eq!(lifecycle.verdict, Verdict::Ok);
    assert_verdict(&report, "tasks-status-notifications", Verdict::Ok);
    let skills = row(&report, "sep-2640-skills-enumeration");
    assert_eq!(
        skills.verdict,
        Verdict::Unexpected,
        "an all-skipped extension fails"
    );
    assert!(
        report
            .unexpected
            .contains(&"sep-2640-skills-enumeration".to_owned())
    );
    // Listed in the baseline and without a result: expected, not stale.
    assert_verdict(&report, "tasks-wire-fields", Verdict::Expected);
    assert!(!report.ok());
    let table = render(&report);
    assert!(
        table.contains("extensions (not required by the revision"),
        "{table}"
    );
}

#[test]
fn reads_the_scenario_list_and_its_tags() {
    let text = "Client scenarios (test against a client):\n  - initialize [2025-06-18,2025-11-25]\n  - auth/2025-03-26-oauth-endpoint-fallback [2025-03-26]\n  - request-metadata [2026-07-28]\n  - auth/dpop [extension]\n\n";
    let listed = parse_scenario_list(text).unwrap();
    let names: Vec<&str> = listed.iter().map(|l| l.scenario.as_str()).collect();
    assert_eq!(
        names,
        [
            "initialize",
            "auth/2025-03-26-oauth-endpoint-fallback",
            "request-metadata",
            "auth/dpop"
        ]
    );
    let [initialize, fallback, metadata, dpop] = &listed[..] else {
        panic!("four scenarios");
    };
    assert!(initialize.applies_at("2025-11-25") && !initialize.applies_at("2026-07-28"));
    assert!(!initialize.only_before("2025-11-25") && !initialize.is_extension());
    assert!(fallback.only_before("2025-11-25") && !fallback.applies_at("2025-11-25"));
    assert!(!metadata.only_before("2025-11-25") && metadata.applies_at("2026-07-28"));
    assert!(dpop.is_extension() && !dpop.only_before("2025-11-25"));
    assert!(!dpop.applies_at("2026-07-28"));
}

#[test]
fn a_scenario_list_of_another_shape_is_refused() {
    for text in [
        "",
        "Server scenarios:\n",
        "Server scenarios:\n  - tools-list\n",
        "Server scenarios:\n  - tools list [2026-07-28]\n",
        "Server scenarios:\n  tools-list [2026-07-28]\n",
    ] {
        assert!(parse_scenario_list(text).is_err(), "accepted {text:?}");
    }
}
