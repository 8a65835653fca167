//! Configuration as the server applies it: the editor's settings
//! (`initializationOptions`, `workspace/didChangeConfiguration` under
//! `cute-lsp`) on top of the project's configuration: the nearest
//! `cute-lsp.toml`, or `[tool.cute-lsp]` in a `pyproject.toml` (see
//! `cute_lint::config`).
//!
//! Project files are re-read only when their modification time or size
//! changes, so resolving a document's configuration on every analysis costs a
//! few `stat` calls; that is also why a `pyproject.toml` edited behind the
//! server's back takes effect on the next edit even without file watching.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use cute_lint::config::{candidates, Config};
use serde_json::Value;

/// The section of the editor's settings the server reads.
pub const SECTION: &str = "cute-lsp";

/// Keys of the section, normalised as `cute_lint::config` does; used to
/// recognise a section sent without its `cute-lsp` wrapper.
const KEYS: &[&str] = &["select", "extendselect", "ignore", "rules", "severity", "maxstates", "maxtimems", "maxmemorymb", "requestdeadlinems"];

/// The editor's settings in `value`: either `{"cute-lsp": {...}}` or the
/// section itself. `None` when `value` carries nothing for this server (null,
/// or another server's settings), so the caller keeps what it has.
pub fn editor_settings(value: &Value) -> Option<(Config, Vec<String>)> {
    if let Some(section) = value.get(SECTION) {
        return Some(Config::from_value(section, "editor settings `cute-lsp`"));
    }
    let ours = value.as_object().is_some_and(|o| {
        o.keys().any(|k| {
            let k: String = k.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect();
            KEYS.contains(&k.as_str())
        })
    });
    ours.then(|| Config::from_value(value, "editor settings"))
}

/// A `cute-lsp.toml` or `pyproject.toml` as last read.
struct Read {
    stamp: (Option<SystemTime>, u64),
    /// `None`: a `pyproject.toml` without a `[tool.cute-lsp]` table, or not
    /// valid TOML.
    config: Option<Arc<Config>>,
}

#[derive(Default)]
pub struct ProjectConfigs {
    files: HashMap<PathBuf, Read>,
}

impl ProjectConfigs {
    /// The project configuration of `file` (the nearest `cute-lsp.toml`, or
    /// `pyproject.toml` with a `[tool.cute-lsp]` table), and the problems of
    /// each file read anew, so each problem is reported once per version of
    /// the file.
    pub fn resolve(&mut self, file: &Path) -> (Arc<Config>, Vec<String>) {
        let mut problems = Vec::new();
        for path in candidates(file) {
            let Ok(meta) = std::fs::metadata(&path) else { continue };
            let stamp = (meta.modified().ok(), meta.len());
            let fresh = self.files.get(&path).is_some_and(|r| r.stamp == stamp);
            if !fresh {
                let config = match std::fs::read_to_string(&path) {
                    Ok(text) => match Config::from_file(&path, &text) {
                        Ok(Some((config, found))) => {
                            problems.extend(found);
                            Some(Arc::new(config))
                        }
                        Ok(None) => None,
                        Err(err) => {
                            problems.push(err);
                            None
                        }
                    },
                    Err(err) => {
                        problems.push(format!("{}: cannot read: {err}", path.display()));
                        None
                    }
                };
                self.files.insert(path.clone(), Read { stamp, config });
            }
            if let Some(config) = &self.files[&path].config {
                return (config.clone(), problems);
            }
        }
        (Arc::new(Config::default()), problems)
    }

    /// Forgets every file read, so the next resolution reads them again.
    pub fn clear(&mut self) {
        self.files.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn editor_sections() {
        let (config, problems) = editor_settings(&json!({"cute-lsp": {"ignore": ["deadlock"], "path": "x"}})).unwrap();
        assert!(!config.is_enabled("deadlock"));
        assert!(problems.is_empty(), "{problems:?}");
        let (config, _) = editor_settings(&json!({"max-states": 7})).unwrap();
        assert_eq!(config.max_states, Some(7));
        assert!(editor_settings(&Value::Null).is_none());
        assert!(editor_settings(&json!({"pylsp": {"plugins": {}}})).is_none());
        // The selection keys mark a section sent without its wrapper too.
        let (config, _) = editor_settings(&json!({"extendSelect": ["deadlock"], "select": ["CUTE001"]})).unwrap();
        assert!(config.is_enabled("deadlock") && config.is_enabled("untoggled-phase") && !config.is_enabled("smem-race"));
        // An explicit empty section resets to the defaults.
        assert_eq!(editor_settings(&json!({"cute-lsp": {}})).unwrap().0, Config::default());
    }

    #[test]
    fn project_files_are_reread_when_they_change() {
        let root = std::env::temp_dir().join(format!("cute-lsp-settings-{}", std::process::id()));
        std::fs::create_dir_all(root.join("src")).unwrap();
        let pyproject = root.join("pyproject.toml");
        std::fs::write(&pyproject, "[tool.cute-lsp]\nignore = [\"deadlock\"]\nbogus = 1\n").unwrap();
        let file = root.join("src").join("k.py");
        let mut configs = ProjectConfigs::default();
        let (config, problems) = configs.resolve(&file);
        assert!(!config.is_enabled("deadlock"));
        assert_eq!(problems.len(), 1, "{problems:?}");
        // Unchanged: not read again, so the problem is not reported again.
        let (_, problems) = configs.resolve(&file);
        assert!(problems.is_empty(), "{problems:?}");
        // A change of size is seen without any notification.
        std::fs::write(&pyproject, "[tool.cute-lsp]\nignore = [\"untoggled-phase\"]\n").unwrap();
        let (config, problems) = configs.resolve(&file);
        assert!(config.is_enabled("deadlock") && !config.is_enabled("untoggled-phase"));
        assert!(problems.is_empty(), "{problems:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_cute_lsp_toml_comes_before_the_pyproject_beside_it() {
        let root = std::env::temp_dir().join(format!("cute-lsp-settings-files-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("pyproject.toml"), "[tool.cute-lsp]\nignore = [\"deadlock\"]\n").unwrap();
        let file = root.join("k.py");
        let mut configs = ProjectConfigs::default();
        assert!(!configs.resolve(&file).0.is_enabled("deadlock"));
        std::fs::write(root.join("cute-lsp.toml"), "select = [\"deadlock\"]\n").unwrap();
        let (config, problems) = configs.resolve(&file);
        assert!(config.is_enabled("deadlock") && !config.is_enabled("untoggled-phase"));
        assert!(problems.is_empty(), "{problems:?}");
        // Broken: said once, and the pyproject applies.
        std::fs::write(root.join("cute-lsp.toml"), "select = [\n").unwrap();
        let (config, problems) = configs.resolve(&file);
        assert!(!config.is_enabled("deadlock") && config.is_enabled("untoggled-phase"));
        assert_eq!(problems.len(), 1, "{problems:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
