//! The tables `cargo xtask bench` prints (those of `docs/PERFORMANCE.md`): the figures per
//! server, the tool scenarios, ours against rmcp and the floor with the goals, and
//! our client against `mcp-load`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{
    EXTRA_TOOLS, Era, Figures, IDLE_COUNT, IdleFigure, IdleKind, Load, PROGRESS_STEPS, Piece,
    ROUNDS, Role, SCENARIOS, ServerSpec, Settings, Transport,
};

/// A number with thousands separators, no decimals.
fn thousands(value: f64) -> String {
    if !value.is_finite() {
        return "—".to_owned();
    }
    #[allow(clippy::cast_possible_truncation)]
    let rounded = value.round() as i64;
    let digits = rounded.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if rounded < 0 {
        out.insert(0, '-');
    }
    out
}

/// A figure with up to three significant digits and its unit.
fn short(value: f64, unit: &str) -> String {
    if !value.is_finite() {
        return "—".to_owned();
    }
    let text = if value >= 100.0 {
        thousands(value)
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    };
    format!("{text} {unit}")
}

/// A figure of `unit` or `—`: [`thousands`] for a count (an empty unit), else [`short`].
fn cell(value: Option<f64>, unit: &str) -> String {
    value.map_or_else(
        || "—".to_owned(),
        |v| {
            if unit.is_empty() {
                thousands(v)
            } else {
                short(v, unit)
            }
        },
    )
}

/// `a / b` as a ratio, or `—`.
fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() => format!("{:.2}×", a / b),
        _ => "—".to_owned(),
    }
}

/// The report: the figures of each server in each era, the idle cost, then ours against
/// rmcp and the floor.
pub(super) fn render(
    servers: &[ServerSpec],
    medians: &BTreeMap<(usize, Load, Transport), Figures>,
    idle: &[IdleFigure],
    settings: Settings,
    quick: bool,
) -> String {
    let get =
        |index: usize, load: Load, transport: Transport| medians.get(&(index, load, transport));
    let pair = |index: usize, load: Load, f: &dyn Fn(&Figures) -> String| {
        let cell = |t| get(index, load, t).map_or_else(|| "—".to_owned(), f);
        format!("{} / {}", cell(Transport::Stdio), cell(Transport::Http))
    };
    // A server has a row in a table when it takes part in one of the table's loads.
    let takes_part = |server: &ServerSpec, loads: &[Load]| {
        loads.iter().any(|&load| {
            [Transport::Stdio, Transport::Http]
                .into_iter()
                .any(|t| server.command(load, t).is_some())
        })
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Medians of {ROUNDS} interleaved rounds, {} s measured per run{}.\n",
        settings.duration,
        if quick {
            " (--quick: a smoke run, not figures to quote)"
        } else {
            ""
        }
    );
    for era in Era::BOTH {
        let in_era = || {
            servers
                .iter()
                .enumerate()
                .filter(move |(_, server)| server.era == era)
        };
        let _ = writeln!(
            out,
            "16-byte echo, 16 calls in flight, {} era:\n",
            era.revision()
        );
        let _ = writeln!(
            out,
            "| server | stdio calls/s | HTTP calls/s | server CPU per call (stdio / HTTP) | peak RSS (stdio / HTTP) | cold start (stdio) | p99 (stdio / HTTP) |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
        for (index, server) in in_era() {
            if !takes_part(server, &[Load::Small]) {
                continue;
            }
            let calls = |t| {
                get(index, Load::Small, t)
                    .map_or_else(|| "—".to_owned(), |f| thousands(f.calls_per_s))
            };
            let cold = get(index, Load::Small, Transport::Stdio)
                .and_then(|f| f.cold_start_ms)
                .map_or_else(|| "—".to_owned(), |ms| short(ms, "ms"));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                server.name,
                calls(Transport::Stdio),
                calls(Transport::Http),
                pair(index, Load::Small, &|f| short(f.cpu_us_per_call, "µs")),
                pair(index, Load::Small, &|f| short(
                    f.peak_rss_kib / 1024.0,
                    "MB"
                )),
                cold,
                pair(index, Load::Small, &|f| short(f.p99_us, "µs")),
            );
        }
        let _ = writeln!(
            out,
            "\n64 KiB echo (16 in flight) and one call in flight, {} era:\n",
            era.revision()
        );
        let _ = writeln!(
            out,
            "| server | 64 KiB calls/s (stdio / HTTP) | 64 KiB CPU per call (stdio / HTTP) | 1 in flight p50 (stdio / HTTP) | 1 in flight calls/s (stdio / HTTP) |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|");
        for (index, server) in in_era() {
            if !takes_part(server, &[Load::Large, Load::Single]) {
                continue;
            }
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                server.name,
                pair(index, Load::Large, &|f| thousands(f.calls_per_s)),
                pair(index, Load::Large, &|f| short(f.cpu_us_per_call, "µs")),
                pair(index, Load::Single, &|f| short(f.p50_us, "µs")),
                pair(index, Load::Single, &|f| thousands(f.calls_per_s)),
            );
        }

        let _ = writeln!(
            out,
            "\nThe tool scenarios, 16 in flight: `search` (a schema-validated input: nested object, \
             enums, patterns, a date format, bounded arrays), `tools/list` of {EXTRA_TOOLS} tools \
             (one call is the whole listing, every page followed) and `steps` ({PROGRESS_STEPS} \
             progress notifications before each result, over SSE), {} era:\n",
            era.revision()
        );
        let _ = writeln!(
            out,
            "| server | search calls/s (stdio / HTTP) | search CPU per call (stdio / HTTP) | listings/s (stdio / HTTP) | CPU per listing (stdio / HTTP) | progress calls/s (SSE) | progress CPU per call (SSE) | progress p99 (SSE) |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
        for (index, server) in in_era() {
            if !takes_part(server, &[Load::Search, Load::List, Load::Progress]) {
                continue;
            }
            let sse = |f: &dyn Fn(&Figures) -> String| {
                get(index, Load::Progress, Transport::Http).map_or_else(|| "—".to_owned(), f)
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                server.name,
                pair(index, Load::Search, &|f| thousands(f.calls_per_s)),
                pair(index, Load::Search, &|f| short(f.cpu_us_per_call, "µs")),
                pair(index, Load::List, &|f| thousands(f.calls_per_s)),
                pair(index, Load::List, &|f| short(f.cpu_us_per_call, "µs")),
                sse(&|f| thousands(f.calls_per_s)),
                sse(&|f| short(f.cpu_us_per_call, "µs")),
                sse(&|f| short(f.p99_us, "µs")),
            );
        }
        let _ = writeln!(out);
    }
    idle_table(&mut out, idle);
    // The first of a role: the 2026-07-28 era's.
    let find = |role: Role| servers.iter().position(|s| s.role == role);
    goals(&mut out, servers, medians, idle);
    let ours = find(Role::Ours);

    let (by_client, one_worker, one_worker_by_client) = (
        find(Role::OursByClient),
        find(Role::OursOneWorker),
        find(Role::OursOneWorkerByClient),
    );
    let _ = writeln!(
        out,
        "\nOur client as the driver: `client-load` (mcp_client::Client, 16 tasks sharing one \
         client) against `mcp-load`, both driving ours with the 16-byte echo, 16 in flight \
         (same run):\n"
    );
    let _ = writeln!(
        out,
        "| transport | mcp-load calls/s | our client calls/s | our client ÷ mcp-load | driver CPU per call (mcp-load / our client) | p99 (mcp-load / our client) | goal |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---|");
    let rows = [
        ("stdio", Transport::Stdio, ours, by_client),
        ("HTTP", Transport::Http, ours, by_client),
        (
            "HTTP, server on 1 worker thread (`--workers 1`)",
            Transport::Http,
            one_worker,
            one_worker_by_client,
        ),
    ];
    for (label, transport, load, client) in rows {
        let of = |index: Option<usize>| index.and_then(|i| get(i, Load::Small, transport));
        let (load, client) = (of(load), of(client));
        let cell_of = |f: Option<&Figures>, value: fn(&Figures) -> Option<f64>, unit: &str| {
            cell(f.and_then(value), unit)
        };
        let calls = |f: &Figures| Some(f.calls_per_s);
        let driver_cpu = |f: &Figures| f.driver_cpu_us_per_call;
        let p99 = |f: &Figures| Some(f.p99_us);
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {} / {} | {} / {} | ≥ 0.9× |",
            cell_of(load, calls, ""),
            cell_of(client, calls, ""),
            ratio(client.map(|f| f.calls_per_s), load.map(|f| f.calls_per_s)),
            cell_of(load, driver_cpu, "µs"),
            cell_of(client, driver_cpu, "µs"),
            cell_of(load, p99, "µs"),
            cell_of(client, p99, "µs"),
        );
    }
    with_and_without(&mut out, servers, medians);
    out
}

/// One row of the goals table beyond calls/s: label, load, transport, the figure, its
/// unit, the goal (the 2026-07-28 era).
type Row = (
    &'static str,
    Load,
    Transport,
    fn(&Figures) -> Option<f64>,
    &'static str,
    &'static str,
);

/// Ours for `load`: `minimal-server` (what a user writes) for the echo loads, the
/// benchmark's server for the tool scenarios (only it has their tools).
fn ours_for(load: Load) -> Role {
    if load.needs_tools() {
        Role::Ours
    } else {
        Role::OursMinimal
    }
}

/// The goal of the calls/s row of `load` over `transport` in `era`, against rmcp
/// (`stateful`: rmcp's default HTTP), from the issue; "keeps its lead" where it names none.
fn calls_goal(load: Load, transport: Transport, era: Era, stateful: bool) -> &'static str {
    match (load, transport, era, stateful) {
        (Load::Small, Transport::Stdio, Era::Modern, _) => "≥ 3× rmcp",
        (Load::Small, Transport::Stdio, Era::Legacy, _) => "≥ 2.5× rmcp",
        (Load::Small, Transport::Http, Era::Modern, _) => "≥ 0.9× floor",
        (Load::Small, Transport::Http, Era::Legacy, false) => "≥ 0.8× floor",
        (Load::Small, Transport::Http, Era::Legacy, true) => "≥ 2.5× rmcp stateful",
        (Load::List, ..) => "≥ 2× rmcp",
        _ => "> 1× (keeps its lead)",
    }
}

/// Ours against rmcp and the floor, with the goals: calls/s of every load in each era
/// (over HTTP in the 2025 era against rmcp stateless and stateful), the other figures of
/// the 2026-07-28 era, and the idle cost.
fn goals(
    out: &mut String,
    servers: &[ServerSpec],
    medians: &BTreeMap<(usize, Load, Transport), Figures>,
    idle: &[IdleFigure],
) {
    let find = |role: Role, era: Era| servers.iter().position(|s| s.role == role && s.era == era);
    let figure = |index: Option<usize>, load, transport, f: fn(&Figures) -> Option<f64>| {
        index
            .and_then(|i| medians.get(&(i, load, transport)))
            .and_then(f)
    };
    let _ = writeln!(out, "\nOurs against rmcp and the floor (same run):\n");
    let _ = writeln!(
        out,
        "| figure | ours | rmcp | floor | ours ÷ rmcp | ours ÷ floor | goal |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---|");
    let mut row = |label: &str, (a, b, c): (Option<f64>, Option<f64>, Option<f64>), unit, goal| {
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {} | {} | {goal} |",
            cell(a, unit),
            cell(b, unit),
            cell(c, unit),
            ratio(a, b),
            ratio(a, c),
        );
    };
    let calls = |f: &Figures| Some(f.calls_per_s);
    for era in Era::BOTH {
        for &(load, transport) in &SCENARIOS {
            let ours = figure(find(ours_for(load), era), load, transport, calls);
            let floor = figure(find(Role::Floor, era), load, transport, calls);
            let mut against = vec![(Role::Rmcp, false)];
            if era == Era::Legacy && transport == Transport::Http {
                against.push((Role::RmcpStateful, true));
            }
            for (rmcp, stateful) in against {
                let label = format!(
                    "calls/s, {}, {}, {}{}",
                    load.name(),
                    transport.name(),
                    era.revision(),
                    if stateful {
                        " (rmcp stateful)"
                    } else if era == Era::Legacy && transport == Transport::Http {
                        " (rmcp stateless)"
                    } else {
                        ""
                    }
                );
                let rmcp = figure(find(rmcp, era), load, transport, calls);
                row(
                    &label,
                    (ours, rmcp, floor),
                    "",
                    calls_goal(load, transport, era, stateful),
                );
            }
        }
    }
    let rows: [Row; 10] = [
        (
            "CPU per small call, stdio",
            Load::Small,
            Transport::Stdio,
            |f| Some(f.cpu_us_per_call),
            "µs",
            "≤ 3 µs",
        ),
        (
            "CPU per small call, HTTP",
            Load::Small,
            Transport::Http,
            |f| Some(f.cpu_us_per_call),
            "µs",
            "≤ 12 µs",
        ),
        (
            "p50, 1 in flight, stdio",
            Load::Single,
            Transport::Stdio,
            |f| Some(f.p50_us),
            "µs",
            "≤ 1.2× floor",
        ),
        (
            "p50, 1 in flight, HTTP",
            Load::Single,
            Transport::Http,
            |f| Some(f.p50_us),
            "µs",
            "≤ 1.2× floor",
        ),
        (
            "p99, 16 in flight, stdio",
            Load::Small,
            Transport::Stdio,
            |f| Some(f.p99_us),
            "µs",
            "≤ 0.5× rmcp",
        ),
        (
            "p99, 16 in flight, HTTP",
            Load::Small,
            Transport::Http,
            |f| Some(f.p99_us),
            "µs",
            "≤ 0.5× rmcp",
        ),
        (
            "peak RSS, small, stdio",
            Load::Small,
            Transport::Stdio,
            |f| Some(f.peak_rss_kib / 1024.0),
            "MB",
            "≤ 4 MB",
        ),
        (
            "peak RSS, small, HTTP",
            Load::Small,
            Transport::Http,
            |f| Some(f.peak_rss_kib / 1024.0),
            "MB",
            "≤ 6 MB",
        ),
        (
            "peak RSS, 64 KiB, stdio",
            Load::Large,
            Transport::Stdio,
            |f| Some(f.peak_rss_kib / 1024.0),
            "MB",
            "—",
        ),
        (
            "cold start, stdio",
            Load::Small,
            Transport::Stdio,
            |f| f.cold_start_ms,
            "ms",
            "≤ 1.5 ms",
        ),
    ];
    for (label, load, transport, f, unit, goal) in rows {
        let of = |role| figure(find(role, Era::Modern), load, transport, f);
        row(
            &format!("{label}, {}", Era::Modern.revision()),
            (of(ours_for(load)), of(Role::Rmcp), of(Role::Floor)),
            unit,
            goal,
        );
    }
    let idle_of = |role: Role, kind: IdleKind| {
        idle.iter()
            .find(|i| i.role == role && i.kind == kind)
            .and_then(|i| i.bytes)
            .map(kib)
    };
    for (label, kind, rmcp) in [
        (
            "idle memory per 2025-era session",
            IdleKind::Sessions,
            Role::RmcpStateful,
        ),
        (
            "idle memory per HTTP connection",
            IdleKind::Connections,
            Role::Rmcp,
        ),
    ] {
        row(
            &format!(
                "{label} ({} idle; rmcp {})",
                idle_count(),
                if rmcp == Role::RmcpStateful {
                    "stateful"
                } else {
                    "stateless"
                }
            ),
            (idle_of(Role::Ours, kind), idle_of(rmcp, kind), None),
            "KiB",
            "≤ rmcp",
        );
    }
}

/// Bytes as KiB (the figures are far below 2^52).
#[allow(clippy::cast_precision_loss)]
fn kib(bytes: u64) -> f64 {
    bytes as f64 / 1024.0
}

/// [`IDLE_COUNT`] as the tables write it.
#[allow(clippy::cast_precision_loss)]
fn idle_count() -> String {
    thousands(IDLE_COUNT as f64)
}

/// The idle cost: the server's resident set growth per idle session or connection.
fn idle_table(out: &mut String, idle: &[IdleFigure]) {
    if idle.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Idle cost, once per run: the server's resident set (VmRSS) grown by {} idle \
         clients, per client (2025-era sessions initialized and left; keep-alive \
         connections left open after one call):\n",
        idle_count()
    );
    let _ = writeln!(out, "| server | idle | memory per idle client |");
    let _ = writeln!(out, "|---|---|---:|");
    for figure in idle {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            figure.name,
            figure.kind.name(),
            cell(figure.bytes.map(kib), "KiB"),
        );
    }
}

/// One comparison of the "with and without" table: code the project wrote in place of a
/// well-kept crate (or on top of one), measured with it and without it in the same rounds.
struct Comparison {
    /// What is compared, as the table's rows name it.
    code: &'static str,
    /// The server (or client) with the code, and without it.
    with: Role,
    without: Role,
    /// Whose CPU per call: the server's, or the driving client's.
    client_side: bool,
}

const COMPARISONS: [Comparison; 6] = [
    Comparison {
        code: "connection threads and idle poll (vs tokio's runtime)",
        with: Role::Ours,
        without: Role::OursOnTokio,
        client_side: false,
    },
    Comparison {
        code: "idle poll (vs none)",
        with: Role::Ours,
        without: Role::OursIdlePollOff,
        client_side: false,
    },
    Comparison {
        code: "mimalloc (vs the system allocator)",
        with: Role::OursMimalloc,
        without: Role::Ours,
        client_side: false,
    },
    Comparison {
        code: "JSON writer (vs serde_json's)",
        with: Role::Ours,
        without: Role::OursWithout(Piece::JsonWriter),
        client_side: false,
    },
    Comparison {
        code: "client's tools/call writer (vs the typed params)",
        with: Role::OursByClient,
        without: Role::OursByClientWithout(Piece::CallWriter),
        client_side: true,
    },
    Comparison {
        code: "client's connection pool (vs hyper-util's)",
        with: Role::OursByClient,
        without: Role::OursByClientWithout(Piece::ClientPool),
        client_side: true,
    },
];

/// Each piece of code weighed with and without it, in the same run: the gain in calls/s
/// (with ÷ without − 1) and in CPU per call (without ÷ with − 1: how many more calls a
/// CPU-second serves with it). Hand-written code stays only where one of them is at least
/// 25% (`docs/PERFORMANCE.md`, "Kept, and why"); mimalloc only at 10% on small calls.
fn with_and_without(
    out: &mut String,
    servers: &[ServerSpec],
    medians: &BTreeMap<(usize, Load, Transport), Figures>,
) {
    let find = |role: Role| servers.iter().position(|s| s.role == role);
    let gain = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() => {
            format!("{:+.0}%", (a / b - 1.0) * 100.0)
        }
        _ => "—".to_owned(),
    };
    let _ = writeln!(
        out,
        "\nWith and without (same run): the server driven by `mcp-load` (CPU: the \
         server's), or our client driving our server (CPU: the client's). Gain: calls/s \
         with ÷ without − 1; CPU without ÷ with − 1.\n"
    );
    let _ = writeln!(
        out,
        "| code | load | calls/s with / without | gain | CPU per call with / without | gain |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|");
    for comparison in &COMPARISONS {
        let (with, without) = (find(comparison.with), find(comparison.without));
        for transport in [Transport::Stdio, Transport::Http] {
            for load in [Load::Small, Load::Large, Load::Single] {
                let of = |index: Option<usize>| {
                    let index = index?;
                    servers[index].command(load, transport)?;
                    Some(medians.get(&(index, load, transport)))
                };
                // A row where both sides take part in the scenario, measured or not.
                let (Some(with), Some(without)) = (of(with), of(without)) else {
                    continue;
                };
                let calls = |f: Option<&Figures>| f.map(|f| f.calls_per_s);
                let cpu = |f: Option<&Figures>| {
                    f.and_then(|f| {
                        if comparison.client_side {
                            f.driver_cpu_us_per_call
                        } else {
                            Some(f.cpu_us_per_call)
                        }
                    })
                };
                let _ = writeln!(
                    out,
                    "| {} | {}, {} | {} / {} | {} | {} / {} | {} |",
                    comparison.code,
                    load.name(),
                    transport.name(),
                    cell(calls(with), ""),
                    cell(calls(without), ""),
                    gain(calls(with), calls(without)),
                    cell(cpu(with), "µs"),
                    cell(cpu(without), "µs"),
                    gain(cpu(without), cpu(with)),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::float_cmp)] // exact values, chosen to be representable

    use super::super::servers;
    use super::super::tests::{bins, peer};
    use super::*;

    /// The settings the tables are rendered with.
    const QUICK: Settings = Settings {
        duration: 1.0,
        warmup: 1,
    };

    /// One server's figures: 10,000 calls/s, p50 50 µs, p99 80 µs, 5 µs of CPU a call,
    /// 4 MiB peak.
    fn figures(cold_start_ms: Option<f64>, driver_cpu_us_per_call: Option<f64>) -> Figures {
        Figures {
            calls_per_s: 10_000.0,
            p50_us: 50.0,
            p99_us: 80.0,
            cpu_us_per_call: 5.0,
            peak_rss_kib: 4096.0,
            cold_start_ms,
            driver_cpu_us_per_call,
        }
    }

    #[test]
    fn formatting() {
        assert_eq!(thousands(1_234_567.4), "1,234,567");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(-1000.0), "-1,000");
        assert_eq!(thousands(f64::NAN), "—");
        assert_eq!(short(3.25159, "µs"), "3.25 µs");
        assert_eq!(short(51.26, "µs"), "51.3 µs");
        assert_eq!(short(1050.0, "µs"), "1,050 µs");
        assert_eq!(ratio(Some(3.0), Some(2.0)), "1.50×");
        assert_eq!(ratio(Some(3.0), Some(0.0)), "—");
        assert_eq!(ratio(None, Some(2.0)), "—");
    }

    #[test]
    fn the_new_tables_render() {
        let servers = servers(&bins(), vec![peer()]);
        let f = figures(None, Some(6.0));
        let client = servers
            .iter()
            .position(|s| s.role == Role::OursByClient)
            .unwrap();
        let mut medians = BTreeMap::new();
        // 1 is the benchmark's server (0 minimal-server), 5 rmcp, 13 the TypeScript peer.
        medians.insert((1, Load::Small, Transport::Http), f);
        medians.insert(
            (client, Load::Small, Transport::Http),
            Figures {
                calls_per_s: 9_000.0,
                driver_cpu_us_per_call: Some(7.5),
                ..f
            },
        );
        medians.insert(
            (1, Load::List, Transport::Stdio),
            Figures {
                calls_per_s: 400.0,
                cpu_us_per_call: 1_200.0,
                ..f
            },
        );
        medians.insert(
            (5, Load::List, Transport::Stdio),
            Figures {
                calls_per_s: 500.0,
                ..f
            },
        );
        medians.insert((13, Load::Progress, Transport::Http), f);
        let position = |role| servers.iter().position(|s| s.role == role).unwrap();
        medians.insert(
            (position(Role::OursOneWorker), Load::Small, Transport::Http),
            Figures {
                calls_per_s: 20_000.0,
                ..f
            },
        );
        medians.insert(
            (
                position(Role::OursOneWorkerByClient),
                Load::Small,
                Transport::Http,
            ),
            Figures {
                calls_per_s: 19_000.0,
                driver_cpu_us_per_call: Some(7.0),
                ..f
            },
        );
        medians.insert(
            (position(Role::OursOnTokio), Load::Small, Transport::Http),
            Figures {
                calls_per_s: 8_000.0,
                cpu_us_per_call: 6.0,
                ..f
            },
        );
        medians.insert(
            (
                position(Role::OursByClientWithout(Piece::CallWriter)),
                Load::Small,
                Transport::Http,
            ),
            Figures {
                calls_per_s: 6_000.0,
                driver_cpu_us_per_call: Some(10.0),
                ..f
            },
        );
        let text = render(&servers, &medians, &[], QUICK, true);
        assert!(
            text.contains(
                "| connection threads and idle poll (vs tokio's runtime) | 16 B, 16 in flight, HTTP | 10,000 / 8,000 | +25% | 5.00 µs / 6.00 µs | +20% |"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "| client's tools/call writer (vs the typed params) | 16 B, 16 in flight, HTTP | 9,000 / 6,000 | +50% | 7.50 µs / 10.0 µs | +33% |"
            ),
            "{text}"
        );
        assert!(
            text.contains("| connection threads and idle poll (vs tokio's runtime) | 64 KiB, 16 in flight, HTTP | — / — | — | — / — | — |"),
            "{text}"
        );
        // A row for each load and transport both sides take part in, and none other.
        for row in [
            "| mimalloc (vs the system allocator) | 16 B, 16 in flight, stdio |",
            "| mimalloc (vs the system allocator) | 64 KiB, 16 in flight, HTTP |",
            "| connection threads and idle poll (vs tokio's runtime) | 16 B, 1 in flight, HTTP |",
            "| idle poll (vs none) | 16 B, 16 in flight, HTTP |",
            "| client's connection pool (vs hyper-util's) | 16 B, 16 in flight, HTTP | 9,000 / — | — | 7.50 µs / — | — |",
        ] {
            assert!(text.contains(row), "{row}: {text}");
        }
        for row in [
            "| idle poll (vs none) | 16 B, 16 in flight, stdio |",
            "| client's tools/call writer (vs the typed params) | 64 KiB, 16 in flight, HTTP |",
            "| client's connection pool (vs hyper-util's) | 16 B, 16 in flight, stdio |",
        ] {
            assert!(!text.contains(row), "{row}: {text}");
        }
        assert!(
            text.contains(
                "| HTTP | 10,000 | 9,000 | 0.90× | 6.00 µs / 7.50 µs | 80.0 µs / 80.0 µs | ≥ 0.9× |"
            ),
            "{text}"
        );
        assert!(
            text.contains("| stdio | — | — | — | — / — | — / — | ≥ 0.9× |"),
            "{text}"
        );
        assert!(
            text.contains(
                "| HTTP, server on 1 worker thread (`--workers 1`) | 20,000 | 19,000 | 0.95× | 6.00 µs / 7.00 µs | 80.0 µs / 80.0 µs | ≥ 0.9× |"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "| ours (mcp-bench-server) | — / — | — / — | 400 / — | 1,200 µs / — | — | — | — |"
            ),
            "{text}"
        );
        assert!(
            text.contains("| TypeScript SDK 1.32.2 | — / — | — / — | — / — | — / — | 10,000 | 5.00 µs | 80.0 µs |"),
            "{text}"
        );
        assert!(
            text.contains("| calls/s, tools/list of 500 tools, 16 in flight, stdio, 2026-07-28 | 400 | 500 | — | 0.80× | — | ≥ 2× rmcp |"),
            "{text}"
        );
        // The floor serves no tool scenario, the client only the small echo.
        let tools_table = text.split("The tool scenarios").nth(1).unwrap();
        let tools_table = tools_table.split("\n\n").nth(1).unwrap();
        assert!(!tools_table.contains("floor"), "{tools_table}");
        assert!(!tools_table.contains("client-load"), "{tools_table}");
        let large_table = text.split("64 KiB echo").nth(1).unwrap();
        let large_table = large_table.split("\n\n").nth(1).unwrap();
        assert!(!large_table.contains("client-load"), "{large_table}");
        assert!(!large_table.contains("TypeScript SDK"), "{large_table}");
        // The TypeScript peer speaks the 2025 era: its rows are in that era's tables.
        let legacy_large = text.split("64 KiB echo").nth(2).unwrap();
        assert!(legacy_large.starts_with(" (16 in flight) and one call in flight, 2025-11-25 era"));
        let legacy_large = legacy_large.split("\n\n").nth(1).unwrap();
        assert!(legacy_large.contains("TypeScript SDK"), "{legacy_large}");
        assert!(
            legacy_large.contains("rmcp 3.11 HTTP stateful"),
            "{legacy_large}"
        );
    }

    #[test]
    fn the_table_renders_without_results() {
        let servers = servers(&bins(), Vec::new());
        let mut medians = BTreeMap::new();
        let f = figures(Some(2.0), None);
        medians.insert((0, Load::Small, Transport::Stdio), f);
        // Index 5 is rmcp (0 minimal-server, 1 mcp-bench-server, 2 serve-example, 3 ours
        // on one worker, 4 the floor).
        medians.insert(
            (5, Load::Small, Transport::Stdio),
            Figures {
                calls_per_s: 5_000.0,
                ..f
            },
        );
        let text = render(&servers, &medians, &[], QUICK, false);
        assert!(
            text.contains("| calls/s, 16 B, 16 in flight, stdio, 2026-07-28 | 10,000 | 5,000 | — | 2.00× | — | ≥ 3× rmcp |"),
            "{text}"
        );
        assert!(text.contains("| 4.00 MB / — |"), "{text}");
        assert!(!text.contains("Idle cost"), "{text}");
    }

    #[test]
    fn the_goals_of_both_eras() {
        let servers = servers(&bins(), vec![peer()]);
        let at = |role, era| {
            servers
                .iter()
                .position(|s| s.role == role && s.era == era)
                .unwrap()
        };
        let f = figures(None, None);
        let calls = |calls_per_s| Figures { calls_per_s, ..f };
        let mut medians = BTreeMap::new();
        let small = |t| (Load::Small, t);
        for (role, era, (load, t), value) in [
            (
                Role::OursMinimal,
                Era::Legacy,
                small(Transport::Http),
                9_000.0,
            ),
            (Role::Floor, Era::Legacy, small(Transport::Http), 10_000.0),
            (Role::Rmcp, Era::Legacy, small(Transport::Http), 3_000.0),
            (
                Role::RmcpStateful,
                Era::Legacy,
                small(Transport::Http),
                2_000.0,
            ),
            (
                Role::OursMinimal,
                Era::Legacy,
                small(Transport::Stdio),
                5_000.0,
            ),
            (Role::Rmcp, Era::Legacy, small(Transport::Stdio), 2_000.0),
            (
                Role::OursMinimal,
                Era::Modern,
                small(Transport::Http),
                9_500.0,
            ),
            (Role::Floor, Era::Modern, small(Transport::Http), 10_000.0),
            (
                Role::Ours,
                Era::Legacy,
                (Load::List, Transport::Http),
                400.0,
            ),
            (
                Role::RmcpStateful,
                Era::Legacy,
                (Load::List, Transport::Http),
                100.0,
            ),
            (
                Role::Ours,
                Era::Modern,
                (Load::Search, Transport::Stdio),
                2_000.0,
            ),
            (
                Role::Rmcp,
                Era::Modern,
                (Load::Search, Transport::Stdio),
                1_000.0,
            ),
        ] {
            medians.insert((at(role, era), load, t), calls(value));
        }
        let idle = [
            IdleFigure {
                name: "ours (mcp-bench-server)".to_owned(),
                role: Role::Ours,
                kind: IdleKind::Sessions,
                bytes: Some(4096),
            },
            IdleFigure {
                name: "rmcp 3.11 HTTP stateful".to_owned(),
                role: Role::RmcpStateful,
                kind: IdleKind::Sessions,
                bytes: Some(16384),
            },
            IdleFigure {
                name: "ours (minimal-server)".to_owned(),
                role: Role::OursMinimal,
                kind: IdleKind::Connections,
                bytes: None,
            },
        ];
        let text = render(&servers, &medians, &idle, QUICK, true);
        for row in [
            "| calls/s, 16 B, 16 in flight, HTTP, 2026-07-28 | 9,500 | — | 10,000 | — | 0.95× | ≥ 0.9× floor |",
            "| calls/s, 16 B, 16 in flight, stdio, 2025-11-25 | 5,000 | 2,000 | — | 2.50× | — | ≥ 2.5× rmcp |",
            "| calls/s, 16 B, 16 in flight, HTTP, 2025-11-25 (rmcp stateless) | 9,000 | 3,000 | 10,000 | 3.00× | 0.90× | ≥ 0.8× floor |",
            "| calls/s, 16 B, 16 in flight, HTTP, 2025-11-25 (rmcp stateful) | 9,000 | 2,000 | 10,000 | 4.50× | 0.90× | ≥ 2.5× rmcp stateful |",
            "| calls/s, tools/list of 500 tools, 16 in flight, HTTP, 2025-11-25 (rmcp stateful) | 400 | 100 | — | 4.00× | — | ≥ 2× rmcp |",
            "| calls/s, search (schema-validated), 16 in flight, stdio, 2026-07-28 | 2,000 | 1,000 | — | 2.00× | — | > 1× (keeps its lead) |",
            "| idle memory per 2025-era session (1,000 idle; rmcp stateful) | 4.00 KiB | 16.0 KiB | — | 0.25× | — | ≤ rmcp |",
            "| idle memory per HTTP connection (1,000 idle; rmcp stateless) | — | — | — | — | — | ≤ rmcp |",
            "| ours (minimal-server) | connections | — |",
            "| rmcp 3.11 HTTP stateful | sessions | 16.0 KiB |",
        ] {
            assert!(text.contains(row), "{row}\n{text}");
        }
        // No stateful rows where rmcp has no stateful server: stdio, or the modern era.
        assert!(!text.contains("stdio, 2025-11-25 (rmcp"), "{text}");
        assert!(!text.contains("2026-07-28 (rmcp stateful)"), "{text}");
    }
}
