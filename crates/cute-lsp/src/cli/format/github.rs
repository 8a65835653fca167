//! `--format github`: one GitHub Actions workflow command per finding,
//!
//! ```text
//! ::error file=k.py,line=78,endLine=78,col=9,endColumn=56,title=CUTE001 untoggled-phase::`jacobi_kernel` can hang ...
//! ```
//!
//! which a workflow step turns into an annotation on the line of the pull
//! request's diff. The command is `error`, `warning` or `notice` after the
//! finding's severity; `file` is the path relative to the working directory
//! (the checkout, when run from its root) with `/` separators; lines and
//! columns are 1-based, columns in characters, the end column just past the
//! range. Values are escaped as the workflow-command rules ask: in the
//! message `%`, CR and LF; in a property also `:` and `,`. The run's summary
//! follows on stderr, as with `human`.

use std::io::Write;

use cute_lint::{Diagnostic, Severity};
use cute_syntax::LineIndex;

use super::{relative_path, span, Columns};

/// The workflow command of one finding, without its line break.
pub fn command(path: &str, text: &str, index: &LineIndex, d: &Diagnostic) -> String {
    let kind = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    };
    let (start, end) = span(text, index, d.range, Columns::Chars);
    let file = relative_path(path).unwrap_or_else(|| path.to_string());
    format!(
        "::{kind} file={},line={},endLine={},col={},endColumn={},title={}::{}",
        escape_property(&file),
        start.line,
        end.line,
        start.col,
        end.col,
        escape_property(&format!("{} {}", d.code, d.name)),
        escape_data(&d.message)
    )
}

/// Write the commands of one file's findings to `out`.
pub fn write(out: &mut dyn Write, path: &str, text: &str, index: &LineIndex, diags: &[Diagnostic]) -> std::io::Result<()> {
    for d in diags {
        writeln!(out, "{}", command(path, text, index, d))?;
    }
    Ok(())
}

/// The message of a workflow command (after `::`): `%`, CR and LF escaped.
pub fn escape_data(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
    out
}

/// A property value of a workflow command (`file=`, `title=`): as the
/// message, and `:` and `,`, which would end the value, escaped too.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_properties_are_escaped() {
        let message = "100% of lanes: a, b\r\nthen c";
        assert_eq!(escape_data(message), "100%25 of lanes: a, b%0D%0Athen c");
        assert_eq!(escape_property(message), "100%25 of lanes%3A a%2C b%0D%0Athen c");
        // `%` is escaped first, so an escape already in the text survives.
        assert_eq!(escape_data("%0A"), "%250A");
        assert_eq!(escape_property("a:b,%3A"), "a%3Ab%2C%253A");
    }

    #[test]
    fn a_finding_becomes_one_command_of_its_severity() {
        let text = "x = 1\ny = f(x)\n";
        let index = LineIndex::new(text);
        let start = text.find("f(x)").unwrap();
        let d = Diagnostic {
            code: "CUTE050",
            name: "deadlock",
            severity: Severity::Warning,
            message: "50% stuck,\nfor ever: see".to_string(),
            range: cute_syntax::TextRange::new(start, start + 4),
            label: String::new(),
            related: Vec::new(),
            notes: Vec::new(),
            help: None,
            fixes: Vec::new(),
        };
        assert_eq!(
            command("./a,b:c.py", text, &index, &d),
            "::warning file=a%2Cb%3Ac.py,line=2,endLine=2,col=5,endColumn=9,title=CUTE050 deadlock::50%25 stuck,%0Afor ever: see"
        );
        let info = Diagnostic { severity: Severity::Info, ..d.clone() };
        assert!(command("a.py", text, &index, &info).starts_with("::notice file=a.py,"));
        let error = Diagnostic { severity: Severity::Error, ..d };
        assert!(command("a.py", text, &index, &error).starts_with("::error file=a.py,"));
    }
}
