//! The pure parts of the measurement: percentiles and reading `/proc/PID/stat` and
//! `/proc/PID/status`.

use std::time::Duration;

/// The `p`-th percentile (0–100) of `sorted` by the nearest-rank method, or `None` when
/// `sorted` is empty or `p` is out of range.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    // Nearest rank: ceil(p/100 * n), at least 1.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

/// User plus system CPU time, in clock ticks, from the text of `/proc/PID/stat`
/// (fields 14 and 15, counted after the parenthesised command name, which may itself hold
/// spaces and parentheses).
pub fn cpu_ticks(stat: &str) -> Result<u64, String> {
    let after = stat
        .rfind(')')
        .map(|i| &stat[i + 1..])
        .ok_or("no `)` after the command name")?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state): utime is field 14, stime field 15.
    let field = |n: usize| -> Result<u64, String> {
        let text = fields
            .get(n - 3)
            .ok_or_else(|| format!("field {n} is missing"))?;
        text.parse()
            .map_err(|e| format!("field {n} ({text:?}) is not a number: {e}"))
    };
    Ok(field(14)? + field(15)?)
}

/// Converts clock ticks to a duration, given the ticks per second (`getconf CLK_TCK`).
pub fn ticks_to_duration(ticks: u64, per_second: u64) -> Duration {
    if per_second == 0 {
        return Duration::ZERO;
    }
    Duration::from_nanos(ticks.saturating_mul(1_000_000_000) / per_second)
}

/// The peak resident set size in KiB, `VmHWM` in the text of `/proc/PID/status`.
pub fn peak_rss_kib(status: &str) -> Result<u64, String> {
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .ok_or("no VmHWM line")?;
    let number = line
        .trim()
        .strip_suffix("kB")
        .ok_or_else(|| format!("VmHWM {line:?} is not in kB"))?
        .trim();
    number
        .parse()
        .map_err(|e| format!("VmHWM {number:?} is not a number: {e}"))
}

/// A process's CPU time so far (user plus system).
pub fn process_cpu(pid: u32, ticks_per_second: u64) -> Result<Duration, String> {
    let path = format!("/proc/{pid}/stat");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let ticks = cpu_ticks(&text).map_err(|e| format!("{path}: {e}"))?;
    Ok(ticks_to_duration(ticks, ticks_per_second))
}

/// A process's peak resident set size in KiB.
pub fn process_peak_rss(pid: u32) -> Result<u64, String> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    peak_rss_kib(&text).map_err(|e| format!("{path}: {e}"))
}

/// Clock ticks per second for `/proc/PID/stat`: `getconf CLK_TCK`, else Linux's fixed
/// `USER_HZ` of 100.
pub fn ticks_per_second() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .filter(|&t| t > 0)
        .unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&v, 0.0), Some(1));
        assert_eq!(percentile(&[7], 99.0), Some(7));
        assert_eq!(percentile(&[1, 2], 50.0), Some(1));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&v, 101.0), None);
        assert_eq!(percentile(&v, f64::NAN), None);
    }

    #[test]
    fn stat_with_spaces_and_parentheses_in_the_name() {
        let stat = "1234 (my (odd) server) S 1 1234 1234 0 -1 4194560 500 0 0 0 \
                    250 37 0 0 20 0 4 0 100 123456 789 18446744073709551615";
        assert_eq!(cpu_ticks(stat), Ok(287));
    }

    #[test]
    fn stat_that_is_cut_short_or_garbled() {
        assert!(
            cpu_ticks("1234 (x) S 1 2")
                .unwrap_err()
                .contains("field 14")
        );
        assert!(cpu_ticks("1234 x S").is_err());
        let garbled = "1 (x) S 1 1 1 0 -1 0 0 0 0 0 abc 1";
        assert!(cpu_ticks(garbled).unwrap_err().contains("not a number"));
    }

    #[test]
    fn ticks_convert() {
        assert_eq!(ticks_to_duration(150, 100), Duration::from_millis(1500));
        assert_eq!(ticks_to_duration(5, 0), Duration::ZERO);
    }

    #[test]
    fn status_peak_rss() {
        let status = "Name:\tmcp\nVmPeak:\t  10000 kB\nVmHWM:\t    4096 kB\nVmRSS:\t 3000 kB\n";
        assert_eq!(peak_rss_kib(status), Ok(4096));
        assert!(peak_rss_kib("Name:\tmcp\n").is_err());
        assert!(peak_rss_kib("VmHWM:\t12 MB\n").is_err());
    }
}
