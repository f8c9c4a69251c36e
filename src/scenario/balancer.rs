//! Which load balancer a caller routes through ([`BalancerKind`]), and what the layers above
//! the rules say and set about each: its name, the setting that bounds how long its list lags
//! the Eureka client's, the sentence `explain` tells of its list reads, its what-if key, and
//! its callers' retry policy. Each balancer's words live in its own module
//! ([`ribbon`](self::ribbon), [`load_balancer`](self::load_balancer)) as one
//! [`BalancerDescriptor`]; report and experiment ask [`BalancerKind`] and never match on it.
//!
//! The rules of each balancer (its list, cursor, refresh and walks) live in `eureka::route`,
//! chosen by the same kind.

mod load_balancer;
mod ribbon;

use super::call_policy::CallPolicy;
use super::model::{CallTarget, CallerConfig, Scenario};
use super::release::Release;

/// The load balancer a caller's requests go through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalancerKind {
    /// Netflix Ribbon (Edgware to Hoxton, FACTS.md §8).
    Ribbon,
    /// Spring Cloud LoadBalancer (2020.0 and later, FACTS.md §9).
    LoadBalancer,
}

/// What the layers above the rules know of one balancer (one constant per balancer, in its own
/// module).
#[derive(Debug)]
pub struct BalancerDescriptor {
    /// The short name in labels and tables (`Ribbon`, `LoadBalancer`).
    pub name: &'static str,
    /// The scenario's one-line settings: a label and the interval it names (`None`: nothing
    /// to add, the label says it all), for a caller and its first called app.
    pub settings: fn(&CallerConfig, &CallTarget) -> (&'static str, Option<u64>),
    /// What re-read the list in the caller's balancer, for `explain`'s story.
    pub list_step: fn(&CallerConfig) -> &'static str,
    /// The closed form's balancer term: how long the balancer may keep a list after its Eureka
    /// client changed, with its label.
    pub lag_term: fn(&CallerConfig, &CallTarget) -> (&'static str, u64),
    /// The what-if that cuts the balancer's own interval: the [`BalancerDescriptor::lag_term`]
    /// label it applies to and the `--set` key that sets it (`None`: no such key).
    pub what_if: Option<(&'static str, &'static str)>,
    /// Whether the balancer has Ribbon's circuit breaker (the availability filter).
    pub circuit_breaker: bool,
    /// The policy of a caller's requests to `target` (`CallerConfig::policy`, before the
    /// settings every balancer shares).
    pub policy: fn(&CallerConfig, &CallTarget, &Release) -> CallPolicy,
}

impl BalancerKind {
    /// Every balancer, in the order the what-ifs and reports list them.
    pub const ALL: [BalancerKind; 2] = [BalancerKind::Ribbon, BalancerKind::LoadBalancer];

    /// The balancer `caller` uses on `release`: `spring.cloud.loadbalancer.ribbon.enabled`, by
    /// default Ribbon up to Hoxton (FACTS.md §9).
    pub fn of(caller: &CallerConfig, release: &Release) -> BalancerKind {
        let ribbon = caller
            .client
            .load_balancer
            .ribbon_enabled
            .unwrap_or(release.train < super::release::Train::Y2020);
        if ribbon {
            BalancerKind::Ribbon
        } else {
            BalancerKind::LoadBalancer
        }
    }

    /// This balancer's descriptor.
    pub fn descriptor(self) -> &'static BalancerDescriptor {
        match self {
            BalancerKind::Ribbon => &ribbon::DESCRIPTOR,
            BalancerKind::LoadBalancer => &load_balancer::DESCRIPTOR,
        }
    }

    /// The short name in labels and tables.
    pub fn name(self) -> &'static str {
        self.descriptor().name
    }

    /// [`BalancerDescriptor::settings`].
    pub fn settings(
        self,
        caller: &CallerConfig,
        target: &CallTarget,
    ) -> (&'static str, Option<u64>) {
        (self.descriptor().settings)(caller, target)
    }

    /// [`BalancerDescriptor::list_step`].
    pub fn list_step(self, caller: &CallerConfig) -> &'static str {
        (self.descriptor().list_step)(caller)
    }

    /// [`BalancerDescriptor::lag_term`].
    pub fn lag_term(self, caller: &CallerConfig, target: &CallTarget) -> (&'static str, u64) {
        (self.descriptor().lag_term)(caller, target)
    }

    /// [`BalancerDescriptor::what_if`].
    pub fn what_if(self) -> Option<(&'static str, &'static str)> {
        self.descriptor().what_if
    }

    /// [`BalancerDescriptor::circuit_breaker`].
    pub fn has_circuit_breaker(self) -> bool {
        self.descriptor().circuit_breaker
    }

    /// [`BalancerDescriptor::policy`].
    pub fn policy(
        self,
        caller: &CallerConfig,
        target: &CallTarget,
        release: &Release,
    ) -> CallPolicy {
        (self.descriptor().policy)(caller, target, release)
    }
}

impl Scenario {
    /// The callers' load balancer, for labels: its name ([`BalancerKind::name`]: `Ribbon`,
    /// `LoadBalancer`) when every caller uses the same, else `balancer` (`Ribbon` without
    /// callers).
    pub fn balancer_name(&self) -> &'static str {
        let release = &self.simulation.release;
        let mut kinds = self.callers.iter().map(|c| c.balancer(release));
        let Some(first) = kinds.next() else {
            return BalancerKind::Ribbon.name();
        };
        if kinds.all(|k| k == first) {
            first.name()
        } else {
            "balancer"
        }
    }
}

impl CallerConfig {
    /// The balancer this caller routes through on `release` ([`BalancerKind::of`]).
    pub fn balancer(&self, release: &Release) -> BalancerKind {
        BalancerKind::of(self, release)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every balancer has its own name, and `ALL` lists each once.
    #[test]
    fn every_balancer_has_its_own_name() {
        let names: Vec<&str> = BalancerKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, ["Ribbon", "LoadBalancer"]);
    }
}
