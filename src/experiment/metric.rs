//! The metrics of a shutdown, by name.

use super::ShutdownOutcome;

/// A per-shutdown metric as it appears in `trials.csv` and `summary.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    ExposureMs,
    DeadHits,
    Errors,
    InflightFailed,
    TimeoutDelayMs,
    LastDeadHitMs,
    ServerRemovedMs,
    ReadonlyRemovedMs,
    ClientRemovedMs,
    RibbonRemovedMs,
}

impl Metric {
    pub const ALL: [Metric; 10] = [
        Metric::ExposureMs,
        Metric::DeadHits,
        Metric::Errors,
        Metric::InflightFailed,
        Metric::TimeoutDelayMs,
        Metric::LastDeadHitMs,
        Metric::ServerRemovedMs,
        Metric::ReadonlyRemovedMs,
        Metric::ClientRemovedMs,
        Metric::RibbonRemovedMs,
    ];

    /// The column / metric name in the CSV files.
    pub fn name(self) -> &'static str {
        match self {
            Metric::ExposureMs => "exposure_ms",
            Metric::DeadHits => "dead_hits",
            Metric::Errors => "errors",
            Metric::LastDeadHitMs => "last_dead_hit_ms",
            Metric::ServerRemovedMs => "server_removed_ms",
            Metric::ReadonlyRemovedMs => "readonly_removed_ms",
            Metric::ClientRemovedMs => "client_removed_ms",
            Metric::RibbonRemovedMs => "ribbon_removed_ms",
            Metric::InflightFailed => "inflight_failed",
            Metric::TimeoutDelayMs => "timeout_delay_ms",
        }
    }

    /// A label for people.
    pub fn label(self) -> &'static str {
        match self {
            Metric::ExposureMs => "exposure",
            Metric::DeadHits => "dead hits",
            Metric::Errors => "errors",
            Metric::LastDeadHitMs => "last dead hit",
            Metric::ServerRemovedMs => "left the registry",
            Metric::ReadonlyRemovedMs => "left the read-only cache",
            Metric::ClientRemovedMs => "left the callers' caches",
            Metric::RibbonRemovedMs => "left the Ribbon lists",
            Metric::InflightFailed => "in-flight requests failed",
            Metric::TimeoutDelayMs => "waited in connect timeouts",
        }
    }

    pub fn parse(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether the metric is a time (ms) rather than a count.
    pub fn is_time(self) -> bool {
        !matches!(
            self,
            Metric::DeadHits | Metric::Errors | Metric::InflightFailed
        )
    }

    pub fn value(self, outcome: &ShutdownOutcome) -> Option<i64> {
        match self {
            Metric::ExposureMs => outcome.exposure_ms,
            Metric::DeadHits => Some(outcome.dead_hits as i64),
            Metric::Errors => Some(outcome.errors as i64),
            Metric::LastDeadHitMs => outcome.last_dead_hit_ms,
            Metric::ServerRemovedMs => outcome.server_removed_ms,
            Metric::ReadonlyRemovedMs => outcome.readonly_removed_ms,
            Metric::ClientRemovedMs => outcome.client_removed_ms,
            Metric::RibbonRemovedMs => outcome.ribbon_removed_ms,
            Metric::InflightFailed => Some(outcome.inflight_failed as i64),
            Metric::TimeoutDelayMs => Some(outcome.timeout_delay_ms as i64),
        }
    }
}
