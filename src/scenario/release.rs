//! Spring Cloud release trains and the Eureka versions they ship.
//!
//! A train decides which Eureka rules apply (FACTS.md §0.1 version map, §0.2 behaviour changes).
//! Rules that changed between versions ask [`Release`] a question ("do evictions lower the expected
//! client count?") instead of comparing versions themselves, so the switch lives in one place.

use std::fmt;

/// A Spring Cloud release train (FACTS.md §0.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Train {
    Dalston,
    Edgware,
    Finchley,
    Greenwich,
    Hoxton,
    Y2020,
    Y2021,
    Y2022,
    Y2023,
    Y2024,
    Y2025,
}

impl Train {
    /// Every train, oldest first.
    pub const ALL: [Train; 11] = [
        Train::Dalston,
        Train::Edgware,
        Train::Finchley,
        Train::Greenwich,
        Train::Hoxton,
        Train::Y2020,
        Train::Y2021,
        Train::Y2022,
        Train::Y2023,
        Train::Y2024,
        Train::Y2025,
    ];

    /// The name users write in `simulation.release`.
    pub fn name(self) -> &'static str {
        match self {
            Train::Dalston => "Dalston",
            Train::Edgware => "Edgware",
            Train::Finchley => "Finchley",
            Train::Greenwich => "Greenwich",
            Train::Hoxton => "Hoxton",
            Train::Y2020 => "2020.0",
            Train::Y2021 => "2021.0",
            Train::Y2022 => "2022.0",
            Train::Y2023 => "2023.0",
            Train::Y2024 => "2024.0",
            Train::Y2025 => "2025.0",
        }
    }

    /// Parses a train name, case-insensitively; calendar trains also by their code names
    /// (Ilford = 2020.0, Jubilee = 2021.0, Kilburn = 2022.0, Leyton = 2023.0, Moorgate = 2024.0,
    /// Northfields = 2025.0) and `latest`.
    pub fn parse(text: &str) -> Option<Train> {
        let lower = text.trim().to_ascii_lowercase();
        let train = match lower.as_str() {
            "dalston" => Train::Dalston,
            "edgware" => Train::Edgware,
            "finchley" => Train::Finchley,
            "greenwich" => Train::Greenwich,
            "hoxton" => Train::Hoxton,
            "2020.0" | "ilford" => Train::Y2020,
            "2021.0" | "jubilee" => Train::Y2021,
            "2022.0" | "kilburn" => Train::Y2022,
            "2023.0" | "leyton" => Train::Y2023,
            "2024.0" | "moorgate" => Train::Y2024,
            "2025.0" | "northfields" | "latest" => Train::Y2025,
            _ => return None,
        };
        Some(train)
    }

    /// The Eureka version the train ships at its last service release (FACTS.md §0.1).
    pub fn eureka_version(self) -> EurekaVersion {
        match self {
            Train::Dalston => EurekaVersion::new(1, 6, 2),
            Train::Edgware => EurekaVersion::new(1, 7, 2),
            Train::Finchley => EurekaVersion::new(1, 9, 3),
            Train::Greenwich => EurekaVersion::new(1, 9, 13),
            Train::Hoxton => EurekaVersion::new(1, 10, 14),
            Train::Y2020 => EurekaVersion::new(1, 10, 17),
            Train::Y2021 => EurekaVersion::new(1, 10, 18),
            Train::Y2022 | Train::Y2023 | Train::Y2024 | Train::Y2025 => {
                EurekaVersion::new(2, 0, 4)
            }
        }
    }
}

impl fmt::Display for Train {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Netflix Eureka version, compared numerically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EurekaVersion {
    pub major: u16,
    pub minor: u16,
    pub patch: u16,
}

impl EurekaVersion {
    pub const fn new(major: u16, minor: u16, patch: u16) -> Self {
        EurekaVersion {
            major,
            minor,
            patch,
        }
    }

    /// Parses `1.9.17` (a trailing qualifier such as `-RELEASE` is not accepted).
    pub fn parse(text: &str) -> Option<EurekaVersion> {
        let mut parts = text.trim().split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = parts.next().unwrap_or("0").parse().ok()?;
        if parts.next().is_some() {
            return None;
        }
        Some(EurekaVersion::new(major, minor, patch))
    }
}

impl fmt::Display for EurekaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The release a scenario runs: a train and the Eureka version in use (the train's own unless the
/// scenario pins `simulation.eureka-version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    pub train: Train,
    pub eureka: EurekaVersion,
}

impl Default for Release {
    fn default() -> Self {
        Release::of_train(Train::Hoxton)
    }
}

impl Release {
    pub fn of_train(train: Train) -> Self {
        Release {
            train,
            eureka: train.eureka_version(),
        }
    }

    /// Dalston's `EurekaServiceRegistry#deregister` shuts the Eureka client down on the same
    /// thread right after setting DOWN, inside the ContextClosedEvent handler; Edgware moved the
    /// client shutdown to bean destruction (FACTS.md §7, SCN commit 184064745).
    pub fn deregister_shuts_client_down(self) -> bool {
        self.train == Train::Dalston
    }

    /// `InstanceInfoReplicator#stop` waits up to 3 s for a running register from Eureka 1.8.7 on
    /// ("two phase shutdown", 6fa935c6); before, `shutdownNow()` only (FACTS.md §0.2).
    pub fn replicator_two_phase_stop(self) -> bool {
        self.eureka >= EurekaVersion::new(1, 8, 7)
    }

    /// `shouldUnregisterOnShutdown` exists from Eureka 1.8.2; before, the DELETE is unconditional
    /// (FACTS.md §0.2, §5.6).
    pub fn has_unregister_on_shutdown_flag(self) -> bool {
        self.eureka >= EurekaVersion::new(1, 8, 2)
    }

    /// From Eureka 1.9.17 an eviction lowers `expectedNumberOfClientsSendingRenews` too (the
    /// decrement moved into `internalCancel`, Netflix/eureka#1266, FACTS.md §0.2, §2.4).
    pub fn eviction_lowers_expected(self) -> bool {
        self.eureka >= EurekaVersion::new(1, 9, 17)
    }

    /// From Eureka 1.9.4 the threshold is `expected * 60 / expectedClientRenewalIntervalSeconds *
    /// pct`; before, `expectedNumberOfRenewsPerMin = count * 2` whatever the interval
    /// (FACTS.md §0.2, §2.3).
    pub fn threshold_uses_renewal_interval(self) -> bool {
        self.eureka >= EurekaVersion::new(1, 9, 4)
    }

    /// From Eureka 1.9.3 the 15-minute update compares the count with `pct * expected`; before,
    /// `count * 2` was compared with `pct * threshold` (FACTS.md §0.2, §2.4, Netflix/eureka#1071).
    pub fn threshold_update_compares_expected(self) -> bool {
        self.eureka >= EurekaVersion::new(1, 9, 3)
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (Eureka {})", self.train, self.eureka)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_map_matches_facts_0_1() {
        assert_eq!(Train::Dalston.eureka_version().to_string(), "1.6.2");
        assert_eq!(Train::Edgware.eureka_version().to_string(), "1.7.2");
        assert_eq!(Train::Hoxton.eureka_version().to_string(), "1.10.14");
        assert_eq!(Train::Y2021.eureka_version().to_string(), "1.10.18");
    }

    #[test]
    fn rule_switches_follow_facts_0_2() {
        let dalston = Release::of_train(Train::Dalston);
        let hoxton = Release::of_train(Train::Hoxton);
        assert!(dalston.deregister_shuts_client_down());
        assert!(!hoxton.deregister_shuts_client_down());
        assert!(!dalston.replicator_two_phase_stop());
        assert!(!Release::of_train(Train::Edgware).replicator_two_phase_stop());
        assert!(Release::of_train(Train::Finchley).replicator_two_phase_stop());
        assert!(!Release::of_train(Train::Greenwich).eviction_lowers_expected());
        assert!(hoxton.eviction_lowers_expected());
        let pinned = Release {
            train: Train::Hoxton,
            eureka: EurekaVersion::parse("1.9.16").unwrap(),
        };
        assert!(!pinned.eviction_lowers_expected());
        assert!(!Release::of_train(Train::Finchley).threshold_uses_renewal_interval());
        assert!(Release::of_train(Train::Finchley).threshold_update_compares_expected());
        assert!(!dalston.threshold_update_compares_expected());
    }

    #[test]
    fn parses_names_and_versions() {
        assert_eq!(Train::parse("hoxton"), Some(Train::Hoxton));
        assert_eq!(Train::parse("Kilburn"), Some(Train::Y2022));
        assert_eq!(Train::parse("Camden"), None);
        assert_eq!(
            EurekaVersion::parse("1.9"),
            Some(EurekaVersion::new(1, 9, 0))
        );
        assert_eq!(EurekaVersion::parse("1.x"), None);
    }
}
