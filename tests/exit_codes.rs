//! Every typed error in the sources is classified for the exit code (input exits 2, a
//! failed run 1) by an `impl Classify` in `commands/error.rs`, so a new error type cannot
//! be left unclassified (the compiler refuses it in a command; this names the missing).

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Names of the types deriving `thiserror::Error` (or `Error` with thiserror imported).
fn error_types(text: &str) -> Vec<String> {
    let uses_thiserror = text.contains("thiserror");
    let mut names = Vec::new();
    let mut pending = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("#[derive(")
            && (t.contains("thiserror::Error") || (uses_thiserror && t.contains(" Error")))
        {
            pending = true;
            continue;
        }
        if pending && !t.starts_with("#[") && !t.starts_with("///") {
            let words: Vec<&str> = t.split_whitespace().collect();
            let name = words
                .iter()
                .position(|w| *w == "enum" || *w == "struct")
                .and_then(|i| words.get(i + 1));
            if let Some(name) = name {
                names.push(
                    name.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect(),
                );
            }
            pending = false;
        }
    }
    names
}

#[test]
fn every_error_type_in_the_sources_is_classified() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    let classifier = std::fs::read_to_string(root.join("src/commands/error.rs")).unwrap();
    let classified: Vec<&str> = classifier
        .lines()
        .filter_map(|l| l.trim().strip_prefix("impl Classify for "))
        .map(|t| t.trim_end_matches(" {").rsplit("::").next().unwrap().trim())
        .collect();
    let mut missing = Vec::new();
    let mut found = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for name in error_types(&text) {
            found += 1;
            if !classified.contains(&name.as_str()) {
                missing.push(format!(
                    "{name} ({})",
                    f.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(found >= 6, "the scan found only {found} error types");
    assert!(
        missing.is_empty(),
        "error types not classified in src/commands/error.rs (add an impl Classify: \
         input errors exit 2): {missing:?}"
    );
}
