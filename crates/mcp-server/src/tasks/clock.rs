//! Wall-clock time for tasks: Unix milliseconds for expiry, ISO 8601 for the wire.
//!
//! Tasks are shared between servers and outlive processes, so their times are wall-clock
//! times, not `Instant`s. A [`Clock`] can be set by hand so that expiry is tested without
//! waiting.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the task engine and the memory store read the time.
#[derive(Debug, Clone)]
pub struct Clock(Option<Arc<AtomicU64>>);

impl Default for Clock {
    fn default() -> Self {
        Clock::system()
    }
}

impl Clock {
    /// The system's wall clock.
    pub fn system() -> Self {
        Clock(None)
    }

    /// A clock that stands at `ms` (Unix milliseconds) until [`set`](Self::set) or
    /// [`advance`](Self::advance) moves it; clones share it.
    pub fn manual(ms: u64) -> Self {
        Clock(Some(Arc::new(AtomicU64::new(ms))))
    }

    /// Sets a manual clock (a system clock ignores this).
    pub fn set(&self, ms: u64) {
        if let Some(at) = &self.0 {
            at.store(ms, Ordering::SeqCst);
        }
    }

    /// Moves a manual clock forward (a system clock ignores this).
    pub fn advance(&self, ms: u64) {
        if let Some(at) = &self.0 {
            at.fetch_add(ms, Ordering::SeqCst);
        }
    }

    /// Now, in Unix milliseconds.
    pub fn now_ms(&self) -> u64 {
        match &self.0 {
            Some(at) => at.load(Ordering::SeqCst),
            None => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        }
    }
}

/// `ms` (Unix milliseconds) as ISO 8601 UTC with milliseconds: `2025-11-25T10:30:00.000Z`.
pub(crate) fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let rem = secs % 86_400;
    // Howard Hinnant's civil-from-days, for the proleptic Gregorian calendar.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_764_066_600_000), "2025-11-25T10:30:00.000Z");
        assert_eq!(iso8601(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso8601(4_107_542_399_999), "2100-02-28T23:59:59.999Z");
    }

    #[test]
    fn a_manual_clock_moves_only_when_told() {
        let clock = Clock::manual(5);
        let shared = clock.clone();
        shared.advance(10);
        assert_eq!(clock.now_ms(), 15);
        clock.set(1);
        assert_eq!(shared.now_ms(), 1);
        assert!(Clock::system().now_ms() > 1_700_000_000_000);
    }
}
