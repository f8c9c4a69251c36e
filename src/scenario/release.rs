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
    Y2025_1,
}

impl Train {
    /// Every train, oldest first.
    pub const ALL: [Train; 12] = [
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
        Train::Y2025_1,
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
            Train::Y2025_1 => "2025.1",
        }
    }

    /// Parses a train name, case-insensitively; calendar trains also by their code names
    /// (Ilford = 2020.0, Jubilee = 2021.0, Kilburn = 2022.0, Leyton = 2023.0, Moorgate = 2024.0,
    /// Northfields = 2025.0, Oakwood = 2025.1) and `latest`.
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
            "2025.0" | "northfields" => Train::Y2025,
            "2025.1" | "oakwood" | "latest" => Train::Y2025_1,
            _ => return None,
        };
        Some(train)
    }

    /// The Eureka version the train ships at its last service release (FACTS.md §0.1).
    pub fn eureka_version(self) -> EurekaVersion {
        self.last_service_release().eureka
    }

    /// The train's last service release: what the bare train name means.
    pub fn last_service_release(self) -> ServiceRelease {
        let all = self.service_releases();
        all[all.len() - 1]
    }

    /// Every service release of the train, oldest first, with the spring-cloud-commons and
    /// Eureka versions it pins.
    ///
    /// Source: spring-cloud/spring-cloud-release tag `v<Train>.<SR>` (`v2020.0.3` for calendar
    /// trains), `spring-cloud-dependencies/pom.xml` properties `spring-cloud-commons.version` and
    /// `spring-cloud-netflix.version`; then spring-cloud/spring-cloud-netflix tag of that version,
    /// `spring-cloud-netflix-dependencies/pom.xml` property `eureka.version` (both read per tag
    /// from git snapshots; the Hoxton rows agree with /work/notes/incidents-research.md part 2,
    /// the SCN-to-Eureka column with FACTS.md §0.1). The SCN version is in each row's comment.
    pub fn service_releases(self) -> &'static [ServiceRelease] {
        match self {
            Train::Dalston => DALSTON,
            Train::Edgware => EDGWARE,
            Train::Finchley => FINCHLEY,
            Train::Greenwich => GREENWICH,
            Train::Hoxton => HOXTON,
            Train::Y2020 => Y2020,
            Train::Y2021 => Y2021,
            Train::Y2022 => Y2022,
            Train::Y2023 => Y2023,
            Train::Y2024 => Y2024,
            Train::Y2025 => Y2025,
            Train::Y2025_1 => Y2025_1,
        }
    }

    /// `Hoxton.SR9`; calendar trains `2020.0.3`.
    fn qualified(self, sr: &ServiceRelease) -> String {
        format!("{}.{}", self.name(), sr.name)
    }

    /// Every qualified service-release name of the train, for messages.
    pub fn service_release_names(self) -> Vec<String> {
        self.service_releases()
            .iter()
            .map(|sr| self.qualified(sr))
            .collect()
    }
}

/// One service release of a train: its name after the train and the versions it pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ServiceRelease {
    /// `RELEASE`, `SR1` … for named trains; the last number for calendar trains (`3` in
    /// `2020.0.3`).
    pub name: &'static str,
    pub eureka: EurekaVersion,
    pub commons: CommonsVersion,
    /// The Spring Boot version the service release is built and tested with: the
    /// `spring-boot.version` property of the `spring-cloud-build` release that is the parent of
    /// its `spring-cloud-dependencies` pom (Maven Central `spring-cloud-dependencies/<release>`
    /// → `<parent>` `spring-cloud-dependencies-parent` version → spring-cloud/spring-cloud-build
    /// tag `v<version>` `pom.xml`). It agrees with the Boot lines of the Spring Cloud
    /// compatibility table (Hoxton: 2.2.x, 2.3.x from SR5; 2020.0: 2.4.x; 2021.0: 2.6.x; …).
    pub boot: BootVersion,
    /// The spring-cloud-netflix version: the release's `spring-cloud-netflix.version` (the
    /// same reading as the Eureka column above).
    pub scn: ScnVersion,
}

const fn sr(
    name: &'static str,
    eureka: (u16, u16, u16),
    commons: (u16, u16, u16),
    boot: (u16, u16, u16),
    scn: (u16, u16, u16),
) -> ServiceRelease {
    ServiceRelease {
        name,
        eureka: EurekaVersion::new(eureka.0, eureka.1, eureka.2),
        commons: EurekaVersion::new(commons.0, commons.1, commons.2),
        boot: EurekaVersion::new(boot.0, boot.1, boot.2),
        scn: EurekaVersion::new(scn.0, scn.1, scn.2),
    }
}

// Dalston = SCN 1.3.0 … 1.3.6: Eureka 1.6.2 throughout (FACTS.md §0.1).
const DALSTON: &[ServiceRelease] = &[
    sr("RELEASE", (1, 6, 2), (1, 2, 0), (1, 5, 2), (1, 3, 0)),
    sr("SR1", (1, 6, 2), (1, 2, 2), (1, 5, 3), (1, 3, 1)),
    sr("SR2", (1, 6, 2), (1, 2, 3), (1, 5, 4), (1, 3, 2)),
    sr("SR3", (1, 6, 2), (1, 2, 3), (1, 5, 4), (1, 3, 4)),
    sr("SR4", (1, 6, 2), (1, 2, 4), (1, 5, 7), (1, 3, 5)),
    sr("SR5", (1, 6, 2), (1, 2, 5), (1, 5, 9), (1, 3, 6)),
];
// Edgware = SCN 1.4.x: Eureka 1.7.0 up to SR2 (SCN 1.4.0–1.4.3), 1.7.2 from SR3 (SCN 1.4.4;
// FACTS.md §0.1 gives only the EOL 1.7.2). No rule switches between 1.7.0 and 1.7.2.
const EDGWARE: &[ServiceRelease] = &[
    sr("RELEASE", (1, 7, 0), (1, 3, 0), (1, 5, 8), (1, 4, 0)),
    sr("SR1", (1, 7, 0), (1, 3, 1), (1, 5, 9), (1, 4, 2)),
    sr("SR2", (1, 7, 0), (1, 3, 2), (1, 5, 10), (1, 4, 3)),
    sr("SR3", (1, 7, 2), (1, 3, 3), (1, 5, 10), (1, 4, 4)),
    sr("SR4", (1, 7, 2), (1, 3, 4), (1, 5, 14), (1, 4, 5)),
    sr("SR5", (1, 7, 2), (1, 3, 5), (1, 5, 16), (1, 4, 6)),
    sr("SR6", (1, 7, 2), (1, 3, 6), (1, 5, 21), (1, 4, 7)),
];
// Finchley = SCN 2.0.x: Eureka 1.9.2 at RELEASE, 1.9.3 (threshold-update fix a4dd6b22) from SR1
// (FACTS.md §0.1, §0.2).
const FINCHLEY: &[ServiceRelease] = &[
    sr("RELEASE", (1, 9, 2), (2, 0, 0), (2, 0, 3), (2, 0, 0)),
    sr("SR1", (1, 9, 3), (2, 0, 1), (2, 0, 4), (2, 0, 1)),
    sr("SR2", (1, 9, 3), (2, 0, 2), (2, 0, 6), (2, 0, 2)),
    sr("SR3", (1, 9, 3), (2, 0, 3), (2, 0, 8), (2, 0, 3)),
    sr("SR4", (1, 9, 3), (2, 0, 4), (2, 0, 9), (2, 0, 4)),
];
// Greenwich = SCN 2.1.x: Eureka 1.9.8 → 1.9.12 (SR2) → 1.9.13 (SR3) (FACTS.md §0.1).
const GREENWICH: &[ServiceRelease] = &[
    sr("RELEASE", (1, 9, 8), (2, 1, 0), (2, 1, 2), (2, 1, 0)),
    sr("SR1", (1, 9, 8), (2, 1, 1), (2, 1, 3), (2, 1, 1)),
    sr("SR2", (1, 9, 12), (2, 1, 2), (2, 1, 6), (2, 1, 2)),
    sr("SR3", (1, 9, 13), (2, 1, 3), (2, 1, 7), (2, 1, 3)),
    sr("SR4", (1, 9, 13), (2, 1, 4), (2, 1, 10), (2, 1, 4)),
    sr("SR5", (1, 9, 13), (2, 1, 5), (2, 1, 10), (2, 1, 5)),
    sr("SR6", (1, 9, 13), (2, 1, 6), (2, 1, 13), (2, 1, 5)),
];
// Hoxton = SCN 2.2.x (FACTS.md §0.1; incidents-research.md part 2): Eureka 1.9.17 (evictions
// lower expected clients) from SR3; commons 2.2.7 (/pause re-implemented) from SR10.
const HOXTON: &[ServiceRelease] = &[
    sr("RELEASE", (1, 9, 13), (2, 2, 0), (2, 2, 1), (2, 2, 0)),
    sr("SR1", (1, 9, 13), (2, 2, 1), (2, 2, 2), (2, 2, 1)),
    sr("SR2", (1, 9, 13), (2, 2, 1), (2, 2, 4), (2, 2, 1)),
    sr("SR3", (1, 9, 17), (2, 2, 2), (2, 2, 5), (2, 2, 2)),
    sr("SR4", (1, 9, 17), (2, 2, 2), (2, 2, 5), (2, 2, 2)),
    sr("SR5", (1, 9, 21), (2, 2, 3), (2, 3, 0), (2, 2, 3)),
    sr("SR6", (1, 9, 21), (2, 2, 3), (2, 3, 0), (2, 2, 3)),
    sr("SR7", (1, 9, 25), (2, 2, 4), (2, 3, 2), (2, 2, 4)),
    sr("SR8", (1, 9, 25), (2, 2, 5), (2, 3, 2), (2, 2, 5)),
    sr("SR9", (1, 10, 7), (2, 2, 6), (2, 3, 2), (2, 2, 6)),
    sr("SR10", (1, 10, 11), (2, 2, 7), (2, 3, 8), (2, 2, 7)),
    sr("SR11", (1, 10, 11), (2, 2, 8), (2, 3, 10), (2, 2, 8)),
    sr("SR12", (1, 10, 14), (2, 2, 9), (2, 3, 12), (2, 2, 9)),
];
// 2020.0 = SCN 3.0.x: Eureka 1.10.17 at EOL (FACTS.md §0.1).
const Y2020: &[ServiceRelease] = &[
    sr("0", (1, 10, 10), (3, 0, 0), (2, 4, 1), (3, 0, 0)),
    sr("1", (1, 10, 11), (3, 0, 1), (2, 4, 2), (3, 0, 1)),
    sr("2", (1, 10, 11), (3, 0, 2), (2, 4, 3), (3, 0, 2)),
    sr("3", (1, 10, 14), (3, 0, 3), (2, 4, 6), (3, 0, 3)),
    sr("4", (1, 10, 16), (3, 0, 4), (2, 4, 10), (3, 0, 4)),
    sr("5", (1, 10, 17), (3, 0, 5), (2, 4, 13), (3, 0, 5)),
    sr("6", (1, 10, 17), (3, 0, 6), (2, 4, 13), (3, 0, 6)),
];
// 2021.0 = SCN 3.1.x: Eureka 1.10.17, 1.10.18 at EOL (FACTS.md §0.1).
const Y2021: &[ServiceRelease] = &[
    sr("0", (1, 10, 17), (3, 1, 0), (2, 6, 1), (3, 1, 0)),
    sr("1", (1, 10, 17), (3, 1, 1), (2, 6, 3), (3, 1, 1)),
    sr("2", (1, 10, 17), (3, 1, 2), (2, 6, 7), (3, 1, 2)),
    sr("3", (1, 10, 17), (3, 1, 3), (2, 6, 8), (3, 1, 3)),
    sr("4", (1, 10, 17), (3, 1, 4), (2, 6, 11), (3, 1, 4)),
    sr("5", (1, 10, 17), (3, 1, 5), (2, 6, 13), (3, 1, 4)),
    sr("6", (1, 10, 17), (3, 1, 6), (2, 6, 14), (3, 1, 5)),
    sr("7", (1, 10, 17), (3, 1, 6), (2, 6, 14), (3, 1, 6)),
    sr("8", (1, 10, 17), (3, 1, 7), (2, 6, 15), (3, 1, 7)),
    sr("9", (1, 10, 18), (3, 1, 8), (2, 6, 15), (3, 1, 8)),
];
// 2022.0 … 2025.0 = SCN 4.x: Eureka 2.0.x, timing-identical to 1.10.18 (FACTS.md §0, §0.1).
const Y2022: &[ServiceRelease] = &[
    sr("0", (2, 0, 0), (4, 0, 0), (3, 0, 0), (4, 0, 0)),
    sr("1", (2, 0, 0), (4, 0, 1), (3, 0, 2), (4, 0, 0)),
    sr("2", (2, 0, 0), (4, 0, 2), (3, 0, 5), (4, 0, 1)),
    sr("3", (2, 0, 0), (4, 0, 3), (3, 0, 7), (4, 0, 2)),
    sr("4", (2, 0, 1), (4, 0, 4), (3, 0, 9), (4, 0, 3)),
    sr("5", (2, 0, 1), (4, 0, 5), (3, 0, 13), (4, 0, 4)),
];
const Y2023: &[ServiceRelease] = &[
    sr("0", (2, 0, 1), (4, 1, 0), (3, 2, 0), (4, 1, 0)),
    sr("1", (2, 0, 2), (4, 1, 2), (3, 2, 4), (4, 1, 1)),
    sr("2", (2, 0, 2), (4, 1, 3), (3, 2, 6), (4, 1, 2)),
    sr("3", (2, 0, 3), (4, 1, 4), (3, 2, 7), (4, 1, 3)),
    sr("4", (2, 0, 4), (4, 1, 5), (3, 2, 12), (4, 1, 4)),
    sr("5", (2, 0, 4), (4, 1, 5), (3, 2, 12), (4, 1, 5)),
    sr("6", (2, 0, 5), (4, 1, 6), (3, 3, 13), (4, 1, 6)),
];
const Y2024: &[ServiceRelease] = &[
    sr("0", (2, 0, 4), (4, 2, 0), (3, 4, 0), (4, 2, 0)),
    sr("1", (2, 0, 4), (4, 2, 1), (3, 4, 3), (4, 2, 1)),
    sr("2", (2, 0, 5), (4, 2, 2), (3, 4, 7), (4, 2, 2)),
    sr("3", (2, 0, 5), (4, 2, 4), (3, 4, 12), (4, 2, 3)),
];
const Y2025: &[ServiceRelease] = &[
    sr("0", (2, 0, 4), (4, 3, 0), (3, 5, 0), (4, 3, 0)),
    sr("1", (2, 0, 5), (4, 3, 1), (3, 5, 8), (4, 3, 1)),
    sr("2", (2, 0, 6), (4, 3, 2), (3, 5, 13), (4, 3, 2)),
    sr("3", (2, 0, 6), (4, 3, 3), (3, 5, 15), (4, 3, 3)),
];
// 2025.1 (Oakwood) = SCN 5.0.x on Spring Boot 4.0, Eureka 2.0.x: read from the Maven Central poms
// of spring-cloud-dependencies 2025.1.x and spring-cloud-netflix-dependencies 5.0.x (the
// conformance rig in conformance/ runs 2025.1.4).
const Y2025_1: &[ServiceRelease] = &[
    sr("0", (2, 0, 5), (5, 0, 0), (4, 0, 0), (5, 0, 0)),
    sr("1", (2, 0, 5), (5, 0, 1), (4, 0, 2), (5, 0, 1)),
    sr("2", (2, 0, 6), (5, 0, 2), (4, 0, 7), (5, 0, 2)),
    sr("3", (2, 0, 6), (5, 0, 3), (4, 0, 8), (5, 0, 2)),
    sr("4", (2, 0, 6), (5, 0, 4), (4, 0, 9), (5, 0, 3)),
];

impl fmt::Display for Train {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A spring-cloud-commons version (`2.2.7`): the same numeric triple as a Eureka version.
pub type CommonsVersion = EurekaVersion;

/// A Spring Boot version (`2.3.12`): the same numeric triple as a Eureka version.
pub type BootVersion = EurekaVersion;

/// A spring-cloud-netflix version (`4.3.3`): the same numeric triple as a Eureka version.
pub type ScnVersion = EurekaVersion;

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

/// The release a scenario runs: a train (optionally one of its service releases), the Eureka
/// version in use (the release's own unless the scenario pins `simulation.eureka-version`) and
/// the spring-cloud-commons version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    pub train: Train,
    /// The service release written after the train (`Hoxton.SR9`, `2020.0.3`); `None` for the
    /// bare train name, which means the train's last service release.
    pub service_release: Option<ServiceRelease>,
    pub eureka: EurekaVersion,
    pub commons: CommonsVersion,
    /// The Spring Boot version of the applications: the release's own unless the scenario pins
    /// `simulation.spring-boot`.
    pub boot: BootVersion,
    /// The spring-cloud-netflix version of the release (not pinned by any key).
    pub scn: ScnVersion,
}

impl Default for Release {
    fn default() -> Self {
        Release::of_train(Train::Hoxton)
    }
}

/// Why a `simulation.release` text is not a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseError {
    /// No train of that name.
    UnknownTrain,
    /// A known train with a service release it never had.
    UnknownServiceRelease(Train),
}

impl Release {
    /// The bare train: its last service release.
    pub fn of_train(train: Train) -> Self {
        let last = train.last_service_release();
        Release {
            train,
            service_release: None,
            eureka: last.eureka,
            commons: last.commons,
            boot: last.boot,
            scn: last.scn,
        }
    }

    /// One service release of `train`.
    pub fn of_service_release(train: Train, sr: ServiceRelease) -> Self {
        Release {
            train,
            service_release: Some(sr),
            eureka: sr.eureka,
            commons: sr.commons,
            boot: sr.boot,
            scn: sr.scn,
        }
    }

    /// Parses `Hoxton`, `Hoxton.SR9`, `hoxton.release`, `2020.0`, `2020.0.3`, `Ilford`,
    /// `latest`, case-insensitively.
    pub fn parse(text: &str) -> Result<Release, ReleaseError> {
        let text = text.trim();
        if let Some(train) = Train::parse(text) {
            return Ok(Release::of_train(train));
        }
        let Some((head, tail)) = text.rsplit_once('.') else {
            return Err(ReleaseError::UnknownTrain);
        };
        let Some(train) = Train::parse(head) else {
            return Err(ReleaseError::UnknownTrain);
        };
        train
            .service_releases()
            .iter()
            .find(|sr| sr.name.eq_ignore_ascii_case(tail.trim()))
            .map(|sr| Release::of_service_release(train, *sr))
            .ok_or(ReleaseError::UnknownServiceRelease(train))
    }

    /// The release as users write it: `Hoxton`, `Hoxton.SR9`, `2020.0.3`.
    pub fn name(self) -> String {
        match self.service_release {
            Some(sr) => self.train.qualified(&sr),
            None => self.train.name().to_string(),
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

    /// Whether `RibbonLoadBalancedRetryPolicy#registerThrowable` records a circuit-tripping
    /// failure in `ServerStats` (`updateServerInstanceStats`) on top of the one
    /// `RibbonLoadBalancerClient#execute` records: SCN commit 7cc8a9a95 "Allowing
    /// RibbonLoadbalancedRetryPolicy to update ServerStats for circuit tripping exceptions"
    /// (2017-11), first in SCN 1.4.3 (Edgware.SR2, spring-cloud-commons 1.3.2; absent from
    /// 1.4.2 and from every 1.3.x) and in every 2.x. A RestTemplate with spring-retry on Ribbon
    /// then counts each refused attempt twice (FACTS.md §14).
    pub fn retry_policy_records_failures(self) -> bool {
        match self.train {
            Train::Dalston => false,
            Train::Edgware => self.commons >= EurekaVersion::new(1, 3, 2),
            _ => true,
        }
    }

    /// Up to spring-cloud-commons 2.2.6, `RestartEndpoint#doPause` is `context.stop()`, which
    /// stops `EurekaAutoServiceRegistration` and so sets DOWN (Dalston: also shuts the client
    /// down). From 2.2.7 (Hoxton.SR10) and in 3.x, `/pause` only calls `PauseHandler` beans and
    /// no longer touches Eureka (spring-cloud-commons 7287a3c76 "Re-implement /pause endpoint",
    /// FACTS.md §7). The same holds for `/resume`.
    pub fn pause_deregisters(self) -> bool {
        self.commons < EurekaVersion::new(2, 2, 7)
    }

    /// Spring Boot's `server.shutdown` default: `immediate` from Boot 2.3 (when the property
    /// appeared) through 3.3, `graceful` from Boot 3.4 ("Graceful shutdown is enabled by default",
    /// Spring Boot 3.4 reference, Graceful Shutdown; FACTS.md §7). Spring Cloud 2024.0 is the
    /// first train on Boot 3.4 (2025.0 is on 3.5); earlier trains run Boot <= 3.3 (or Boot 1.5 /
    /// 2.0-2.2, which had no graceful shutdown at all).
    pub fn graceful_shutdown_default(self) -> bool {
        self.boot >= BootVersion::new(3, 4, 0)
    }

    /// `server.shutdown=graceful` exists from Spring Boot 2.3 (`GracefulShutdown`,
    /// `WebServerGracefulShutdownLifecycle`); on Boot 1.5–2.2 the property is unknown and
    /// ignored, the web server stops at once (FACTS.md §7, §14).
    pub fn graceful_shutdown_available(self) -> bool {
        self.boot >= BootVersion::new(2, 3, 0)
    }

    /// From Spring Boot 2.3 the embedded web server is a SmartLifecycle
    /// (`WebServerStartStopLifecycle`, phase `Integer.MAX_VALUE - 1`), stopped by the lifecycle
    /// processor before `EurekaAutoServiceRegistration` (phase 0): on SIGTERM it refuses new
    /// connections right after the DOWN. Up to Boot 2.2 (and on Boot 1.5) it is stopped in
    /// `ServletWebServerApplicationContext#onClose` (`EmbeddedWebApplicationContext#onClose` on
    /// 1.5), which runs after `destroyBeans()`: the instance keeps serving through the
    /// `DiscoveryClient#shutdown` (the replicator's wait and the DELETE) and only then refuses
    /// (spring-boot 2.2.x ServletWebServerApplicationContext, AbstractApplicationContext#doClose;
    /// spring-boot#22315; FACTS.md §14).
    pub fn web_server_is_lifecycle(self) -> bool {
        self.boot >= BootVersion::new(2, 3, 0)
    }

    /// `/actuator/pause` is `context.stop()` up to spring-cloud-commons 2.2.6; from Spring Boot
    /// 2.3 that stops the web server's lifecycle too, so the paused instance refuses every
    /// connection while the application keeps running (spring-cloud-commons#788 on Boot 2.3.1,
    /// spring-cloud-netflix#3869 after Finchley.SR2 → Hoxton.SR7; fixed by the re-implemented
    /// /pause of commons 2.2.7, Hoxton.SR10; FACTS.md §14). In Hoxton that is SR5–SR9.
    pub fn pause_stops_web_server(self) -> bool {
        self.pause_deregisters() && self.web_server_is_lifecycle()
    }

    /// Whether `ResolverUtils#randomize` shuffles a client's Eureka servers with
    /// `new Random(LOCAL_IPV4_ADDRESS.hashCode())`, one permutation per host for good: Eureka
    /// <= 1.10.13. From 1.10.14 (ebb98c5c, Netflix/eureka PR #1383) it uses `ThreadLocalRandom`,
    /// a new order at every resolve (FACTS.md §0.2, §5.7). The old walk is not a uniform
    /// shuffle either: it draws each swap partner from `[0, size - i)`, so of three URLs the
    /// first is picked with probability 1/3, the second 1/2, the third 1/6
    /// (`transport::randomize_up_to_1_10_13`). By the rows above: Dalston through
    /// Hoxton.SR11 (1.10.11) and 2020.0.0-2020.0.2 (1.10.10, 1.10.11); not Hoxton.SR12 nor
    /// 2020.0.3 (1.10.14) and later.
    pub fn endpoint_shuffle_fixed_per_host(self) -> bool {
        self.eureka < EurekaVersion::new(1, 10, 14)
    }

    /// The HTTP transport of the applications' Eureka clients. Up to Hoxton (SCN 2.2.x) Eureka's
    /// own Jersey 1 client, with `eureka.client.eureka-server-{connect,read}-timeout-seconds`
    /// (`EurekaClientFactoryBuilder`). From 2020.0 (SCN 3.0.0) the
    /// `spring-cloud-starter-netflix-eureka-client` pom excludes jersey-client, jersey-core and
    /// jersey-apache-client4, so SCN's `RestTemplateTransportClientFactory` runs the calls, which
    /// reads neither key. SCN 4.2 (2024.0) adds a `RestClientTransportClientFactory`, used only
    /// with `eureka.client.restclient.enabled = true` (`restclient_enabled`):
    /// `DiscoveryClientOptionalArgsConfiguration.OnRestTemplatePresentAndEnabledCondition`
    /// matches while `restclient.enabled` is missing or false, `OnRestClientPresentAndEnabled
    /// Condition` only when it is true (v4.2.0, v4.3.3). SCN 5.0 (2025.1) removed the
    /// RestTemplate transport (commit a1fddaf13 "Remove RestTemplate support"): RestClient
    /// whatever the key says.
    pub fn eureka_client_transport(self, restclient_enabled: bool) -> EurekaClientTransport {
        if self.train < Train::Y2020 {
            EurekaClientTransport::Jersey
        } else if self.scn >= ScnVersion::new(5, 0, 0)
            || (restclient_enabled && self.scn >= ScnVersion::new(4, 2, 0))
        {
            EurekaClientTransport::RestClient
        } else {
            EurekaClientTransport::RestTemplate
        }
    }

    /// The Spring properties that set the connect, connection-request and socket timeouts of
    /// `transport` on this release, and their default (`None`: no timeout, the OS's limits),
    /// from spring-cloud-netflix's eureka-client module:
    /// - SCN 3.0.x and 3.1.0-3.1.4 (2020.0, 2021.0.0-2021.0.5): `DefaultEurekaClientHttpRequest
    ///   FactorySupplier` sets no timeout and no property exists (v3.0.6, v3.1.4).
    /// - SCN 3.1.5-3.1.8 (2021.0.6+): `RestTemplateTimeoutProperties`,
    ///   `@ConfigurationProperties("eureka.client.rest-template-timeout")`, each -1 ("according
    ///   to RequestConfig.DEFAULT": undefined, none) (v3.1.5 lines 34-44).
    /// - SCN 4.0-4.3 (2022.0-2025.0): the same class and prefix, each `3 * 60 * 1000`
    ///   (v4.0.0 lines 35-46; from v4.2.0 it extends the abstract `TimeoutProperties`, whose
    ///   fields are `180000 // 3 * MINUTES`, and is `@Deprecated(forRemoval = true)`). SCN
    ///   4.2-4.3's RestClient transport reads `RestClientTimeoutProperties`,
    ///   `eureka.client.restclient.timeout`, same defaults (v4.2.0, v4.3.3).
    /// - SCN 5.0 (2025.1): `TimeoutProperties` itself,
    ///   `@ConfigurationProperties("eureka.client.timeout")`, 180000 each (v5.0.0).
    ///
    /// The supplier applies them as HttpClient 5's `ConnectionConfig#setConnectTimeout`,
    /// `SocketConfig#setSoTimeout` (the wait for each read of the answer) and
    /// `RequestConfig#setConnectionRequestTimeout` (the wait for a pooled connection); SCN 3.1.x
    /// as HttpClient 4's `RequestConfig` connect, socket and connection-request timeouts.
    pub fn eureka_client_timeout_properties(
        self,
        transport: EurekaClientTransport,
    ) -> Option<(TimeoutProperties, Option<u64>)> {
        const THREE_MINUTES_MS: u64 = 180_000;
        match transport {
            EurekaClientTransport::Jersey => None,
            EurekaClientTransport::RestTemplate if self.scn < ScnVersion::new(3, 1, 5) => None,
            EurekaClientTransport::RestTemplate if self.scn < ScnVersion::new(4, 0, 0) => {
                Some((TimeoutProperties::RestTemplateTimeout, None))
            }
            EurekaClientTransport::RestTemplate => Some((
                TimeoutProperties::RestTemplateTimeout,
                Some(THREE_MINUTES_MS),
            )),
            EurekaClientTransport::RestClient if self.scn < ScnVersion::new(5, 0, 0) => {
                Some((TimeoutProperties::RestClientTimeout, Some(THREE_MINUTES_MS)))
            }
            EurekaClientTransport::RestClient => {
                Some((TimeoutProperties::Timeout, Some(THREE_MINUTES_MS)))
            }
        }
    }

    /// Ribbon's default `ConnectTimeout` and `ReadTimeout` (ms) for the train. Dalston's
    /// `RibbonClientConfiguration#ribbonClientConfig` sets none, so Ribbon's
    /// `DefaultClientConfigImpl` 2000 / 5000 apply; from Edgware it sets 1000 / 1000 (SCN commit
    /// 146513aeb, first in v1.4.0; FACTS.md §8).
    pub fn ribbon_timeouts_ms(self) -> (u64, u64) {
        if self.train == Train::Dalston {
            (2000, 5000)
        } else {
            (1000, 1000)
        }
    }
}

/// How an application's Eureka client sends its calls to a Eureka server
/// ([`Release::eureka_client_transport`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EurekaClientTransport {
    /// Eureka's Jersey 1 client, with the `eureka-server-{connect,read}-timeout-seconds`
    /// timeouts (5 s / 8 s by default).
    Jersey,
    /// Spring Cloud's `RestTemplate` transport, which ignores those keys.
    RestTemplate,
    /// Spring Cloud's `RestClient` transport (SCN 4.2+ on request, the only one in 5.x).
    RestClient,
}

/// A family of Spring properties that set the Eureka client transport's timeouts
/// ([`Release::eureka_client_timeout_properties`]): `<prefix>.connect-timeout`,
/// `<prefix>.connect-request-timeout`, `<prefix>.socket-timeout`, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutProperties {
    /// `RestTemplateTimeoutProperties`: `eureka.client.rest-template-timeout` (SCN 3.1.5-4.3).
    RestTemplateTimeout,
    /// `RestClientTimeoutProperties`: `eureka.client.restclient.timeout` (SCN 4.2-4.3).
    RestClientTimeout,
    /// `TimeoutProperties`: `eureka.client.timeout` (SCN 5.x).
    Timeout,
}

impl TimeoutProperties {
    pub const ALL: [TimeoutProperties; 3] = [
        TimeoutProperties::RestTemplateTimeout,
        TimeoutProperties::RestClientTimeout,
        TimeoutProperties::Timeout,
    ];

    /// The `@ConfigurationProperties` prefix.
    pub fn prefix(self) -> &'static str {
        match self {
            TimeoutProperties::RestTemplateTimeout => "eureka.client.rest-template-timeout",
            TimeoutProperties::RestClientTimeout => "eureka.client.restclient.timeout",
            TimeoutProperties::Timeout => "eureka.client.timeout",
        }
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (Eureka {})", self.name(), self.eureka)
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
            eureka: EurekaVersion::parse("1.9.16").unwrap(),
            ..hoxton
        };
        assert!(!pinned.eviction_lowers_expected());
        assert!(!Release::of_train(Train::Finchley).threshold_uses_renewal_interval());
        assert!(Release::of_train(Train::Finchley).threshold_update_compares_expected());
        assert!(!dalston.threshold_update_compares_expected());
    }

    fn parse(text: &str) -> Release {
        Release::parse(text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }

    /// The bare train is its last service release, whose Eureka is FACTS.md §0.1's EOL version.
    #[test]
    fn bare_train_is_its_last_service_release() {
        let eol = [
            (Train::Dalston, "1.6.2", "Dalston.SR5"),
            (Train::Edgware, "1.7.2", "Edgware.SR6"),
            (Train::Finchley, "1.9.3", "Finchley.SR4"),
            (Train::Greenwich, "1.9.13", "Greenwich.SR6"),
            (Train::Hoxton, "1.10.14", "Hoxton.SR12"),
            (Train::Y2020, "1.10.17", "2020.0.6"),
            (Train::Y2021, "1.10.18", "2021.0.9"),
        ];
        for (train, eureka, last) in eol {
            let bare = Release::of_train(train);
            assert_eq!(bare.eureka.to_string(), eureka, "{train}");
            assert_eq!(bare.service_release, None);
            let named = parse(last);
            assert_eq!((named.eureka, named.commons), (bare.eureka, bare.commons));
            assert_eq!(named.name(), last);
        }
    }

    /// incidents-research.md part 2 (Hoxton), FACTS.md §0.1 (Finchley, Greenwich): the service
    /// releases where a rule switches.
    #[test]
    fn service_releases_switch_the_rules_where_the_versions_change() {
        let hoxton = |sr: &str| parse(&format!("Hoxton.{sr}"));
        assert_eq!(hoxton("RELEASE").eureka, EurekaVersion::new(1, 9, 13));
        assert!(!hoxton("SR2").eviction_lowers_expected());
        assert!(hoxton("SR3").eviction_lowers_expected());
        assert_eq!(hoxton("SR3").eureka, EurekaVersion::new(1, 9, 17));
        assert_eq!(hoxton("SR9").eureka, EurekaVersion::new(1, 10, 7));
        assert_eq!(hoxton("SR9").commons, EurekaVersion::new(2, 2, 6));
        assert_eq!(hoxton("SR10").commons, EurekaVersion::new(2, 2, 7));
        assert!(hoxton("SR9").pause_deregisters());
        assert!(!hoxton("SR10").pause_deregisters());
        assert!(!Release::of_train(Train::Hoxton).pause_deregisters());
        assert!(Release::of_train(Train::Dalston).pause_deregisters());
        assert!(!parse("2020.0.0").pause_deregisters());

        let finchley = parse("Finchley.RELEASE");
        assert_eq!(finchley.eureka, EurekaVersion::new(1, 9, 2));
        assert!(!finchley.threshold_update_compares_expected());
        assert!(parse("Finchley.SR1").threshold_update_compares_expected());

        let greenwich = ["RELEASE", "SR1", "SR2", "SR3", "SR6"]
            .map(|sr| parse(&format!("Greenwich.{sr}")).eureka.to_string());
        assert_eq!(greenwich, ["1.9.8", "1.9.8", "1.9.12", "1.9.13", "1.9.13"]);
        assert_eq!(parse("2020.0.3").eureka, EurekaVersion::new(1, 10, 14));
    }

    /// The Boot versions read from each service release's `spring-cloud-build` parent (see
    /// [`ServiceRelease::boot`]), checked against the Boot lines the Spring Cloud compatibility
    /// table documents: Dalston/Edgware 1.5.x, Finchley 2.0.x, Greenwich 2.1.x, Hoxton 2.2.x and
    /// 2.3.x from SR5, 2020.0 2.4.x, 2021.0 2.6.x, 2022.0 3.0.x, 2023.0 3.2.x (3.3.x at the
    /// end), 2024.0 3.4.x, 2025.0 3.5.x, 2025.1 4.0.x.
    #[test]
    fn boot_lines_follow_the_compatibility_table() {
        let line = |r: Release| (r.boot.major, r.boot.minor);
        for train in Train::ALL {
            for sr in train.service_releases() {
                let r = Release::of_service_release(train, *sr);
                let expected = match train {
                    Train::Dalston | Train::Edgware => (1, 5),
                    Train::Finchley => (2, 0),
                    Train::Greenwich => (2, 1),
                    Train::Hoxton if ["RELEASE", "SR1", "SR2", "SR3", "SR4"].contains(&sr.name) => {
                        (2, 2)
                    }
                    Train::Hoxton => (2, 3),
                    Train::Y2020 => (2, 4),
                    Train::Y2021 => (2, 6),
                    Train::Y2022 => (3, 0),
                    Train::Y2023 if sr.name == "6" => (3, 3),
                    Train::Y2023 => (3, 2),
                    Train::Y2024 => (3, 4),
                    Train::Y2025 => (3, 5),
                    Train::Y2025_1 => (4, 0),
                };
                assert_eq!(line(r), expected, "{}", r.name());
            }
        }
        assert_eq!(parse("Hoxton.SR12").boot, BootVersion::new(2, 3, 12));
        assert_eq!(parse("Hoxton.SR4").boot, BootVersion::new(2, 2, 5));
    }

    /// FACTS.md §14: the web server is a lifecycle from Boot 2.3; /pause stops it on Boot 2.3 as
    /// long as commons still implements /pause as `context.stop()` (Hoxton.SR5–SR9); graceful
    /// shutdown exists from 2.3 and is the default from 3.4.
    #[test]
    fn boot_rules_switch_at_2_3_and_3_4() {
        let hoxton = |sr: &str| parse(&format!("Hoxton.{sr}"));
        assert!(!hoxton("SR4").web_server_is_lifecycle());
        assert!(hoxton("SR5").web_server_is_lifecycle());
        let stops: Vec<bool> = ["SR4", "SR5", "SR9", "SR10", "SR12"]
            .iter()
            .map(|sr| hoxton(sr).pause_stops_web_server())
            .collect();
        assert_eq!(stops, [false, true, true, false, false]);
        assert!(!Release::of_train(Train::Dalston).pause_stops_web_server());
        assert!(!Release::of_train(Train::Greenwich).graceful_shutdown_available());
        assert!(Release::of_train(Train::Y2023).graceful_shutdown_available());
        assert!(!Release::of_train(Train::Y2023).graceful_shutdown_default());
        assert!(Release::of_train(Train::Y2024).graceful_shutdown_default());
        let pinned = Release {
            boot: BootVersion::new(2, 2, 13),
            ..hoxton("SR9")
        };
        assert!(!pinned.pause_stops_web_server());
    }

    #[test]
    fn service_releases_parse_case_insensitively() {
        assert_eq!(parse("hoxton.sr9"), parse("Hoxton.SR9"));
        assert_eq!(parse(" HOXTON.Release ").name(), "Hoxton.RELEASE");
        assert_eq!(parse("Ilford.3").name(), "2020.0.3");
        assert_eq!(parse("2020.0").service_release, None);
        assert_eq!(
            parse("Hoxton.SR9").to_string(),
            "Hoxton.SR9 (Eureka 1.10.7)"
        );
        assert_eq!(parse("hoxton").to_string(), "Hoxton (Eureka 1.10.14)");
        assert_eq!(
            Release::parse("Hoxton.SR13"),
            Err(ReleaseError::UnknownServiceRelease(Train::Hoxton))
        );
        assert_eq!(
            Release::parse("Finchley.SR0"),
            Err(ReleaseError::UnknownServiceRelease(Train::Finchley))
        );
        assert_eq!(
            Release::parse("2020.0.7"),
            Err(ReleaseError::UnknownServiceRelease(Train::Y2020))
        );
        assert_eq!(
            Release::parse("Camden.SR1"),
            Err(ReleaseError::UnknownTrain)
        );
        assert_eq!(
            Release::parse("Hoxton-SR9"),
            Err(ReleaseError::UnknownTrain)
        );
    }

    /// FACTS.md §8; incidents-research.md part 3: Dalston 2000 / 5000, Edgware+ 1000 / 1000.
    #[test]
    fn ribbon_timeouts_follow_the_train() {
        assert_eq!(
            Release::of_train(Train::Dalston).ribbon_timeouts_ms(),
            (2000, 5000)
        );
        assert_eq!(parse("Dalston.RELEASE").ribbon_timeouts_ms(), (2000, 5000));
        for train in &Train::ALL[1..] {
            assert_eq!(Release::of_train(*train).ribbon_timeouts_ms(), (1000, 1000));
        }
        assert_eq!(parse("Edgware.RELEASE").ribbon_timeouts_ms(), (1000, 1000));
    }

    /// FACTS.md §0.2: ThreadLocalRandom from Eureka 1.10.14; the rows put 1.10.14 at
    /// Hoxton.SR12 and 2020.0.3.
    #[test]
    fn endpoint_shuffle_is_fixed_per_host_up_to_eureka_1_10_13() {
        let fixed = |text: &str| parse(text).endpoint_shuffle_fixed_per_host();
        for old in [
            "Dalston",
            "Greenwich",
            "Hoxton.SR11",
            "2020.0.0",
            "2020.0.2",
        ] {
            assert!(fixed(old), "{old}");
        }
        for new in ["Hoxton.SR12", "Hoxton", "2020.0.3", "2021.0", "2025.1"] {
            assert!(!fixed(new), "{new}");
        }
        let pinned = Release {
            eureka: EurekaVersion::new(1, 10, 13),
            ..parse("2021.0")
        };
        assert!(pinned.endpoint_shuffle_fixed_per_host());
    }

    /// Jersey through SCN 2.2.x (Hoxton), RestTemplate from SCN 3.0.0 (2020.0.0), RestClient
    /// on request from SCN 4.2.0 (2024.0.0) and always from SCN 5.0.0 (2025.1.0).
    #[test]
    fn eureka_client_transport_leaves_jersey_at_2020_0() {
        use EurekaClientTransport::{Jersey, RestClient, RestTemplate};
        let transport = |text: &str, on: bool| parse(text).eureka_client_transport(on);
        assert_eq!(transport("Dalston", false), Jersey);
        assert_eq!(transport("Hoxton.SR12", true), Jersey);
        assert_eq!(transport("2020.0.0", false), RestTemplate);
        assert_eq!(
            transport("2023.0", true),
            RestTemplate,
            "SCN 4.1.6 has no RestClient"
        );
        assert_eq!(transport("2024.0.0", false), RestTemplate);
        assert_eq!(transport("2024.0.0", true), RestClient);
        assert_eq!(transport("2025.0", false), RestTemplate);
        assert_eq!(transport("2025.1.0", false), RestClient);
        assert_eq!(transport("2025.1", true), RestClient);
    }

    /// The timeout properties and defaults as read per tag (see
    /// [`Release::eureka_client_timeout_properties`]): none before SCN 3.1.5 (2021.0.6), -1
    /// (none) on 3.1.x, 180 000 ms from 4.0.0 (2022.0.0) under the prefix of the transport.
    #[test]
    fn eureka_client_timeouts_follow_the_scn_version() {
        use EurekaClientTransport::{Jersey, RestClient, RestTemplate};
        use TimeoutProperties::{RestClientTimeout, RestTemplateTimeout, Timeout};
        let props = |text: &str, t| parse(text).eureka_client_timeout_properties(t);
        assert_eq!(props("Hoxton", Jersey), None);
        assert_eq!(props("2020.0", RestTemplate), None);
        assert_eq!(parse("2021.0.5").scn, ScnVersion::new(3, 1, 4));
        assert_eq!(props("2021.0.5", RestTemplate), None);
        assert_eq!(
            props("2021.0.6", RestTemplate),
            Some((RestTemplateTimeout, None))
        );
        assert_eq!(
            props("2021.0", RestTemplate),
            Some((RestTemplateTimeout, None))
        );
        for text in ["2022.0.0", "2023.0", "2024.0", "2025.0"] {
            assert_eq!(
                props(text, RestTemplate),
                Some((RestTemplateTimeout, Some(180_000))),
                "{text}"
            );
        }
        assert_eq!(
            props("2025.0", RestClient),
            Some((RestClientTimeout, Some(180_000)))
        );
        assert_eq!(props("2025.1", RestClient), Some((Timeout, Some(180_000))));
        assert_eq!(Timeout.prefix(), "eureka.client.timeout");
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
