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
    next: usize,
    /// Replacements of the current batch not yet UP in the registry.
    waiting: Vec<ProcessId>,
}

impl DeployRun {
    /// A deploy of `config` over the (old, new) `pairs`, no batch started.
    pub fn new(config: DeployConfig, pairs: Vec<(ProcessId, ProcessId)>) -> DeployRun {
        DeployRun {
            config,
            pairs,
            next: 0,
            waiting: Vec::new(),
        }
    }

    /// Starts the next batch: its (old, new) pairs, whose replacements the deploy now waits
    /// for; `None` when every batch has started.
    pub fn next_batch(&mut self) -> Option<&[(ProcessId, ProcessId)]> {
        let start = self.next;
        let end = (start + self.config.batch_size as usize).min(self.pairs.len());
        if start >= end {
            return None;
        }
        self.next = end;
        self.waiting = self.pairs[start..end].iter().map(|&(_, new)| new).collect();
        Some(&self.pairs[start..end])
    }

    /// Whether no batch has started yet.
    /// Every batch has started and every replacement is UP in the registry: no batch is due.
    pub fn finished(&self) -> bool {
        self.next >= self.pairs.len() && self.waiting.is_empty()
    }

    pub fn not_started(&self) -> bool {
        self.next == 0
    }

    /// Process `p` became UP in the registry: if it was the last replacement the current batch
    /// waited for and a batch is left, the delay until that batch starts (`interval-s`).
    pub fn saw_up(&mut self, p: ProcessId) -> Option<u64> {
        let i = self.waiting.iter().position(|&w| w == p)?;
        self.waiting.swap_remove(i);
        (self.waiting.is_empty() && self.next < self.pairs.len()).then_some(self.config.interval_ms)
    }

    pub fn build_all(scenario: &Scenario, layout: &Layout) -> Vec<DeployRun> {
        scenario
            .deploys
            .iter()
            .zip(&layout.deploys)
            .map(|(config, pairs)| DeployRun::new(config.clone(), pairs.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_str;

    fn deploy(instances: u32, batch_size: u32) -> DeployRun {
        let text = format!(
            "[[app]]\nname = \"svc\"\ninstances = {instances}\n[[deploy]]\napp = \"svc\"\n\
             at-s = 300\nstrategy = \"kill-15\"\nbatch-size = {batch_size}\ninterval-s = 10\n"
        );
        let scenario = parse_str(&text, "t.toml", "t", &[]).expect("valid scenario");
        let layout = Layout::new(&scenario);
        DeployRun::build_all(&scenario, &layout).remove(0)
    }

    /// The deploy alone: batches of `batch-size`, the next one `interval-s` after the last
    /// replacement of the current one is UP, none after the last.
    #[test]
    fn next_batch_waits_for_every_replacement_of_the_current_one() {
        let mut run = deploy(3, 2);
        assert!(run.not_started());
        let first: Vec<ProcessId> = run.next_batch().unwrap().iter().map(|p| p.1).collect();
        assert_eq!(first.len(), 2);
        assert_eq!(run.saw_up(first[0]), None);
        assert_eq!(run.saw_up(first[0]), None, "an UP seen twice counts once");
        assert_eq!(run.saw_up(first[1]), Some(10_000));
        let last: Vec<ProcessId> = run.next_batch().unwrap().iter().map(|p| p.1).collect();
        assert_eq!(last.len(), 1);
        assert_eq!(run.saw_up(last[0]), None, "no batch is left");
        assert!(run.next_batch().is_none());
    }
}
