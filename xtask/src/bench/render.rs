//! The tables `cargo xtask bench` prints (those of `docs/PERFORMANCE.md`): the figures per
//! server, the tool scenarios, ours against rmcp and the floor with the goals, and
//! our client against `mcp-load`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{
    EXTRA_TOOLS, Figures, Load, PROGRESS_STEPS, Piece, ROUNDS, Role, ServerSpec, Settings,
    Transport,
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

/// One row of the ratio table: label, load, transport, the figure, its unit, the goal.
type Row = (
    &'static str,
    Load,
    Transport,
    fn(&Figures) -> Option<f64>,
    &'static str,
    &'static str,
);

/// The report: the figures of each server, then ours against rmcp and the floor.
pub(super) fn render(
    servers: &[ServerSpec],
    medians: &BTreeMap<(usize, Load, Transport), Figures>,
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
    let _ = writeln!(out, "16-byte echo, 16 calls in flight:\n");
    let _ = writeln!(
        out,
        "| server | stdio calls/s | HTTP calls/s | server CPU per call (stdio / HTTP) | peak RSS (stdio / HTTP) | cold start (stdio) | p99 (stdio / HTTP) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for (index, server) in servers.iter().enumerate() {
        if !takes_part(server, &[Load::Small]) {
            continue;
        }
        let calls = |t| {
            get(index, Load::Small, t).map_or_else(|| "—".to_owned(), |f| thousands(f.calls_per_s))
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
        "\n64 KiB echo (16 in flight) and one call in flight:\n"
    );
    let _ = writeln!(
        out,
        "| server | 64 KiB calls/s (stdio / HTTP) | 64 KiB CPU per call (stdio / HTTP) | 1 in flight p50 (stdio / HTTP) | 1 in flight calls/s (stdio / HTTP) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    for (index, server) in servers.iter().enumerate() {
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
         progress notifications before each result, over SSE):\n"
    );
    let _ = writeln!(
        out,
        "| server | search calls/s (stdio / HTTP) | search CPU per call (stdio / HTTP) | listings/s (stdio / HTTP) | CPU per listing (stdio / HTTP) | progress calls/s (SSE) | progress CPU per call (SSE) | progress p99 (SSE) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (index, server) in servers.iter().enumerate() {
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

    let find = |role: Role| servers.iter().position(|s| s.role == role);
    let (ours, rmcp, floor) = (find(Role::Ours), find(Role::Rmcp), find(Role::Floor));
    let figure = |index: Option<usize>, load, transport, f: fn(&Figures) -> Option<f64>| {
        index.and_then(|i| get(i, load, transport)).and_then(f)
    };
    let _ = writeln!(out, "\nOurs against rmcp and the floor (same run):\n");
    let _ = writeln!(
        out,
        "| figure | ours | rmcp | floor | ours ÷ rmcp | ours ÷ floor | goal |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---|");
    let rows: [Row; 19] = [
        (
            "calls/s, small, stdio",
            Load::Small,
            Transport::Stdio,
            |f| Some(f.calls_per_s),
            "",
            "≥ 1.5× rmcp",
        ),
        (
            "calls/s, small, HTTP",
            Load::Small,
            Transport::Http,
            |f| Some(f.calls_per_s),
            "",
            "≥ 2× rmcp",
        ),
        (
            "calls/s, 64 KiB, stdio",
            Load::Large,
            Transport::Stdio,
            |f| Some(f.calls_per_s),
            "",
            "≥ 1.2× rmcp",
        ),
        (
            "calls/s, 64 KiB, HTTP",
            Load::Large,
            Transport::Http,
            |f| Some(f.calls_per_s),
            "",
            "≥ 1.3× rmcp",
        ),
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
        (
            "calls/s, search, stdio",
            Load::Search,
            Transport::Stdio,
            |f| Some(f.calls_per_s),
            "",
            "—",
        ),
        (
            "calls/s, search, HTTP",
            Load::Search,
            Transport::Http,
            |f| Some(f.calls_per_s),
            "",
            "—",
        ),
        (
            "listings/s, 500 tools, stdio",
            Load::List,
            Transport::Stdio,
            |f| Some(f.calls_per_s),
            "",
            "—",
        ),
        (
            "listings/s, 500 tools, HTTP",
            Load::List,
            Transport::Http,
            |f| Some(f.calls_per_s),
            "",
            "—",
        ),
        (
            "calls/s, progress over SSE",
            Load::Progress,
            Transport::Http,
            |f| Some(f.calls_per_s),
            "",
            "—",
        ),
    ];
    for (label, load, transport, f, unit, goal) in rows {
        let (a, b, c) = (
            figure(ours, load, transport, f),
            figure(rmcp, load, transport, f),
            figure(floor, load, transport, f),
        );
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {} | {} | {goal} |",
            cell(a, unit),
            cell(b, unit),
            cell(c, unit),
            ratio(a, b),
            ratio(a, c),
        );
    }

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
        code: "client's own HTTP/1.1 (vs hyper)",
        with: Role::OursByClient,
        without: Role::OursByClientOnHyper,
        client_side: true,
    },
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
        medians.insert((0, Load::Small, Transport::Http), f);
        medians.insert(
            (client, Load::Small, Transport::Http),
            Figures {
                calls_per_s: 9_000.0,
                driver_cpu_us_per_call: Some(7.5),
                ..f
            },
        );
        medians.insert(
            (0, Load::List, Transport::Stdio),
            Figures {
                calls_per_s: 400.0,
                cpu_us_per_call: 1_200.0,
                ..f
            },
        );
        medians.insert(
            (3, Load::List, Transport::Stdio),
            Figures {
                calls_per_s: 500.0,
                ..f
            },
        );
        medians.insert((5, Load::Progress, Transport::Http), f);
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
                position(Role::OursByClientOnHyper),
                Load::Small,
                Transport::Http,
            ),
            Figures {
                calls_per_s: 6_000.0,
                driver_cpu_us_per_call: Some(10.0),
                ..f
            },
        );
        let text = render(&servers, &medians, QUICK, true);
        assert!(
            text.contains(
                "| connection threads and idle poll (vs tokio's runtime) | 16 B, 16 in flight, HTTP | 10,000 / 8,000 | +25% | 5.00 µs / 6.00 µs | +20% |"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "| client's own HTTP/1.1 (vs hyper) | 16 B, 16 in flight, HTTP | 9,000 / 6,000 | +50% | 7.50 µs / 10.0 µs | +33% |"
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
        ] {
            assert!(text.contains(row), "{row}: {text}");
        }
        for row in [
            "| idle poll (vs none) | 16 B, 16 in flight, stdio |",
            "| client's own HTTP/1.1 (vs hyper) | 64 KiB, 16 in flight, HTTP |",
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
            text.contains("| listings/s, 500 tools, stdio | 400 | 500 | — | 0.80× | — | — |"),
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
        assert!(large_table.contains("TypeScript SDK"), "{large_table}");
    }

    #[test]
    fn the_table_renders_without_results() {
        let servers = servers(&bins(), Vec::new());
        let mut medians = BTreeMap::new();
        let f = figures(Some(2.0), None);
        medians.insert((0, Load::Small, Transport::Stdio), f);
        // Index 3 is rmcp (0 ours, 1 ours on one worker, 2 the floor).
        medians.insert(
            (3, Load::Small, Transport::Stdio),
            Figures {
                calls_per_s: 5_000.0,
                ..f
            },
        );
        let text = render(&servers, &medians, QUICK, false);
        assert!(
            text.contains("| calls/s, small, stdio | 10,000 | 5,000 | — | 2.00× | — |"),
            "{text}"
        );
        assert!(text.contains("| 4.00 MB / — |"), "{text}");
    }
}
