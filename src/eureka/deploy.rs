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

use crate::scenario::{DeployConfig, Scenario};

use super::ids::ProcessId;
use super::layout::Layout;

#[derive(Debug)]
pub struct DeployRun {
    pub config: DeployConfig,
    /// (old, new) process of each instance, in index order.
    pub pairs: Vec<(ProcessId, ProcessId)>,
    /// Index into `pairs` of the next batch's first instance.
    pub(in crate::eureka) next: usize,
    /// Replacements of the current batch not yet UP in the registry.
    pub(in crate::eureka) waiting: Vec<ProcessId>,
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
