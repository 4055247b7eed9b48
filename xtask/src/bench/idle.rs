//! The idle cost: the server's memory per idle 2025-era session and per idle HTTP
//! connection, beside rmcp's, and the open-files limit that holding them needs.

use super::*;

/// The idle clients of the idle-cost measurement.
pub(super) const IDLE_COUNT: usize = 1000;

/// What the idle-cost measurement leaves idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IdleKind {
    /// 2025-era sessions, initialized and left (their connections reused).
    Sessions,
    /// Keep-alive HTTP connections, one call on each, all left open.
    Connections,
}

impl IdleKind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Sessions => "sessions",
            Self::Connections => "connections",
        }
    }
}

/// A server of the idle-cost measurement, over HTTP.
pub(super) struct IdleSpec {
    pub(super) name: String,
    pub(super) role: Role,
    pub(super) kind: IdleKind,
    /// The era of its sessions, or of the call on each connection.
    pub(super) era: Era,
    pub(super) http: Vec<String>,
    pub(super) url: Url,
}

impl IdleSpec {
    /// What `mcp-load` is told, before `--http URL --pid PID`.
    pub(super) fn driver_args(&self) -> Vec<String> {
        let flag = match self.kind {
            IdleKind::Sessions => "--idle-sessions",
            IdleKind::Connections => "--idle-connections",
        };
        vec![
            "--era".to_owned(),
            self.era.arg().to_owned(),
            flag.to_owned(),
            IDLE_COUNT.to_string(),
        ]
    }

    /// The key of its figure in `mcp-load`'s report.
    pub(super) fn report_key(&self) -> &'static str {
        match self.kind {
            IdleKind::Sessions => "idle_bytes_per_session",
            IdleKind::Connections => "idle_bytes_per_connection",
        }
    }
}

/// The idle-cost measurement, once per run: ours with the limits raised that it needs
/// (`--max-sessions`: the per-address default of 64 would evict; `--max-connections`),
/// rmcp stateful for sessions and stateless for connections, and `minimal-server` for
/// connections (its default allows 4,096).
pub(super) fn idle_specs(bins: &Bins) -> Vec<IdleSpec> {
    let ours = command_of(
        &bins.server,
        &[
            "--http",
            "127.0.0.1:0",
            "--max-sessions",
            "2000",
            "--max-connections",
            "4096",
        ],
    );
    let idle = |name: &str, role, kind, era, http, url| IdleSpec {
        name: name.to_owned(),
        role,
        kind,
        era,
        http,
        url,
    };
    vec![
        idle(
            "ours (mcp-bench-server)",
            Role::Ours,
            IdleKind::Sessions,
            Era::Legacy,
            ours.clone(),
            Url::Printed,
        ),
        idle(
            "rmcp 3.11 HTTP stateful",
            Role::RmcpStateful,
            IdleKind::Sessions,
            Era::Legacy,
            command_of(&bins.rmcp, &["http-stateful", "127.0.0.1:0"]),
            Url::Printed,
        ),
        idle(
            "ours (mcp-bench-server)",
            Role::Ours,
            IdleKind::Connections,
            Era::Modern,
            ours,
            Url::Printed,
        ),
        idle(
            "ours (minimal-server)",
            Role::OursMinimal,
            IdleKind::Connections,
            Era::Modern,
            command_of(&bins.minimal, &["--http", PICKED_PORT]),
            Url::PickedPort,
        ),
        idle(
            "rmcp 3.11 HTTP stateless",
            Role::Rmcp,
            IdleKind::Connections,
            Era::Modern,
            command_of(&bins.rmcp, &["http", "127.0.0.1:0"]),
            Url::Printed,
        ),
    ]
}

/// One idle-cost figure: bytes per idle session or connection, or why there is none.
pub(super) fn measure_idle(bins: &Bins, spec: &IdleSpec) -> Result<u64, String> {
    let (child, url) = start_server(&spec.http, spec.url)?;
    let mut args = spec.driver_args();
    args.extend([
        "--http".to_owned(),
        url,
        "--pid".to_owned(),
        child.0.id().to_string(),
    ]);
    let output = run_with_timeout(&bins.load, "mcp-load", &args, RUN_SLACK)?;
    drop(child);
    let line = output
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .ok_or_else(|| format!("mcp-load printed no report: {output:?}"))?;
    let report: Value =
        serde_json::from_str(line).map_err(|e| format!("unreadable report {line:?}: {e}"))?;
    report[spec.report_key()]
        .as_u64()
        .ok_or_else(|| format!("the report has no `{}`: {report}", spec.report_key()))
}

/// One idle-cost result, as the tables and the record show it.
pub(super) struct IdleFigure {
    pub(super) name: String,
    pub(super) role: Role,
    pub(super) kind: IdleKind,
    pub(super) bytes: Option<u64>,
}

/// Raises the soft limit of open files to the hard one before servers are started (they
/// inherit it): 1,000 idle connections need more than the common default of 1,024 in the
/// driver and the server. Std has no `setrlimit`; `prlimit` (util-linux) sets it on this
/// process. Says why when it cannot.
pub(super) fn raise_open_files(needed: u64) -> Result<(), String> {
    let read = || {
        let text = std::fs::read_to_string("/proc/self/limits")
            .map_err(|e| format!("cannot read /proc/self/limits: {e}"))?;
        open_files_limits(&text)
            .ok_or_else(|| "no `Max open files` in /proc/self/limits".to_owned())
    };
    let (soft, hard) = read()?;
    if soft >= needed {
        return Ok(());
    }
    if hard < needed {
        return Err(format!(
            "the hard limit of open files is {hard}, below the {needed} that the idle \
             connections need: raise it (`ulimit -Hn`, or LimitNOFILE) to measure them"
        ));
    }
    let value = if hard == u64::MAX {
        "unlimited".to_owned()
    } else {
        hard.to_string()
    };
    let raised = Command::new("prlimit")
        .args([
            "--pid".to_owned(),
            std::process::id().to_string(),
            format!("--nofile={value}:{value}"),
        ])
        .status()
        .is_ok_and(|status| status.success());
    match read()? {
        (soft, _) if raised && soft >= needed => Ok(()),
        (soft, _) => Err(format!(
            "the soft limit of open files stays {soft}, below {needed}: run `ulimit -n {value}` first"
        )),
    }
}

/// The soft and hard limits of open files in the text of `/proc/self/limits`
/// (`u64::MAX` for unlimited).
pub(super) fn open_files_limits(limits: &str) -> Option<(u64, u64)> {
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))?;
    let mut words = line.split_whitespace().map(|w| {
        if w == "unlimited" {
            Some(u64::MAX)
        } else {
            w.parse().ok()
        }
    });
    Some((words.next()??, words.next()??))
}
