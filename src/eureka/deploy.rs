//! `[[deploy]]`: a rolling deployment that replaces every instance of an app, batch by batch.
//!
//! Model (a Kubernetes-style rolling update with `maxSurge = 0`, `maxUnavailable = batch-size`,
//! gated on Eureka): at a batch's start, each of its old instances begins the deploy's shutdown
//! strategy (FACTS.md §7, the same step machines as `[[shutdown]]`) and, at the same instant, its
//! replacement process starts under a new instance id (`<app>-<i>@1`, as a new pod's hostname
//! gives with Spring Cloud's default id). A replacement goes through the boot lifecycle; with
//! `startup-s` its web server is ready (and it registers UP, FACTS.md §5.1) that long after its
//! client's tasks started. The next batch starts `interval-s` after every replacement of the
//! current batch is UP in the server's registry (what a pipeline that checks Eureka waits for).
//! A replacement that never becomes UP stalls the deploy, as it would stall such a pipeline.

use crate::engine::SimTime;
use crate::scenario::{DeployConfig, Scenario, ShutdownConfig};

use super::ProcessId;
use super::observe::{Observation, Observer};
use super::restart::NEW_ID_SUFFIX;
use super::shutdown::{ShutdownRun, Step};
use super::world::{Event, Layout, ProcessKind, ProcessSlot, World};

#[derive(Debug)]
pub struct DeployRun {
    pub config: DeployConfig,
    /// (old, new) process of each instance, in index order.
    pub pairs: Vec<(ProcessId, ProcessId)>,
    /// Index into `pairs` of the next batch's first instance.
    next: usize,
    /// Replacements of the current batch not yet UP in the registry.
    waiting: Vec<ProcessId>,
}

/// Appends a replacement slot for every instance of every deployed app; returns the (old, new)
/// pairs per deploy.
pub(super) fn add_deploy_slots(
    scenario: &Scenario,
    processes: &mut Vec<ProcessSlot>,
) -> Vec<Vec<(ProcessId, ProcessId)>> {
    scenario
        .deploys
        .iter()
        .map(|d| {
            let olds: Vec<ProcessId> = (0..processes.len())
                .filter(|&p| {
                    matches!(processes[p].kind, ProcessKind::AppInstance { app, .. } if app == d.app)
                })
                .collect();
            olds.into_iter()
                .map(|old| {
                    let slot = ProcessSlot {
                        name: format!("{}{NEW_ID_SUFFIX}", processes[old].name),
                        kind: processes[old].kind,
                        application: processes[old].application,
                    };
                    processes.push(slot);
                    (old, processes.len() - 1)
                })
                .collect()
        })
        .collect()
}

impl DeployRun {
    pub fn build_all(scenario: &Scenario, layout: &Layout) -> Vec<DeployRun> {
        scenario
            .deploys
            .iter()
            .zip(&layout.deploys)
            .map(|(config, pairs)| DeployRun {
                config: config.clone(),
                pairs: pairs.clone(),
                next: 0,
                waiting: Vec::new(),
            })
            .collect()
    }
}

impl<O: Observer> World<'_, O> {
    pub(super) fn schedule_deploys(&mut self) {
        for deploy in 0..self.deploys.len() {
            let at = SimTime(self.deploys[deploy].config.at_ms);
            self.queue.schedule(at, Event::DeployBatch { deploy });
        }
    }

    /// Starts the next batch: old instances begin departing, replacements start.
    pub(super) fn on_deploy_batch(&mut self, deploy: usize) {
        let run = &self.deploys[deploy];
        let start = run.next;
        let end = (start + run.config.batch_size as usize).min(run.pairs.len());
        if start >= end {
            return;
        }
        let batch: Vec<(ProcessId, ProcessId)> = run.pairs[start..end].to_vec();
        let config = run.config.clone();
        self.deploys[deploy].next = end;
        self.deploys[deploy].waiting = batch.iter().map(|&(_, new)| new).collect();
        if start == 0 {
            // Batched mode: the requests before the deploy are counted before it begins.
            let now = self.now();
            self.flush_all_routes(now);
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

    /// A process became UP in the registry: if it was the last replacement of its batch the
    /// deploy waits, the next batch starts `interval-s` later.
    pub(super) fn deploy_saw_up(&mut self, p: ProcessId) {
        for deploy in 0..self.deploys.len() {
            let run = &mut self.deploys[deploy];
            let Some(i) = run.waiting.iter().position(|&w| w == p) else {
                continue;
            };
            run.waiting.swap_remove(i);
            if run.waiting.is_empty() && run.next < run.pairs.len() {
                let interval = run.config.interval_ms;
                self.queue
                    .schedule_in(interval, Event::DeployBatch { deploy });
            }
        }
    }
}
