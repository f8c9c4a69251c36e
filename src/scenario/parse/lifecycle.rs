//! `[[restart]]` and `[[deploy]]` tables, and the `[[shutdown]]` keys that bring a process back
//! (`resume-s`) or keep it running (`then = "keep-running"`, `cancel-override`).

use super::super::error::ScenarioError;
use super::super::keys::{Apply, DeployDraft, RestartDraft, ShutdownDraft, closest};
use super::super::model::{
    AppConfig, DeployConfig, FinalStop, RestartConfig, RestartWhen, ShutdownConfig,
    SimulationConfig, Strategy,
};
use super::resolve::Resolved;
use super::{Builder, find_instance};

impl Builder<'_> {
    /// Warnings for `[[shutdown]]` keys that do nothing with the chosen strategy.
    pub(super) fn warn_lifecycle_keys(&mut self, table: &Resolved, draft: &ShutdownDraft) {
        let strategy = draft.strategy.name();
        if draft.strategy != Strategy::Pause
            && let Some(s) = table.get("resume-s")
        {
            let text = format!(
                "`{}` has no effect with strategy {strategy}: only pause can be resumed",
                s.display
            );
            self.warn(&s.key_at, text);
        }
        if draft.strategy != Strategy::ServiceRegistry
            && let Some(s) = table.get("cancel-override")
        {
            let text = format!(
                "`{}` has no effect with strategy {strategy}: only service-registry sets an \
                 override",
                s.display
            );
            self.warn(&s.key_at, text);
        }
        if draft.strategy == Strategy::Pause && draft.resume_ms.is_some() {
            for key in ["wait-s", "then"] {
                if let Some(s) = table.get(key) {
                    let text = format!(
                        "`{}` has no effect with resume-s: a resumed process keeps running",
                        s.display
                    );
                    self.warn(&s.key_at, text);
                }
            }
        }
    }

    /// A `[[restart]]`, `[[deploy]]` or `[[fault]]` `at-s` must fall before the end of the
    /// trial (`simulation.duration-s`).
    pub(super) fn at_before_end(
        &mut self,
        table: &Resolved,
        at_ms: u64,
        simulation: &SimulationConfig,
    ) -> Result<(), ScenarioError> {
        if at_ms < simulation.duration_ms {
            return Ok(());
        }
        let duration_s = simulation.duration_ms / 1000;
        Err(self.invalid(
            table,
            "at-s",
            format!(
                "at-s {} is not before the end of the trial (simulation.duration-s = \
                 {duration_s})",
                at_ms / 1000
            ),
            format!("0..{duration_s}"),
        ))
    }

    /// One `[[restart]]`: the instance exists, exactly one of `at-s` / `down-s` is given, `down-s`
    /// has a `[[shutdown]]` to count from, and the restart falls within the trial.
    pub(super) fn restart(
        &mut self,
        table: &Resolved,
        apps: &[AppConfig],
        shutdowns: &[ShutdownConfig],
        simulation: &SimulationConfig,
    ) -> Result<RestartConfig, ScenarioError> {
        self.require(table)?;
        let mut draft = RestartDraft::default();
        for s in &table.settings {
            if let Apply::Restart(f) = s.def.apply {
                f(&mut draft, &s.val);
            }
        }
        let (app, index) = find_instance(&draft.instance, apps)
            .map_err(|(problem, allowed)| self.invalid(table, "instance", problem, allowed))?;
        let when = match (draft.at_ms, draft.down_ms) {
            (Some(at), None) => RestartWhen::At(at),
            (None, Some(down)) => RestartWhen::AfterExit(down),
            (None, None) => {
                return Err(self.invalid(
                    table,
                    "at-s",
                    "the restart has neither at-s nor down-s".to_string(),
                    "at-s (seconds from the start of the trial) or down-s (seconds after the \
                     previous process exited)"
                        .to_string(),
                ));
            }
            (Some(_), Some(_)) => {
                return Err(self.invalid(
                    table,
                    "down-s",
                    "the restart has both at-s and down-s".to_string(),
                    "one of at-s and down-s".to_string(),
                ));
            }
        };
        if let RestartWhen::At(at) = when {
            self.at_before_end(table, at, simulation)?;
        }
        match when {
            RestartWhen::AfterExit(_)
                if !shutdowns.iter().any(|s| s.instance == draft.instance) =>
            {
                return Err(self.invalid(
                    table,
                    "down-s",
                    format!(
                        "down-s counts from the exit of `{}`'s process, but no [[shutdown]] \
                         stops it",
                        draft.instance
                    ),
                    format!(
                        "at-s, or a [[shutdown]] with instance = \"{}\"",
                        draft.instance
                    ),
                ));
            }
            _ => {}
        }
        if let Some(s) = shutdowns.iter().find(|s| s.instance == draft.instance)
            && (s.resume_ms.is_some() || s.strategy.waits() && s.then == FinalStop::KeepRunning)
        {
            let text = format!(
                "`{}`'s [[shutdown]] keeps the process running, so there is no exit for \
                 down-s to count from; at-s kills it first",
                draft.instance
            );
            self.warn(&table.place_of("instance"), text);
        }
        Ok(RestartConfig {
            instance: draft.instance,
            app,
            index,
            when,
            new_instance_id: draft.new_instance_id,
        })
    }

    /// One `[[deploy]]`: a known app, a start within the trial, and old processes that stop.
    pub(super) fn deploy(
        &mut self,
        table: &Resolved,
        apps: &[AppConfig],
        simulation: &SimulationConfig,
    ) -> Result<DeployConfig, ScenarioError> {
        self.require(table)?;
        let mut draft = DeployDraft::default();
        for s in &table.settings {
            if let Apply::Deploy(f) = s.def.apply {
                f(&mut draft, &s.val);
            }
        }
        let names: Vec<&str> = apps.iter().map(|a| a.name.as_str()).collect();
        let Some(app) = apps.iter().position(|a| a.name == draft.app) else {
            let hint = closest(&draft.app, names.iter().copied())
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            return Err(self.invalid(
                table,
                "app",
                format!("`{}` is not an [[app]]{hint}", draft.app),
                names.join(", "),
            ));
        };
        self.at_before_end(table, draft.at_ms, simulation)?;
        let waits = draft.strategy.waits();
        if waits && draft.then == FinalStop::KeepRunning {
            return Err(self.invalid(
                table,
                "then",
                "a deploy replaces its old processes, so they must stop".to_string(),
                "kill-15, kill-9".to_string(),
            ));
        }
        let instances = apps[app].instances;
        if draft.batch_size > instances {
            let text = format!(
                "batch-size {} is more than the {instances} instance(s) of `{}`: one batch \
                 replaces them all",
                draft.batch_size, draft.app
            );
            self.warn(&table.place_of("batch-size"), text);
        }
        Ok(DeployConfig {
            app,
            at_ms: draft.at_ms,
            strategy: draft.strategy,
            wait_ms: draft.wait_ms,
            then: draft.then,
            startup_ms: draft.startup_ms,
            batch_size: draft.batch_size.min(instances.max(1)),
            interval_ms: draft.interval_ms,
        })
    }

    /// Lifecycle rules across tables: one restart per instance, and an instance of a deployed
    /// app has no `[[shutdown]]` or `[[restart]]` of its own (the deploy owns its processes).
    pub(super) fn check_lifecycle(
        &self,
        tables: &[&Resolved],
        restarts: &[RestartConfig],
        deploys: &[DeployConfig],
        shutdowns: &[ShutdownConfig],
        apps: &[AppConfig],
    ) -> Result<(), ScenarioError> {
        let restart_tables: Vec<&&Resolved> = tables
            .iter()
            .filter(|t| t.section == super::super::keys::Section::Restart)
            .collect();
        for (i, r) in restarts.iter().enumerate() {
            if let Some(j) = restarts[..i].iter().position(|o| o.instance == r.instance) {
                return Err(self.invalid(
                    restart_tables[i],
                    "instance",
                    format!("`{}` already restarts in restart[{j}]", r.instance),
                    "one [[restart]] per instance".to_string(),
                ));
            }
        }
        let deploy_tables: Vec<&&Resolved> = tables
            .iter()
            .filter(|t| t.section == super::super::keys::Section::Deploy)
            .collect();
        for (i, d) in deploys.iter().enumerate() {
            let name = &apps[d.app].name;
            if let Some(j) = deploys[..i].iter().position(|o| o.app == d.app) {
                return Err(self.invalid(
                    deploy_tables[i],
                    "app",
                    format!("`{name}` is already deployed in deploy[{j}]"),
                    "one [[deploy]] per app".to_string(),
                ));
            }
            let owned = shutdowns
                .iter()
                .map(|s| (s.app, &s.instance, "[[shutdown]]"))
                .chain(restarts.iter().map(|r| (r.app, &r.instance, "[[restart]]")));
            for (app, instance, what) in owned {
                if app == d.app {
                    return Err(self.invalid(
                        deploy_tables[i],
                        "app",
                        format!(
                            "`{name}` is deployed, but a {what} also acts on its instance \
                             `{instance}`"
                        ),
                        "a [[deploy]] of an app, or [[shutdown]]/[[restart]] tables for its \
                         instances, not both"
                            .to_string(),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::fixture::SVC_AND_GW;
    use crate::scenario::parse_str;

    fn error(extra: &str) -> String {
        match parse_str(&format!("\n{SVC_AND_GW}{extra}"), "s.toml", "s", &[]) {
            Ok(_) => panic!("accepted: {extra}"),
            Err(e) => e.to_string(),
        }
    }

    fn ok(extra: &str) -> crate::scenario::Scenario {
        match parse_str(&format!("\n{SVC_AND_GW}{extra}"), "s.toml", "s", &[]) {
            Ok(s) => s,
            Err(e) => panic!("rejected: {e}"),
        }
    }

    #[test]
    fn restart_of_an_unknown_instance_names_the_ids() {
        let e = error("[[restart]]\ninstance = \"svc-7\"\nat-s = 300\n");
        assert!(e.contains("s.toml") && e.contains("instance"), "{e}");
        assert!(e.contains("svc-0, svc-1, svc-2"), "{e}");
    }

    #[test]
    fn restart_needs_exactly_one_of_at_and_down() {
        let e = error("[[restart]]\ninstance = \"svc-0\"\n");
        assert!(e.contains("neither at-s nor down-s"), "{e}");
        let e = error("[[restart]]\ninstance = \"svc-0\"\nat-s = 1\ndown-s = 1\n");
        assert!(e.contains("both at-s and down-s"), "{e}");
        let e = error("[[restart]]\ninstance = \"svc-0\"\ndown-s = 1\n");
        assert!(e.contains("no [[shutdown]] stops it"), "{e}");
    }

    #[test]
    fn deploy_of_an_unknown_app_suggests_one() {
        let e = error("[[deploy]]\napp = \"svx\"\nat-s = 300\nstrategy = \"kill-15\"\n");
        assert!(
            e.contains("`svx` is not an [[app]]; did you mean `svc`?"),
            "{e}"
        );
    }

    #[test]
    fn deploy_batch_size_zero_is_refused() {
        let e = error(
            "[[deploy]]\napp = \"svc\"\nat-s = 300\nstrategy = \"kill-15\"\nbatch-size = 0\n",
        );
        assert!(e.contains("batch-size") && e.contains("1..="), "{e}");
    }

    #[test]
    fn deploy_owns_its_instances() {
        let e = error(
            "[[deploy]]\napp = \"svc\"\nat-s = 300\nstrategy = \"kill-15\"\n\
             [[shutdown]]\ninstance = \"svc-1\"\nat-s = 200\nstrategy = \"kill-9\"\n",
        );
        assert!(e.contains("also acts on its instance `svc-1`"), "{e}");
    }

    #[test]
    fn lifecycle_keys_parse() {
        let s = ok(
            "[[shutdown]]\ninstance = \"svc-0\"\nat-s = 300\nstrategy = \"pause\"\n\
                    resume-s = 30\n[[restart]]\ninstance = \"svc-1\"\nat-s = 400\n\
                    new-instance-id = true\n",
        );
        assert_eq!(s.shutdowns[0].resume_ms, Some(30_000));
        assert!(s.restarts[0].new_instance_id);
        let s = ok(
            "[[deploy]]\napp = \"svc\"\nat-s = 300\nstrategy = \"kill-15\"\n\
                    batch-size = 9\n",
        );
        assert_eq!(s.deploys[0].batch_size, 3);
        assert!(s.warnings.iter().any(|w| w.contains("batch-size 9")));
    }
}
