//! The time, behind a seam: [`Clock`], with [`SystemClock`] for the product and
//! [`ManualClock`] for tests.
//!
//! The runtime reads the time through [`Clock`] wherever a rule depends on it (idle
//! shutdown after 10 minutes, the timestamp in a set-aside file's name), so tests move time
//! by hand instead of sleeping. [`utc_stamp`] writes a time as `20261129T230501Z`.
//!
//! Deliberately absent: time zones, calendars and a date crate. Only UTC wall-clock time is
//! needed, and turning it into a stamp is a few lines of arithmetic.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where the runtime reads the time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current wall-clock time.
    fn now(&self) -> SystemTime;
}

/// The computer's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that moves only when told to. Clones share one time, so a test keeps a clone
/// and advances the clock the runtime holds.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<SystemTime>>,
}

impl ManualClock {
    /// A clock showing `start`.
    pub fn new(start: SystemTime) -> Self {
        ManualClock {
            now: Arc::new(Mutex::new(start)),
        }
    }

    /// A clock showing `secs` seconds after the Unix epoch (UTC).
    pub fn at_unix(secs: u64) -> Self {
        Self::new(UNIX_EPOCH + Duration::from_secs(secs))
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now += by;
    }

    /// Sets the clock to `to`, forward or back.
    pub fn set(&self, to: SystemTime) {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner) = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `time` in UTC as `YYYYMMDDTHHMMSSZ` (e.g. `20261129T230501Z`): sortable, and safe in a
/// file name on every OS. Times before 1970 are written as the epoch.
pub fn utc_stamp(time: SystemTime) -> String {
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (year, month, day) = civil_from_days(secs / 86_400);
    let rest = secs % 86_400;
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` days after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for non-negative days only).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn stamps_are_utc_and_compact() {
        assert_eq!(utc_stamp(at(0)), "19700101T000000Z");
        // 2026-11-29 23:05:01 UTC.
        assert_eq!(utc_stamp(at(1_795_993_501)), "20261129T230501Z");
        // A leap day and the last second of a century year.
        assert_eq!(utc_stamp(at(951_782_400)), "20000229T000000Z");
        assert_eq!(utc_stamp(at(4_102_444_799)), "20991231T235959Z");
        assert_eq!(
            utc_stamp(UNIX_EPOCH - Duration::from_secs(5)),
            "19700101T000000Z"
        );
    }

    #[test]
    fn manual_clock_is_shared_by_clones() {
        let clock = ManualClock::at_unix(100);
        let held = clock.clone();
        clock.advance(Duration::from_secs(600));
        assert_eq!(held.now(), at(700));
        held.set(at(5));
        assert_eq!(clock.now(), at(5));
    }

    #[test]
    fn system_clock_moves() {
        let clock = SystemClock;
        assert!(clock.now() > at(1_700_000_000));
    }
}
