//! Presets: real-world Eureka / Ribbon configurations, each with where it was found
//! (docs/presets.md, from the project's PRESETS.md survey). `simulation.preset = "NAME"` puts its
//! settings under the scenario's: a `spring-config` file, the table's own keys and `--set`
//! override them, as a team's own settings would override a template it started from.

/// Where a preset setting goes: `[server]`, `[clients]`, or every `[[caller]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PresetTable {
    Server,
    Clients,
    Callers,
}

impl PresetTable {
    pub fn name(self) -> &'static str {
        match self {
            PresetTable::Server => "server",
            PresetTable::Clients => "clients",
            PresetTable::Callers => "caller[*]",
        }
    }
}

/// One real-world configuration.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    pub name: &'static str,
    /// Where it comes from (repository:path or URL).
    pub source: &'static str,
    /// What it is, and what it teaches.
    pub summary: &'static str,
    /// (table, key, value as TOML) in the order applied.
    pub settings: &'static [(PresetTable, &'static str, &'static str)],
}

use PresetTable::{Callers, Clients, Server};

const SP_OFF: (PresetTable, &str, &str) =
    (Server, "eureka.server.enable-self-preservation", "false");
const RO_OFF: (PresetTable, &str, &str) = (
    Server,
    "eureka.server.use-read-only-response-cache",
    "false",
);

/// The presets, F0 to F12 of the survey.
pub const PRESETS: [Preset; 13] = [
    Preset {
        name: "netflix-defaults",
        source: "Netflix/eureka:eureka-core/src/main/java/com/netflix/eureka/DefaultEurekaServerConfig.java; Netflix/ribbon#224",
        summary: "Every default (what most users run): naive kill -9 worst case 330 s, kill -15 90 s.",
        settings: &[],
    },
    Preset {
        name: "jhipster",
        source: "jhipster/jhipster-registry:src/main/resources/config/application.yml + jhipster/jhipster-sample-app-gateway:src/main/resources/config/application.yml",
        summary: "Tuned leases (5/10 s) and fetch (10 s), self-preservation off; eviction, cache and Ribbon untouched dominate.",
        settings: &[
            SP_OFF,
            (
                Clients,
                "eureka.instance.lease-renewal-interval-in-seconds",
                "5",
            ),
            (
                Clients,
                "eureka.instance.lease-expiration-duration-in-seconds",
                "10",
            ),
            (
                Clients,
                "eureka.client.registry-fetch-interval-seconds",
                "10",
            ),
            (
                Clients,
                "eureka.client.instance-info-replication-interval-seconds",
                "10",
            ),
        ],
    },
    Preset {
        name: "sprboots-fast",
        source: "wxb1989/sprboots:eds-cloud/eds-register-server/readme.txt",
        summary: "Everything fast: eviction 5 s, no read-only cache, leases 5/10 s, fetch 5 s, Ribbon 2 s.",
        settings: &[
            SP_OFF,
            (
                Server,
                "eureka.server.eviction-interval-timer-in-ms",
                "5000",
            ),
            RO_OFF,
            (
                Clients,
                "eureka.instance.lease-renewal-interval-in-seconds",
                "5",
            ),
            (
                Clients,
                "eureka.instance.lease-expiration-duration-in-seconds",
                "10",
            ),
            (
                Clients,
                "eureka.client.registry-fetch-interval-seconds",
                "5",
            ),
            (Clients, "ribbon.ServerListRefreshInterval", "2000"),
        ],
    },
    Preset {
        name: "issue-3263",
        source: "https://github.com/spring-cloud/spring-cloud-netflix/issues/3263 (also Netflix/eureka#1150)",
        summary: "Everything tuned but lease expiry and fetch; no retries.",
        settings: &[
            SP_OFF,
            (
                Server,
                "eureka.server.eviction-interval-timer-in-ms",
                "10000",
            ),
            (
                Server,
                "eureka.server.response-cache-update-interval-ms",
                "3000",
            ),
            RO_OFF,
            (Clients, "ribbon.ServerListRefreshInterval", "1000"),
            (Clients, "ribbon.MaxAutoRetries", "0"),
            (Clients, "ribbon.MaxAutoRetriesNextServer", "0"),
            (Clients, "ribbon.ConnectTimeout", "2000"),
            (Clients, "ribbon.ReadTimeout", "10000"),
            (
                Clients,
                "eureka.instance.lease-renewal-interval-in-seconds",
                "5",
            ),
        ],
    },
    Preset {
        name: "extreme-373",
        source: "comment by MrAnsonWang (2016-09-19) in https://github.com/spring-cloud/spring-cloud-netflix/issues/373",
        summary: "Sub-second server timers, leases 1/2 s, fetch 1 s, but Ribbon's 30 s default dominates.",
        settings: &[
            (
                Server,
                "eureka.server.response-cache-update-interval-ms",
                "500",
            ),
            (Server, "eureka.server.eviction-interval-timer-in-ms", "500"),
            (
                Clients,
                "eureka.instance.lease-renewal-interval-in-seconds",
                "1",
            ),
            (
                Clients,
                "eureka.instance.lease-expiration-duration-in-seconds",
                "2",
            ),
            (
                Clients,
                "eureka.client.registry-fetch-interval-seconds",
                "1",
            ),
            (
                Clients,
                "eureka.client.instance-info-replication-interval-seconds",
                "1",
            ),
            // Its initial-instance-info-replication-interval-seconds: 0 is left out: the model
            // takes 1 s and more (the first replicator run only matters to a starting fleet).
        ],
    },
    Preset {
        name: "wukong-tuned",
        source: "https://www.besthub.dev/articles/understanding-eureka-s-three-level-cache-and-reducing-service-deregistration-delay-84aad5a62cf0",
        summary: "The three-level-cache article's 3 s tuning (leases 3/9 s, eviction 5 s).",
        settings: &[
            (Clients, "ribbon.ServerListRefreshInterval", "3000"),
            (
                Clients,
                "eureka.client.registry-fetch-interval-seconds",
                "3",
            ),
            (
                Clients,
                "eureka.instance.lease-renewal-interval-in-seconds",
                "3",
            ),
            (
                Clients,
                "eureka.instance.lease-expiration-duration-in-seconds",
                "9",
            ),
            (
                Server,
                "eureka.server.eviction-interval-timer-in-ms",
                "5000",
            ),
            (
                Server,
                "eureka.server.response-cache-update-interval-ms",
                "3000",
            ),
        ],
    },
    Preset {
        name: "mastering-spring-cloud",
        source: "Packt \"Mastering Spring Cloud\", \"Refreshing the registry\" and \"Response cache\"",
        summary: "Leases 1/2 s, 3 s server timers and fetch, full fetches (no deltas); Ribbon default.",
        settings: &[
            (
                Clients,
                "eureka.instance.lease-renewal-interval-in-seconds",
                "1",
            ),
            (
                Clients,
                "eureka.instance.lease-expiration-duration-in-seconds",
                "2",
            ),
            SP_OFF,
            (
                Server,
                "eureka.server.eviction-interval-timer-in-ms",
                "3000",
            ),
            (
                Server,
                "eureka.server.response-cache-update-interval-ms",
                "3000",
            ),
            (
                Clients,
                "eureka.client.registry-fetch-interval-seconds",
                "3",
            ),
            (Clients, "eureka.client.disable-delta", "true"),
        ],
    },
    Preset {
        name: "eureka-1450-observed",
        source: "https://github.com/Netflix/eureka/issues/1450",
        summary: "Lease 40 s, eviction 1 s, no read-only cache, gateway fetch 10 s, no LoadBalancer cache: eviction observed about 80 s after the last heartbeat (the lease bug).",
        settings: &[
            RO_OFF,
            (
                Server,
                "eureka.server.eviction-interval-timer-in-ms",
                "1000",
            ),
            SP_OFF,
            (
                Clients,
                "eureka.instance.lease-expiration-duration-in-seconds",
                "40",
            ),
            (
                Callers,
                "eureka.client.registry-fetch-interval-seconds",
                "10",
            ),
            (Callers, "spring.cloud.loadbalancer.cache.enabled", "false"),
        ],
    },
    Preset {
        name: "ribbon-retry",
        source: "https://github.com/Netflix/ribbon/issues/379 (same configuration as Netflix/zuul#446)",
        summary: "Zuul with retries on the next two servers and a 1 s Ribbon refresh.",
        settings: &[
            (Clients, "ribbon.MaxAutoRetries", "1"),
            (Clients, "ribbon.MaxAutoRetriesNextServer", "2"),
            (Clients, "ribbon.OkToRetryOnAllOperations", "true"),
            (Clients, "ribbon.ReadTimeout", "1000"),
            (Clients, "ribbon.ConnectTimeout", "250"),
            (Clients, "ribbon.ServerListRefreshInterval", "1000"),
            (Callers, "zuul.retryable", "true"),
        ],
    },
    Preset {
        name: "paascloud-retries",
        source: "paascloud/paascloud-master:paascloud-config-repo/application-dev.yml",
        summary: "A production-style template where retries, not tuning, are the defence.",
        settings: &[
            (Clients, "ribbon.MaxAutoRetries", "1"),
            (Clients, "ribbon.MaxAutoRetriesNextServer", "2"),
            (Clients, "ribbon.OkToRetryOnAllOperations", "false"),
            (Clients, "ribbon.ConnectTimeout", "60000"),
            (Clients, "ribbon.ReadTimeout", "20000"),
            (Clients, "ribbon.eager-load.enabled", "true"),
        ],
    },
    Preset {
        name: "ewolff-demo",
        source: "ewolff/microservice:microservice-demo/microservice-demo-order/src/main/resources/application.properties",
        summary: "Renewals every 5 s only: shortening renewals alone does nothing for kill -9.",
        settings: &[(
            Clients,
            "eureka.instance.lease-renewal-interval-in-seconds",
            "5",
        )],
    },
    Preset {
        name: "fast-test-mall",
        source: "oilqw/mall:mall-eureka-server/readme.txt",
        summary: "Leases 1/2 s \"for testing\", self-preservation off; timers and caches at defaults.",
        settings: &[
            SP_OFF,
            (
                Clients,
                "eureka.instance.lease-renewal-interval-in-seconds",
                "1",
            ),
            (
                Clients,
                "eureka.instance.lease-expiration-duration-in-seconds",
                "2",
            ),
        ],
    },
    Preset {
        name: "renew-equals-expire",
        source: "yidongnan/spring-cloud-netflix-example:eureka-server/src/main/resources/bootstrap.yml",
        summary: "Lease expiry equal to the renewal interval (30/30 s): flapping risk without the lease bug's 2x slack.",
        settings: &[
            SP_OFF,
            (
                Clients,
                "eureka.instance.lease-expiration-duration-in-seconds",
                "30",
            ),
            (
                Clients,
                "eureka.instance.lease-renewal-interval-in-seconds",
                "30",
            ),
        ],
    },
];

/// The names of [`PRESETS`], in order (the values `simulation.preset` allows).
pub const PRESET_NAMES: [&str; 13] = [
    "netflix-defaults",
    "jhipster",
    "sprboots-fast",
    "issue-3263",
    "extreme-373",
    "wukong-tuned",
    "mastering-spring-cloud",
    "eureka-1450-observed",
    "ribbon-retry",
    "paascloud-retries",
    "ewolff-demo",
    "fast-test-mall",
    "renew-equals-expire",
];

/// The preset named `name`.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::fixture::parse;

    const MINIMAL: &str = "[[app]]\nname = \"svc\"\ninstances = 3\n[[caller]]\nname = \"gw\"\ncalls = \"svc\"\n[[shutdown]]\ninstance = \"svc-0\"\nat-s = 300\nstrategy = \"kill-9\"\n";

    #[test]
    fn the_names_are_the_presets() {
        assert_eq!(PRESETS.map(|p| p.name), PRESET_NAMES);
    }

    /// Each preset gives the scenario its settings written as `--set` arguments would (which
    /// `raw` reads by another path): every key exists, in the table the survey names.
    #[test]
    fn a_preset_is_its_settings_written_in_the_scenario() {
        for p in PRESETS {
            let with_preset = parse(MINIMAL, &[format!("simulation.preset={}", p.name)])
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let sets: Vec<String> = p
                .settings
                .iter()
                .map(|(table, key, value)| {
                    let table = table.name().replace('*', "0");
                    format!("{table}.{key}={value}")
                })
                .chain([format!("simulation.preset={}", PRESET_NAMES[0])])
                .collect();
            let written = parse(MINIMAL, &sets).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            // The warnings name where a setting came from, which differs.
            let unwarned = |mut s: crate::scenario::Scenario| {
                s.warnings.clear();
                s
            };
            assert_eq!(
                unwarned(with_preset.clone()),
                unwarned(written),
                "{}",
                p.name
            );
            if !p.settings.is_empty() {
                assert_ne!(with_preset, parse(MINIMAL, &[]).unwrap(), "{}", p.name);
            }
        }
    }

    /// The scenario's own keys override the preset's.
    #[test]
    fn the_scenario_overrides_its_preset() {
        let text =
            format!("[clients]\neureka.client.registry-fetch-interval-seconds = 7\n{MINIMAL}");
        let s = parse(&text, &["simulation.preset=sprboots-fast".to_string()]).unwrap();
        assert_eq!(s.apps[0].client.registry_fetch_interval_s, 7);
        assert_eq!(s.apps[0].client.lease_renewal_interval_s, 5);
        assert!(!s.server.use_read_only_response_cache);
    }

    #[test]
    fn an_unknown_preset_is_refused_with_the_names() {
        let err = parse(MINIMAL, &["simulation.preset=jhipter".to_string()]).unwrap_err();
        let err = err.to_string();
        assert!(err.contains("jhipster"), "{err}");
        assert!(err.contains("renew-equals-expire"), "{err}");
    }
}
