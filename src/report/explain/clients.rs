//! The callers' Eureka clients in the story: their transport's failed attempts and backed-off
//! tasks, how each fetch went, and the fetch that brought the news to their cache, or lost the
//! instance to a restarted peer's partial registry (FACTS.md §4, §5, Netflix/eureka#1490).

use crate::engine::SimTime;
use crate::eureka::{ProcessId, ServerId};

use super::story::Story;
use super::{Explanation, FetchKind, register_source, secs, tell_transport};

impl Story<'_, '_> {
    /// Whether a transport line of `observer` is told: a caller of the app, at most six lines
    /// each (the rest are alike).
    pub(super) fn tells_transport_of(&mut self, observer: ProcessId) -> bool {
        self.told.calls_app(observer, self.config.app)
            && tell_transport(&mut self.transport_told, observer)
    }

    pub(super) fn task_timed_out(
        &mut self,
        t: SimTime,
        observer: ProcessId,
        task: impl std::fmt::Display,
        next_in_ms: u64,
    ) {
        let text = format!(
            "{}'s {task} outlasted its interval (its call still hangs): TimedSupervisorTask \
             backs off, the next run in {} s",
            self.told.name(observer),
            next_in_ms / 1000
        );
        self.push(t, text);
    }

    pub(super) fn fetch_of(&self, observer: ProcessId) -> FetchKind {
        self.fetches
            .iter()
            .find(|(o, _)| *o == observer)
            .map_or(FetchKind::Unknown, |(_, k)| k.clone())
    }

    pub(super) fn set_fetch(&mut self, observer: ProcessId, kind: FetchKind) {
        match self.fetches.iter_mut().find(|(o, _)| *o == observer) {
            Some(entry) => entry.1 = kind,
            None => self.fetches.push((observer, kind)),
        }
    }

    /// A fetch done: a delta, or a full one and why (after a reconcile mismatch or a 403).
    pub(super) fn fetched(&mut self, observer: ProcessId, delta: bool) {
        let kind = match (delta, self.fetch_of(observer)) {
            (true, _) => FetchKind::Delta,
            (false, FetchKind::ReconcilePending { local, server }) => {
                FetchKind::Reconciled { local, server }
            }
            (false, FetchKind::ForbiddenPending) => FetchKind::AfterForbidden,
            (false, _) => FetchKind::Full,
        };
        self.set_fetch(observer, kind);
    }

    /// Whether a caller's cache dropping the instance is a full fetch from a peer that came
    /// back empty and does not serve it again yet, while it still serves.
    pub(super) fn lost_to_a_partial_registry(&self, observer: ProcessId, server: ServerId) -> bool {
        self.callers.contains(&observer)
            && !self.stopped
            && self.fetch_of(observer) != FetchKind::Delta
            && self.served_back.get(server.index()) == Some(&None)
            && self
                .back_at
                .get(server.index())
                .is_some_and(Option::is_some)
    }

    pub(super) fn cache_lost_to_partial(
        &mut self,
        t: SimTime,
        observer: ProcessId,
        server: ServerId,
    ) {
        self.partial.push((observer, server));
        let k = server.index();
        let peer = Explanation::on(self.scenario, server);
        let back = self.back_at[k].map_or(String::new(), secs);
        let why = match self.got_back[k] {
            None => format!(
                "{peer} came back empty at {back} and had not got this instance's registration \
                 back (a restarted peer is refilled by the other peers' replicated heartbeats, \
                 answered 404 and followed by a register, and by each instance's own next \
                 heartbeat there)"
            ),
            Some((at, by)) => format!(
                "{peer} came back empty at {back}; it got this instance's registration back at {} \
                 ({}), but its read-only response cache still served the payload it took before \
                 that (a new one only at its next fill, a wall-clock multiple of its interval; \
                 FACTS.md §3)",
                secs(at),
                register_source(self.scenario, by)
            ),
        };
        let text = format!(
            "{}'s registry fetch from {peer} ({}) replaced its Eureka client cache with {peer}'s \
             partial registry: {why}; so the cache dropped it though it still serves, {} \
             instances of {} in all (Netflix/eureka#1490)",
            self.told.name(observer),
            self.fetch_of(observer).describe(),
            self.told.dropped_with(observer, self.target_app, t),
            self.scenario.apps[self.config.app].name
        );
        self.push(t, text);
    }

    pub(super) fn cache_listed_again(&mut self, t: SimTime, observer: ProcessId, server: ServerId) {
        let lost_to = self
            .partial
            .iter()
            .find(|(o, _)| *o == observer)
            .map(|(_, k)| *k)
            .unwrap_or(server);
        self.partial.retain(|(o, _)| *o != observer);
        let peer = Explanation::on(self.scenario, lost_to);
        let k = lost_to.index();
        let how = match (self.got_back[k], self.served_back[k]) {
            (Some((at, by)), Some(served)) => format!(
                ": {peer} got its registration back at {} ({}) and serves it since {}",
                secs(at),
                register_source(self.scenario, by),
                secs(served)
            ),
            _ => String::new(),
        };
        let text = format!(
            "{}'s registry fetch from {} ({}) listed it UP again{how}",
            self.told.name(observer),
            Explanation::on(self.scenario, server),
            self.fetch_of(observer).describe()
        );
        self.push(t, text);
    }

    /// The fetch that brought the news to a caller's Eureka client cache.
    pub(super) fn cache_news(&mut self, t: SimTime, observer: ProcessId, server: ServerId) {
        let from = if self.scenario.servers().len() > 1 {
            format!(" from {}", Explanation::on(self.scenario, server))
        } else {
            String::new()
        };
        let text = format!(
            "{}'s registry fetch{from} ({}) brought the news to its Eureka client cache",
            self.told.name(observer),
            self.fetch_of(observer).describe()
        );
        self.push(t, text);
    }
}
