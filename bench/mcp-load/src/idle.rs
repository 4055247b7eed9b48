//! `--idle-sessions N` and `--idle-connections N` (HTTP only): what a server holds for
//! each client that is connected or initialized and then does nothing. A few calls warm
//! the server up first (its first allocations are not a session's); then its resident set
//! (`VmRSS`) is read, N sessions are opened (`initialize` + `notifications/initialized`
//! each, over a few connections that are reused: the sessions stay on the server) or N
//! keep-alive connections are opened with one call on each (all kept open), and after a
//! second to settle `VmRSS` is read again. The figure is the growth divided by N.

use std::time::Duration;

use crate::http::{Headers, lossy, open_session, parse_url};
use crate::protocol::{CallTemplate, Era};
use crate::wire::Conn;
use crate::{Options, cli};

/// What is left idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Idle {
    /// 2025-era sessions, initialized and left.
    Sessions(usize),
    /// Keep-alive connections, each after one call.
    Connections(usize),
}

/// The calls that warm the server up before the first reading.
const WARMUP_CALLS: usize = 20;
/// The connections the sessions are opened over, in turn.
const SESSION_CONNS: usize = 4;
/// How long the server is left to settle before the second reading.
const SETTLE: Duration = Duration::from_secs(1);
/// Descriptors the driver needs besides its connections (stdio, the runtime, `/proc`).
const SPARE_FILES: u64 = 64;

/// The report of an idle run.
#[derive(Debug, serde::Serialize)]
pub struct IdleReport {
    pub transport: &'static str,
    pub era: &'static str,
    /// `sessions` or `connections`.
    pub idle: &'static str,
    pub count: usize,
    pub rss_before_kib: u64,
    pub rss_after_kib: u64,
    pub idle_bytes_per_session: Option<u64>,
    pub idle_bytes_per_connection: Option<u64>,
}

/// The resident set in KiB, `VmRSS` in the text of `/proc/PID/status`.
pub fn rss_kib(status: &str) -> Result<u64, String> {
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .ok_or("no VmRSS line")?;
    let number = line
        .trim()
        .strip_suffix("kB")
        .ok_or_else(|| format!("VmRSS {line:?} is not in kB"))?
        .trim();
    number
        .parse()
        .map_err(|e| format!("VmRSS {number:?} is not a number: {e}"))
}

/// Bytes per item of the growth from `before` to `after` KiB: none when it shrank, and
/// never an overflow.
pub fn bytes_per(before_kib: u64, after_kib: u64, count: usize) -> u64 {
    after_kib
        .saturating_sub(before_kib)
        .saturating_mul(1024)
        .checked_div(u64::try_from(count).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The soft and hard limits of open files in the text of `/proc/self/limits`
/// (`u64::MAX` for unlimited).
pub fn open_files_limits(limits: &str) -> Result<(u64, u64), String> {
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .ok_or("no `Max open files` line")?;
    let mut words = line.split_whitespace();
    let mut limit = || -> Result<u64, String> {
        match words.next() {
            Some("unlimited") => Ok(u64::MAX),
            Some(n) => n.parse().map_err(|e| format!("open files {n:?}: {e}")),
            None => Err(format!("open files {line:?}: no value")),
        }
    };
    Ok((limit()?, limit()?))
}

/// Raises this process's soft limit of open files to its hard limit when `needed` do not
/// fit under the soft one (with `prlimit`, std has no `setrlimit`), or says why they cannot.
pub fn raise_open_files(needed: u64) -> Result<(), String> {
    let read = || {
        let text = std::fs::read_to_string("/proc/self/limits")
            .map_err(|e| format!("cannot read /proc/self/limits: {e}"))?;
        open_files_limits(&text)
    };
    let (soft, hard) = read()?;
    if soft >= needed {
        return Ok(());
    }
    if hard < needed {
        return Err(format!(
            "{needed} open files are needed and the hard limit is {hard}: raise it \
             (`ulimit -Hn`, or LimitNOFILE) to measure this"
        ));
    }
    let hard_text = if hard == u64::MAX {
        "unlimited".to_owned()
    } else {
        hard.to_string()
    };
    let status = std::process::Command::new("prlimit")
        .args([
            "--pid",
            &std::process::id().to_string(),
            &format!("--nofile={hard_text}:{hard_text}"),
        ])
        .status()
        .map_err(|e| format!("cannot run prlimit to raise the open files limit: {e}"))?;
    let (soft, _) = read()?;
    if status.success() && soft >= needed {
        Ok(())
    } else {
        Err(format!(
            "the soft limit of open files stays {soft} (needed {needed}); raise it with \
             `ulimit -n {hard_text}`"
        ))
    }
}

pub fn run(url: &str, pid: u32, options: &Options, idle: Idle) -> Result<IdleReport, String> {
    if let Idle::Connections(n) = idle {
        raise_open_files(
            u64::try_from(n)
                .unwrap_or(u64::MAX)
                .saturating_add(SPARE_FILES),
        )?;
    }
    cli::runtime(1)?.block_on(drive(url, pid, options, idle))
}

fn process_rss(pid: u32) -> Result<u64, String> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    rss_kib(&text).map_err(|e| format!("{path}: {e}"))
}

/// One call on `conn`, which must be answered 200.
async fn call(
    conn: &mut Conn,
    head: &[u8],
    template: &CallTemplate,
    id: u64,
) -> Result<(), String> {
    let mut body = Vec::new();
    template.write(id, &mut body);
    let reply = conn.post(head, &body).await?;
    if reply.status == 200 {
        Ok(())
    } else {
        Err(format!(
            "call {id}: HTTP {}: {}",
            reply.status,
            lossy(reply.body)
        ))
    }
}

async fn drive(url: &str, pid: u32, options: &Options, idle: Idle) -> Result<IdleReport, String> {
    let target = parse_url(url)?;
    let template = CallTemplate::new(options.era, &options.call)?;
    let mut headers = Headers {
        protocol_version: options.era.protocol_version(),
        session: None,
        era: options.era,
        name: options.call.mcp_name().map(str::to_owned),
    };
    // The warm-up, in the era asked for, on the connection that the calls of the idle
    // connections then share their session with (the 2025 era's calls need one).
    let mut first = Conn::connect(&target.address).await?;
    if options.era == Era::Legacy {
        headers.session = open_session(&mut first, &target, &headers).await?;
    }
    let head = headers.head(&target, &options.call.method);
    for id in 1..=WARMUP_CALLS as u64 {
        call(&mut first, &head, &template, id).await?;
    }
    tokio::time::sleep(SETTLE).await;
    let before = process_rss(pid)?;
    let (kind, count) = match idle {
        Idle::Sessions(n) => {
            if options.era != Era::Legacy {
                return Err("--idle-sessions needs --era legacy".to_owned());
            }
            let mut conns = vec![first];
            for _ in 1..SESSION_CONNS {
                conns.push(Conn::connect(&target.address).await?);
            }
            // The ids are kept: the sessions are the clients', left idle.
            let mut sessions = Vec::with_capacity(n);
            for i in 0..n {
                let conn = &mut conns[i % SESSION_CONNS];
                sessions.push(open_session(conn, &target, &headers).await?);
            }
            if sessions.iter().any(Option::is_none) {
                return Err("the server gave no Mcp-Session-Id: it keeps no sessions".to_owned());
            }
            tokio::time::sleep(SETTLE).await;
            drop(sessions);
            ("sessions", n)
        }
        Idle::Connections(n) => {
            let mut conns = Vec::with_capacity(n);
            let base = WARMUP_CALLS as u64 + 1;
            for id in base..base + n as u64 {
                let mut conn = Conn::connect(&target.address).await?;
                call(&mut conn, &head, &template, id).await?;
                conns.push(conn);
            }
            tokio::time::sleep(SETTLE).await;
            ("connections", n)
        }
    };
    let after = process_rss(pid)?;
    let per = bytes_per(before, after, count);
    Ok(IdleReport {
        transport: "http",
        era: match options.era {
            Era::Modern => "modern",
            Era::Legacy => "legacy",
        },
        idle: kind,
        count,
        rss_before_kib: before,
        rss_after_kib: after,
        idle_bytes_per_session: (kind == "sessions").then_some(per),
        idle_bytes_per_connection: (kind == "connections").then_some(per),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_sets() {
        let status = "Name:\tmcp\nVmHWM:\t    4096 kB\nVmRSS:\t 3000 kB\n";
        assert_eq!(rss_kib(status), Ok(3000));
        assert!(rss_kib("VmHWM:\t1 kB\n").is_err());
        assert!(rss_kib("VmRSS:\t12 MB\n").is_err());
        assert!(rss_kib("VmRSS:\tmany kB\n").is_err());
    }

    #[test]
    fn growth_per_item() {
        assert_eq!(bytes_per(1000, 2000, 1000), 1024);
        assert_eq!(bytes_per(1000, 1000, 1000), 0);
        assert_eq!(
            bytes_per(2000, 1000, 1000),
            0,
            "a shrinking server saturates at 0"
        );
        assert_eq!(bytes_per(0, 10, 0), 0, "no items, no figure");
        assert_eq!(
            bytes_per(0, u64::MAX, 1),
            u64::MAX,
            "saturates, no overflow"
        );
    }

    #[test]
    fn open_files() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max processes             63455                63455                processes \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(open_files_limits(limits), Ok((1024, 524_288)));
        let unlimited =
            "Max open files            unlimited            unlimited            files\n";
        assert_eq!(open_files_limits(unlimited), Ok((u64::MAX, u64::MAX)));
        assert!(open_files_limits("Max processes 1 1\n").is_err());
        assert!(open_files_limits("Max open files            x y files\n").is_err());
        // What this process has now is readable, and enough for nothing is no change.
        assert_eq!(raise_open_files(1), Ok(()));
    }
}
