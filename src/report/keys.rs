//! `eureka-sim keys`: every scenario key with its default, as a listing or a Markdown table (the
//! one in README.md).

use std::fmt::Write as _;

use crate::scenario::key_catalogue;

/// The keys as `[table]` blocks of `key = default    # meaning`, or with `markdown` as a table.
pub fn render_keys(markdown: bool) -> String {
    let mut out = String::new();
    if markdown {
        let _ = writeln!(out, "| table | key | default | meaning |");
        let _ = writeln!(out, "|---|---|---|---|");
        for key in key_catalogue() {
            let _ = writeln!(
                out,
                "| `[{}]` | `{}` | {} | {} |",
                key.table,
                key.key,
                key.default,
                key.meaning.replace('|', "\\|")
            );
        }
        return out;
    }
    let mut table = "";
    for key in key_catalogue() {
        if key.table != table {
            table = key.table;
            let _ = writeln!(out, "[{table}]");
        }
        let _ = writeln!(out, "  {} = {}    # {}", key.key, key.default, key.meaning);
    }
    out
}
