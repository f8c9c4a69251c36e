//! The world's handlers for `route::inflight` (the rules and their state live in
//! `eureka::route::inflight`).

use crate::eureka::ids::ProcessId;
use crate::eureka::layout::ProcessKind;
use crate::eureka::observe::{Observation, Observer};
use crate::eureka::route::GRACEFUL_POLL_MS;

use super::{GracefulPhase, World};

impl<O: Observer> World<'_, O> {
    /// `[[app]] service-time-ms` of process `p`, in µs (0 for processes that are no app
    /// instance).
    fn service_us(&self, p: ProcessId) -> f64 {
        match self.processes[p].kind {
            ProcessKind::AppInstance { app, .. } => {
                self.scenario.apps[app].service_time_ms as f64 * 1000.0
            }
            _ => 0.0,
        }
    }

    /// Requests accepted by `p` with an arrival after `cut_us` (up to now), over every route to
    /// its app, and the latest such arrival. Batched routes must be flushed up to now.
    fn accepted_by_after(&mut self, p: ProcessId, cut_us: f64) -> (u64, Option<f64>) {
        let application = self.processes[p].application;
        let mut count = 0;
        let mut latest: Option<f64> = None;
        for r in 0..self.routes.len() {
            let route = &self.routes[r];
            if route.application != application || !route.tracks_in_flight() {
                continue;
            }
            let (c, l) = self.accepted_after(r, p, cut_us);
            count += c;
            latest = match (latest, l) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }
        (count, latest)
    }

    fn observe_in_flight_failed(&mut self, p: ProcessId, count: u64) {
        if count > 0 {
            self.observe(Observation::InflightFailed { process: p, count });
        }
    }

    /// The web server stops at once (kill -9, SIGKILL, `server.shutdown = immediate`): the
    /// requests in flight on `p` fail (Spring Boot reference "Graceful Shutdown": without it
    /// the web server stops without waiting for active requests; FACTS.md §7).
    pub(super) fn stop_serving_abruptly(&mut self, p: ProcessId) {
        if !self.processes[p].serving() {
            return;
        }
        // The requests up to now are counted before those in flight are read.
        self.settle_routes();
        let now = self.now();
        let now_us = now.ms() as f64 * 1000.0;
        let service_us = self.service_us(p);
        let failed = if service_us > 0.0 {
            self.accepted_by_after(p, now_us - service_us).0
        } else {
            0
        };
        self.stop_serving(p);
        self.observe_in_flight_failed(p, failed);
    }

    /// `server.shutdown = graceful`: the graceful phase (`WebServerGracefulShutdownLifecycle`,
    /// the first SmartLifecycle phase to stop) closes the connectors at once, so new requests
    /// are refused, and waits for the active ones: Tomcat's `GracefulShutdown` checks every
    /// [`GRACEFUL_POLL_MS`] until none is active; `DefaultLifecycleProcessor` gives the phase
    /// `spring.lifecycle.timeout-per-shutdown-phase` and then moves on, and the web server's
    /// stop ends the requests still running (they fail). Returns how long the phase lasts, in
    /// ms: 0 with nothing in flight, so `service-time-ms = 0` leaves the timeline unchanged.
    pub(super) fn stop_serving_gracefully(&mut self, p: ProcessId) -> u64 {
        if !self.processes[p].serving() {
            return 0;
        }
        // The requests up to now are counted before those in flight are read.
        self.settle_routes();
        let now = self.now();
        let now_us = now.ms() as f64 * 1000.0;
        let service_us = self.service_us(p);
        let timeout_ms = self.processes[p]
            .client
            .config()
            .timeout_per_shutdown_phase_ms;
        let (in_flight, latest) = if service_us > 0.0 {
            self.accepted_by_after(p, now_us - service_us)
        } else {
            (0, None)
        };
        self.stop_serving(p);
        let Some(latest) = latest.filter(|_| in_flight > 0) else {
            return 0;
        };
        // The last in-flight request ends at latest + S; the check after it ends the phase.
        let remaining_ms = ((latest + service_us - now_us) / 1000.0).max(0.0);
        let phase_ms = (remaining_ms / GRACEFUL_POLL_MS as f64).ceil() as u64 * GRACEFUL_POLL_MS;
        if phase_ms <= timeout_ms {
            self.processes[p].graceful_phase = Some(GracefulPhase {
                ends_ms: now.ms() + phase_ms,
                timeout_cut_us: None,
            });
            return phase_ms;
        }
        // Still running at the timeout: arrived after now + timeout - S.
        let cut = now_us + timeout_ms as f64 * 1000.0 - service_us;
        let failed = self.accepted_by_after(p, cut).0;
        self.observe_in_flight_failed(p, failed);
        self.processes[p].graceful_phase = Some(GracefulPhase {
            ends_ms: now.ms() + timeout_ms,
            timeout_cut_us: Some(cut),
        });
        timeout_ms
    }

    /// A SIGKILL (Kubernetes' grace period ran out, e.g. after a long `preStop`) ends the JVM
    /// during its graceful phase: the requests still running fail at once, those that arrived
    /// after `now - S`, less those the phase's timeout had already failed.
    pub(super) fn cut_graceful_phase(&mut self, p: ProcessId) {
        let Some(phase) = self.processes[p].graceful_phase.take() else {
            return;
        };
        let now = self.now();
        if now.ms() >= phase.ends_ms {
            return;
        }
        let now_us = now.ms() as f64 * 1000.0;
        let running = self.accepted_by_after(p, now_us - self.service_us(p)).0;
        let counted = match phase.timeout_cut_us {
            Some(cut) => self.accepted_by_after(p, cut).0,
            None => 0,
        };
        self.observe_in_flight_failed(p, running.saturating_sub(counted));
    }
}
