//! The front page and `docs/`: README.md stays a front page (under 300 lines, its quick start and
//! test command, the real-stack section with the place of its table), every relative link in it
//! and in `docs/` resolves inside the repository (the file, and the heading an anchor names), no
//! link leaves the repository except to a public URL, and no text cites an issue number of the
//! project's own tracker, which a reader cannot open.

use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::repo;

/// README.md, README.zh-CN.md and every Markdown file under docs/.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![repo().join("README.md"), repo().join("README.zh-CN.md")];
    walk(&repo().join("docs"), &mut out);
    out.sort();
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The headings of a Markdown text, outside fenced code.
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(anchor(line));
        }
    }
    out
}

/// The link targets `[text](target)` of a Markdown text, outside fenced code.
fn links(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let end = tail.find(')').unwrap_or(tail.len());
            out.push(tail[..end].to_string());
            rest = &tail[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_resolves_inside_the_repository() {
    let root = fs::canonicalize(repo()).unwrap();
    let mut checked = 0;
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        for target in links(&text) {
            if target.starts_with("https://") || target.starts_with("http://") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let resolved = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            let found = fs::canonicalize(&resolved)
                .unwrap_or_else(|_| panic!("{}: `{target}` does not exist", page.display()));
            assert!(
                found.starts_with(&root),
                "{}: `{target}` leaves the repository",
                page.display()
            );
            if !fragment.is_empty() {
                let heads = anchors(&fs::read_to_string(&found).unwrap());
                assert!(
                    heads.iter().any(|h| h == fragment),
                    "{}: `{target}`: no heading with that anchor",
                    page.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} links checked");
}

#[test]
fn the_front_page_is_short_and_keeps_its_promises() {
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines < 300, "README.md has {lines} lines");
    for part in [
        "cargo run --release -- run scenarios/kill-9.toml",
        "```sh\ncargo test\n```",
        "## Checked against the real stack",
        "<!-- matrix table: conformance/results/matrix.md -->",
    ] {
        assert!(readme.contains(part), "README.md lacks {part:?}");
    }
    // `.ci/run` runs the README's test command.
    let ci = fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(ci.contains("cargo test --locked"), "{ci}");
}

#[test]
fn no_page_points_outside_or_cites_the_projects_issue_numbers() {
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        assert!(
            !text.contains("../shared"),
            "{}: points into ../shared",
            page.display()
        );
        assert_cites_no_issue_number(&page, &text);
    }
}

/// The code says which rule, finding or incident a line stands for, never the project's issue
/// number: src/, tests/, scenarios/, scripts/, bench/, fuzz/, the rig's own files (not its
/// recorded results and logs), Cargo.toml and .ci/.
#[test]
fn no_code_cites_the_projects_issue_numbers() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if !["target", "results", "cells", "node_modules"].contains(&name.as_str()) {
                    walk(&path, out);
                }
            } else if [
                ".rs",
                ".toml",
                ".py",
                ".sh",
                ".md",
                ".yml",
                ".yaml",
                ".properties",
            ]
            .iter()
            .any(|e| name.ends_with(e))
                || name == "run"
            {
                out.push(path);
            }
        }
    }
    let mut files = vec![repo().join("Cargo.toml")];
    for dir in [
        "src",
        "tests",
        "scenarios",
        "scripts",
        "bench",
        "fuzz",
        "conformance",
        ".ci",
    ] {
        walk(&repo().join(dir), &mut files);
    }
    assert!(files.len() > 100, "{} files", files.len());
    for file in files {
        let text = fs::read_to_string(&file).unwrap_or_default();
        assert_cites_no_issue_number(&file, &text);
    }
}

/// Fails naming the line of `text` that cites an issue number of the project's own tracker
/// (the word "issue" or "issues" and then a number). Another project's issue, named by its
/// repository ("spring-cloud-netflix issues 2541"), is a public reference a reader can follow.
fn assert_cites_no_issue_number(file: &Path, text: &str) {
    for (i, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        for word in ["issue ", "issues "] {
            let mut rest = lower.as_str();
            while let Some(at) = rest.find(word) {
                let before = rest[..at].trim_end();
                let project = before
                    .rsplit(' ')
                    .next()
                    .is_some_and(|w| w.contains('/') || w.contains('-') || w.ends_with("eureka"));
                let after = &rest[at + word.len()..];
                assert!(
                    project || !after.starts_with(|c: char| c.is_ascii_digit()),
                    "{}:{}: cites an issue number: {line}",
                    file.display(),
                    i + 1
                );
                rest = after;
            }
        }
    }
}
