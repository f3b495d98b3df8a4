//! The layering of docs/architecture.md, checked from the sources of every crate (`src/`
//! and each `crates/*/src/`): every top-level module imports (through `crate::<module>`
//! paths) only modules below it in the documented order, so there are no import circles
//! between them; files within a folder do not import each other in a circle; and the
//! engine crate depends on none of the file, format, plot or CLI crates.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers of docs/architecture.md, lowest first; a module may use any module in its
/// own layer's predecessors (and itself), none after it. Keep in step with the document.
const LAYERS: &[&[&str]] = &[
    &["time", "model"],
    &["engine"],
    &["analysis"],
    &["run"],
    &["input_file"],
    &["scenario"],
    &["prediction"],
    &["output"],
    &["trace"],
    &["sweep"],
    &["plot"],
    &["calibrate"],
    &["cuzk_log"],
    &["compare"],
    &["replay"],
    &["accuracy"],
    &["cli"],
    &["commands"],
];

/// Names the crate root re-exports under another module's roof (`pub use` in lib.rs):
/// none now; a new one must be listed here so that its imports are checked as its own.
const ALIASES: &[(&str, &str)] = &[];

/// Crates that would let the engine know about files, formats, plots or flags.
const FORBIDDEN_ENGINE_DEPS: &[&str] = &[
    "toml",
    "serde_json",
    "plotters",
    "clap",
    "indicatif",
    "anyhow",
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn canonical(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, real)| real)
}

/// Every `.rs` file under `dir` (recursively), sorted for stable messages.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Whether a file holds only tests or their fixtures (tests may reach any layer to build
/// them).
fn is_test_file(path: &Path) -> bool {
    let stem = path.file_stem().unwrap().to_string_lossy();
    stem == "tests" || stem.ends_with("_tests") || stem.starts_with("test_")
}

/// The source folder of every crate in the workspace: `src/` and each `crates/*/src/`
/// (in each, `crate::` names that crate's own modules).
fn source_roots() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![root.join("src")];
    let crates = root.join("crates");
    let mut members: Vec<PathBuf> = fs::read_dir(&crates)
        .unwrap_or_else(|e| panic!("{}: {e}", crates.display()))
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    members.sort();
    assert!(
        !members.is_empty(),
        "no crate sources under {}",
        crates.display()
    );
    roots.extend(members);
    roots
}

/// A source root as the messages name it (`src`, `crates/engine/src`).
fn root_name(root: &Path) -> String {
    let rel = root
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(root);
    rel.to_string_lossy().replace('\\', "/")
}

/// The top-level modules `source` names through `crate::<module>`, ignoring comments and
/// everything from the first `#[cfg(test)]` on.
fn crate_paths(source: &str) -> BTreeSet<String> {
    let code = source.split("#[cfg(test)]").next().unwrap_or("");
    let mut found = BTreeSet::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let preceded_by_ident = rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !preceded_by_ident && !name.is_empty() {
                found.insert(canonical(&name).to_string());
            }
        }
    }
    found
}

/// Module -> (imported module -> the first file that imports it), over the top-level
/// modules of every crate (the engine crate's `engine`, `model` and `time` are the
/// layers the `bwsim` crate re-exports under the same names).
fn import_graph() -> BTreeMap<String, BTreeMap<String, PathBuf>> {
    let mut graph: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for src in source_roots() {
        add_imports(&src, &mut graph);
    }
    graph
}

fn add_imports(src: &Path, graph: &mut BTreeMap<String, BTreeMap<String, PathBuf>>) {
    for path in rust_files(src) {
        if is_test_file(&path) {
            continue;
        }
        let rel = path.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue; // the root re-exports everything; main sits above every layer
        }
        let text = fs::read_to_string(&path).unwrap();
        let edges = graph.entry(module.clone()).or_default();
        for dep in crate_paths(&text) {
            if dep != module {
                edges.entry(dep).or_insert_with(|| path.clone());
            }
        }
    }
}

#[test]
fn every_top_level_module_sits_in_a_documented_layer() {
    for module in import_graph().keys() {
        assert!(
            layer_of(module).is_some(),
            "module {module} is in no layer of LAYERS; add it here and to docs/architecture.md"
        );
    }
}

#[test]
fn modules_import_only_layers_below_them() {
    let mut wrong = Vec::new();
    for (module, deps) in import_graph() {
        let Some(own) = layer_of(&module) else {
            continue;
        };
        for (dep, file) in deps {
            match layer_of(&dep) {
                Some(l) if l < own => {}
                _ => wrong.push(format!("{} uses crate::{dep}", file.display())),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports pointing up (or sideways) the layers of docs/architecture.md:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn there_are_no_import_circles_between_top_level_modules() {
    let graph = import_graph();
    // Depth-first search with colours: reaching a module still on the stack is a circle.
    fn visit<'a>(
        m: &'a str,
        graph: &'a BTreeMap<String, BTreeMap<String, PathBuf>>,
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|s| *s == m) {
            let mut circle: Vec<String> = stack[at..].iter().map(|s| s.to_string()).collect();
            circle.push(m.to_string());
            return Some(circle);
        }
        if !done.insert(m) {
            return None;
        }
        stack.push(m);
        for dep in graph.get(m).into_iter().flat_map(|d| d.keys()) {
            if let Some(c) = visit(dep, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        if let Some(circle) = visit(m, &graph, &mut Vec::new(), &mut done) {
            panic!("import circle: {}", circle.join(" -> "));
        }
    }
}

#[test]
fn the_layer_list_matches_the_architecture_document() {
    let doc =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .expect("docs/architecture.md");
    // The numbered list "N. `a`, `b`: ..." under "Layers, lowest first".
    let documented: Vec<Vec<String>> = doc
        .lines()
        .skip_while(|l| !l.starts_with("Layers, lowest first"))
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let (num, rest) = l.split_once(". ")?;
            num.parse::<u32>().ok()?;
            let names = rest.split(':').next()?;
            Some(
                names
                    .split(',')
                    .map(|n| {
                        n.trim()
                            .trim_matches('`')
                            .trim_end_matches(".rs")
                            .to_string()
                    })
                    .collect(),
            )
        })
        .collect();
    let mut expected: Vec<Vec<String>> = LAYERS
        .iter()
        .map(|l| l.iter().map(|s| s.to_string()).collect())
        .collect();
    expected.push(vec!["main".into()]);
    assert_eq!(
        documented, expected,
        "the layer list in docs/architecture.md and LAYERS in this test disagree"
    );
}

#[test]
fn the_engine_crate_depends_on_no_file_format_plot_or_cli_crate() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/engine/Cargo.toml");
    let text = fs::read_to_string(&manifest).expect("crates/engine/Cargo.toml");
    let mut section = String::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        let Some((key, _)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().trim_matches('"');
        assert!(
            !FORBIDDEN_ENGINE_DEPS.contains(&key),
            "{}: {section} lists {key}; the engine must stay free of {}",
            manifest.display(),
            FORBIDDEN_ENGINE_DEPS.join(", ")
        );
    }
}

#[test]
fn the_scanner_sees_crate_paths_and_skips_comments_and_tests() {
    let src = "use crate::engine::X;\nlet r = crate::run::go(); // crate::plot\n\
               /// [`crate::sweep`]\nfoo_crate::nope\n#[cfg(test)]\nuse crate::commands;";
    let found: Vec<String> = crate_paths(src).into_iter().collect();
    assert_eq!(found, ["engine", "run"]);
    assert_eq!(
        canonical("keys"),
        "keys",
        "no root alias left for the metric keys"
    );
    assert_eq!(
        canonical("metrics"),
        "metrics",
        "no root alias left for metrics"
    );
}

/// The module path of a source file under `src/` (`calibrate/validate/plot.rs` ->
/// `calibrate::validate::plot`; a `mod.rs` names its folder).
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let file = parts.pop().unwrap();
    if file != "mod.rs" {
        parts.push(file.trim_end_matches(".rs").to_string());
    }
    parts
}

/// Module paths that `source` (the file of module `own`) names: `crate::a::b`,
/// `super::x` (relative to `own`'s parent) and `super::{x, y}` groups, outside comments
/// and tests. Unresolved to a file yet; the caller keeps the longest known prefix.
fn module_refs(source: &str, own: &[String]) -> Vec<Vec<String>> {
    let code = source.split("#[cfg(test)]").next().unwrap_or("");
    let parent: Vec<String> = own[..own.len().saturating_sub(1)].to_vec();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        for (prefix, base) in [("crate::", Vec::new()), ("super::", parent.clone())] {
            let mut rest = line;
            while let Some(at) = rest.find(prefix) {
                let preceded_by_ident = rest[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
                rest = &rest[at + prefix.len()..];
                if preceded_by_ident {
                    continue;
                }
                let mut path = base.clone();
                let mut tail = rest;
                let mut grouped = false;
                loop {
                    if let Some(group) = tail.strip_prefix('{') {
                        // `{a, b::c}`: each item's first segment.
                        let inner = group.split('}').next().unwrap_or("");
                        for item in inner.split(',') {
                            let name = ident(item.trim());
                            if !name.is_empty() {
                                let mut p = path.clone();
                                p.push(name);
                                out.push(p);
                            }
                        }
                        grouped = true;
                        break;
                    }
                    let seg = ident(tail);
                    if seg.is_empty() {
                        break;
                    }
                    tail = &tail[seg.len()..];
                    path.push(seg);
                    match tail.strip_prefix("::") {
                        Some(t) => tail = t,
                        None => break,
                    }
                }
                if grouped {
                    continue;
                }
                if prefix == "crate::"
                    && let Some(first) = path.first()
                    && canonical(first) != first.as_str()
                {
                    let real = canonical(first).to_string();
                    path.insert(0, real);
                }
                out.push(path);
            }
        }
    }
    out
}

/// Within every folder module, its files and subfolders must not import each other in a
/// circle (e.g. `calibrate/validate/plot.rs` <-> `table.rs`): per folder, the graph of
/// its children, with an edge when anything under one names anything under another.
#[test]
fn there_are_no_import_circles_between_sibling_files() {
    let circles: Vec<String> = source_roots()
        .iter()
        .flat_map(|src| sibling_circles(src))
        .collect();
    assert!(
        circles.is_empty(),
        "import circles between sibling files:\n{}",
        circles.join("\n")
    );
}

/// The circles between sibling files and folders under one source root.
fn sibling_circles(src: &Path) -> Vec<String> {
    let name = root_name(src);
    let files: Vec<(PathBuf, Vec<String>)> = rust_files(src)
        .into_iter()
        .filter(|p| !is_test_file(p))
        .map(|p| {
            let m = module_path(p.strip_prefix(src).unwrap());
            (p, m)
        })
        .filter(|(_, m)| !m.is_empty() && m[0] != "lib" && m[0] != "main")
        .collect();
    let known: BTreeSet<Vec<String>> = files.iter().map(|(_, m)| m.clone()).collect();
    // Folder -> child -> (child it names -> the file that names it).
    type Level = BTreeMap<String, BTreeMap<String, PathBuf>>;
    let mut levels: BTreeMap<Vec<String>, Level> = BTreeMap::new();
    for (path, own) in &files {
        let text = fs::read_to_string(path).unwrap();
        for mut target in module_refs(&text, own) {
            while !target.is_empty() && !known.contains(&target) {
                target.pop();
            }
            let common = own.iter().zip(&target).take_while(|(a, b)| a == b).count();
            // Only siblings: neither is the other's ancestor (a folder's mod.rs may
            // re-export its children, and they may use what it declares).
            if common >= own.len() || common >= target.len() {
                continue;
            }
            levels
                .entry(own[..common].to_vec())
                .or_default()
                .entry(own[common].clone())
                .or_default()
                .entry(target[common].clone())
                .or_insert_with(|| path.clone());
        }
    }
    let mut circles = Vec::new();
    for (folder, graph) in &levels {
        for (a, deps) in graph {
            for (b, file) in deps {
                let back = graph.get(b).and_then(|d| d.get(a));
                if let Some(back_file) = back
                    && a < b
                {
                    circles.push(format!(
                        "{name}/{}: {a} <-> {b} ({} and {})",
                        folder.join("/"),
                        file.display(),
                        back_file.display()
                    ));
                }
            }
        }
        // Longer circles: depth-first search from every child.
        fn reaches(from: &str, to: &str, graph: &Level, seen: &mut BTreeSet<String>) -> bool {
            graph
                .get(from)
                .into_iter()
                .flat_map(|d| d.keys())
                .any(|n| n == to || (seen.insert(n.clone()) && reaches(n, to, graph, seen)))
        }
        for a in graph.keys() {
            if circles.iter().all(|c| !c.contains(&format!(" {a} "))) {
                let mut seen = BTreeSet::new();
                if reaches(a, a, graph, &mut seen) {
                    circles.push(format!("{name}/{}: {a} is on a circle", folder.join("/")));
                }
            }
        }
    }
    circles
}

#[test]
fn the_sibling_scanner_resolves_super_and_groups() {
    let own: Vec<String> = ["calibrate", "validate", "plot"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let refs = module_refs(
        "use super::table::Table;\nuse super::{calib, experiment::X};\nuse crate::analysis::keys::M;\n\
         let x = foo::super::nope;\n#[cfg(test)]\nuse super::measure;",
        &own,
    );
    let s: Vec<String> = refs.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        s,
        [
            "calibrate::validate::table::Table",
            "calibrate::validate::calib",
            "calibrate::validate::experiment",
            "analysis::keys::M"
        ]
    );
}

#[test]
fn the_scans_cover_the_engine_crate() {
    // The engine crate's modules are in the graph with their own imports...
    let graph = import_graph();
    let engine = graph
        .get("engine")
        .expect("the engine crate's `engine` module");
    assert!(engine.contains_key("model") && engine.contains_key("time"));
    // ...and a circle between sibling files there would be found.
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("engine");
    fs::create_dir(&folder).unwrap();
    fs::write(folder.join("mod.rs"), "mod clock;\nmod fluid;\n").unwrap();
    fs::write(folder.join("fluid.rs"), "use super::clock::Clock;\n").unwrap();
    fs::write(folder.join("clock.rs"), "use super::fluid::ceil;\n").unwrap();
    let circles = sibling_circles(dir.path());
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(circles[0].contains("clock <-> fluid"), "{circles:?}");
}

/// stdout is written only through `output::print_stdout`, which turns a full disk into an
/// error and a closed pipe into a quiet end: `print!` and `println!` panic on both
/// ("failed printing to stdout", exit 101), so no library or command code may use them.
#[test]
fn stdout_is_written_only_through_print_stdout() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for path in rust_files(&src) {
        if is_test_file(&path) {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (i, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or("");
            let printing = ["print!(", "println!("].iter().any(|m| {
                line.match_indices(m).any(|(at, _)| {
                    // `eprint!`/`eprintln!` write to stderr; `sprint!` is no macro here.
                    !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                })
            });
            if printing {
                found.push(format!("{}:{}", path.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "print!/println! panic on a full or closed stdout; use output::print_stdout: {found:?}"
    );
}
