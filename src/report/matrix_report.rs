//! Renderers of the conformance matrix (`experiment::matrix`): `matrix.csv` (one row per cell)
//! and the terminal table.

use crate::experiment::matrix::{CellFigures, MATRIX_HEADER, MatrixCell, matrix_row};

use super::describe::text_table;

/// `matrix.csv`: the header, then one row per cell in matrix.toml's order.
pub fn matrix_csv(rows: &[(MatrixCell, Option<CellFigures>)]) -> csv::Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(MATRIX_HEADER)?;
    for (cell, figures) in rows {
        writer.write_record(matrix_row(cell, figures.as_ref()))?;
    }
    let bytes = writer.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes).expect("matrix rows are UTF-8"))
}

/// The terminal table: per cell, the two means, the interval of their difference, KS p on
/// exposure and dead hits, and the verdict.
pub fn render_matrix(rows: &[(MatrixCell, Option<CellFigures>)]) -> String {
    let header = [
        "cell",
        "n real",
        "real mean",
        "sim mean",
        "diff (95 % bootstrap)",
        "detectable",
        "KS p exposure",
        "KS p dead hits",
        "verdict",
    ]
    .map(String::from)
    .to_vec();
    let s = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.2}s"));
    let body = rows
        .iter()
        .map(|(cell, f)| match f {
            Some(f) if f.n_real == 0 => vec![
                cell.name.clone(),
                format!("0 (+{} loaded)", f.n_loaded),
                "-".into(),
                s(f.sim_mean_s),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                f.verdict.name().to_string(),
            ],
            None => vec![
                cell.name.clone(),
                "0".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "pending".into(),
            ],
            Some(f) => vec![
                cell.name.clone(),
                if f.n_loaded > 0 {
                    format!("{} (+{} loaded)", f.n_real, f.n_loaded)
                } else {
                    f.n_real.to_string()
                },
                s(f.real_mean_s),
                s(f.sim_mean_s),
                match (f.mean_diff_s, f.mean_diff_ci_s) {
                    (Some(d), Some((lo, hi))) => format!("{d:+.2}s ({lo:+.2} .. {hi:+.2})"),
                    _ => "-".into(),
                },
                s(f.mdd_s),
                format!("{:.3}", f.ks_p),
                format!("{:.3}", f.dead_hits_ks_p),
                f.verdict.name().to_string(),
            ],
        })
        .collect::<Vec<_>>();
    text_table(&header, &body, 1)
}

/// The README's table of the matrix (Markdown): per cell its configuration, the quiet real
/// trials, both mean exposures (last dead hit), their difference with its interval, the KS p
/// on exposure and the verdict. Written beside matrix.csv as matrix.md.
pub fn matrix_markdown(rows: &[(MatrixCell, Option<CellFigures>)]) -> String {
    let mut out = String::from(
        "| cell | train | servers | caller | strategy | fault | n real | real mean | sim mean | difference (95 %) | KS p | verdict |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let s = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.2} s"));
    for (cell, f) in rows {
        let servers = if cell.self_preservation {
            format!("{} (self-preservation)", cell.servers)
        } else {
            cell.servers.to_string()
        };
        let (n, real, sim, diff, p, verdict) = match f {
            Some(f) if f.n_real > 0 => (
                f.n_real.to_string(),
                s(f.real_mean_s),
                s(f.sim_mean_s),
                match (f.mean_diff_s, f.mean_diff_ci_s) {
                    (Some(d), Some((lo, hi))) => format!("{d:+.2} s ({lo:+.2} .. {hi:+.2})"),
                    _ => "-".to_string(),
                },
                format!("{:.3}", f.ks_p),
                f.verdict.name(),
            ),
            _ => (
                "0".to_string(),
                "-".to_string(),
                "-".to_string(),
                "-".to_string(),
                "-".to_string(),
                "pending",
            ),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {n} | {real} | {sim} | {diff} | {p} | {verdict} |\n",
            cell.name, cell.train, servers, cell.caller, cell.strategy, cell.fault
        ));
    }
    out
}
