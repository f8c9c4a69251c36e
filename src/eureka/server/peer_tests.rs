//! Two or three `EurekaServer`s replicating to each other, without a world: a tiny loop
//! delivers their batches and answers with a fixed 1 ms latency each way, so every instant
//! below is derived by hand from `PeerEurekaNode`'s rules (`docs/design/peers.md` §3, T2, T3).

use super::*;
use crate::engine::StreamFactory;
use crate::eureka::observe::Observation;
use crate::eureka::protocol::RegisterWhy;
use crate::scenario::parse_str;

/// One-way latency between peers in these tests.
const LAT: u64 = 1;

/// What the loop delivers.
enum Item {
    Dispatch {
        server: usize,
        timer: ServerTimer,
    },
    Batch {
        to: usize,
        from: usize,
        batch: std::rc::Rc<ReplicationBatch>,
    },
    Outcome {
        to: usize,
        peer: usize,
        batch: u64,
        outcome: BatchOutcome,
    },
}

/// Servers `ServerId(k)` = `servers[k]`, each replicating to all the others.
struct Cluster {
    servers: Vec<EurekaServer>,
    /// (due, order of scheduling, item): FIFO on ties, as the world's queue.
    pending: Vec<(u64, u64, Item)>,
    seq: u64,
    now: u64,
    /// Every batch sent.
    sent: Vec<Sent>,
    /// Every observation, with its server.
    observed: Vec<(u64, usize, Observation)>,
}

use crate::eureka::protocol::ActionKind;

/// A batch sent: (when, from, to, its tasks' (process, action)).
type Sent = (u64, usize, usize, Vec<(ProcessId, ActionKind)>);

fn server_with(extra: &str, seed: u64) -> EurekaServer {
    let text = format!("{extra}\n[[app]]\nname = \"svc\"\ninstances = 3\n");
    let scenario = parse_str(&text, "t.toml", "t", &[]).expect("valid scenario");
    EurekaServer::new(&scenario, 4, StreamFactory::new(seed).stream("server"))
}

impl Cluster {
    fn new(n: usize, extra: &str) -> Cluster {
        let mut servers: Vec<EurekaServer> =
            (0..n).map(|k| server_with(extra, k as u64 + 1)).collect();
        for (k, server) in servers.iter_mut().enumerate() {
            let others: Vec<ServerId> = (0..n)
                .filter(|&j| j != k)
                .map(|j| ServerId(j as u32))
                .collect();
            server.replicate_to(&others);
            server.registry.open_for_traffic(1);
        }
        Cluster {
            servers,
            pending: Vec::new(),
            seq: 0,
            now: 0,
            sent: Vec::new(),
            observed: Vec::new(),
        }
    }

    fn schedule(&mut self, due: u64, item: Item) {
        self.seq += 1;
        self.pending.push((due, self.seq, item));
    }

    /// Carries out server `k`'s effects: replication timers and batches go into the loop;
    /// other timers are dropped (these tests fire them by hand).
    fn apply(&mut self, k: usize, effects: Vec<ServerEffect>) {
        for effect in effects {
            match effect {
                ServerEffect::Observe(o) => self.observed.push((self.now, k, o)),
                ServerEffect::Arm { delay_ms, timer } => {
                    if matches!(timer, ServerTimer::Replicate { .. }) {
                        let due = self.now + delay_ms;
                        self.schedule(due, Item::Dispatch { server: k, timer });
                    }
                }
                ServerEffect::SendBatch { peer, batch } => {
                    let to = peer.index();
                    let tasks = batch.tasks.iter().map(|t| (t.process, t.item.action()));
                    self.sent.push((self.now, k, to, tasks.collect()));
                    let due = self.now + LAT;
                    self.schedule(due, Item::Batch { to, from: k, batch });
                }
            }
        }
    }

    /// A client call from `p` reaches server `k` at `at`.
    fn call(&mut self, at: u64, k: usize, p: ProcessId, call: Call) -> Reply {
        self.run_until(at);
        self.now = at;
        let mut out = Vec::new();
        let reply = self.servers[k].on_call(SimTime(at), p, call, &mut out);
        self.apply(k, out);
        reply
    }

    /// Delivers everything due up to `until`, in order.
    fn run_until(&mut self, until: u64) {
        while let Some(i) = self.next_due(until) {
            let (due, _, item) = self.pending.swap_remove(i);
            self.now = due;
            let now = SimTime(due);
            let mut out = Vec::new();
            match item {
                Item::Dispatch { server, timer } => {
                    self.servers[server].on_timer(now, timer, || 0, &mut out);
                    self.apply(server, out);
                }
                Item::Batch { to, from, batch } => {
                    let sender = ServerId(from as u32);
                    let replies = self.servers[to].on_batch(now, sender, &batch, &mut out);
                    self.apply(to, out);
                    let outcome = BatchOutcome::Replied(replies);
                    let (peer, id) = (to, batch.id);
                    self.schedule(
                        due + LAT,
                        Item::Outcome {
                            to: from,
                            peer,
                            batch: id,
                            outcome,
                        },
                    );
                }
                Item::Outcome {
                    to,
                    peer,
                    batch,
                    outcome,
                } => {
                    let peer = ServerId(peer as u32);
                    self.servers[to].on_batch_outcome(now, peer, batch, outcome, &mut out);
                    self.apply(to, out);
                }
            }
        }
    }

    fn next_due(&self, until: u64) -> Option<usize> {
        (0..self.pending.len())
            .filter(|&i| self.pending[i].0 <= until)
            .min_by_key(|&i| (self.pending[i].0, self.pending[i].1))
    }

    fn registered_at(&self, k: usize, p: ProcessId) -> Vec<u64> {
        self.observed
            .iter()
            .filter(|(_, s, o)| {
                *s == k && matches!(o, Observation::Registered { process, .. } if *process == p)
            })
            .map(|(t, _, _)| *t)
            .collect()
    }
}

fn register(info: Registrant) -> Call {
    Call::Register {
        info,
        why: RegisterWhy::Init,
    }
}

/// A register at `a` (t = 0) waits `MAX_BATCHING_DELAY_MS` for company, leaves at 500 and is
/// registered at `b` at 501 as a new, never-renewed lease (expirable from 501 + 90 000 + 1);
/// `b` raises its expected clients and replicates nothing (`#replicateToPeers` returns for a
/// replication), so the only batch of the run is `a`'s.
#[test]
fn register_reaches_the_peer_after_the_batching_delay() {
    let mut c = Cluster::new(2, "");
    c.call(0, 0, 0, register(Registrant::up(1_000)));
    c.run_until(600_000);
    assert_eq!(c.sent, vec![(500, 0, 1, vec![(0, ActionKind::Register)])]);
    assert_eq!(c.registered_at(1, 0), vec![501]);
    let lease = c.servers[1]
        .registry
        .entry(0)
        .expect("registered at b")
        .lease;
    assert_eq!(lease.expirable_from(), SimTime(501 + 90_000 + 1));
    assert_eq!(c.servers[1].registry.expected_clients(), 2);
}

/// `PeerEurekaNodeTest#testHeartbeatReplicationFailure`: `a` holds q, `b` does not. q's
/// heartbeat at h = 1 000 reaches `b` at h + 501: 404, not counted; the answer at h + 502 queues
/// `register#q` for `b` only, which leaves at h + 1 002 and registers q at h + 1 003. q's next
/// heartbeat at h' = h + 30 000 renews `b`'s copy at h' + 501, counted, stamped + 90 000.
#[test]
fn heartbeat_404_is_repaired_by_a_register() {
    let mut c = Cluster::new(2, "");
    c.servers[0]
        .registry
        .register(SimTime(0), 0, Registrant::up(1_000), false);
    let h = 1_000;
    let reply = c.call(h, 0, 0, Call::Renew { last_dirty: 1_000 });
    assert_eq!(reply, Reply::Renewed { found: true });
    c.run_until(h + 501);
    assert!(c.servers[1].registry.entry(0).is_none());
    assert_eq!(c.servers[1].registry.renews_last_min.current(), 0);
    c.run_until(h + 29_999);
    assert_eq!(
        c.sent,
        vec![
            (h + 500, 0, 1, vec![(0, ActionKind::Heartbeat)]),
            (h + 1_002, 0, 1, vec![(0, ActionKind::Register)]),
        ]
    );
    assert_eq!(c.registered_at(1, 0), vec![h + 1_003]);
    let h2 = h + 30_000;
    c.call(h2, 0, 0, Call::Renew { last_dirty: 1_000 });
    c.run_until(h2 + 10_000);
    assert_eq!(c.servers[1].registry.renews_last_min.current(), 1);
    let lease = c.servers[1].registry.entry(0).expect("held at b").lease;
    assert_eq!(lease.last_update, SimTime(h2 + 501 + 90_000));
}

/// `PeerEurekaNodeTest#testHeartbeatWithInstanceInfoFromPeer` (T2): `a` holds p dirty 2 000,
/// `b` dirty 1 000. p's heartbeat at `b` (t = 0) reaches `a` at 501: renewed (counted), then
/// 2 000 > 1 000, so 409 with `a`'s copy. At 502 `b` registers that copy as a replication: dirty
/// 2 000 and a new lease (expirable from 502 + 90 001), and queues nothing for anyone.
#[test]
fn conflict_makes_the_sender_take_the_peers_copy() {
    let mut c = Cluster::new(2, "");
    c.servers[0]
        .registry
        .register(SimTime(0), 0, Registrant::up(2_000), false);
    c.servers[1]
        .registry
        .register(SimTime(0), 0, Registrant::up(1_000), false);
    c.call(0, 1, 0, Call::Renew { last_dirty: 1_000 });
    c.run_until(600_000);
    assert_eq!(c.sent, vec![(500, 1, 0, vec![(0, ActionKind::Heartbeat)])]);
    assert_eq!(c.servers[0].registry.renews_last_min.current(), 1);
    assert_eq!(c.registered_at(1, 0), vec![502]);
    let entry = c.servers[1].registry.entry(0).expect("held at b");
    assert_eq!(entry.info.last_dirty, 2_000);
    assert_eq!(entry.lease.expirable_from(), SimTime(502 + 90_001));
}

/// A cancel at `a` reaches `b` at 501 and lowers its expected clients; an eviction is never
/// replicated (`evict` -> `internalCancel` bypasses `PeerAwareInstanceRegistryImpl#cancel`).
#[test]
fn cancel_is_replicated_and_eviction_is_not() {
    let extra = "[server]\neureka.server.enable-self-preservation = false\n";
    let mut c = Cluster::new(2, extra);
    for k in 0..2 {
        c.servers[k]
            .registry
            .register(SimTime(0), 0, Registrant::up(1), false);
        c.servers[k]
            .registry
            .register(SimTime(0), 1, Registrant::up(1), false);
    }
    assert_eq!(c.servers[1].registry.expected_clients(), 3);
    c.call(1_000, 0, 0, Call::Cancel);
    c.run_until(1_501);
    assert!(c.servers[1].registry.entry(0).is_none());
    assert_eq!(c.servers[1].registry.expected_clients(), 2);
    // Process 1's never-renewed lease expires after 90 000 ms: `a` evicts it alone.
    c.now = 200_000;
    let mut out = Vec::new();
    c.servers[0].on_timer(SimTime(200_000), ServerTimer::Eviction, || 0, &mut out);
    assert!(out.contains(&ServerEffect::Observe(Observation::Evicted {
        server: ServerId(0),
        process: 1
    })));
    c.apply(0, out);
    c.run_until(400_000);
    assert_eq!(c.sent.len(), 1, "only the cancel was sent: {:?}", c.sent);
    assert!(c.servers[1].registry.entry(1).is_some());
}

/// Only what succeeded locally is replicated (`PeerAwareInstanceRegistryImpl#renew`,
/// `#cancel`): a heartbeat or cancel that found no lease queues nothing.
#[test]
fn failed_local_actions_are_not_replicated() {
    let mut c = Cluster::new(2, "");
    let reply = c.call(0, 0, 2, Call::Renew { last_dirty: 1 });
    assert_eq!(reply, Reply::Renewed { found: false });
    c.call(10, 0, 2, Call::Cancel);
    c.run_until(600_000);
    assert!(c.sent.is_empty());
}

/// `LeaseExistsRule` is skipped for a replica: `b` holds p OUT_OF_SERVICE (no override); a
/// client's UP register at `b` keeps OUT_OF_SERVICE, a replicated UP register sets UP.
#[test]
fn replicated_register_skips_lease_exists_rule() {
    let oos = Registrant {
        status: InstanceStatus::OutOfService,
        ..Registrant::up(1)
    };
    let mut c = Cluster::new(2, "");
    c.servers[1].registry.register(SimTime(0), 0, oos, false);
    c.call(0, 1, 0, register(Registrant::up(2)));
    let held = |c: &Cluster, k: usize| c.servers[k].registry.entry(0).map(|e| e.info.status);
    assert_eq!(held(&c, 1), Some(InstanceStatus::OutOfService));
    // b replicates what its rules left (OUT_OF_SERVICE) to a: a held nothing, so it takes it.
    c.run_until(1_000);
    assert_eq!(held(&c, 0), Some(InstanceStatus::OutOfService));
    // The other way round: a replicated UP register reaches b's OUT_OF_SERVICE holder.
    let mut c2 = Cluster::new(2, "");
    c2.servers[1].registry.register(SimTime(0), 0, oos, false);
    c2.call(0, 0, 0, register(Registrant::up(2)));
    c2.run_until(1_000);
    assert_eq!(held(&c2, 1), Some(InstanceStatus::Up));
}

/// Three peers: each change fans out to both others, one batch each, and a status change is
/// replicated with the held copy's dirty stamp (`#statusUpdate` sends `infoFromRegistry`).
#[test]
fn a_status_change_reaches_every_peer() {
    let mut c = Cluster::new(3, "");
    for k in 0..3 {
        c.servers[k]
            .registry
            .register(SimTime(0), 0, Registrant::up(7), false);
    }
    let put = Call::PutStatus {
        status: InstanceStatus::OutOfService,
        last_dirty: 9,
    };
    c.call(100, 2, 0, put);
    c.run_until(10_000);
    let dests: Vec<(u64, usize, usize)> = c.sent.iter().map(|s| (s.0, s.1, s.2)).collect();
    assert_eq!(dests, vec![(600, 2, 0), (600, 2, 1)]);
    for k in 0..3 {
        let e = c.servers[k].registry.entry(0).expect("held");
        assert_eq!(e.info.status, InstanceStatus::OutOfService, "server {k}");
        assert_eq!(
            c.servers[k].registry.override_of(0),
            Some(InstanceStatus::OutOfService)
        );
    }
}
