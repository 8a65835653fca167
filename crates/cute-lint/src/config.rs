//! Project and editor configuration: `[tool.cute-lsp]` in `pyproject.toml`,
//! and the same keys under `cute-lsp` in an editor's settings.
//!
//! ```toml
//! [tool.cute-lsp]
//! ignore = ["deadlock"]                        # rules off, by name or code
//! rules = { "analysis-incomplete" = false }    # the same, as a table (true turns a rule back on)
//! severity = { "untoggled-phase" = "warning" } # error | warning | info | off
//! max-states = 500000                          # explorer budget per kernel
//! max-time-ms = 1000
//! ```
//!
//! Reading never fails on content: what is malformed is skipped and reported
//! as a problem, so one typo does not silence the linter.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::{rules, AnalysisOptions, Diagnostic, Severity};

/// The settings, each `None`/absent when not set, so that layers combine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Rules explicitly on or off, by name. Rules not listed are on.
    pub rules: BTreeMap<&'static str, bool>,
    /// Severity overrides, by rule name.
    pub severity: BTreeMap<&'static str, Severity>,
    pub max_states: Option<usize>,
    pub max_time: Option<Duration>,
}

/// Settings a client keeps in the same section for itself (the binary, its
/// protocol trace); the server ignores them without a warning.
const CLIENT_KEYS: &[&str] = &["path", "trace"];

/// `max-states`, `max_states` and `maxStates` all name the same key.
fn normalize_key(key: &str) -> String {
    key.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect()
}

fn severity_named(name: &str) -> Option<Option<Severity>> {
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
                "ignore" => {
                    let names = match value {
                        Value::Array(items) => items.clone(),
                        Value::String(_) => vec![value.clone()],
                        _ => {
                            problems.push(format!("{origin}: {key}: expected a list of rule names, found {value}"));
                            continue;
                        }
                    };
                    for name in &names {
                        if let Some(name) = rule(name, key, &mut problems) {
                            config.rules.insert(name, false);
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

    /// These settings with `over`'s on top: a key `over` sets wins.
    pub fn with(&self, over: &Config) -> Config {
        let mut out = self.clone();
        out.rules.extend(over.rules.iter().map(|(k, v)| (*k, *v)));
        out.severity.extend(over.severity.iter().map(|(k, v)| (*k, *v)));
        out.max_states = over.max_states.or(self.max_states);
        out.max_time = over.max_time.or(self.max_time);
        out
    }

    pub fn is_enabled(&self, rule: &str) -> bool {
        self.rules.get(rule).copied().unwrap_or(true)
    }

    /// The analysis budgets, defaults where not set.
    pub fn analysis_options(&self) -> AnalysisOptions {
        let default = AnalysisOptions::default();
        AnalysisOptions {
            max_states: self.max_states.unwrap_or(default.max_states),
            max_time: self.max_time.unwrap_or(default.max_time),
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

/// The `pyproject.toml` files that could configure `file`, nearest first:
/// one in each directory from the file's up to the root that has one.
pub fn pyproject_candidates(file: &Path) -> Vec<PathBuf> {
    file.ancestors().skip(1).map(|dir| dir.join("pyproject.toml")).filter(|p| p.is_file()).collect()
}

/// The configuration of `file`: the nearest `pyproject.toml` with a
/// `[tool.cute-lsp]` table (as Ruff and most Python tools look), with the
/// problems found reading it. Unreadable or invalid files are reported and
/// skipped.
pub fn discover(file: &Path) -> (Config, Option<PathBuf>, Vec<String>) {
    let mut problems = Vec::new();
    for path in pyproject_candidates(file) {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) => {
                problems.push(format!("{}: cannot read: {err}", path.display()));
                continue;
            }
        };
        match Config::from_pyproject(&text, &path.display().to_string()) {
            Ok(Some((config, found))) => {
                problems.extend(found);
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
}
