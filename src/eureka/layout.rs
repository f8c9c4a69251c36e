//! Who is who in a scenario's world: processes (app instances, callers, the server, and the
//! replacement processes of restarts and deploys) and caller routes, in a fixed order. A pure
//! function of the scenario, shared by the world and by observers.

use crate::scenario::Scenario;

use super::ids::ProcessId;

/// The suffix of the instance id of a process's next incarnation when it takes a new id.
pub const NEW_ID_SUFFIX: &str = "@1";

/// What a process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessKind {
    /// Instance `index` of `Scenario::apps[app]`.
    AppInstance { app: usize, index: u32 },
    /// `Scenario::callers[caller]`.
    Caller { caller: usize },
    /// Eureka server `peer`'s own process (its embedded client): `Scenario::servers()[peer]`.
    Server { peer: usize },
}

/// Who is who in a scenario's world: a pure function of the scenario, shared by the world and
/// by observers that need to know which process or route is which.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Processes in a fixed order: app instances (app by app), then callers, then the servers
    /// (one per peer).
    pub processes: Vec<ProcessSlot>,
    /// Caller routes in order: callers, then each caller's called apps in order.
    pub routes: Vec<RouteSlot>,
    /// The process of each `[[shutdown]]`, in order.
    pub targets: Vec<ProcessId>,
    /// Processes from this index on are not started at boot: they are the new processes of
    /// `[[restart]]`s with `new-instance-id` and of `[[deploy]]`s, after the server.
    pub first_replacement: ProcessId,
    /// Per `[[restart]]`: (the process that exits, the process that starts; the same unless the
    /// restart takes a new instance id).
    pub restarts: Vec<(ProcessId, ProcessId)>,
    /// Per `[[deploy]]`: (old process, new process) of each instance, in index order.
    pub deploys: Vec<Vec<(ProcessId, ProcessId)>>,
}

#[derive(Debug, Clone)]
pub struct ProcessSlot {
    pub name: String,
    pub kind: ProcessKind,
    pub application: usize,
}

#[derive(Debug, Clone, Copy)]
pub struct RouteSlot {
    pub caller: usize,
    pub process: ProcessId,
    pub application: usize,
    /// Index into the caller's `calls`.
    pub target: usize,
}

impl Layout {
    /// The process of each Eureka server, by `ServerId`.
    pub fn server_processes(&self) -> Vec<ProcessId> {
        (0..self.processes.len())
            .filter(|&p| matches!(self.processes[p].kind, ProcessKind::Server { .. }))
            .collect()
    }

    pub fn new(scenario: &Scenario) -> Layout {
        let mut processes = Vec::new();
        for (a, app) in scenario.apps.iter().enumerate() {
            for index in 0..app.instances {
                processes.push(ProcessSlot {
                    name: scenario.instance_id(a, index),
                    kind: ProcessKind::AppInstance { app: a, index },
                    application: a,
                });
            }
        }
        let first_caller_app = scenario.apps.len();
        let mut routes = Vec::new();
        for (c, caller) in scenario.callers.iter().enumerate() {
            let process = processes.len();
            processes.push(ProcessSlot {
                name: caller.name.clone(),
                kind: ProcessKind::Caller { caller: c },
                application: first_caller_app + c,
            });
            for (target, call) in caller.calls.iter().enumerate() {
                routes.push(RouteSlot {
                    caller: c,
                    process,
                    application: call.app,
                    target,
                });
            }
        }
        // Every peer runs the same application (`spring.application.name` of `[server]`).
        for (peer, server) in scenario.servers().iter().enumerate() {
            processes.push(ProcessSlot {
                name: server.name.clone(),
                kind: ProcessKind::Server { peer },
                application: first_caller_app + scenario.callers.len(),
            });
        }
        let targets = scenario
            .shutdowns
            .iter()
            .map(|s| {
                processes
                    .iter()
                    .position(|p| {
                        p.kind
                            == ProcessKind::AppInstance {
                                app: s.app,
                                index: s.index,
                            }
                    })
                    .unwrap_or(usize::MAX)
            })
            .collect();
        let first_replacement = processes.len();
        let restarts = add_restart_slots(scenario, &mut processes);
        let deploys = add_deploy_slots(scenario, &mut processes);
        Layout {
            processes,
            routes,
            targets,
            first_replacement,
            restarts,
            deploys,
        }
    }
}

/// Appends a process slot for each restart that takes a new instance id; returns (old, new) per
/// restart.
fn add_restart_slots(
    scenario: &Scenario,
    processes: &mut Vec<ProcessSlot>,
) -> Vec<(ProcessId, ProcessId)> {
    scenario
        .restarts
        .iter()
        .map(|r| {
            let old = processes
                .iter()
                .position(|p| p.name == r.instance)
                .unwrap_or(usize::MAX);
            if !r.new_instance_id || old == usize::MAX {
                return (old, old);
            }
            let slot = ProcessSlot {
                name: format!("{}{NEW_ID_SUFFIX}", r.instance),
                kind: processes[old].kind,
                application: processes[old].application,
            };
            processes.push(slot);
            (old, processes.len() - 1)
        })
        .collect()
}

/// Appends a replacement slot for every instance of every deployed app; returns the (old, new)
/// pairs per deploy.
fn add_deploy_slots(
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
