//! `eureka-sim keys`.

use std::io::{self, Write};

use crate::scenario::key_catalogue;

pub(crate) fn print_keys(markdown: bool) -> anyhow::Result<()> {
    let mut stdout = io::stdout().lock();
    if markdown {
        writeln!(stdout, "| table | key | default | meaning |")?;
        writeln!(stdout, "|---|---|---|---|")?;
        for key in key_catalogue() {
            writeln!(
                stdout,
                "| `[{}]` | `{}` | {} | {} |",
                key.table,
                key.key,
                key.default,
                key.meaning.replace('|', "\\|")
            )?;
        }
        return Ok(());
    }
    let mut table = "";
    for key in key_catalogue() {
        if key.table != table {
            table = key.table;
            writeln!(stdout, "[{table}]")?;
        }
        writeln!(
            stdout,
            "  {} = {}    # {}",
            key.key, key.default, key.meaning
        )?;
    }
    Ok(())
}
