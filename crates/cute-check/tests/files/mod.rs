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

/// A kernel of a file, with what instantiating it takes.
pub struct Kernel<'m> {
    pub path: &'m Path,
    pub module: &'m cute_ir::Module,
    pub kernel: &'m cute_ir::ast::FunctionDef,
    pub launch: cute_ir::launch::Launch,
    pub kept: cute_ir::Kept,
}

/// Calls `f` on every kernel of the files of `files` that mention the DSL
/// and lower.
pub fn for_each_kernel(files: &[PathBuf], mut f: impl FnMut(&Kernel<'_>)) {
    for path in files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        if !text.contains("cute") {
            continue;
        }
        let Ok(module) = cute_ir::lower_text(&text) else { continue };
        let launches = cute_ir::launch::Launches::of_module(&module);
        for kernel in module.kernels() {
            let launch = launches.of_kernel(&module, kernel);
            let kept = cute_ir::slice_kernel(&module, kernel, &text).kept_ids();
            f(&Kernel { path, module: &module, kernel, launch, kept });
        }
    }
}
