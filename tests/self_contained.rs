//! The repository is self-contained: no tracked file points at the development-only
//! folder next to the clone (the parent-folder `shared` path), which users do not have.

mod common;

use std::path::Path;

#[test]
fn no_tracked_file_mentions_the_parent_shared_folder() {
    // Built at run time so that this file does not match its own search.
    let needle = format!("..{}shared", '/');
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(files) = common::tracked_files(&[]) else {
        return;
    };
    assert!(!files.is_empty(), "git ls-files listed nothing");
    let offenders: Vec<String> = files
        .iter()
        .filter(|f| {
            std::fs::read(root.join(f))
                .map(|bytes| String::from_utf8_lossy(&bytes).contains(&needle))
                .unwrap_or(false)
        })
        .cloned()
        .collect();
    assert!(
        offenders.is_empty(),
        "these tracked files mention {needle} (cite docs/reference/ instead): {offenders:?}"
    );
}
