//! The command line and the exit that `mcp-load` and `client-load` share (`client-load`
//! includes this file, as it does `measure.rs`): the target, the number flags, the tokio
//! runtime and the report on stdout.

use std::process::ExitCode;
use std::time::Duration;

/// When the measured window ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    /// After this long.
    Duration(Duration),
    /// After this many calls.
    Calls(u64),
}

/// The server to drive.
#[derive(Debug, PartialEq)]
pub enum Target {
    /// Spawned: the command and its arguments.
    Stdio(Vec<String>),
    /// Already running at `url`, as process `pid`.
    Http { url: String, pid: u32 },
}

/// The flags that name the [`Target`], as they are read.
#[derive(Default)]
pub struct TargetFlags {
    url: Option<String>,
    pid: Option<u32>,
    command: Option<Vec<String>>,
}

impl TargetFlags {
    /// Reads `flag`, and what it takes from `rest`, if it names the target: `--http URL`,
    /// `--pid PID` or `--stdio -- CMD ARGS...` (the rest of the line). False for another
    /// flag.
    pub fn read(
        &mut self,
        flag: &str,
        rest: &mut std::slice::Iter<'_, String>,
    ) -> Result<bool, String> {
        match flag {
            "--http" => self.url = Some(rest.next().ok_or("--http needs a URL")?.clone()),
            "--pid" => self.pid = Some(number(flag, rest.next())?),
            "--stdio" => {
                if rest.next().map(String::as_str) != Some("--") {
                    return Err("--stdio must be followed by -- CMD ARGS...".to_owned());
                }
                self.command = Some(rest.by_ref().cloned().collect::<Vec<_>>());
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The target the flags name: either a command or a URL with its server's pid.
    pub fn target(self) -> Result<Target, String> {
        match (self.command, self.url, self.pid) {
            (Some(command), None, None) if !command.is_empty() => Ok(Target::Stdio(command)),
            (None, Some(url), Some(pid)) => Ok(Target::Http { url, pid }),
            (None, Some(_), None) => Err("--http needs --pid PID of the server".to_owned()),
            _ => Err("give either --stdio -- CMD ARGS... or --http URL --pid PID".to_owned()),
        }
    }
}

/// The value of a numeric flag.
pub fn number<T: std::str::FromStr>(flag: &str, value: Option<&String>) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    let value = value.ok_or_else(|| format!("{flag} needs a value"))?;
    value.parse().map_err(|e| format!("{flag} {value:?}: {e}"))
}

/// `--duration SECS`.
pub fn duration(flag: &str, value: Option<&String>) -> Result<Stop, String> {
    let secs: f64 = number(flag, value)?;
    Ok(Stop::Duration(
        Duration::try_from_secs_f64(secs).map_err(|e| format!("--duration {secs}: {e}"))?,
    ))
}

/// Refuses the counts that must be at least 1.
pub fn check_counts(in_flight: usize, threads: usize, stop: Stop) -> Result<(), String> {
    if in_flight == 0 || threads == 0 {
        return Err("--in-flight and --threads must be at least 1".to_owned());
    }
    if stop == Stop::Calls(0) {
        return Err("--calls must be at least 1".to_owned());
    }
    Ok(())
}

/// The driver's tokio runtime: `threads` workers, or a current-thread runtime for 1.
pub fn runtime(threads: usize) -> Result<tokio::runtime::Runtime, String> {
    if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    }
    .map_err(|e| format!("cannot start the tokio runtime: {e}"))
}

/// Ends the program `name`: the report as one JSON object on stdout, or the error on
/// stderr and a failure.
pub fn finish<R: serde::Serialize>(name: &str, result: Result<R, String>) -> ExitCode {
    let result = result.and_then(|report| {
        serde_json::to_string(&report).map_err(|e| format!("cannot write the report: {e}"))
    });
    match result {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{name}: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The words of `line`, as the command line gives them (for the tests).
#[cfg(test)]
pub fn args(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The target of a command line of target flags only.
    fn target(line: &str) -> Result<Target, String> {
        let args = args(line);
        let mut flags = TargetFlags::default();
        let mut rest = args.iter();
        while let Some(flag) = rest.next() {
            if !flags.read(flag, &mut rest)? {
                return Err(format!("unknown argument {flag:?}"));
            }
        }
        flags.target()
    }

    #[test]
    fn targets() {
        assert_eq!(
            target("--stdio -- mcp serve-example"),
            Ok(Target::Stdio(vec!["mcp".into(), "serve-example".into()]))
        );
        assert_eq!(
            target("--pid 7 --http http://x/mcp"),
            Ok(Target::Http {
                url: "http://x/mcp".into(),
                pid: 7
            })
        );
        assert!(target("--http http://x/mcp").unwrap_err().contains("--pid"));
        assert!(target("--stdio mcp").is_err());
        assert!(target("--stdio --").is_err());
        assert!(target("--pid x").unwrap_err().contains("--pid"));
        assert!(target("").is_err());
    }

    #[test]
    fn counts_and_durations() {
        let three = Stop::Duration(Duration::from_secs(3));
        assert_eq!(check_counts(1, 1, three), Ok(()));
        assert!(check_counts(0, 1, three).is_err());
        assert!(check_counts(1, 0, three).is_err());
        assert!(check_counts(1, 1, Stop::Calls(0)).is_err());
        assert_eq!(
            duration("--duration", Some(&"1.5".to_owned())),
            Ok(Stop::Duration(Duration::from_millis(1500)))
        );
        assert!(duration("--duration", Some(&"-1".to_owned())).is_err());
        assert!(duration("--duration", None).is_err());
    }
}
