//! The kernel files the tests that run over every kernel read: the
//! repository's fixtures and corpus, or the directories a run names.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Every `*.py` file under `dir`, depth first.
pub fn python_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            python_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}

/// The fixtures and the corpus of the repository, in order.
pub fn repository_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    python_files(&root.join("tests/fixtures"), &mut files);
    python_files(&root.join("tests/corpus"), &mut files);
    files.sort();
    assert!(files.len() >= 20, "fixtures not found");
    files
}

/// The files under the directories `CUTE_LSP_COMPARE_DIRS` names (paths
/// separated by `:`), in order.
pub fn files_to_compare_on() -> Vec<PathBuf> {
    let dirs = std::env::var("CUTE_LSP_COMPARE_DIRS").expect("CUTE_LSP_COMPARE_DIRS names the directories to compare on");
    let mut files = Vec::new();
    for dir in dirs.split(':').filter(|d| !d.is_empty()) {
        python_files(Path::new(dir), &mut files);
    }
    files.sort();
    files
}
