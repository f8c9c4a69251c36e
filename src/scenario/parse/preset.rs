//! `simulation.preset = "NAME"`: the preset's settings ([`crate::scenario::presets`]) are put
//! at the very front of their tables, under the `spring-config` files' entries and the tables'
//! own keys, which override them.

use crate::scenario::error::Place;
use crate::scenario::keys::{Raw, Section, path_is};
use crate::scenario::presets::{PresetTable, preset};

use super::raw::{Entry, RawScenario, RawTable, literal};

/// Applies the preset `[simulation] preset` names, if it names one (an unknown name is
/// reported when the key is bound).
pub(super) fn apply(raw: &mut RawScenario) {
    let Some(simulation) = raw
        .singles
        .iter()
        .find(|t| t.section == Section::Simulation)
    else {
        return;
    };
    let named = simulation
        .entries
        .iter()
        .rev()
        .find_map(|e| match &e.value {
            Raw::Str(name) if path_is(&e.path, "preset") => Some(name.clone()),
            _ => None,
        });
    let Some(preset) = named.as_deref().and_then(preset) else {
        return;
    };
    for &(table, key, value) in preset.settings.iter().rev() {
        let put = |t: &mut RawTable| {
            let entry = Entry {
                path: key.split('.').map(str::to_string).collect(),
                prefix: format!("{}.", t.label),
                value: literal(value),
                literal: Some(value.to_string()),
                key_at: Place::Preset(preset.name.to_string()),
                value_at: Place::Preset(preset.name.to_string()),
                refusal: None,
            };
            t.entries.insert(0, entry);
        };
        match table {
            PresetTable::Server => raw
                .singles
                .iter_mut()
                .filter(|t| t.section == Section::Server)
                .for_each(put),
            PresetTable::Clients => raw
                .singles
                .iter_mut()
                .filter(|t| t.section == Section::Clients)
                .for_each(put),
            PresetTable::Callers => raw.callers.iter_mut().for_each(put),
        }
    }
}
