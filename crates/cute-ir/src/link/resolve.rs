//! Where an import's module is: a Python file found as the interpreter would
//! find it, without running anything.
//!
//! A relative import (`from .named_barrier import X`, `from ..utils import y`)
//! is found from the importing file's package, one directory up per dot past
//! the first. An absolute one (`from flash_attn.cute import pipeline`) is
//! found under the search roots, in order: the directory above the importing
//! file's outermost package (walking up the directories that hold an
//! `__init__.py`), the importing file's own directory (a script's siblings are
//! importable), then the roots the configuration names, and last the
//! directory above the nearest directory of the importer named as the
//! import's top package (a namespace package: a script run with that
//! directory on the path, as the CUTLASS examples are). A dotted path names a
//! module when `a/b/c.py` or `a/b/c/__init__.py` exists; the longest such
//! prefix is the module, and what follows it is an attribute of it
//! (`from pkg.mod import name` is the module `pkg.mod.name` if there is one,
//! else `name` of `pkg.mod`).
//!
//! Whether a file exists is asked of [`Sources`], which decides what may be
//! read: this module touches no file itself.

use std::path::{Path, PathBuf};

use super::Sources;

/// A module file found for a dotted path, and what of the path is left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// The module's dotted name (`flash_attn.cute.pipeline`).
    pub module: String,
    /// The rest of the path, attributes of the module (`["PipelineTmaAsync"]`).
    pub rest: Vec<String>,
}

/// The directories an absolute import of `importer` is searched under.
pub fn search_roots(importer: &Path, sources: &dyn Sources) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(dir) = importer.parent() {
        let mut top = dir.to_path_buf();
        while sources.exists(&top.join("__init__.py")) {
            match top.parent() {
                Some(up) => top = up.to_path_buf(),
                None => break,
            }
        }
        roots.push(top);
        roots.push(dir.to_path_buf());
    }
    for r in sources.extra_roots() {
        roots.push(r.clone());
    }
    roots.dedup();
    roots
}

/// The dotted name of the module at `path` under `root`
/// (`root/a/b/c.py` is `a.b.c`, `root/a/b/__init__.py` is `a.b`).
pub fn module_name(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let last = parts.pop()?;
    let stem = last.strip_suffix(".py")?;
    if stem != "__init__" {
        parts.push(stem.to_string());
    }
    (!parts.is_empty() && parts.iter().all(|p| is_identifier(p))).then(|| parts.join("."))
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic()) && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// The module a qualified import path names, with the attributes after it.
/// `qualified` is as `ImportMap` gives it: `.named_barrier.X` for a relative
/// import (a leading dot per level), `flash_attn.cute.pipeline` otherwise.
pub fn find(importer: &Path, importer_module: Option<&str>, qualified: &str, sources: &dyn Sources) -> Option<Found> {
    let dots = qualified.chars().take_while(|&c| c == '.').count();
    let parts: Vec<&str> = qualified[dots..].split('.').filter(|p| !p.is_empty()).collect();
    if dots > 0 {
        // The package of the importer, then one level up per further dot.
        let mut dir = importer.parent()?.to_path_buf();
        let mut package: Vec<&str> = importer_module.map(|m| m.split('.').collect()).unwrap_or_default();
        if importer.file_name().is_some_and(|n| n != "__init__.py") {
            package.pop();
        }
        for _ in 1..dots {
            dir = dir.parent()?.to_path_buf();
            package.pop();
        }
        return longest_module(&dir, &package.iter().map(|s| s.to_string()).collect::<Vec<_>>(), &parts, sources);
    }
    search_roots(importer, sources)
        .iter()
        .find_map(|root| longest_module(root, &[], &parts, sources))
        .or_else(|| namespace_root(importer, &parts).and_then(|root| longest_module(&root, &[], &parts, sources)))
}

/// The directory an absolute import is made from when its top package is
/// a directory the importer lies in (a namespace package, PEP 420): a script at `root/a/b/x.py` importing `a.b.y` or `a.c.z` is run
/// with `root` on the path (`from cute.blackwell.kernel.attention.fmha
/// import helpers` in a script of that directory). The nearest such
/// directory; only for an import that names something inside it.
fn namespace_root(importer: &Path, parts: &[&str]) -> Option<PathBuf> {
    let top = parts.first().filter(|_| parts.len() > 1)?;
    importer.parent()?.ancestors().find(|a| a.file_name().is_some_and(|n| n == *top)).and_then(Path::parent).map(Path::to_path_buf)
}

/// The longest prefix of `parts` that is a module file under `dir`.
fn longest_module(dir: &Path, package: &[String], parts: &[&str], sources: &dyn Sources) -> Option<Found> {
    for n in (0..=parts.len()).rev() {
        let mut path = dir.to_path_buf();
        for p in &parts[..n] {
            path.push(p);
        }
        let candidates = if n == 0 { vec![path.join("__init__.py")] } else { vec![path.with_extension("py"), path.join("__init__.py")] };
        for candidate in candidates {
            if sources.exists(&candidate) {
                let mut module: Vec<String> = package.to_vec();
                module.extend(parts[..n].iter().map(|s| s.to_string()));
                if module.is_empty() {
                    break;
                }
                return Some(Found { path: candidate, module: module.join("."), rest: parts[n..].iter().map(|s| s.to_string()).collect() });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Files(Vec<&'static str>);
    impl Sources for Files {
        fn read(&self, _: &Path) -> Option<std::sync::Arc<str>> {
            None
        }
        fn exists(&self, path: &Path) -> bool {
            self.0.iter().any(|f| Path::new(f) == path)
        }
    }

    /// A script in a directory that is no package imports its sibling by
    /// the dotted path of the directories above it (`root` on the path).
    #[test]
    fn an_import_through_the_directories_of_a_namespace_package() {
        let files = Files(vec!["/r/ex/cute/fmha/prefill.py", "/r/ex/cute/fmha/helpers.py", "/r/ex/cute/other/util.py"]);
        let importer = Path::new("/r/ex/cute/fmha/prefill.py");
        let found = find(importer, Some("prefill"), "cute.fmha.helpers.dequant", &files).expect("found");
        assert_eq!((found.path.as_path(), found.module.as_str(), found.rest.as_slice()), (Path::new("/r/ex/cute/fmha/helpers.py"), "cute.fmha.helpers", ["dequant".to_string()].as_slice()));
        // Another directory of the same tree, through the part they share.
        assert_eq!(find(importer, Some("prefill"), "cute.other.util", &files).map(|f| f.path), Some(PathBuf::from("/r/ex/cute/other/util.py")));
        // A path the importer's directories do not end with is not guessed.
        assert_eq!(find(importer, Some("prefill"), "other.util", &files), None);
        assert_eq!(find(importer, Some("prefill"), "fmha2.helpers", &files), None);
    }

    #[test]
    fn module_names_follow_the_directories_under_the_root() {
        let root = Path::new("/src");
        assert_eq!(module_name(root, Path::new("/src/a/b/c.py")).as_deref(), Some("a.b.c"));
        assert_eq!(module_name(root, Path::new("/src/a/b/__init__.py")).as_deref(), Some("a.b"));
        assert_eq!(module_name(root, Path::new("/src/a/my-file.py")), None);
        assert_eq!(module_name(root, Path::new("/elsewhere/a.py")), None);
    }
}
