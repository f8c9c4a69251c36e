//! What is measured of a shutdown ([`Metric`], by the names of `trials.csv` and `summary.csv`)
//! and what a claim computes over the trials ([`Statistic`]). They live in `scenario` because a
//! scenario file names them (`[[claim]]`); `experiment` reads their values from outcomes.

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
    /// Live instances of the app missing from its callers' balancer lists, in instance-ms
    /// (`experiment/capacity.rs`).
    LostCapacityMs,
}

impl Metric {
    pub const ALL: [Metric; 11] = [
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
        Metric::LostCapacityMs,
    ];

    /// The column / metric name in the CSV files.
    pub const fn name(self) -> &'static str {
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
            Metric::LostCapacityMs => "lost_capacity_ms",
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
            Metric::LostCapacityMs => "lost capacity (instance-s)",
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
}

/// What a claim computes over the trials of one shutdown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Statistic {
    Min,
    Max,
    Mean,
    /// `p<number>`, `0 < number <= 100`: the nearest-rank percentile (`p50`, `p99.9`).
    Percentile(f64),
    /// `zero-share`: the share of all trials whose value is exactly 0.
    ZeroShare,
    /// `unresolved`: the share of all trials that have no value (see docs/guide.md, "Reading the
    /// metrics": e.g. still listed when the trial ends).
    Unresolved,
}

impl Statistic {
    /// The named statistics, for messages and suggestions (any `p<number>` is accepted too).
    pub const NAMES: [&'static str; 9] = [
        "min",
        "max",
        "mean",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "zero-share",
        "unresolved",
    ];

    /// `min`, `max`, `mean`, `p<number>`, `zero-share` (also `zero_share`, `zeroShare`) or
    /// `unresolved`, in any case.
    pub fn parse(text: &str) -> Option<Statistic> {
        let word: String = text
            .trim()
            .chars()
            .filter(|c| !matches!(c, '-' | '_'))
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match word.as_str() {
            "min" => return Some(Statistic::Min),
            "max" => return Some(Statistic::Max),
            "mean" => return Some(Statistic::Mean),
            "zeroshare" => return Some(Statistic::ZeroShare),
            "unresolved" => return Some(Statistic::Unresolved),
            _ => {}
        }
        let exact = text.trim().to_ascii_lowercase();
        let number = exact.strip_prefix('p')?;
        // Digits and at most one point: `p99.9`, not `p1e2`, `pinf` or `p-5`.
        let digits = number.chars().all(|c| c.is_ascii_digit() || c == '.');
        if !digits || number.is_empty() || number.matches('.').count() > 1 {
            return None;
        }
        let p: f64 = number.parse().ok()?;
        (p > 0.0 && p <= 100.0).then_some(Statistic::Percentile(p))
    }

    /// The name as written in a claim (`p99.9`).
    pub fn name(self) -> String {
        match self {
            Statistic::Min => "min".to_string(),
            Statistic::Max => "max".to_string(),
            Statistic::Mean => "mean".to_string(),
            Statistic::Percentile(p) => format!("p{p}"),
            Statistic::ZeroShare => "zero-share".to_string(),
            Statistic::Unresolved => "unresolved".to_string(),
        }
    }

    /// Whether the statistic is a share of the trials (a fraction in `0..=1`), not a value of the
    /// metric.
    pub fn is_share(self) -> bool {
        matches!(self, Statistic::ZeroShare | Statistic::Unresolved)
    }
}
