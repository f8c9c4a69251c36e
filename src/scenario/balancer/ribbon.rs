//! Ribbon as the layers above the rules name it (FACTS.md §8): `PollingServerListUpdater`
//! re-reads the Eureka client's list every `ribbon.ServerListRefreshInterval`, unless
//! `EurekaNotificationServerListUpdater` follows each fetch; the availability filter's circuit
//! breaker skips tripped servers.

use super::BalancerDescriptor;
use crate::scenario::model::{CallTarget, CallerConfig};

pub(super) const DESCRIPTOR: BalancerDescriptor = BalancerDescriptor {
    name: "Ribbon",
    settings: |_, target| {
        (
            "Ribbon refresh",
            Some(target.ribbon.server_list_refresh_interval_ms),
        )
    },
    list_step: |_| "Ribbon refresh",
    lag_term,
    what_if: Some((
        "Ribbon refresh",
        "caller[*].ribbon.ServerListRefreshInterval",
    )),
    circuit_breaker: true,
    policy: CallerConfig::ribbon_policy,
};

/// Ribbon's polling interval; nothing with the notification updater, which follows each fetch.
fn lag_term(_: &CallerConfig, target: &CallTarget) -> (&'static str, u64) {
    if target.ribbon.eureka_notification_updater {
        ("Ribbon notified by fetch", 0)
    } else {
        (
            "Ribbon refresh",
            target.ribbon.server_list_refresh_interval_ms,
        )
    }
}
