//! `cute-lsp check`'s rule selection and run control on the command line,
//! as Ruff's: `--select`, `--extend-select`, `--ignore` and `--severity`
//! make one more layer of configuration, put on top of the file that
//! configures each checked file (`cute_lint::config`: a layer with `select`
//! starts the selection anew, one without adds and removes rules; within
//! the layer a rule turned off stays off), and `--output-file` says where
//! the report goes.
//!
//! Rules are named by name or code (codes in any case). An unknown rule or
//! level stops the run before anything is checked (exit status 2): a typo
//! in a CI job should fail it, not silence a rule.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

use cute_lint::config::{severity_named, Config};
use cute_lint::rules;

#[derive(clap::Args, Debug, Default)]
#[command(next_help_heading = "Rule selection")]
pub struct SelectionArgs {
    /// Only these rules (names or codes, comma-separated), in place of the
    /// configuration file's selection. analysis-incomplete (CUTE090) is a
    /// rule like the others: left out, the notes on kernels that could not
    /// be checked in full are hidden, and silence no longer means checked.
    #[arg(long, value_delimiter = ',', value_name = "RULE,...")]
    pub select: Option<Vec<String>>,
    /// These rules too, on top of what the configuration file selects (and
    /// back on where it ignores them).
    #[arg(long, value_delimiter = ',', value_name = "RULE,...")]
    pub extend_select: Vec<String>,
    /// Not these rules. Ignoring analysis-incomplete (CUTE090) hides the
    /// notes on kernels that could not be checked in full: silence then no
    /// longer means checked.
    #[arg(long, value_delimiter = ',', value_name = "RULE,...")]
    pub ignore: Vec<String>,
    /// A rule's severity, LEVEL one of error, warning, info, off
    /// (repeatable). A level other than off does not turn on a rule that is
    /// off.
    #[arg(long, value_delimiter = ',', value_name = "NAME=LEVEL")]
    pub severity: Vec<String>,
}

impl SelectionArgs {
    /// The command line's layer of configuration, or the message of the
    /// first rule or level that is not one.
    pub fn layer(&self) -> Result<Config, String> {
        let mut layer = Config::default();
        if let Some(select) = &self.select {
            layer.select = Some(named(select, "--select")?.into_iter().collect::<BTreeSet<_>>());
        }
        for rule in named(&self.extend_select, "--extend-select")? {
            layer.rules.insert(rule, true);
        }
        for rule in named(&self.ignore, "--ignore")? {
            layer.rules.insert(rule, false);
        }
        for setting in self.severity.iter().filter(|s| !s.is_empty()) {
            let Some((name, level)) = setting.split_once('=') else {
                return Err(format!("--severity takes NAME=LEVEL, not `{setting}`"));
            };
            let [rule] = named(&[name.trim().to_string()], "--severity")?[..] else {
                return Err(format!("--severity takes NAME=LEVEL, not `{setting}`"));
            };
            match severity_named(level.trim()) {
                Some(Some(severity)) => {
                    layer.severity.insert(rule, severity);
                }
                Some(None) => {
                    layer.rules.insert(rule, false);
                }
                None => {
                    return Err(format!(
                        "unknown level `{}` in --severity {setting}; the levels are error, warning, info and off",
                        level.trim()
                    ))
                }
            }
        }
        Ok(layer)
    }
}

/// The rules `names` name, by name or code; empty names are skipped (so
/// `--select ''` selects nothing).
fn named(names: &[String], flag: &str) -> Result<Vec<&'static str>, String> {
    names
        .iter()
        .map(|name| name.trim())
        .filter(|name| !name.is_empty())
        .map(|name| match rules::find(name) {
            Some(rule) => Ok(rule.name),
            None => Err(format!("unknown rule `{name}` in {flag}; `cute-lsp rules` lists them")),
        })
        .collect()
}

/// Where the report goes: the file `--output-file` names (created, or
/// emptied when it exists), or standard output.
pub fn report_output(path: Option<&Path>) -> Result<Box<dyn Write>, String> {
    match path {
        None => Ok(Box::new(std::io::stdout())),
        Some(path) => match std::fs::File::create(path) {
            Ok(file) => Ok(Box::new(std::io::BufWriter::new(file))),
            Err(e) => Err(format!("cannot write `{}`: {e}", path.display())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cute_lint::Severity;

    fn args(select: Option<&[&str]>, extend: &[&str], ignore: &[&str], severity: &[&str]) -> SelectionArgs {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        SelectionArgs {
            select: select.map(owned),
            extend_select: owned(extend),
            ignore: owned(ignore),
            severity: owned(severity),
        }
    }

    #[test]
    fn flags_make_a_layer_by_name_or_code() {
        let layer = args(Some(&["CUTE001", "deadlock"]), &["cute090"], &["Cute050"], &["untoggled-phase=warning", "smem-race = off"])
            .layer()
            .unwrap();
        assert_eq!(layer.select, Some(["untoggled-phase", "deadlock"].into_iter().collect()));
        assert!(layer.is_enabled("untoggled-phase") && layer.is_enabled("analysis-incomplete"));
        assert!(!layer.is_enabled("deadlock") && !layer.is_enabled("smem-race") && !layer.is_enabled("vacuous-wait"));
        assert_eq!(layer.severity.get("untoggled-phase"), Some(&Severity::Warning));
        assert_eq!(args(Some(&[""]), &[], &[], &[]).layer().unwrap().select, Some(BTreeSet::new()));
        assert_eq!(args(None, &[], &[], &[]).layer().unwrap(), Config::default());
    }

    #[test]
    fn a_name_or_level_that_is_none_is_an_error() {
        let err = |a: SelectionArgs| a.layer().unwrap_err();
        assert_eq!(err(args(Some(&["foo"]), &[], &[], &[])), "unknown rule `foo` in --select; `cute-lsp rules` lists them");
        assert!(err(args(None, &["CUTE999"], &[], &[])).contains("`CUTE999` in --extend-select"));
        assert!(err(args(None, &[], &["Deadlock"], &[])).contains("`Deadlock` in --ignore"));
        assert!(err(args(None, &[], &[], &["dedlock=error"])).contains("`dedlock` in --severity"));
        assert!(err(args(None, &[], &[], &["deadlock=loud"])).starts_with("unknown level `loud` in --severity deadlock=loud"));
        assert!(err(args(None, &[], &[], &["deadlock"])).contains("NAME=LEVEL"));
        assert!(err(args(None, &[], &[], &["=error"])).contains("NAME=LEVEL"));
    }
}
