//! Every relative link and image in the tracked Markdown files points at a file or folder
//! that exists (a moved file takes its links with it). The run folders' own records
//! (runs/accuracy/, runs/calibrate/, ...: plans as they were written) are left as written.

mod common;

use std::path::Path;

/// The targets of `[text](target)` and `![alt](target)` in `text`.
fn link_targets(text: &str) -> Vec<&str> {
    text.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            let end = rest.find(')')?;
            let target = &rest[..end];
            (!target.is_empty() && !target.contains(char::is_whitespace)).then_some(target)
        })
        .collect()
}

#[test]
fn link_targets_are_read_from_links_and_images() {
    assert_eq!(
        link_targets("see [a](b.md) and ![c](d/e.svg), not [f] (g) or [h](i j)"),
        ["b.md", "d/e.svg"]
    );
}

#[test]
fn relative_links_in_markdown_resolve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(files) = common::tracked_files(&["*.md"]) else {
        return;
    };
    let records = [
        "runs/accuracy/",
        "runs/calibrate/",
        "runs/multi-gpu/",
        "runs/replay/",
    ];
    let mut broken = Vec::new();
    for file in files
        .iter()
        .filter(|f| !records.iter().any(|r| f.starts_with(r)))
    {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let dir = Path::new(file).parent().unwrap();
        for target in link_targets(&text) {
            let path = target.split('#').next().unwrap();
            if path.is_empty() || path.contains("://") || path.starts_with("mailto:") {
                continue;
            }
            if !root.join(dir).join(path).exists() {
                broken.push(format!("{file}: {target}"));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to files that do not exist:\n{}",
        broken.join("\n")
    );
}
