//! Sample outputs in README.md and docs/*.md never go stale: a fenced block right after a
//! `<!-- sample: bwsim ARGS -->` line must be what `bwsim ARGS` prints now. Output that is
//! Markdown itself (`compare`'s table) stands unfenced between the mark and an
//! `<!-- end sample -->` line. The engine line's wall-clock timing is the only thing
//! masked. `BWSIM_BLESS=1 cargo test --test
//! readme_samples` rewrites the blocks from the binary (say so in the commit).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A mark opens a line of its own (a mention inside a sentence is no mark).
const MARK: &str = "\n<!-- sample: bwsim ";
/// Closes an unfenced (Markdown) sample.
const END: &str = "<!-- end sample -->";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    let mut more: Vec<_> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ lists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

fn bwsim(args: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_bwsim"))
        .current_dir(root())
        .args(args.split_whitespace())
        .output()
        .expect("bwsim runs");
    assert!(
        out.status.success(),
        "bwsim {args}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The text with the engine line's timing masked.
fn masked(text: &str) -> String {
    let lines = text.lines().map(|l| {
        if l.starts_with("engine ") {
            "engine <masked>"
        } else {
            l
        }
    });
    lines.collect::<Vec<_>>().join("\n")
}

/// Each sample: (ARGS, byte range of the fenced block's body) in `doc`.
fn samples(doc: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = doc[from..].find(MARK) {
        let at = from + i + 1;
        let line_end = at + doc[at..].find('\n').expect("a line after the mark");
        let args = doc[at + MARK.len() - 1..line_end].trim_end();
        let args = args
            .strip_suffix("-->")
            .expect("mark closes with -->")
            .trim();
        let fence = line_end + 1;
        let (body, end) = if doc[fence..].starts_with("```") {
            let body = fence + doc[fence..].find('\n').expect("fence line") + 1;
            (
                body,
                body + doc[body..].find("```").expect("the block closes"),
            )
        } else {
            let end = fence
                + doc[fence..].find(END).unwrap_or_else(|| {
                    panic!("`{args}`: a fenced block or Markdown closed by {END} follows the mark")
                });
            (fence, end)
        };
        found.push((args.to_string(), body..end));
        from = end;
    }
    found
}

#[test]
fn every_marked_sample_is_what_bwsim_prints_now() {
    let bless = std::env::var_os("BWSIM_BLESS").is_some();
    let mut checked = 0;
    for path in documents() {
        let mut doc = std::fs::read_to_string(&path).expect("readable");
        let found = samples(&doc);
        // Rewrite from the last block back, so earlier ranges stay valid.
        for (args, range) in found.iter().rev() {
            let now = bwsim(args);
            if bless {
                doc.replace_range(range.clone(), &now);
                continue;
            }
            let (shown, now) = (masked(&doc[range.clone()]), masked(&now));
            if shown != now {
                let (a, b): (Vec<_>, Vec<_>) = (shown.lines().collect(), now.lines().collect());
                let line = (0..a.len().max(b.len()))
                    .find(|&i| a.get(i) != b.get(i))
                    .unwrap_or(0);
                panic!(
                    "{}: the sample of `bwsim {args}` is stale at its line {}:\n  shown: {}\n  now:   {}\n(BWSIM_BLESS=1 cargo test --test readme_samples rewrites it)",
                    path.display(),
                    line + 1,
                    a.get(line).unwrap_or(&"<end>"),
                    b.get(line).unwrap_or(&"<end>"),
                );
            }
            checked += 1;
        }
        if bless && !found.is_empty() {
            std::fs::write(&path, doc).expect("writable");
        }
    }
    assert!(
        bless || checked > 0,
        "no sample marked in README.md or docs/"
    );
}
