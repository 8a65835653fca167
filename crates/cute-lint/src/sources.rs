//! The other files of a package, read from disk for a check that links them
//! (`cute_ir::link`): each file read and lowered once however many kernels
//! import it, and only under the directories a check may read.
//!
//! The command line reads wherever a file's imports lead under its package's
//! search roots (`DiskSources`, with a file's configured roots through
//! `WithRoots`); the language server only under its workspace folders and
//! its project's Python environment (`PackageSources`), so an import that
//! climbs out of the workspace, or a
//! symbolic link that points out of it, is not read: paths are compared
//! after the links in them are resolved.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cute_ir::link::Sources;

use crate::db::Package;
use cute_ir::Module;
use rustc_hash::FxHashMap as HashMap;

/// Files larger than this are not read (generated code, data).
const MAX_FILE_BYTES: u64 = 4 << 20;

/// Source bytes whose texts and lowered modules are kept, at most: past it
/// the files used least lately are forgotten (and read again if asked for).
/// A run goes through a code base directory by directory, so the modules a
/// package's files import stay while its files are checked. A lowered module
/// takes many times the bytes of its text, and most of a run's files are
/// imported by none or by the files beside them: a larger cache costs memory
/// and saves no time (over the four public code bases of BENCHMARKS.md, one
/// process peaks at 128 MB with 2 MiB here and at 214 MB with 24 MiB, in the
/// same CPU time).
const MAX_CACHED_BYTES: usize = 2 << 20;

#[derive(Default)]
pub struct DiskSources {
    files: Mutex<FileCache>,
    /// Where each path asked about really is (its symbolic links resolved),
    /// `None` when it is not a file: resolving an import asks about many.
    real: Mutex<HashMap<PathBuf, Option<PathBuf>>>,
}

/// The files read: each one's text (`None`: it cannot be read) and, once
/// asked for, its lowered module.
#[derive(Default)]
struct FileCache {
    files: HashMap<PathBuf, Cached>,
    bytes: usize,
    clock: u64,
}

struct Cached {
    text: Option<Arc<str>>,
    lowered: Option<Option<Arc<Module>>>,
    last_use: u64,
}

impl FileCache {
    fn get(&mut self, path: &Path) -> Option<&mut Cached> {
        self.clock += 1;
        let now = self.clock;
        self.files.get_mut(path).map(|c| {
            c.last_use = now;
            c
        })
    }

    fn insert(&mut self, path: &Path, text: Option<Arc<str>>) {
        self.clock += 1;
        self.bytes += text.as_ref().map_or(0, |t| t.len());
        self.files.insert(path.to_path_buf(), Cached { text, lowered: None, last_use: self.clock });
        while self.bytes > MAX_CACHED_BYTES && self.files.len() > 1 {
            let Some(oldest) = self.files.iter().min_by_key(|(_, c)| c.last_use).map(|(p, _)| p.clone()) else { break };
            if let Some(gone) = self.files.remove(&oldest) {
                self.bytes -= gone.text.as_ref().map_or(0, |t| t.len());
            }
        }
    }
}

impl DiskSources {
    /// The file at `path` with its symbolic links resolved, if it is one.
    pub fn real_file(&self, path: &Path) -> Option<PathBuf> {
        let mut real = self.real.lock().unwrap_or_else(|e| e.into_inner());
        real.entry(path.to_path_buf()).or_insert_with(|| path.canonicalize().ok().filter(|p| p.is_file())).clone()
    }

    fn read_disk(&self, path: &Path) -> Option<Arc<str>> {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
            return None;
        }
        std::fs::read_to_string(path).ok().map(Arc::from)
    }
}

/// A [`DiskSources`] with further roots to search absolute imports under
/// (a file's configured `src`), sharing its files.
pub struct WithRoots<'s> {
    pub sources: &'s DiskSources,
    pub roots: Vec<PathBuf>,
}

impl Sources for WithRoots<'_> {
    fn read(&self, path: &Path) -> Option<Arc<str>> {
        self.sources.read(path)
    }

    fn exists(&self, path: &Path) -> bool {
        self.sources.exists(path)
    }

    fn lowered(&self, path: &Path) -> Option<Arc<Module>> {
        self.sources.lowered(path)
    }

    fn extra_roots(&self) -> &[PathBuf] {
        &self.roots
    }
}

impl DiskSources {
    /// Forgets every file read (they changed on disk).
    pub fn forget(&self) {
        *self.files.lock().unwrap_or_else(|e| e.into_inner()) = FileCache::default();
        self.real.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// The files of a [`Package`] as a check in the database reads them: an open
/// file's text is its input (so the check depends on it), any other file is
/// read from disk under the package's roots, once per epoch.
pub struct PackageSources<'db> {
    db: &'db dyn crate::Db,
    package: Package,
}

impl<'db> PackageSources<'db> {
    pub fn new(db: &'db dyn crate::Db, package: Package) -> Self {
        // Every file read from disk is as of this epoch.
        let _ = package.epoch(db);
        PackageSources { db, package }
    }

    fn may_read(&self, path: &Path) -> bool {
        let roots = self.package.roots(self.db).iter().chain(self.package.search(self.db).iter());
        self.db.caches().disk.real_file(path).is_some_and(|real| roots.clone().any(|r| real.starts_with(r)))
    }
}

impl Sources for PackageSources<'_> {
    fn read(&self, path: &Path) -> Option<Arc<str>> {
        if let Some(file) = self.package.open(self.db).get(path) {
            return Some(Arc::from(file.text(self.db).as_str()));
        }
        if !self.may_read(path) {
            return None;
        }
        self.db.caches().disk.read(path)
    }

    fn exists(&self, path: &Path) -> bool {
        self.package.open(self.db).contains_key(path) || self.may_read(path)
    }

    fn lowered(&self, path: &Path) -> Option<Arc<Module>> {
        if let Some(file) = self.package.open(self.db).get(path) {
            return cute_ir::lower_text(file.text(self.db)).ok().map(Arc::new);
        }
        if !self.may_read(path) {
            return None;
        }
        self.db.caches().disk.lowered(path)
    }

    fn extra_roots(&self) -> &[PathBuf] {
        self.package.search(self.db)
    }
}

impl Sources for DiskSources {
    fn read(&self, path: &Path) -> Option<Arc<str>> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(cached) = files.get(path) {
            return cached.text.clone();
        }
        let text = self.read_disk(path);
        files.insert(path, text.clone());
        text
    }

    fn exists(&self, path: &Path) -> bool {
        if let Some(cached) = self.files.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
            return cached.text.is_some();
        }
        self.real_file(path).is_some()
    }

    fn lowered(&self, path: &Path) -> Option<Arc<Module>> {
        if let Some(Some(m)) = self.files.lock().unwrap_or_else(|e| e.into_inner()).get(path).map(|c| c.lowered.clone()) {
            return m;
        }
        let text = self.read(path)?;
        let m = cute_ir::lower_text(&text).ok().map(Arc::new);
        if let Some(cached) = self.files.lock().unwrap_or_else(|e| e.into_inner()).get(path) {
            cached.lowered = Some(m.clone());
        }
        m
    }
}
