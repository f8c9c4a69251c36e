//! `[[restart]]`: a new incarnation of an instance's process.
//!
//! A restart is a new JVM: a new `DiscoveryClient` (STARTING, its own timers from its
//! construction, FACTS.md §5.1) and a new web server, started through the same lifecycle as at
//! boot (`on_client_create`). By default it keeps the instance id, as Spring Cloud's default id
//! `hostname:app:port` does on the same host and port (SCC `IdUtils#getDefaultInstanceId`,
//! FACTS.md §6), so whatever the server still holds for that id applies to the new process:
//!
//! - its lease, if not yet evicted: the first register replaces it (a new lease, no new expected
//!   client, `AbstractInstanceRegistry#register`);
//! - its overridden status: OUT_OF_SERVICE set through /service-registry survives the restart
//!   while the lease lives (`OverrideExistsRule` re-applies it to the UP register), and is gone
//!   after a DELETE or an eviction (`AbstractInstanceRegistry#internalCancel` removes the map
//!   entry). The map's one-hour `expireAfterAccess` is not modelled.
//!
//! With `new-instance-id` the new process is a separate registry entry (`<instance>@1`) and
//! the old lease is left to expire. Replies addressed to the previous incarnation are dropped
//! (`Process::client.incarnation`), and the shutdown metrics of the instance freeze at the
//! restart (`Observation::Restarted`): they describe the incarnation that stopped.

use crate::engine::{RngStream, StreamFactory};
use crate::scenario::{RestartConfig, RestartWhen, Scenario};

use super::ids::ProcessId;
use super::layout::Layout;

#[derive(Debug)]
pub struct RestartRun {
    pub config: RestartConfig,
    /// The process that exits.
    pub old: ProcessId,
    /// The process that starts (`old` unless the restart takes a new instance id).
    pub new: ProcessId,
    /// The new incarnation's client stream for a same-id restart (`client/<id>#1`).
    rng: Option<RngStream>,
    scheduled: bool,
    done: bool,
}

impl RestartRun {
    /// The new process has started: nothing more is planned.
    pub fn finished(&self) -> bool {
        self.done
    }

    /// With a fixed `at-s`: when the restart is due (it is then scheduled).
    pub fn schedule_fixed(&mut self) -> Option<u64> {
        let RestartWhen::At(at) = self.config.when else {
            return None;
        };
        self.scheduled = true;
        Some(at)
    }

    /// Process `p` exited: with `down-s` and `p` the process this restart waits for, the delay
    /// until the restart (it is then scheduled; a later exit does not schedule it again).
    pub fn on_exit(&mut self, p: ProcessId) -> Option<u64> {
        if self.old != p || self.scheduled || self.done {
            return None;
        }
        let RestartWhen::AfterExit(down) = self.config.when else {
            return None;
        };
        self.scheduled = true;
        Some(down)
    }

    /// The restart is due: false if it already ran.
    pub fn begin(&mut self) -> bool {
        !std::mem::replace(&mut self.done, true)
    }

    /// The client stream of a same-id restart's new incarnation (taken once).
    pub fn take_client_stream(&mut self) -> Option<RngStream> {
        self.rng.take()
    }

    pub fn build_all(
        scenario: &Scenario,
        layout: &Layout,
        streams: &StreamFactory,
    ) -> Vec<RestartRun> {
        scenario
            .restarts
            .iter()
            .zip(&layout.restarts)
            .map(|(config, &(old, new))| RestartRun {
                config: config.clone(),
                old,
                new,
                rng: (old == new).then(|| streams.stream(&format!("client/{}#1", config.instance))),
                scheduled: false,
                done: false,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn restart(when: &str) -> RestartRun {
        let text = format!(
            "[[app]]\nname = \"svc\"\ninstances = 2\n[[shutdown]]\ninstance = \"svc-0\"\n\
             at-s = 300\nstrategy = \"kill-9\"\n[[restart]]\ninstance = \"svc-0\"\n{when}\n"
        );
        let scenario = crate::scenario::parse_str(&text, "t.toml", "t", &[]).expect("valid");
        let layout = Layout::new(&scenario);
        RestartRun::build_all(&scenario, &layout, &StreamFactory::new(1)).remove(0)
    }

    /// The restart alone: with `down-s` it is scheduled by its process's first exit only, and
    /// it runs once.
    #[test]
    fn down_s_counts_from_the_first_exit_and_runs_once() {
        let mut run = restart("down-s = 30");
        assert_eq!(run.schedule_fixed(), None);
        assert_eq!(run.on_exit(run.old + 1), None, "another process's exit");
        assert_eq!(run.on_exit(run.old), Some(30_000));
        assert_eq!(run.on_exit(run.old), None, "already scheduled");
        assert!(run.begin());
        assert!(!run.begin());
        assert!(
            run.take_client_stream().is_some(),
            "same id: a new client stream"
        );
        assert!(run.take_client_stream().is_none());
    }
}
