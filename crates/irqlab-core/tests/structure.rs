//! The core's shape, checked from its sources: no import cycle among its top-level modules,
//! and no function longer than [`MAX_FUNCTION_LINES`].
//!
//! A top-level module is a file or folder directly under `src/` (`scenario.rs`, `moderation/`);
//! module `a` uses module `b` when a file of `a` names `crate::b` (in a `use` or a path; a
//! name `lib.rs` re-exports counts as the module it comes from). Comments, strings and
//! `#[cfg(test)]` items are left out: a test may build a whole scenario from any part.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The longest function allowed, in lines from its `fn` to its closing brace.
const MAX_FUNCTION_LINES: usize = 150;

/// Import cycles known and accepted for now, each as its modules in order. To be emptied:
/// none is left.
const ALLOWED_CYCLES: &[&[&str]] = &[];

/// Functions known to be longer (file under `src/`, function name), to be split: none is
/// left.
const ALLOWED_LONG_FUNCTIONS: &[(&str, &str)] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to (`None` for `lib.rs`).
fn top_module(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    if first == "lib.rs" {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_string())
}

/// The code of a Rust source with its comments, string and character literals blanked out
/// (each character replaced by a space, newlines kept, so that lines and braces stay right).
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out: Vec<char> = c.clone();
    let mut blank = |from: usize, to: usize| {
        for ch in &mut out[from..to.min(c.len())] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    let mut i = 0;
    while i < c.len() {
        let end = if at(i) == '/' && at(i + 1) == '/' {
            (i..c.len()).find(|&j| c[j] == '\n').unwrap_or(c.len())
        } else if at(i) == '/' && at(i + 1) == '*' {
            block_comment_end(&c, i)
        } else if at(i) == 'r'
            && (at(i + 1) == '"' || at(i + 1) == '#')
            && !(i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_'))
        {
            raw_string_end(&c, i).unwrap_or(i + 1)
        } else if at(i) == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            j + 1
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // a character literal ('x', '\n', '\u{…}'), not a lifetime ('a)
            let mut j = i + 2;
            while j < c.len() && c[j] != '\'' {
                j += 1;
            }
            j + 1
        } else {
            i + 1
        };
        if end > i + 1 || at(i) == '"' {
            blank(i, end);
        }
        i = end;
    }
    out.into_iter().collect()
}

/// The index just past the (nested) block comment that starts at `from`.
fn block_comment_end(c: &[char], from: usize) -> usize {
    let mut depth = 0;
    let mut i = from;
    while i + 1 < c.len() {
        if c[i] == '/' && c[i + 1] == '*' {
            depth += 1;
            i += 2;
        } else if c[i] == '*' && c[i + 1] == '/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    c.len()
}

/// The index just past the raw string (`r"…"`, `r#"…"#`) that starts at `from`, if one does.
fn raw_string_end(c: &[char], from: usize) -> Option<usize> {
    let mut j = from + 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if c.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < c.len() {
        if c[j] == '"' && (0..hashes).all(|h| c.get(j + 1 + h) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(c.len())
}

/// The index just past the item that starts at `from` (its closing brace, or its `;`).
fn item_end(code: &[u8], from: usize) -> usize {
    let mut depth = 0usize;
    let mut i = from;
    while i < code.len() {
        match code[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    code.len()
}

/// `code` without the items marked `#[cfg(test)]`.
fn without_tests(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let end = item_end(out.as_bytes(), at + "#[cfg(test)]".len());
        let blanked: String = out[at..end]
            .chars()
            .map(|ch| if ch == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..end, &blanked);
    }
    out
}

/// The first segments of the paths that follow `crate::` in `code`, with `use crate::{…}`
/// groups opened.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest_trimmed = rest.trim_start();
        if let Some(group) = rest_trimmed.strip_prefix('{') {
            // the names at depth 0 of the group: `a`, `b::c`, `d::{e, f}`
            let mut depth = 0;
            let mut name = String::new();
            let mut expect_name = true;
            for ch in group.chars() {
                let word = ch.is_alphanumeric() || ch == '_';
                if depth == 0 && expect_name && word {
                    name.push(ch);
                    continue;
                }
                if !name.is_empty() {
                    out.insert(std::mem::take(&mut name));
                    expect_name = false;
                }
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => expect_name = true,
                    _ => {}
                }
            }
        } else {
            let name: String = rest_trimmed
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
        }
    }
    out
}

/// What the crate root re-exports, by name: the module each comes from (`Scenario` →
/// `scenario`).
fn root_reexports() -> BTreeMap<String, String> {
    let code = code_only(&fs::read_to_string(src().join("lib.rs")).unwrap());
    let mut out = BTreeMap::new();
    for stmt in code.split(';') {
        let Some(path) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = path.split_once("::") else {
            continue;
        };
        let names = names.trim().trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',') {
            let name = name.split("::").last().unwrap().trim();
            let name = name.rsplit(" as ").next().unwrap().trim();
            if !name.is_empty() {
                out.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    out
}

/// Which top-level modules each top-level module uses (test code left out).
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(f)).collect();
    let reexports = root_reexports();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(from) = top_module(file) else {
            continue;
        };
        let code = without_tests(&code_only(&fs::read_to_string(file).unwrap()));
        let uses = graph.entry(from.clone()).or_default();
        for name in crate_paths(&code) {
            let to = if modules.contains(&name) {
                name
            } else if let Some(m) = reexports.get(&name) {
                m.clone()
            } else {
                continue; // a function of the crate root (`crate::run`)
            };
            if to != from {
                uses.insert(to);
            }
        }
    }
    graph
}

/// A cycle through `start`, if any: the modules in order, `start` first.
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut path = vec![start.to_string()];
    let mut seen = BTreeSet::new();
    fn walk(
        graph: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        let last = path.last().unwrap().clone();
        for next in graph.get(&last).into_iter().flatten() {
            if next == start {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    walk(graph, start, &mut path, &mut seen).then_some(path)
}

/// A cycle in its canonical form: rotated to start at its smallest module.
fn canonical(cycle: &[String]) -> Vec<String> {
    let at = (0..cycle.len()).min_by_key(|&i| &cycle[i]).unwrap();
    cycle[at..].iter().chain(&cycle[..at]).cloned().collect()
}

#[test]
fn no_top_level_module_imports_a_module_that_imports_it_back() {
    let graph = module_graph();
    assert!(
        graph.contains_key("scenario") && graph["scenario"].contains("moderation"),
        "the graph is read: scenario uses moderation"
    );
    let allowed: BTreeSet<Vec<String>> = ALLOWED_CYCLES
        .iter()
        .map(|c| canonical(&c.iter().map(|m| m.to_string()).collect::<Vec<_>>()))
        .collect();
    let mut cycles = BTreeSet::new();
    for m in graph.keys() {
        if let Some(c) = cycle_from(&graph, m) {
            cycles.insert(canonical(&c));
        }
    }
    let new: Vec<String> = cycles
        .iter()
        .filter(|c| !allowed.contains(*c))
        .map(|c| format!("{} -> {}", c.join(" -> "), c[0]))
        .collect();
    assert!(new.is_empty(), "import cycles:\n{}", new.join("\n"));
    let gone: Vec<&Vec<String>> = allowed.iter().filter(|c| !cycles.contains(*c)).collect();
    assert!(
        gone.is_empty(),
        "cycles allowed but gone: take them off ALLOWED_CYCLES: {gone:?}"
    );
}

/// Every function of the sources: (file under `src/`, name, its length in lines).
fn functions() -> Vec<(String, String, usize)> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut out = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let code = code_only(&fs::read_to_string(&file).unwrap());
        let bytes = code.as_bytes();
        let mut from = 0;
        while let Some(at) = code[from..].find("fn ") {
            let at = from + at;
            from = at + 3;
            let word_start =
                at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
            if !word_start {
                continue;
            }
            let name: String = code[at + 3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() {
                continue; // `fn(…)`, a function pointer type
            }
            let end = item_end(bytes, at);
            let lines = code[at..end].matches('\n').count() + 1;
            out.push((rel.clone(), name, lines));
        }
    }
    out
}

#[test]
fn no_function_is_longer_than_150_lines() {
    let all = functions();
    assert!(
        all.iter()
            .any(|(f, n, _)| f == "scenario.rs" && n == "build"),
        "the functions are read"
    );
    let long: Vec<String> = all
        .iter()
        .filter(|(f, n, len)| {
            *len > MAX_FUNCTION_LINES && !ALLOWED_LONG_FUNCTIONS.contains(&(f.as_str(), n.as_str()))
        })
        .map(|(f, n, len)| format!("{f}: {n} ({len} lines)"))
        .collect();
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines:\n{}",
        long.join("\n")
    );
    let gone: Vec<&(&str, &str)> = ALLOWED_LONG_FUNCTIONS
        .iter()
        .filter(|(f, n)| {
            !all.iter()
                .any(|(g, m, len)| g == f && m == n && *len > MAX_FUNCTION_LINES)
        })
        .collect();
    assert!(
        gone.is_empty(),
        "functions allowed to be long but now short: take them off ALLOWED_LONG_FUNCTIONS: {gone:?}"
    );
}

#[test]
fn the_reading_of_sources_sees_through_comments_strings_and_tests() {
    let code = code_only(
        "// crate::a\nuse crate::{b, c::d, e::{f, g}};\nlet s = \"crate::h\"; let c = '{';\nfn x<'a>(y: &'a str) { crate::i::j(r#\"crate::k\"#) }\n#[cfg(test)]\nmod tests { use crate::l; }\n",
    );
    let paths = crate_paths(&without_tests(&code));
    assert_eq!(
        paths,
        ["b", "c", "e", "i"].iter().map(|s| s.to_string()).collect()
    );
    assert_eq!(
        item_end(code.as_bytes(), code.find("fn x").unwrap()),
        code.find("}\n#[cfg").unwrap() + 1
    );
}
