//! The world's handlers for `deploy` (the rules and their state live in `eureka::deploy`).

use crate::engine::SimTime;
use crate::eureka::ids::ProcessId;
use crate::eureka::layout::ProcessKind;
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::shutdown::{ShutdownRun, Step};
use crate::scenario::ShutdownConfig;

use super::{Event, World};

impl<O: Observer> World<'_, O> {
    pub(super) fn schedule_deploys(&mut self) {
        for deploy in 0..self.deploys.len() {
            let at = SimTime(self.deploys[deploy].config.at_ms);
            self.queue.schedule(at, Event::DeployBatch { deploy });
        }
    }

    /// Starts the next batch: old instances begin departing, replacements start.
    pub(super) fn on_deploy_batch(&mut self, deploy: usize) {
        let run = &mut self.deploys[deploy];
        let first = run.not_started();
        let Some(batch) = run.next_batch() else {
            return;
        };
        let batch: Vec<(ProcessId, ProcessId)> = batch.to_vec();
        let config = run.config.clone();
        if first {
            // Batched mode: the requests before the deploy are counted before it begins.
            self.settle_routes();
        }
        self.observe(Observation::DeployBatch {
            deploy,
            size: batch.len(),
        });
        let now = self.now();
        for (old, new) in batch {
            if let ProcessKind::AppInstance { app, index } = self.processes[old].kind {
                let shutdown = ShutdownConfig::with_defaults(
                    self.processes[old].name.clone(),
                    (app, index),
                    now.ms(),
                    config.strategy,
                    (config.wait_ms, config.then),
                );
                self.shutdowns.push(ShutdownRun::new(shutdown, old));
                let run = self.shutdowns.len() - 1;
                self.on_shutdown_step(run, Step::Begin);
            }
            self.processes[new].startup_ms = config.startup_ms;
            self.on_client_create(new);
        }
    }
}
