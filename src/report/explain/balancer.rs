//! The balancers in the story: the refresh of a route's server list that drops the instance,
//! or lists it again after a partial registry (FACTS.md §8, §9).

use crate::engine::SimTime;

use super::story::Story;
use super::{Explanation, balancer_step};

impl Story<'_, '_> {
    pub(super) fn balancer_list(&mut self, t: SimTime, route: usize, listed: bool) {
        let r = self.told.layout.routes.get(route);
        let step = balancer_step(self.scenario, r.map(|r| r.caller));
        let name = self.told.route_name(self.scenario, route);
        let lost_to = r.and_then(|r| {
            self.partial
                .iter()
                .find(|(o, _)| *o == r.process)
                .map(|(_, k)| *k)
        });
        let text = match (listed, lost_to) {
            (true, _) => {
                self.partial_routes.retain(|x| *x != route);
                format!("{step} of {name} listed it again")
            }
            (false, Some(k)) => {
                self.partial_routes.push(route);
                format!(
                    "{step} of {name} dropped it from the server list (its caller's cache lost \
                     it to {}'s partial registry)",
                    Explanation::on(self.scenario, k)
                )
            }
            (false, None) => format!("{step} of {name} dropped it from the server list"),
        };
        self.push(t, text);
    }
}
