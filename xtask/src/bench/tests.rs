//! The harness's tests: who takes part in what, the commands, the figures and the tables.

#![allow(clippy::float_cmp)] // exact values, chosen to be representable

use super::idle::open_files_limits;
use super::*;

#[test]
fn medians() {
    assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    assert_eq!(median(&[7.0]), Some(7.0));
    assert_eq!(median(&[]), None);
    assert_eq!(median(&[1.0, f64::NAN]), None);
}

#[test]
fn figures_from_reports() {
    let report = serde_json::json!({
        "calls_per_s": 1000.0, "p50_us": 50.0, "p99_us": 90.0,
        "cpu_us_per_call": 4.5, "peak_rss_kib": 2048, "cold_start_ms": null
    });
    let f = Figures::from_report(&report).unwrap();
    assert_eq!(f.peak_rss_kib, 2048.0);
    assert_eq!(f.cold_start_ms, None);
    let err = Figures::from_report(&serde_json::json!({"calls_per_s": 1})).unwrap_err();
    assert!(err.contains("p50_us"), "{err}");
    let runs = [
        f,
        Figures {
            calls_per_s: 3000.0,
            cold_start_ms: Some(2.0),
            ..f
        },
        Figures {
            calls_per_s: 2000.0,
            cold_start_ms: Some(1.0),
            ..f
        },
    ];
    let m = Figures::median(&runs).unwrap();
    assert_eq!(m.calls_per_s, 2000.0);
    assert_eq!(m.cold_start_ms, Some(1.5));
    assert_eq!(Figures::median(&[]), None);
}

#[test]
fn urls_from_first_lines() {
    assert_eq!(
        server_url("http://127.0.0.1:4000/mcp\n").as_deref(),
        Some("http://127.0.0.1:4000/mcp")
    );
    assert_eq!(
        server_url("listening on http://127.0.0.1:1/mcp").as_deref(),
        Some("http://127.0.0.1:1/mcp")
    );
    assert_eq!(server_url("ready"), None);
}

pub(super) fn bins() -> Bins {
    Bins {
        minimal: "minimal-server".into(),
        mcp: "mcp".into(),
        server: "mcp-bench-server".into(),
        server_mimalloc: "mcp-bench-server-mimalloc".into(),
        server_without: Piece::SERVER
            .into_iter()
            .map(|p| (p, format!("mcp-bench-server-without-{}", p.cfg()).into()))
            .collect(),
        load: "mcp-load".into(),
        client: "client-load".into(),
        client_without: Piece::CLIENT
            .into_iter()
            .map(|p| (p, format!("client-load-without-{}", p.cfg()).into()))
            .collect(),
        floor: "floor".into(),
        rmcp: "rmcp-server".into(),
    }
}

/// A peer as `ts_peer` makes it, without node.
pub(super) fn peer() -> ServerSpec {
    ServerSpec {
        name: "TypeScript SDK 1.32.2".to_owned(),
        role: Role::Other,
        driver: Driver::McpLoad,
        era: Era::Legacy,
        stdio: Some(vec!["node".into(), "server.mjs".into()]),
        http: Some(vec![
            "node".into(),
            "server.mjs".into(),
            "--http".into(),
            "127.0.0.1:0".into(),
        ]),
        url: Url::Printed,
        echo: true,
        tools: true,
        tools_args: &[],
        progress_http: &["--sse"],
    }
}

#[test]
fn a_full_run_s_medians_are_recorded_as_data() {
    let servers = servers(&bins(), vec![peer()]);
    let figures = Figures {
        calls_per_s: 1000.0,
        cold_start_ms: Some(1.5),
        ..Figures::default()
    };
    let medians = BTreeMap::from([((0, Load::Small, Transport::Stdio), figures)]);
    let dir = std::env::temp_dir().join(format!("xtask-record-{}", std::process::id()));
    let settings = Settings {
        duration: 3.0,
        warmup: 500,
    };
    let idle = [IdleFigure {
        name: "ours (mcp-bench-server)".to_owned(),
        role: Role::Ours,
        kind: IdleKind::Sessions,
        bytes: Some(2048),
    }];
    let path = record(&dir, &servers, &medians, &idle, settings).unwrap();
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(written["rounds"], ROUNDS);
    assert_eq!(written["seconds_per_run"], 3.0);
    let row = &written["medians"][0];
    assert_eq!(row["server"], servers[0].name.as_str());
    assert_eq!(
        (row["load"].as_str(), row["transport"].as_str()),
        (Some(Load::Small.name()), Some("stdio"))
    );
    assert_eq!(row["calls_per_s"], 1000.0);
    assert_eq!(row["cold_start_ms"], 1.5);
    assert_eq!(row["era"], "2026-07-28");
    assert!(row["driver_cpu_us_per_call"].is_null());
    let idle = &written["idle"][0];
    assert_eq!(idle["idle"], "sessions");
    assert_eq!(idle["count"], IDLE_COUNT);
    assert_eq!(idle["bytes_per"], 2048);
}

#[test]
fn both_eras_take_part() {
    let servers = servers(&bins(), vec![peer()]);
    let find = |role: Role, era: Era| {
        servers
            .iter()
            .find(|s| s.role == role && s.era == era)
            .unwrap_or_else(|| panic!("no {role:?} in {era:?}"))
    };
    let loads = [
        Load::Small,
        Load::Large,
        Load::Single,
        Load::Search,
        Load::List,
        Load::Progress,
    ];
    for era in Era::BOTH {
        // Ours: minimal-server for the echo loads, the bench server for the tools.
        let minimal = find(Role::OursMinimal, era);
        let bench = find(Role::Ours, era);
        let example = find(Role::ServeExample, era);
        let floor = find(Role::Floor, era);
        let rmcp = find(Role::Rmcp, era);
        for &(load, transport) in &SCENARIOS {
            let echo = !load.needs_tools();
            assert_eq!(minimal.command(load, transport).is_some(), echo);
            assert_eq!(example.command(load, transport).is_some(), echo);
            assert_eq!(
                floor.command(load, transport).is_some(),
                echo,
                "floor: echo only"
            );
            assert!(
                rmcp.command(load, transport).is_some(),
                "{load:?} {transport:?}"
            );
            assert_eq!(
                bench.command(load, transport).is_some(),
                !echo || era == Era::Modern
            );
        }
    }
    // rmcp stateful: the 2025 era over HTTP only, every load, tools included.
    assert!(
        servers
            .iter()
            .all(|s| s.role != Role::RmcpStateful || s.era == Era::Legacy)
    );
    let stateful = find(Role::RmcpStateful, Era::Legacy);
    for load in loads {
        assert!(stateful.command(load, Transport::Stdio).is_none());
        assert!(stateful.command(load, Transport::Http).is_some());
    }
    assert_eq!(
        stateful.command(Load::List, Transport::Http).unwrap(),
        [
            "rmcp-server",
            "http-stateful",
            "127.0.0.1:0",
            "--extra-tools",
            "500"
        ]
    );
    // minimal-server prints no URL: it is given a picked port.
    let minimal = find(Role::OursMinimal, Era::Modern);
    assert_eq!(minimal.url, Url::PickedPort);
    let command = minimal.command(Load::Small, Transport::Http).unwrap();
    assert_eq!(command, ["minimal-server", "--http", PICKED_PORT]);
    assert_eq!(
        on_port(&command, 4321),
        ["minimal-server", "--http", "127.0.0.1:4321"]
    );
    assert_eq!(
        find(Role::ServeExample, Era::Legacy)
            .command(Load::Single, Transport::Http)
            .unwrap(),
        ["mcp", "serve-example", "--http", "127.0.0.1:0"]
    );
    assert_eq!(find(Role::ServeExample, Era::Legacy).url, Url::Printed);
    // The rows weighed against ours stay modern.
    for role in [
        Role::OursOneWorker,
        Role::OursByClient,
        Role::OursOnTokio,
        Role::OursMimalloc,
    ] {
        assert!(
            servers
                .iter()
                .all(|s| s.role != role || s.era == Era::Modern)
        );
    }
    // A modern SDK peer is measured in both eras; a legacy one in its own.
    let python = ServerSpec {
        era: Era::Modern,
        name: "Python SDK".to_owned(),
        ..peer()
    };
    let servers = super::servers(&bins(), vec![peer(), python]);
    let eras = |name: &str| {
        servers
            .iter()
            .filter(|s| s.name.starts_with(name))
            .map(|s| s.era)
            .collect::<Vec<_>>()
    };
    assert_eq!(eras("Python SDK"), [Era::Modern, Era::Legacy]);
    assert_eq!(eras("TypeScript SDK"), [Era::Legacy]);
}

#[test]
fn a_picked_port_serves() {
    let port = pick_port().unwrap();
    assert_ne!(port, 0);
    let missing = start_on_picked_port(&["/nonexistent/minimal-server".to_owned()]);
    assert!(missing.is_err());
    // A server that exits at once fails early, with its stderr.
    let exits = [
        "sh".to_owned(),
        "-c".to_owned(),
        "echo cannot serve >&2; exit 3".to_owned(),
    ];
    let err = start_on_picked_port(&exits).err().unwrap();
    assert!(err.contains("cannot serve"), "{err}");
}

#[test]
fn the_idle_cost_and_the_limits_it_needs() {
    let specs = idle_specs(&bins());
    let ours: Vec<_> = specs.iter().filter(|s| s.role == Role::Ours).collect();
    assert_eq!(ours.len(), 2);
    for spec in &ours {
        let line = spec.http.join(" ");
        assert!(
            line.ends_with("--max-sessions 2000 --max-connections 4096"),
            "{line}"
        );
    }
    let sessions = specs
        .iter()
        .find(|s| s.kind == IdleKind::Sessions && s.role == Role::Ours)
        .unwrap();
    assert_eq!(
        sessions.driver_args().join(" "),
        "--era legacy --idle-sessions 1000"
    );
    assert_eq!(sessions.report_key(), "idle_bytes_per_session");
    let rmcp = specs
        .iter()
        .find(|s| s.kind == IdleKind::Sessions && s.role == Role::RmcpStateful)
        .unwrap();
    assert_eq!(rmcp.http[1], "http-stateful");
    let minimal = specs.iter().find(|s| s.role == Role::OursMinimal).unwrap();
    assert_eq!(
        (minimal.kind, minimal.url),
        (IdleKind::Connections, Url::PickedPort)
    );
    assert_eq!(
        minimal.driver_args().join(" "),
        "--era modern --idle-connections 1000"
    );
    let limits = "Max cpu time              unlimited            unlimited            seconds\n\
                  Max open files            1024                 524288               files\n";
    assert_eq!(open_files_limits(limits), Some((1024, 524_288)));
    assert_eq!(
        open_files_limits("Max open files unlimited unlimited files\n"),
        Some((u64::MAX, u64::MAX))
    );
    assert_eq!(open_files_limits("Max open files x 1 files\n"), None);
    assert_eq!(open_files_limits(""), None);
    assert_eq!(raise_open_files(1), Ok(()));
}

#[test]
fn only_keeps_what_it_names() {
    assert!(kept(None, &["anything"]));
    assert!(kept(Some("RMCP"), &["rmcp 3.11", "16 B"]));
    assert!(kept(Some("2025"), &["ours", "2025-11-25"]));
    assert!(!kept(Some("floor"), &["ours", "stdio"]));
}

#[test]
fn who_takes_part_in_what() {
    let servers = servers(&bins(), vec![peer()]);
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), 22, "{names:?}");
    let by_role = |role| servers.iter().find(|s| s.role == role).unwrap();
    let ours = by_role(Role::Ours);
    assert_eq!(
        ours.command(Load::List, Transport::Stdio).unwrap(),
        ["mcp-bench-server", "--bench-tools", "--extra-tools", "500"]
    );
    assert_eq!(
        ours.command(Load::Progress, Transport::Http).unwrap(),
        ["mcp-bench-server", "--http", "127.0.0.1:0", "--bench-tools"]
    );
    assert_eq!(
        ours.command(Load::Small, Transport::Stdio).unwrap(),
        ["mcp-bench-server"]
    );
    let floor = by_role(Role::Floor);
    assert!(floor.command(Load::Small, Transport::Stdio).is_some());
    for load in [Load::Search, Load::List, Load::Progress] {
        assert!(floor.command(load, Transport::Http).is_none());
    }
    let rmcp = by_role(Role::Rmcp);
    assert_eq!(
        rmcp.command(Load::List, Transport::Http).unwrap(),
        ["rmcp-server", "http", "127.0.0.1:0", "--extra-tools", "500"]
    );
    let ts = &servers[13];
    assert!(ts.name.starts_with("TypeScript"), "{}", ts.name);
    assert_eq!(ts.era, Era::Legacy);
    assert_eq!(
        ts.command(Load::Progress, Transport::Http).unwrap(),
        ["node", "server.mjs", "--http", "127.0.0.1:0", "--sse"]
    );
    assert_eq!(
        ts.command(Load::Search, Transport::Stdio).unwrap(),
        ["node", "server.mjs"]
    );
    let client = by_role(Role::OursByClient);
    assert_eq!(client.driver, Driver::Client);
    assert!(client.command(Load::Small, Transport::Stdio).is_some());
    assert!(client.command(Load::Small, Transport::Http).is_some());
    assert!(client.command(Load::Large, Transport::Stdio).is_none());
    assert!(client.command(Load::Search, Transport::Stdio).is_none());
    let one = by_role(Role::OursOneWorkerByClient);
    assert_eq!(one.driver, Driver::Client);
    assert!(one.command(Load::Small, Transport::Stdio).is_none());
    assert_eq!(
        one.command(Load::Small, Transport::Http).unwrap(),
        [
            "mcp-bench-server",
            "--http",
            "127.0.0.1:0",
            "--workers",
            "1"
        ]
    );
    assert_eq!(
        by_role(Role::OursOneWorker).command(Load::Small, Transport::Http),
        one.command(Load::Small, Transport::Http)
    );
    // The rows weighed against ours: its command with one flag (HTTP only), or the
    // mimalloc build's binary with ours' command (both transports, echo loads only).
    for (role, flags) in [
        (Role::OursOnTokio, &["--tokio-runtime"][..]),
        (Role::OursIdlePollOff, &["--idle-poll", "0"][..]),
    ] {
        let without = by_role(role);
        for load in [Load::Small, Load::Large, Load::Single] {
            let mut with = ours.command(load, Transport::Http).unwrap();
            with.extend(flags.iter().map(|&f| f.to_owned()));
            assert_eq!(without.command(load, Transport::Http).unwrap(), with);
        }
        assert!(without.command(Load::Small, Transport::Stdio).is_none());
        assert!(without.command(Load::Search, Transport::Http).is_none());
    }
    let mimalloc = by_role(Role::OursMimalloc);
    for transport in [Transport::Stdio, Transport::Http] {
        let mut command = ours.command(Load::Small, transport).unwrap();
        command[0] = "mcp-bench-server-mimalloc".to_owned();
        assert_eq!(mimalloc.command(Load::Small, transport).unwrap(), command);
        assert!(mimalloc.command(Load::Search, transport).is_none());
    }
    // Each build without a hand-written piece: its own binary with ours' arguments, or
    // our client's load from its own client binary.
    for piece in Piece::SERVER {
        let without = by_role(Role::OursWithout(piece));
        let command = without.command(Load::Large, Transport::Http).unwrap();
        assert_eq!(
            command[0],
            format!("mcp-bench-server-without-{}", piece.cfg())
        );
        let with = ours.command(Load::Large, Transport::Http).unwrap();
        assert_eq!(command[1..], with[1..]);
        assert!(without.command(Load::Small, Transport::Stdio).is_some());
        assert!(without.command(Load::Search, Transport::Http).is_none());
    }
    for piece in Piece::CLIENT {
        let without = by_role(Role::OursByClientWithout(piece));
        assert_eq!(without.driver, Driver::ClientWithout(piece));
        // Over both transports, but HTTP only for the HTTP client's pool.
        assert_eq!(piece.over_stdio(), piece != Piece::ClientPool);
        for transport in [Transport::Stdio, Transport::Http] {
            let weighed = transport == Transport::Http || piece.over_stdio();
            assert_eq!(without.command(Load::Small, transport).is_some(), weighed);
            if weighed {
                assert_eq!(
                    without.command(Load::Small, transport),
                    client.command(Load::Small, transport)
                );
            }
        }
        let bin = format!("client-load-without-{}", piece.cfg());
        assert_eq!(bins().client_of(without.driver), Path::new(&bin));
    }
    assert_eq!(bins().client_of(Driver::Client), Path::new("client-load"));
}

/// Every switch the bench builds with is one the workspace declares (an undeclared
/// `--cfg` would be ignored, and the "without" build would be the "with").
#[test]
fn every_switch_is_declared_and_used() {
    let root = crate::project_root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let sources = [
        "crates/mcp-json/src/lib.rs",
        "crates/mcp-client/src/client/builder.rs",
        "crates/mcp-transport-http/src/client/mod.rs",
    ]
    .map(|path| std::fs::read_to_string(root.join(path)).unwrap())
    .concat();
    for piece in Piece::SERVER.into_iter().chain(Piece::CLIENT) {
        assert_eq!(
            piece.rustflags(),
            format!("--cfg mcp_without=\"{}\"", piece.cfg())
        );
        let value = format!("\"{}\"", piece.cfg());
        assert!(manifest.contains(&value), "{value} is not in check-cfg");
        let used = format!("mcp_without = {value}");
        assert!(sources.contains(&used), "nothing reads {used}");
    }
}

#[test]
fn what_the_drivers_are_told() {
    let settings = Settings {
        duration: 0.5,
        warmup: 100,
    };
    let servers = servers(&bins(), vec![peer()]);
    let (args, driver) = driver_args(&servers[0], Load::Small, settings);
    assert_eq!(driver, "mcp-load");
    assert_eq!(
        args.join(" "),
        "--duration 0.5 --warmup 100 --era modern --in-flight 16 --payload 16"
    );
    let (args, _) = driver_args(&servers[13], Load::Single, settings);
    assert!(
        args.join(" ")
            .ends_with("--era legacy --in-flight 1 --payload 16"),
        "{args:?}"
    );
    let (args, _) = driver_args(&servers[1], Load::List, settings);
    assert_eq!(
        args.join(" "),
        "--duration 0.5 --warmup 4 --era modern --in-flight 16 --method tools/list --expect-tools 500 --threads 2"
    );
    let (args, _) = driver_args(&servers[1], Load::Progress, settings);
    assert!(
        args.join(" ")
            .ends_with(r#"--tool steps --arguments {"steps":10} --progress 10"#),
        "{args:?}"
    );
    let (args, _) = driver_args(&servers[1], Load::Search, settings);
    let at = args.iter().position(|a| a == "--arguments").unwrap();
    let search: Value = serde_json::from_str(&args[at + 1]).unwrap();
    assert_eq!(search["scope"], "code");
    assert!(SEARCH_REPLY.contains(search["query"].as_str().unwrap()));
    assert_eq!(args[at + 3], SEARCH_REPLY);
    let client = servers.iter().find(|s| s.driver == Driver::Client).unwrap();
    let (args, driver) = driver_args(client, Load::Small, settings);
    assert_eq!(driver, "client-load");
    assert_eq!(
        args.join(" "),
        "--duration 0.5 --warmup 100 --in-flight 16 --payload 16"
    );
}
