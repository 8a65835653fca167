//! The server's documents and salsa database.
//!
//! Everything here is synchronous and runs under one `std::sync::Mutex`: the
//! notification handlers call it before their first `.await`, so edits reach
//! the database in the order the client sent them even though tower-lsp-server
//! runs several handlers at once.
//!
//! The database is `Send` but not `Sync`. Queries run on a clone
//! ([`Snapshot`]) taken under the lock and moved to a blocking thread; a salsa
//! write cancels those clones and then waits for every one of them to drop,
//! so nothing in this struct ever keeps a clone.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cute_lint::{Config, Database, Package, SourceFile};
use cute_syntax::PositionEncoding;
use salsa::Setter;
use tower_lsp_server::ls_types::{TextDocumentContentChangeEvent, Uri};

use super::edits;

/// An open document: its salsa input, the client's version of it, and a
/// server-wide counter bumped on every applied change. The generation (not the
/// version) decides whether a result is current, because a document closed
/// and reopened starts its versions over.
#[derive(Clone, Copy)]
pub struct OpenDoc {
    pub file: SourceFile,
    pub version: i32,
    pub generation: u64,
}

pub struct State {
    db: Database,
    /// One input per URI ever opened, reused on reopen: salsa inputs are never
    /// freed, so a fresh input per open would grow without bound.
    files: HashMap<Uri, SourceFile>,
    open: HashMap<Uri, OpenDoc>,
    next_generation: u64,
    pub encoding: PositionEncoding,
    /// The editor's settings; the project's are resolved per document.
    editor: Arc<Config>,
    /// Workspace folders, where the configuration of documents that are not
    /// files (unsaved buffers) is looked up.
    pub roots: Vec<PathBuf>,
    /// The package open documents are checked in (`cute_lint::Package`):
    /// with workspace folders, a check links the modules a file imports
    /// from them; without, a file is checked alone.
    package: Option<Package>,
    /// Per open document, the other files its last check read: an edit to
    /// one of them re-checks it.
    linked: HashMap<Uri, Vec<PathBuf>>,
}

/// A database clone for one query, and what it was taken for.
pub struct Snapshot {
    pub db: Database,
    pub doc: OpenDoc,
    pub encoding: PositionEncoding,
    pub editor: Arc<Config>,
    /// Where to look for the project's configuration: the document's path,
    /// or a file in the first workspace folder.
    pub config_path: Option<PathBuf>,
}

impl Default for State {
    fn default() -> Self {
        State {
            db: Database::default(),
            files: HashMap::new(),
            open: HashMap::new(),
            next_generation: 1,
            encoding: PositionEncoding::Utf16,
            editor: Arc::new(Config::default()),
            roots: Vec::new(),
            package: None,
            linked: HashMap::new(),
        }
    }
}

fn file_path(uri: &Uri) -> String {
    uri.to_file_path().map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|| uri.as_str().to_string())
}

impl State {
    /// Checks from now on link the modules files import from the workspace
    /// folders (and read nothing outside them).
    pub fn link_workspace(&mut self) {
        if !self.roots.is_empty() && self.package.is_none() {
            // The environment of the first folder's project (its `python`,
            // the server's `$VIRTUAL_ENV`, or a `.venv` beside its
            // configuration file), as `cute-lsp check` finds it.
            let (config, config_file, _) = cute_lint::config::discover(&self.roots[0].join("__init__.py"));
            let virtual_env = std::env::var_os("VIRTUAL_ENV").map(PathBuf::from);
            let search = config.with(&self.editor).environment_roots(config_file.as_deref(), virtual_env.as_deref());
            self.package = Some(self.db.with_package_searching(self.roots.clone(), search));
        }
    }

    /// The open documents of the package, by path, as the checks read them.
    fn set_open_in_package(&mut self) {
        let Some(package) = self.package else { return };
        let open: BTreeMap<PathBuf, SourceFile> =
            self.open.iter().filter_map(|(uri, doc)| uri.to_file_path().map(|p| (p.into_owned(), doc.file))).collect();
        if **package.open(&self.db) != open {
            package.set_open(&mut self.db).to(Arc::new(open));
        }
    }

    /// Files changed on disk: what was read of them is forgotten, and every
    /// open document that read another file is out of date.
    pub fn disk_changed(&mut self) -> Vec<(Uri, u64)> {
        let Some(package) = self.package else { return Vec::new() };
        let epoch = package.epoch(&self.db) + 1;
        package.set_epoch(&mut self.db).to(epoch);
        self.db.forget_disk();
        let linking: Vec<Uri> = self.linked.iter().filter(|(_, paths)| !paths.is_empty()).map(|(u, _)| u.clone()).collect();
        self.touch(linking)
    }

    /// Remembers the files the check of `uri` read besides it.
    pub fn set_linked(&mut self, uri: &Uri, paths: Vec<PathBuf>) {
        if self.open.contains_key(uri) {
            self.linked.insert(uri.clone(), paths);
        }
    }

    /// The open documents other than `uri` whose last check read the file
    /// `uri` is, moved to a new generation.
    pub fn dependents(&mut self, uri: &Uri) -> Vec<(Uri, u64)> {
        let Some(path) = uri.to_file_path() else { return Vec::new() };
        let path: &Path = &path;
        let users: Vec<Uri> = self.linked.iter().filter(|(u, paths)| *u != uri && paths.iter().any(|p| p == path)).map(|(u, _)| u.clone()).collect();
        self.touch(users)
    }

    fn touch(&mut self, uris: Vec<Uri>) -> Vec<(Uri, u64)> {
        let mut touched = Vec::with_capacity(uris.len());
        for uri in uris {
            let generation = self.bump();
            if let Some(doc) = self.open.get_mut(&uri) {
                doc.generation = generation;
                touched.push((uri, generation));
            }
        }
        touched
    }

    fn bump(&mut self) -> u64 {
        let generation = self.next_generation;
        self.next_generation += 1;
        generation
    }

    fn set_text(&mut self, file: SourceFile, text: String) {
        // Every salsa write cancels running queries; skip it when nothing changed
        // (a reopen of an unmodified file, an edit that restores the text).
        if *file.text(&self.db) != text {
            file.set_text(&mut self.db).to(text);
        }
    }

    /// `didOpen`: (re)places the document's text. Returns its new state.
    pub fn open(&mut self, uri: Uri, version: i32, text: String) -> OpenDoc {
        let file = match self.files.get(&uri) {
            Some(&file) => {
                self.set_text(file, text);
                file
            }
            None => {
                let file = SourceFile::new(&self.db, file_path(&uri), text);
                self.files.insert(uri.clone(), file);
                file
            }
        };
        let doc = OpenDoc { file, version, generation: self.bump() };
        self.open.insert(uri, doc);
        self.set_open_in_package();
        doc
    }

    /// `didChange`: applies the changes if the document is open and the
    /// version is newer than the one held; otherwise ignores them.
    pub fn change(&mut self, uri: &Uri, version: i32, changes: &[TextDocumentContentChangeEvent]) -> Option<OpenDoc> {
        let doc = *self.open.get(uri)?;
        if version <= doc.version {
            return None;
        }
        // The index of the current text is usually in the database already
        // (the last analysis converted its positions with it).
        let index = cute_lint::line_index(&self.db, doc.file).clone();
        let text = edits::apply_changes_indexed(doc.file.text(&self.db), Some(&index), changes, self.encoding);
        self.set_text(doc.file, text);
        let doc = OpenDoc { version, generation: self.bump(), ..doc };
        self.open.insert(uri.clone(), doc);
        Some(doc)
    }

    /// `didClose`: forgets the document. Returns whether it was open.
    pub fn close(&mut self, uri: &Uri) -> bool {
        let Some(doc) = self.open.remove(uri) else { return false };
        self.linked.remove(uri);
        // A check that links it reads it from disk again.
        self.set_open_in_package();
        // Drop the text so a closed file's text and results do not stay in memory.
        self.set_text(doc.file, String::new());
        true
    }

    pub fn current(&self, uri: &Uri) -> Option<OpenDoc> {
        self.open.get(uri).copied()
    }

    /// Moves every open document to a new generation without touching its
    /// text, so results computed under the previous configuration are no
    /// longer current. Returns the documents and their new generations.
    pub fn touch_all(&mut self) -> Vec<(Uri, u64)> {
        let uris: Vec<Uri> = self.open.keys().cloned().collect();
        self.touch(uris)
    }

    pub fn editor(&self) -> &Config {
        &self.editor
    }

    /// Replaces the editor's settings; every open document is then out of
    /// date (see [`State::touch_all`]).
    pub fn set_editor_config(&mut self, config: Config) -> Vec<(Uri, u64)> {
        self.editor = Arc::new(config);
        self.touch_all()
    }

    /// A clone of the database for querying `uri`, if it is open and (when a
    /// generation is given) still at that generation.
    pub fn snapshot(&self, uri: &Uri, generation: Option<u64>) -> Option<Snapshot> {
        let doc = self.current(uri)?;
        if generation.is_some_and(|g| g != doc.generation) {
            return None;
        }
        let config_path = uri
            .to_file_path()
            .map(|p| p.into_owned())
            .or_else(|| self.roots.first().map(|root| root.join("untitled.py")));
        Some(Snapshot { db: self.db.clone(), doc, encoding: self.encoding, editor: self.editor.clone(), config_path })
    }

    #[cfg(test)]
    pub fn text(&self, uri: &Uri) -> Option<String> {
        self.current(uri).map(|d| d.file.text(&self.db).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, Range};

    fn uri() -> Uri {
        "file:///tmp/k.py".parse().unwrap()
    }

    fn edit(sl: u32, sc: u32, el: u32, ec: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(sl, sc), Position::new(el, ec))),
            range_length: None,
            text: text.into(),
        }
    }

    #[test]
    fn stale_versions_are_ignored() {
        let mut st = State::default();
        let first = st.open(uri(), 3, "a = 'é𝜙'\n".into());
        assert!(st.change(&uri(), 3, &[edit(0, 0, 0, 0, "x")]).is_none());
        assert!(st.change(&uri(), 2, &[edit(0, 0, 0, 0, "x")]).is_none());
        let next = st.change(&uri(), 4, &[edit(0, 8, 0, 8, "!")]).unwrap();
        assert!(next.generation > first.generation);
        assert_eq!(st.text(&uri()).unwrap(), "a = 'é𝜙!'\n");
        assert!(st.snapshot(&uri(), Some(first.generation)).is_none());
        assert!(st.snapshot(&uri(), Some(next.generation)).is_some());
    }

    #[test]
    fn unknown_documents_are_ignored() {
        let mut st = State::default();
        assert!(st.change(&uri(), 1, &[edit(0, 0, 0, 0, "x")]).is_none());
        assert!(!st.close(&uri()));
        assert!(st.snapshot(&uri(), None).is_none());
    }

    #[test]
    fn reopen_gets_a_new_generation() {
        let mut st = State::default();
        let a = st.open(uri(), 1, "one\n".into());
        assert!(st.close(&uri()));
        assert!(st.snapshot(&uri(), None).is_none());
        let b = st.open(uri(), 1, "two\n".into());
        assert!(a.file == b.file, "reopen reuses the input");
        assert_ne!(a.generation, b.generation);
        assert_eq!(st.text(&uri()).unwrap(), "two\n");
        assert!(st.snapshot(&uri(), Some(a.generation)).is_none());
        assert!(st.snapshot(&uri(), Some(b.generation)).is_some());
    }

    #[test]
    fn configuration_changes_outdate_every_open_document() {
        let mut st = State::default();
        let a = st.open(uri(), 1, "one\n".into());
        let other: Uri = "file:///tmp/other.py".parse().unwrap();
        let b = st.open(other.clone(), 1, "two\n".into());
        let (ignored, _) = Config::from_value(&serde_json::json!({"ignore": ["deadlock"]}), "test");
        let touched = st.set_editor_config(ignored.clone());
        assert_eq!(touched.len(), 2);
        assert!(st.snapshot(&uri(), Some(a.generation)).is_none());
        assert!(st.snapshot(&other, Some(b.generation)).is_none());
        for (u, generation) in touched {
            let snapshot = st.snapshot(&u, Some(generation)).unwrap();
            assert_eq!(*snapshot.editor, ignored);
            assert_eq!(snapshot.doc.version, 1, "versions are the client's and do not move");
        }
    }

    #[test]
    fn utf8_encoding_applies_byte_columns() {
        let mut st = State { encoding: PositionEncoding::Utf8, ..State::default() };
        st.open(uri(), 1, "a = 'é𝜙'\n".into());
        st.change(&uri(), 2, &[edit(0, 11, 0, 11, "!")]).unwrap();
        assert_eq!(st.text(&uri()).unwrap(), "a = 'é𝜙!'\n");
    }
}
