//! Project and editor configuration: a `cute-lsp.toml` file (the keys at its
//! top level), `[tool.cute-lsp]` in `pyproject.toml`, and the same keys under
//! `cute-lsp` in an editor's settings.
//!
//! ```toml
//! [tool.cute-lsp]
//! select = ["untoggled-phase", "CUTE002"]      # only these rules, by name or code
//! extend-select = ["analysis-incomplete"]      # these too (on top of a `select` of another layer)
//! ignore = ["deadlock"]                        # rules off, by name or code
//! rules = { "analysis-incomplete" = false }    # the same, as a table (true turns a rule back on)
//! severity = { "untoggled-phase" = "warning" } # error | warning | info | off
//! max-states = 500000                          # explorer budget per kernel
//! max-time-ms = 1000
//! max-memory-mb = 1024                         # memory one exploration's states may take
//! request-deadline-ms = 30000                  # the server answers a request by then, checked or not
//! src = ["src", "../shared"]                   # further roots absolute imports are found under
//! python = ".venv/bin/python"                  # the environment whose installed packages imports may reach
//! target = "sm_100a"                           # the GPU the kernels are for (else `CUTE_DSL_ARCH`, else sm_90a)
//! ```
//!
//! Which rules run, as Ruff selects them: without `select` every rule is on;
//! `select` keeps only the rules it names; `extend-select` adds rules,
//! `ignore` (and a severity `off`) takes them away, and within one layer a
//! rule they turn off stays off whatever `select` or `extend-select` say.
//! Layers ([`Config::with`]:
//! the project file, then the editor's settings or the command line) apply
//! in order: a layer with `select` starts the selection anew (what the layers
//! below selected or ignored no longer counts), a layer without one adds and
//! removes rules from what the layers below left. Severities are not a
//! selection: a level other than `off` changes the severity of a rule that
//! is on and does not turn on one that is off.
//!
//! The file that configures a source file is the nearest one, looking from
//! the file's directory up: in each directory a `cute-lsp.toml` first (even
//! an empty one), then a `pyproject.toml` with a `[tool.cute-lsp]` table
//! ([`discover`]).
//!
//! Reading never fails on content: what is malformed is skipped and reported
//! as a problem, so one typo does not silence the linter.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::{rules, AnalysisOptions, Diagnostic, Severity};

/// The settings, each `None`/absent when not set, so that layers combine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// `select`: when set, the rules on, by name; the others are off unless
    /// `rules` turns them on. `None`: every rule is on.
    pub select: Option<BTreeSet<&'static str>>,
    /// Rules explicitly on or off, by name, whatever `select` says
    /// (`extend-select` turns rules on here, `ignore` turns them off).
    pub rules: BTreeMap<&'static str, bool>,
    /// Severity overrides, by rule name.
    pub severity: BTreeMap<&'static str, Severity>,
    pub max_states: Option<usize>,
    pub max_time: Option<Duration>,
    pub max_memory_mb: Option<usize>,
    /// `request-deadline-ms`: how long the server waits for a check before
    /// it answers a request with an `analysis-incomplete` note instead (the
    /// check goes on; see [`Config::request_deadline`]).
    pub request_deadline_ms: Option<u64>,
    /// `src`: directories absolute imports are also searched under (as
    /// written; [`discover`] makes them relative to the file that names
    /// them), for layouts where a package's root is not where walking up its
    /// `__init__.py` files ends.
    pub src: Vec<PathBuf>,
    /// `target`: the GPU architecture the kernels are for (`sm_90a`), for
    /// how many CTAs fit at once (`forward-progress`).
    pub target: Option<String>,
    /// `python`: the Python environment the kernels run in (its interpreter
    /// or its directory; [`discover`] makes it relative to the file that
    /// names it), whose installed packages absolute imports also reach
    /// (see [`Config::environment_roots`]).
    pub python: Option<PathBuf>,
}

/// The configuration file of its own, with the keys at its top level.
pub const FILE_NAME: &str = "cute-lsp.toml";

/// Settings a client keeps in the same section for itself (the binary, its
/// protocol trace); the server ignores them without a warning.
const CLIENT_KEYS: &[&str] = &["path", "trace"];

/// `max-states`, `max_states` and `maxStates` all name the same key.
fn normalize_key(key: &str) -> String {
    key.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect()
}

/// A severity level by name (`error`, `warning`, `info`, `off` and their
/// usual aliases): `Some(None)` for off, `None` for a name that is no level.
pub fn severity_named(name: &str) -> Option<Option<Severity>> {
    match name.to_ascii_lowercase().as_str() {
        "error" => Some(Some(Severity::Error)),
        "warning" | "warn" => Some(Some(Severity::Warning)),
        "info" | "information" | "hint" => Some(Some(Severity::Info)),
        "off" | "ignore" | "none" => Some(None),
        _ => None,
    }
}

fn positive(value: &Value) -> Option<u64> {
    value.as_u64().filter(|n| *n > 0)
}

impl Config {
    /// Reads the keys of one settings object (`[tool.cute-lsp]` as JSON, or
    /// an editor's `cute-lsp` section). Returns the settings and the problems
    /// found, each naming `origin`.
    pub fn from_value(value: &Value, origin: &str) -> (Config, Vec<String>) {
        let mut config = Config::default();
        let mut problems = Vec::new();
        let Some(table) = value.as_object() else {
            if !value.is_null() {
                problems.push(format!("{origin}: expected a table of settings, found {value}"));
            }
            return (config, problems);
        };
        let rule = |name: &Value, what: &str, problems: &mut Vec<String>| -> Option<&'static str> {
            let Some(name) = name.as_str() else {
                problems.push(format!("{origin}: {what}: expected a rule name, found {name}"));
                return None;
            };
            match rules::find(name) {
                Some(r) => Some(r.name),
                None => {
                    let known: Vec<&str> = rules::ALL.iter().map(|r| r.name).collect();
                    problems.push(format!("{origin}: {what}: unknown rule `{name}` (rules: {})", known.join(", ")));
                    None
                }
            }
        };
        for (key, value) in table {
            match normalize_key(key).as_str() {
                "ignore" | "select" | "extendselect" => {
                    let names = match value {
                        Value::Array(items) => items.clone(),
                        Value::String(_) => vec![value.clone()],
                        _ => {
                            problems.push(format!("{origin}: {key}: expected a list of rule names, found {value}"));
                            continue;
                        }
                    };
                    let given = names.len();
                    let names: Vec<&'static str> = names.iter().filter_map(|name| rule(name, key, &mut problems)).collect();
                    match normalize_key(key).as_str() {
                        "ignore" => config.rules.extend(names.into_iter().map(|name| (name, false))),
                        // A list of typos selects nothing rather than
                        // silencing every rule (`select = []` does).
                        "select" if given > 0 && names.is_empty() => {}
                        "select" => config.select.get_or_insert_with(BTreeSet::new).extend(names),
                        // A rule this layer turns off (`ignore`, a severity
                        // `off`, whichever key comes first) stays off.
                        _ => {
                            for name in names {
                                config.rules.entry(name).or_insert(true);
                            }
                        }
                    }
                }
                "rules" => {
                    let Some(entries) = value.as_object() else {
                        problems.push(format!("{origin}: {key}: expected a table of rule = true/false, found {value}"));
                        continue;
                    };
                    for (name, on) in entries {
                        let Some(name) = rule(&Value::String(name.clone()), key, &mut problems) else { continue };
                        match on.as_bool() {
                            Some(on) => {
                                config.rules.insert(name, on);
                            }
                            None => problems.push(format!("{origin}: {key}.{name}: expected true or false, found {on}")),
                        }
                    }
                }
                "severity" => {
                    let Some(entries) = value.as_object() else {
                        problems.push(format!("{origin}: {key}: expected a table of rule = \"error\"/\"warning\"/\"info\"/\"off\", found {value}"));
                        continue;
                    };
                    for (name, level) in entries {
                        let Some(name) = rule(&Value::String(name.clone()), key, &mut problems) else { continue };
                        match level.as_str().and_then(severity_named) {
                            Some(Some(severity)) => {
                                config.severity.insert(name, severity);
                            }
                            Some(None) => {
                                config.rules.insert(name, false);
                            }
                            None => problems.push(format!(
                                "{origin}: {key}.{name}: expected \"error\", \"warning\", \"info\" or \"off\", found {level}"
                            )),
                        }
                    }
                }
                "maxstates" => match positive(value).and_then(|n| usize::try_from(n).ok()) {
                    Some(n) => config.max_states = Some(n),
                    None => problems.push(format!("{origin}: {key}: expected a positive integer, found {value}")),
                },
                "src" => match value {
                    Value::Array(items) if items.iter().all(Value::is_string) => {
                        config.src.extend(items.iter().filter_map(Value::as_str).map(PathBuf::from));
                    }
                    Value::String(dir) => config.src.push(PathBuf::from(dir)),
                    _ => problems.push(format!("{origin}: {key}: expected a list of directories, found {value}")),
                },
                "python" => match value.as_str() {
                    Some(p) if !p.is_empty() => config.python = Some(PathBuf::from(p)),
                    _ => problems.push(format!("{origin}: {key}: expected the path of a Python interpreter or environment, found {value}")),
                },
                "target" => match value.as_str() {
                    Some(t) if cute_check::progress::arch(t).is_some() => config.target = Some(t.to_string()),
                    _ => problems.push(format!(
                        "{origin}: {key}: expected one of \"sm_80\", \"sm_90a\", \"sm_100a\", \"sm_120a\", found {value}"
                    )),
                },
                "maxmemorymb" => match positive(value).and_then(|n| usize::try_from(n).ok()) {
                    Some(n) => config.max_memory_mb = Some(n),
                    None => problems.push(format!("{origin}: {key}: expected a positive number of megabytes, found {value}")),
                },
                "requestdeadlinems" => match positive(value) {
                    Some(n) => config.request_deadline_ms = Some(n),
                    None => problems.push(format!("{origin}: {key}: expected a positive number of milliseconds, found {value}")),
                },
                "maxtimems" => match positive(value) {
                    Some(n) => config.max_time = Some(Duration::from_millis(n)),
                    None => problems.push(format!("{origin}: {key}: expected a positive number of milliseconds, found {value}")),
                },
                other if CLIENT_KEYS.contains(&other) => {}
                _ => problems.push(format!("{origin}: unknown setting `{key}`")),
            }
        }
        (config, problems)
    }

    /// `[tool.cute-lsp]` of a `pyproject.toml`'s text: `Ok(None)` when the
    /// file has no such table, `Err` when it is not TOML.
    pub fn from_pyproject(text: &str, origin: &str) -> Result<Option<(Config, Vec<String>)>, String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            format!("{origin}: not valid TOML: {}", e.message())
        })?;
        let Some(section) = table.get("tool").and_then(|t| t.get("cute-lsp")) else { return Ok(None) };
        let origin = format!("{origin}: [tool.cute-lsp]");
        Ok(Some(Config::from_value(&toml_to_json(section), &origin)))
    }

    /// A `cute-lsp.toml`'s text: its top-level keys are the settings; `Err`
    /// when it is not TOML.
    pub fn from_cute_lsp_toml(text: &str, origin: &str) -> Result<(Config, Vec<String>), String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            format!("{origin}: not valid TOML: {}", e.message())
        })?;
        Ok(Config::from_value(&toml_to_json(&toml::Value::Table(table)), origin))
    }

    /// The configuration in the file at `path` with the text `text`: a
    /// `cute-lsp.toml` (always configures) or a `pyproject.toml` (when it
    /// has a `[tool.cute-lsp]` table). `Ok(None)` when the file does not
    /// configure, `Err` when it is not TOML.
    pub fn from_file(path: &Path, text: &str) -> Result<Option<(Config, Vec<String>)>, String> {
        let origin = path.display().to_string();
        if path.file_name().is_some_and(|name| name == FILE_NAME) {
            Config::from_cute_lsp_toml(text, &origin).map(Some)
        } else {
            Config::from_pyproject(text, &origin)
        }
    }

    /// These settings with `over`'s on top: a key `over` sets wins. A
    /// `select` in `over` starts the selection anew: the rules these
    /// settings select or turn off no longer count; without one, `over`
    /// turns rules on and off on top of these.
    pub fn with(&self, over: &Config) -> Config {
        let mut out = self.clone();
        if over.select.is_some() {
            out.select = over.select.clone();
            out.rules = over.rules.clone();
        } else {
            out.rules.extend(over.rules.iter().map(|(k, v)| (*k, *v)));
        }
        out.severity.extend(over.severity.iter().map(|(k, v)| (*k, *v)));
        out.max_states = over.max_states.or(self.max_states);
        out.max_time = over.max_time.or(self.max_time);
        out.max_memory_mb = over.max_memory_mb.or(self.max_memory_mb);
        out.request_deadline_ms = over.request_deadline_ms.or(self.request_deadline_ms);
        out.src.extend(over.src.iter().cloned());
        out.target = over.target.clone().or(out.target);
        out.python = over.python.clone().or(out.python);
        out
    }

    /// The `site-packages` directories of the Python environment the kernels
    /// run in, searched after `src` for absolute imports, so that a kernel
    /// library installed there (`from quack import copy_utils`) is followed
    /// as a package's own modules are: read as source, never run. The
    /// environment is `python` when configured (an interpreter, whose
    /// environment is the directory above its `bin`, or the environment's
    /// directory), else the active virtual environment (`virtual_env`, from
    /// `$VIRTUAL_ENV`), else a `.venv` beside the configuration file. The
    /// interpreter on `PATH` is not taken: which one a shell finds says
    /// nothing of the project, and its packages are the whole system's.
    pub fn environment_roots(&self, config_file: Option<&Path>, virtual_env: Option<&Path>) -> Vec<PathBuf> {
        let beside = config_file.and_then(Path::parent).map(|d| d.join(".venv"));
        let env = match &self.python {
            Some(p) if p.is_file() => p.parent().and_then(Path::parent).map(Path::to_path_buf),
            Some(p) => Some(p.clone()),
            None => virtual_env.map(Path::to_path_buf).or(beside),
        };
        let Some(env) = env.filter(|e| e.is_dir()) else { return Vec::new() };
        // `lib/python3.11/site-packages` (POSIX), `Lib/site-packages` (Windows).
        let mut roots: Vec<PathBuf> = std::fs::read_dir(env.join("lib"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
            .map(|e| e.path().join("site-packages"))
            .chain(std::iter::once(env.join("Lib").join("site-packages")))
            .filter(|d| d.is_dir())
            .collect();
        // nvidia-cutlass-dsl puts its `cutlass` package on the path through
        // a `.pth` file that runs code; its place is known.
        let dsl: Vec<PathBuf> = roots.iter().map(|r| r.join("nvidia_cutlass_dsl").join("dsl_packages")).filter(|d| d.is_dir()).collect();
        roots.extend(dsl);
        roots.sort();
        roots.dedup();
        roots
    }

    /// Whether the rule named `rule` runs: on or off in `rules`, else
    /// whether `select` (when set) names it.
    pub fn is_enabled(&self, rule: &str) -> bool {
        match self.rules.get(rule) {
            Some(&on) => on,
            None => self.select.as_ref().is_none_or(|selected| selected.contains(rule)),
        }
    }

    /// How long the server waits for a check of a document before it
    /// answers the request that needs it without the findings: a backstop
    /// for the budgets of the analysis, which bound each kernel but not a
    /// file of many (default 30 s).
    pub fn request_deadline(&self) -> Duration {
        Duration::from_millis(self.request_deadline_ms.unwrap_or(30_000))
    }

    /// The analysis budgets, defaults where not set.
    pub fn analysis_options(&self) -> AnalysisOptions {
        let default = AnalysisOptions::default();
        AnalysisOptions {
            max_states: self.max_states.unwrap_or(default.max_states),
            max_time: self.max_time.unwrap_or(default.max_time),
            max_bytes: self.max_memory_mb.map_or(default.max_bytes, |mb| mb.saturating_mul(1 << 20)),
            target: self.target.clone(),
            ..default
        }
    }

    /// The diagnostics of enabled rules, with severities overridden.
    pub fn apply(&self, diagnostics: &[Diagnostic]) -> Vec<Diagnostic> {
        diagnostics
            .iter()
            .filter(|d| self.is_enabled(d.name))
            .map(|d| match self.severity.get(d.name) {
                Some(&severity) if severity != d.severity => Diagnostic { severity, ..d.clone() },
                _ => d.clone(),
            })
            .collect()
    }
}

fn toml_to_json(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::from(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => Value::Object(table.iter().map(|(k, v)| (k.clone(), toml_to_json(v))).collect()),
    }
}

/// The files that could configure `file`, nearest first: in each directory
/// from the file's up to the root, its `cute-lsp.toml` and then its
/// `pyproject.toml`, those that exist.
pub fn candidates(file: &Path) -> Vec<PathBuf> {
    file.ancestors()
        .skip(1)
        .flat_map(|dir| [dir.join(FILE_NAME), dir.join("pyproject.toml")])
        .filter(|p| p.is_file())
        .collect()
}

/// The configuration of `file`: the nearest `cute-lsp.toml`, or
/// `pyproject.toml` with a `[tool.cute-lsp]` table (as Ruff looks for
/// `ruff.toml` and `pyproject.toml`), with the problems found reading it and
/// the path of the file it comes from. Unreadable or invalid files are
/// reported and skipped.
pub fn discover(file: &Path) -> (Config, Option<PathBuf>, Vec<String>) {
    let mut problems = Vec::new();
    for path in candidates(file) {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) => {
                problems.push(format!("{}: cannot read: {err}", path.display()));
                continue;
            }
        };
        match Config::from_file(&path, &text) {
            Ok(Some((mut config, found))) => {
                problems.extend(found);
                let dir = path.parent().unwrap_or(Path::new("."));
                config.src = config.src.iter().map(|d| dir.join(d)).collect();
                config.python = config.python.as_ref().map(|p| dir.join(p));
                for missing in config.src.iter().filter(|d| !d.is_dir()) {
                    problems.push(format!("{}: src: `{}` is not a directory", path.display(), missing.display()));
                }
                return (config, Some(path), problems);
            }
            Ok(None) => {}
            Err(err) => problems.push(err),
        }
    }
    (Config::default(), None, problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cute_syntax::TextRange;
    use serde_json::json;

    fn diag(name: &'static str, code: &'static str, severity: Severity) -> Diagnostic {
        Diagnostic {
            code,
            name,
            severity,
            message: String::new(),
            range: TextRange::new(0, 1),
            label: String::new(),
            related: Vec::new(),
            notes: Vec::new(),
            help: None,
            fixes: Vec::new(),
        }
    }

    #[test]
    fn reads_the_pyproject_table() {
        let text = r#"
[project]
name = "kernels"

[tool.cute-lsp]
ignore = ["deadlock", "CUTE090"]
severity = { "untoggled-phase" = "warning" }
max-states = 1000
max-time-ms = 250
"#;
        let (config, problems) = Config::from_pyproject(text, "pyproject.toml").unwrap().unwrap();
        assert_eq!(problems, Vec::<String>::new());
        assert!(!config.is_enabled("deadlock"));
        assert!(!config.is_enabled("analysis-incomplete"));
        assert!(config.is_enabled("untoggled-phase"));
        assert_eq!(config.severity.get("untoggled-phase"), Some(&Severity::Warning));
        let options = config.analysis_options();
        assert_eq!(options.max_states, 1000);
        assert_eq!(options.max_time, Duration::from_millis(250));
        assert_eq!(options.unknown_trip_count, AnalysisOptions::default().unknown_trip_count);
    }

    #[test]
    fn sub_table_form_and_absent_table() {
        let text = "[tool.cute-lsp.severity]\nuntoggled-phase = \"info\"\n";
        let (config, _) = Config::from_pyproject(text, "p").unwrap().unwrap();
        assert_eq!(config.severity.get("untoggled-phase"), Some(&Severity::Info));
        assert_eq!(Config::from_pyproject("[tool.ruff]\nline-length = 1\n", "p").unwrap(), None);
        let err = Config::from_pyproject("[tool.cute-lsp\n", "p").unwrap_err();
        assert!(err.starts_with("p: not valid TOML"), "{err}");
    }

    #[test]
    fn problems_are_reported_and_the_rest_applies() {
        let (config, problems) = Config::from_value(
            &json!({
                "ignore": ["dedlock", 3, "deadlock"],
                "severity": {"untoggled-phase": "loud", "deadlock": "off"},
                "rules": {"analysis-incomplete": "no"},
                "max-states": -1,
                "maxTimeMs": 10,
                "colour": "blue",
                "path": "/bin/cute-lsp",
            }),
            "settings",
        );
        assert!(!config.is_enabled("deadlock"));
        assert_eq!(config.max_states, None);
        assert_eq!(config.max_time, Some(Duration::from_millis(10)));
        assert!(config.severity.is_empty());
        let all = problems.join("\n");
        for expected in ["unknown rule `dedlock`", "found 3", "found \"loud\"", "found \"no\"", "found -1", "unknown setting `colour`"] {
            assert!(all.contains(expected), "{expected} not in:\n{all}");
        }
        assert!(!all.contains("path"), "{all}");
        assert_eq!(problems.len(), 6, "{all}");
    }

    #[test]
    fn memory_budget_and_source_roots() {
        let (project, problems) = Config::from_value(&json!({"max-memory-mb": 64, "src": ["lib", "vendor"]}), "p");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(project.analysis_options().max_bytes, 64 << 20);
        assert_eq!(project.src, [PathBuf::from("lib"), PathBuf::from("vendor")]);
        let (editor, _) = Config::from_value(&json!({"maxMemoryMb": 8}), "e");
        assert_eq!(project.with(&editor).analysis_options().max_bytes, 8 << 20, "the editor's layer wins");
        assert_eq!(Config::default().analysis_options().max_bytes, cute_check::explore::DEFAULT_MAX_BYTES);
        let (_, problems) = Config::from_value(&json!({"max-memory-mb": 0, "src": 3}), "p");
        assert_eq!(problems.len(), 2, "{problems:?}");
    }

    #[test]
    fn the_target_gpu() {
        let (project, problems) = Config::from_value(&json!({"target": "sm_100a"}), "p");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(project.analysis_options().target.as_deref(), Some("sm_100a"));
        let (editor, _) = Config::from_value(&json!({"target": "sm_80"}), "e");
        assert_eq!(project.with(&editor).analysis_options().target.as_deref(), Some("sm_80"), "the editor's layer wins");
        assert_eq!(project.with(&Config::default()).analysis_options().target.as_deref(), Some("sm_100a"));
        assert_eq!(Config::default().analysis_options().target, None);
        // A GPU the table does not hold, or not a string.
        for bad in [json!({"target": "sm_75"}), json!({"target": 90})] {
            let (config, problems) = Config::from_value(&bad, "p");
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert_eq!(config.target, None);
        }
    }

    #[test]
    fn layers_and_application() {
        let (project, _) = Config::from_value(&json!({"ignore": ["deadlock"], "max-states": 5}), "p");
        let (editor, _) = Config::from_value(
            &json!({"rules": {"deadlock": true, "untoggled-phase": false}, "severity": {"CUTE090": "error"}}),
            "e",
        );
        let both = project.with(&editor);
        assert!(both.is_enabled("deadlock"));
        assert!(!both.is_enabled("untoggled-phase"));
        assert_eq!(both.max_states, Some(5));
        let diags = [
            diag("untoggled-phase", "CUTE001", Severity::Error),
            diag("deadlock", "CUTE050", Severity::Warning),
            diag("analysis-incomplete", "CUTE090", Severity::Info),
        ];
        let out = both.apply(&diags);
        assert_eq!(out.iter().map(|d| (d.name, d.severity)).collect::<Vec<_>>(), [
            ("deadlock", Severity::Warning),
            ("analysis-incomplete", Severity::Error)
        ]);
        assert_eq!(Config::default().apply(&diags), diags);
    }

    #[test]
    fn discovery_takes_the_nearest_file_with_the_table() {
        let root = std::env::temp_dir().join(format!("cute-lint-config-{}", std::process::id()));
        let inner = root.join("pkg").join("kernels");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(root.join("pyproject.toml"), "[tool.cute-lsp]\nignore = [\"deadlock\"]\n").unwrap();
        // Nearer, but without the table: skipped.
        std::fs::write(root.join("pkg").join("pyproject.toml"), "[project]\nname = \"pkg\"\n").unwrap();
        let (config, path, problems) = discover(&inner.join("k.py"));
        assert_eq!(path.as_deref(), Some(root.join("pyproject.toml").as_path()));
        assert!(!config.is_enabled("deadlock"));
        assert!(problems.is_empty(), "{problems:?}");
        // A broken nearer file is reported and skipped.
        std::fs::write(root.join("pkg").join("pyproject.toml"), "[tool.cute-lsp\n").unwrap();
        let (config, _, problems) = discover(&inner.join("k.py"));
        assert!(!config.is_enabled("deadlock"));
        assert_eq!(problems.len(), 1, "{problems:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    fn enabled(config: &Config) -> Vec<&'static str> {
        rules::ALL.iter().map(|r| r.name).filter(|name| config.is_enabled(name)).collect()
    }

    #[test]
    fn select_extend_select_and_ignore_in_one_file() {
        let text = r#"
[tool.cute-lsp]
select = ["untoggled-phase", "CUTE050", "cute001"]
extend-select = ["cute090", "vacuous-wait"]
ignore = ["deadlock"]
severity = { "vacuous-wait" = "off" }
"#;
        let (config, problems) = Config::from_pyproject(text, "p").unwrap().unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        // `ignore` and a severity `off` win over `select` and `extend-select`.
        assert_eq!(enabled(&config), ["untoggled-phase", "analysis-incomplete"]);
        let diags = [
            diag("untoggled-phase", "CUTE001", Severity::Error),
            diag("vacuous-wait", "CUTE002", Severity::Error),
            diag("deadlock", "CUTE050", Severity::Warning),
            diag("analysis-incomplete", "CUTE090", Severity::Info),
        ];
        let names: Vec<&str> = config.apply(&diags).iter().map(|d| d.name).collect();
        assert_eq!(names, ["untoggled-phase", "analysis-incomplete"]);
        // The same keys in the other order: the same selection.
        let (again, _) = Config::from_value(
            &json!({"severity": {"vacuous-wait": "off"}, "ignore": "deadlock", "extendSelect": ["vacuous-wait", "CUTE090"], "select": ["CUTE001", "deadlock"]}),
            "e",
        );
        assert_eq!(enabled(&again), ["untoggled-phase", "analysis-incomplete"]);
    }

    #[test]
    fn an_empty_select_turns_every_rule_off_and_a_list_of_typos_none() {
        let (config, problems) = Config::from_value(&json!({"select": []}), "p");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(enabled(&config), Vec::<&str>::new());
        let (config, problems) = Config::from_value(&json!({"select": [], "extend-select": ["deadlock"]}), "p");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(enabled(&config), ["deadlock"]);
        // Every name a typo: reported, and the linter is not silenced.
        let (config, problems) = Config::from_value(&json!({"select": ["dedlock"]}), "p");
        assert_eq!(config.select, None);
        assert_eq!(enabled(&config).len(), rules::ALL.len());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("select: unknown rule `dedlock`"), "{problems:?}");
        // One typo among names: the others are selected.
        let (config, problems) = Config::from_value(&json!({"select": ["dedlock", "deadlock"], "extend-select": 7}), "p");
        assert_eq!(enabled(&config), ["deadlock"]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("extend-select: expected a list of rule names, found 7")), "{problems:?}");
    }

    #[test]
    fn a_layer_with_select_starts_anew_and_one_without_adds_and_removes() {
        let (file, _) = Config::from_value(
            &json!({"select": ["untoggled-phase", "deadlock"], "ignore": ["deadlock"], "severity": {"untoggled-phase": "warning"}}),
            "file",
        );
        assert_eq!(enabled(&file), ["untoggled-phase"]);
        // Without `select`: on top of the file's selection.
        let (over, _) = Config::from_value(&json!({"extend-select": ["deadlock", "smem-race"], "ignore": ["untoggled-phase"]}), "cli");
        assert_eq!(enabled(&file.with(&over)), ["smem-race", "deadlock"]);
        // With `select`: the file's selection and ignores no longer count,
        // its severities still do.
        let (over, _) = Config::from_value(&json!({"select": ["deadlock", "CUTE001"]}), "cli");
        let both = file.with(&over);
        assert_eq!(enabled(&both), ["untoggled-phase", "deadlock"]);
        assert_eq!(both.severity.get("untoggled-phase"), Some(&Severity::Warning));
        // A level is not a selection.
        let (over, _) = Config::from_value(&json!({"severity": {"smem-race": "error"}}), "cli");
        assert!(!file.with(&over).is_enabled("smem-race"));
        // Layers without the new keys combine as before.
        let (a, _) = Config::from_value(&json!({"ignore": ["deadlock"]}), "a");
        let (b, _) = Config::from_value(&json!({"rules": {"deadlock": true}}), "b");
        assert_eq!(a.with(&b).select, None);
        assert_eq!(enabled(&a.with(&b)).len(), rules::ALL.len());
        assert_eq!(a.with(&Config::default()), a);
    }

    #[test]
    fn cute_lsp_toml_takes_its_keys_at_the_top_level() {
        let (config, problems) =
            Config::from_cute_lsp_toml("select = [\"deadlock\"]\nmax-states = 9\n[severity]\ndeadlock = \"warning\"\n", "c").unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(enabled(&config), ["deadlock"]);
        assert_eq!(config.max_states, Some(9));
        assert_eq!(config.severity.get("deadlock"), Some(&Severity::Warning));
        assert!(Config::from_cute_lsp_toml("select = [", "c").unwrap_err().starts_with("c: not valid TOML"));
        // By file name: a `cute-lsp.toml` always configures, even empty; a
        // `pyproject.toml` only with the table.
        assert_eq!(Config::from_file(Path::new("/p/cute-lsp.toml"), "").unwrap(), Some((Config::default(), Vec::new())));
        assert_eq!(Config::from_file(Path::new("/p/pyproject.toml"), "ignore = [\"deadlock\"]\n").unwrap(), None);
        let (_, problems) = Config::from_file(Path::new("/p/cute-lsp.toml"), "[tool.cute-lsp]\nignore = []\n").unwrap().unwrap();
        assert_eq!(problems, ["/p/cute-lsp.toml: unknown setting `tool`"]);
    }

    #[test]
    fn discovery_prefers_cute_lsp_toml_in_the_same_directory() {
        let root = std::env::temp_dir().join(format!("cute-lint-config-files-{}", std::process::id()));
        let inner = root.join("pkg");
        std::fs::create_dir_all(&inner).unwrap();
        let file = inner.join("k.py");
        std::fs::write(root.join("cute-lsp.toml"), "ignore = [\"deadlock\"]\n").unwrap();
        std::fs::write(inner.join("pyproject.toml"), "[tool.cute-lsp]\nignore = [\"smem-race\"]\n").unwrap();
        // The nearer directory wins, whatever its file is called.
        let (config, path, _) = discover(&file);
        assert_eq!(path.as_deref(), Some(inner.join("pyproject.toml").as_path()));
        assert!(config.is_enabled("deadlock") && !config.is_enabled("smem-race"));
        // In one directory, `cute-lsp.toml` before `pyproject.toml`.
        std::fs::write(inner.join("cute-lsp.toml"), "select = [\"smem-race\"]\n").unwrap();
        let (config, path, _) = discover(&file);
        assert_eq!(path.as_deref(), Some(inner.join("cute-lsp.toml").as_path()));
        assert_eq!(enabled(&config), ["smem-race"]);
        assert_eq!(candidates(&file)[..3], [inner.join("cute-lsp.toml"), inner.join("pyproject.toml"), root.join("cute-lsp.toml")]);
        // A broken one is reported and the next file applies.
        std::fs::write(inner.join("cute-lsp.toml"), "select = [\n").unwrap();
        let (config, path, problems) = discover(&file);
        assert_eq!(path.as_deref(), Some(inner.join("pyproject.toml").as_path()));
        assert!(!config.is_enabled("smem-race"));
        assert_eq!(problems.len(), 1, "{problems:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
