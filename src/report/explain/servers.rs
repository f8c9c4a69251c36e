//! The servers in the story: a peer that goes down and comes back empty, the registry that
//! stops listing the instance UP, and the response cache that serves the news (FACTS.md §3,
//! §10).

use crate::engine::SimTime;
use crate::eureka::ServerId;

use super::story::Story;
use super::{Explanation, server_down_text};

impl Story<'_, '_> {
    pub(super) fn server_down(&mut self, t: SimTime, server: ServerId) {
        if let Some(slot) = self.down_since.get_mut(server.index()) {
            *slot = Some(t);
        }
        let text = server_down_text(self.scenario, self.config, server, t);
        self.push(t, text);
    }

    pub(super) fn server_started(&mut self, t: SimTime, server: ServerId) {
        self.down_since[server.index()] = None;
        self.back_at[server.index()] = Some(t);
        let text = format!(
            "{} is back: a new incarnation with an empty registry and empty caches \
             (registry-sync-retries 0: no sync, open at once), refilled by the other peers' \
             replicated heartbeats (answered 404, then a register) and by each client's own next \
             heartbeat (404, then a register); its eviction and cache timers start over",
            Explanation::on(self.scenario, server)
        );
        self.push(t, text);
    }

    pub(super) fn registry(&mut self, t: SimTime, server: ServerId, up: bool, restarted: bool) {
        let text = match (up, restarted) {
            (true, true) => "the restarted process is UP in the server's registry",
            (true, false) => "UP again in the server's registry",
            (false, _) => "no longer UP in the server's registry",
        };
        let whose = format!("{}'s", Explanation::on(self.scenario, server));
        self.push(t, text.replace("the server's", &whose));
    }

    /// What a server serves stopped listing the instance UP: its response cache's refresh, or
    /// at once without the read-only cache.
    pub(super) fn served_without(&mut self, t: SimTime, server: ServerId) {
        let scenario = self.scenario;
        let read_only = scenario
            .servers()
            .get(server.index())
            .map_or(scenario.server.use_read_only_response_cache, |peer| {
                peer.server.use_read_only_response_cache
            });
        let text = if read_only && !self.told.refreshed_at(server, t) {
            // No `ALL_APPS` payload at this fill: only its delta was read since it (re)started
            // (`EurekaServer::note_served_by_delta`).
            "read-only response cache refresh (a wall-clock multiple of its interval): GET \
             /apps/delta now brings its readers the registry without it (GET /apps has not been \
             read since the server started)"
        } else if read_only {
            "read-only response cache refresh (a wall-clock multiple of its interval): GET /apps \
             now serves it as not UP"
        } else {
            "GET /apps serves it as not UP (read-only cache off)"
        };
        let peer = Explanation::at_peer(scenario, server);
        self.push(t, format!("{peer}{text}"));
    }
}
