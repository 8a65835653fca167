//! `--format sarif`: the findings as one SARIF 2.1.0 log (the OASIS Static
//! Analysis Results Interchange Format), the input of GitHub code scanning
//! and of SARIF viewers, written with the `serde-sarif` types.
//!
//! The log has one run. Its `tool.driver` is `cute-lsp` with its version and
//! every rule of `rules::ALL` (`id` the code, `name` the rule's name,
//! `shortDescription` its summary, `fullDescription` and `help` its
//! documentation as Markdown with a plain-text rendering, and its default
//! level). Each finding is a result with `ruleId`, `ruleIndex`, `level`
//! (`error`, `warning`, or `note` for info), its message, one physical
//! location whose message is the primary label, the `related` entries as
//! `relatedLocations` (ids from 1, in order), its fixes as `fixes` (each edit
//! a replacement: `deletedRegion` and `insertedContent`), and `properties`
//! with the rule's `name` and, when there are some, the finding's `notes` and
//! `help`.
//!
//! The counterexample (the leading `related` entries that are steps:
//! `step N: ...`, `steps 1-N: ...`, `stuck: ...`, `then: ...`) is a
//! `codeFlow` with one `threadFlow` per thread group, the group a step names
//! first (`warp 0 of CTA 0`, `warps 1..3 of CTA 1`; a step by `one of` or
//! `2 of` a group belongs to the group). Steps that name no group (the
//! summary of a long prefix, "the threads run 98 operations", or an outcome
//! such as "the phase waits for 4096 bytes") form a `threadFlow` of their
//! own, `all threads`; a trace in which no step names a group is one
//! `threadFlow` with every step. Every location carries `executionOrder`, its
//! place in the trace, so the interleaving is the locations of all the
//! thread flows ordered by it.
//!
//! Artifact URIs are relative references against `%SRCROOT%`, the working
//! directory (given in `originalUriBaseIds`), as code scanning expects from a
//! run at the root of the checkout; a file outside the working directory gets
//! an absolute `file:` URI. Lines are 1-based; columns are 1-based UTF-16 code
//! units (`columnKind` is `utf16CodeUnits`, SARIF's default, and the unit of
//! the JSON format's `character`); an end column is the one just past the
//! range.

use std::collections::BTreeMap;

use cute_lint::rules::{self, Rule};
use cute_lint::{Diagnostic, Edit, Fix, Related, Severity};
use cute_syntax::{LineIndex, TextRange};
use serde_json::json;
use serde_sarif::sarif;

use super::{relative_path, span, Columns};

/// The `uriBaseId` of every relative artifact URI: the working directory.
pub const SRCROOT: &str = "%SRCROOT%";

/// The `$schema` of the log: the `$id` of the OASIS SARIF 2.1.0 schema.
pub const SCHEMA: &str =
    "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json";

/// The thread flow of the steps that name no thread group.
const ALL_THREADS: &str = "all threads";

/// The results of the files checked so far.
#[derive(Default)]
pub struct Log {
    results: Vec<sarif::Result>,
}

impl Log {
    /// Add one file's findings.
    pub fn add(&mut self, path: &str, text: &str, index: &LineIndex, diags: &[Diagnostic]) {
        let file = File { artifact: artifact_location(path), text, index };
        self.results.extend(diags.iter().map(|d| file.result(d)));
    }

    /// The whole log: one run of `cute-lsp` with every rule and the results.
    pub fn finish(self) -> sarif::Sarif {
        let driver = sarif::ToolComponent::builder()
            .name("cute-lsp")
            .version(env!("CARGO_PKG_VERSION"))
            .semantic_version(env!("CARGO_PKG_VERSION"))
            .rules(rules::ALL.iter().map(|r| descriptor(r)).collect::<Vec<_>>())
            .build();
        let mut run = sarif::Run::builder()
            .tool(sarif::Tool::builder().driver(driver).build())
            .results(self.results)
            .column_kind(json!("utf16CodeUnits"))
            .build();
        if let Ok(cwd) = std::env::current_dir() {
            let root = sarif::ArtifactLocation { uri: Some(directory_uri(&cwd)), ..Default::default() };
            run.original_uri_base_ids = Some(BTreeMap::from([(SRCROOT.to_string(), root)]));
        }
        sarif::Sarif::builder().schema(SCHEMA).version(json!("2.1.0")).runs(vec![run]).build()
    }

    /// Write the log to `out`, as one JSON document.
    pub fn write(self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, &self.finish())?;
        out.write_all(b"\n")
    }
}

/// The rule as a SARIF `reportingDescriptor`.
fn descriptor(rule: &Rule) -> sarif::ReportingDescriptor {
    let doc = || sarif::MultiformatMessageString::builder().text(markdown_to_text(rule.doc)).markdown(rule.doc).build();
    sarif::ReportingDescriptor::builder()
        .id(rule.code)
        .name(rule.name)
        .short_description(sarif::MultiformatMessageString::builder().text(rule.summary).build())
        .full_description(doc())
        .help(doc())
        .default_configuration(sarif::ReportingConfiguration {
            level: Some(json!(level(rule.default_severity))),
            ..Default::default()
        })
        .build()
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn message(text: &str) -> sarif::Message {
    sarif::Message { text: Some(text.to_string()), ..Default::default() }
}

/// One file being reported: where it is, and its text to count columns in.
struct File<'a> {
    artifact: sarif::ArtifactLocation,
    text: &'a str,
    index: &'a LineIndex,
}

impl File<'_> {
    fn region(&self, range: TextRange) -> sarif::Region {
        let (start, end) = span(self.text, self.index, range, Columns::Utf16);
        sarif::Region {
            start_line: Some(start.line.into()),
            start_column: Some(start.col.into()),
            end_line: Some(end.line.into()),
            end_column: Some(end.col.into()),
            ..Default::default()
        }
    }

    /// A related location: in this file, or in a module linked into its
    /// check.
    fn related_location(&self, r: &Related) -> sarif::Location {
        match &r.file {
            None => self.location(r.range, &r.message),
            Some(other) => {
                let index = LineIndex::new(&other.text);
                let file = File { artifact: artifact_location(&other.display()), text: &other.text, index: &index };
                file.location(r.range, &r.message)
            }
        }
    }

    fn location(&self, range: TextRange, text: &str) -> sarif::Location {
        sarif::Location {
            physical_location: Some(sarif::PhysicalLocation {
                artifact_location: Some(self.artifact.clone()),
                region: Some(self.region(range)),
                ..Default::default()
            }),
            message: (!text.is_empty()).then(|| message(text)),
            ..Default::default()
        }
    }

    fn result(&self, d: &Diagnostic) -> sarif::Result {
        let mut result = sarif::Result::builder()
            .rule_id(d.code)
            .level(match d.severity {
                Severity::Error => sarif::ResultLevel::Error,
                Severity::Warning => sarif::ResultLevel::Warning,
                Severity::Info => sarif::ResultLevel::Note,
            })
            .message(message(&d.message))
            .locations(vec![self.location(d.range, &d.label)])
            .build();
        result.rule_index = rules::ALL.iter().position(|r| r.code == d.code).map(|i| i as i64);
        if !d.related.is_empty() {
            let related = d
                .related
                .iter()
                .enumerate()
                .map(|(i, r)| sarif::Location { id: Some(i as i64 + 1), ..self.related_location(r) });
            result.related_locations = Some(related.collect());
        }
        let steps = trace(&d.related);
        if !steps.is_empty() {
            result.code_flows = Some(vec![self.code_flow(steps)]);
        }
        if !d.fixes.is_empty() {
            result.fixes = Some(d.fixes.iter().map(|f| self.fix(f)).collect());
        }
        let mut properties = BTreeMap::from([("name".to_string(), json!(d.name))]);
        if !d.notes.is_empty() {
            properties.insert("notes".to_string(), json!(d.notes));
        }
        if let Some(help) = &d.help {
            properties.insert("help".to_string(), json!(help));
        }
        result.properties = Some(sarif::PropertyBag { additional_properties: properties, ..Default::default() });
        result
    }

    /// The counterexample: one thread flow per thread group (see the module
    /// documentation), each location with its place in the trace.
    fn code_flow(&self, steps: &[Related]) -> sarif::CodeFlow {
        let mut flows: Vec<(Option<String>, Vec<sarif::ThreadFlowLocation>)> = Vec::new();
        let grouped = steps.iter().any(|s| acting_group(&s.message).is_some());
        for (i, step) in steps.iter().enumerate() {
            let group = if grouped {
                Some(acting_group(&step.message).unwrap_or_else(|| ALL_THREADS.to_string()))
            } else {
                None
            };
            let location = sarif::ThreadFlowLocation {
                location: Some(self.related_location(step)),
                execution_order: Some(i as i64 + 1),
                ..Default::default()
            };
            match flows.iter_mut().find(|(g, _)| *g == group) {
                Some((_, locations)) => locations.push(location),
                None => flows.push((group, vec![location])),
            }
        }
        let thread_flows = flows
            .into_iter()
            .map(|(group, locations)| {
                let mut flow = sarif::ThreadFlow::builder().locations(locations).build();
                if let Some(group) = group {
                    flow.message = Some(message(&group));
                    flow.id = Some(group);
                }
                flow
            })
            .collect::<Vec<_>>();
        let mut flow = sarif::CodeFlow::builder().thread_flows(thread_flows).build();
        flow.message = Some(message(&format!(
            "the interleaving the checker found, in {} step{}",
            steps.len(),
            if steps.len() == 1 { "" } else { "s" }
        )));
        flow
    }

    fn fix(&self, fix: &Fix) -> sarif::Fix {
        let replacements = fix.edits.iter().map(|e: &Edit| {
            let mut replacement = sarif::Replacement::builder().deleted_region(self.region(e.range)).build();
            replacement.inserted_content =
                Some(sarif::ArtifactContent { text: Some(e.new_text.clone()), ..Default::default() });
            replacement
        });
        let change = sarif::ArtifactChange::builder()
            .artifact_location(self.artifact.clone())
            .replacements(replacements.collect::<Vec<_>>())
            .build();
        let mut out = sarif::Fix::builder().artifact_changes(vec![change]).build();
        out.description = Some(message(&fix.title));
        out
    }
}

/// The steps of the counterexample: the `related` entries up to the first
/// that is not a step (the secondary locations that may follow).
pub fn trace(related: &[Related]) -> &[Related] {
    let is_step = |m: &str| ["step ", "steps ", "stuck: ", "then: "].iter().any(|p| m.starts_with(p));
    let n = related.iter().take_while(|r| is_step(&r.message)).count();
    &related[..n]
}

/// The thread group that acts in a step, as the step names it:
/// `step 74: one of warps 1..3 of CTA 1 arrives ...` is `warps 1..3 of CTA 1`'s.
/// `None` for a step that names none (`steps 1-68: the threads run ...`).
pub fn acting_group(step: &str) -> Option<String> {
    let (_, rest) = step.split_once(": ")?;
    // "one of G" or "2 of G": some of the group's threads.
    let rest = rest
        .strip_prefix("one of ")
        .or_else(|| rest.split_once(" of ").filter(|(n, _)| n.parse::<u32>().is_ok()).map(|(_, g)| g))
        .unwrap_or(rest);
    // The group: "warps 1..3 of CTA 1", "warp 0 and threads 33..40",
    // "warps 0..1 of CTA 0, warps 0..1 of CTA 1", "warps 0, 2, 4, ... (5 ranges)".
    let ids = |w: &str| !w.is_empty() && w.split("..").all(|n| n.parse::<u32>().is_ok());
    let words: Vec<&str> = rest
        .split(' ')
        .take_while(|w| {
            let w = w.trim_end_matches(',');
            matches!(w, "warp" | "warps" | "thread" | "threads" | "and" | "of" | "CTA" | "..." | "ranges)")
                || ids(w)
                || w.strip_prefix('(').is_some_and(ids)
        })
        .collect();
    let first = words.first()?;
    let last = words.last()?.trim_end_matches(',');
    if !matches!(*first, "warp" | "warps" | "thread" | "threads") || !(ids(last) || last == "ranges)") {
        return None;
    }
    Some(words.join(" ").trim_end_matches(',').to_string())
}

/// The artifact location of a file: a relative reference against
/// `%SRCROOT%`, or an absolute `file:` URI outside the working directory.
fn artifact_location(path: &str) -> sarif::ArtifactLocation {
    match relative_path(path) {
        Some(relative) => sarif::ArtifactLocation {
            uri: Some(percent_encode(&relative)),
            uri_base_id: Some(SRCROOT.to_string()),
            ..Default::default()
        },
        None => {
            let absolute = std::path::Path::new(path);
            sarif::ArtifactLocation { uri: Some(file_uri(absolute)), ..Default::default() }
        }
    }
}

/// `file:` URI of an absolute path.
fn file_uri(path: &std::path::Path) -> String {
    let slashed = path.to_string_lossy().replace('\\', "/");
    let rooted = if slashed.starts_with('/') { slashed } else { format!("/{slashed}") };
    format!("file://{}", percent_encode(&rooted))
}

/// `file:` URI of a directory, ending in `/` as a base URI must.
fn directory_uri(dir: &std::path::Path) -> String {
    let uri = file_uri(dir);
    if uri.ends_with('/') { uri } else { format!("{uri}/") }
}

/// A path as a URI path: every byte percent-encoded but the unreserved
/// characters, the sub-delimiters, `@` and `/` (so a space, `%`, `#`, `?`,
/// `:` or a non-ASCII name is read back as the same path, and a relative
/// reference never looks like a scheme).
pub fn percent_encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        let unreserved = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
        let sub_delim = matches!(b, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=');
        if unreserved || sub_delim || matches!(b, b'@' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A plain-text rendering of a rule's Markdown documentation: headings
/// without their `#`, code blocks indented instead of fenced, inline code,
/// bold and links without their markup (a link keeps its target in
/// parentheses).
pub fn markdown_to_text(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut in_code = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            out.push_str("    ");
            out.push_str(line);
        } else if let Some(heading) = line.strip_prefix('#') {
            out.push_str(heading.trim_start_matches('#').trim());
        } else {
            out.push_str(&inline_to_text(line));
        }
        out.push('\n');
    }
    out
}

fn inline_to_text(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix('`') {
            // Inline code is kept verbatim, without its backticks.
            if let Some(end) = after.find('`') {
                out.push_str(&after[..end]);
                rest = &after[end + 1..];
                continue;
            }
        } else if let Some(after) = rest.strip_prefix("**") {
            rest = after;
            continue;
        } else if let Some(link) = link(rest) {
            out.push_str(&format!("{} ({})", link.0, link.1));
            rest = link.2;
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `[text](target)` at the start of `s`: its text, its target, and what follows.
fn link(s: &str) -> Option<(&str, &str, &str)> {
    let inner = s.strip_prefix('[')?;
    let close = inner.find("](")?;
    let (text, after) = (&inner[..close], &inner[close + 2..]);
    let end = after.find(')')?;
    (!text.contains(']')).then_some((text, &after[..end], &after[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_grouped_by_the_group_they_name() {
        let cases = [
            (
                "step 69: warp 0 of CTA 0 arrives on the CTA barrier of CTA 0 (32 arrivals each)",
                Some("warp 0 of CTA 0"),
            ),
            ("step 74: one of warps 1..3 of CTA 1 arrives on `gate` of CTA 1", Some("warps 1..3 of CTA 1")),
            ("step 80: 2 of warps 1..3 of CTA 1 arrive on `gate` of CTA 0", Some("warps 1..3 of CTA 1")),
            (
                "stuck: warps 1..3 of CTA 0 wait on `gate` of CTA 0 with parity 0 forever: its phase 0",
                Some("warps 1..3 of CTA 0"),
            ),
            ("step 9: warps 1..2 arrive on `bar` (32 arrivals each); now 96/128", Some("warps 1..2")),
            ("then: warps 0..3 can register for generation 1 of named barrier 1", Some("warps 0..3")),
            ("step 1: warp 0 announces 2048 bytes on `loaded` for its phase 0: x = 2048", Some("warp 0")),
            (
                "step 2: warps 0, 2 of CTA 0, warp 1 of CTA 1 arrive on `b`",
                Some("warps 0, 2 of CTA 0, warp 1 of CTA 1"),
            ),
            ("step 3: warp 0 and threads 33..40 arrive on `b`", Some("warp 0 and threads 33..40")),
            ("step 4: warps 0, 2, 4, ... (5 ranges) arrive on `b`", Some("warps 0, 2, 4, ... (5 ranges)")),
            ("steps 1-68: the threads run 98 operations without blocking (`gate` of CTA 0: ...)", None),
            ("step 3: the phase waits for 4096 bytes that never come", None),
            ("step 5: warpspeed arrives", None),
        ];
        for (step, group) in cases {
            assert_eq!(acting_group(step).as_deref(), group, "{step}");
        }
    }

    #[test]
    fn the_trace_is_the_leading_steps() {
        let r = |m: &str| Related { range: TextRange::new(0, 1), message: m.to_string(), file: None, event: None };
        let related = [
            r("steps 1-3: the threads run"),
            r("step 4: warp 0 arrives"),
            r("stuck: warp 1 waits"),
            r("warp 0 writes `x`"),
        ];
        assert_eq!(trace(&related).len(), 3);
        assert!(trace(&related[3..]).is_empty());
    }

    #[test]
    fn uris_are_percent_encoded_paths() {
        assert_eq!(percent_encode("a b/c%d#e?.py"), "a%20b/c%25d%23e%3F.py");
        assert_eq!(percent_encode("dir/é.py"), "dir/%C3%A9.py");
        assert_eq!(percent_encode("a+b/c:d@e.py"), "a+b/c%3Ad@e.py");
        assert_eq!(file_uri(std::path::Path::new("/w/x y")), "file:///w/x%20y");
        assert_eq!(directory_uri(std::path::Path::new("/w")), "file:///w/");
    }

    #[test]
    fn markdown_gets_a_plain_text_rendering() {
        let md = "# rule (CUTE001)\n\nThe `x` is **not** flipped; see [the docs](https://e.x/y).\n\n```python\nwait(bar, 0)\n```\n- item\n";
        assert_eq!(
            markdown_to_text(md),
            "rule (CUTE001)\n\nThe x is not flipped; see the docs (https://e.x/y).\n\n    wait(bar, 0)\n- item\n"
        );
    }

    #[test]
    fn a_finding_becomes_a_result_with_its_trace_and_fix() {
        let text = "a = 1\nb = wait(bar, 0)\nc = 2\n";
        let index = LineIndex::new(text);
        let at = |s: &str| {
            let start = text.find(s).unwrap();
            TextRange::new(start, start + s.len())
        };
        let step = |r: &str, m: &str| Related { range: at(r), message: m.to_string(), file: None, event: None };
        let d = Diagnostic {
            code: "CUTE001",
            name: "untoggled-phase",
            severity: Severity::Warning,
            message: "can hang".to_string(),
            range: at("wait(bar, 0)"),
            label: "not flipped".to_string(),
            related: vec![
                step("a = 1", "steps 1-2: the threads run 2 operations"),
                step("c = 2", "step 3: warp 0 arrives on `bar`"),
                step("a = 1", "step 4: one of warps 1..3 arrives on `bar`"),
                step("wait(bar, 0)", "stuck: warp 0 waits on `bar` forever"),
            ],
            notes: vec!["assumed 128 threads".to_string()],
            help: Some("flip it".to_string()),
            fixes: vec![Fix {
                title: "track the parity".to_string(),
                edits: vec![Edit { range: at("0)"), new_text: "phase".to_string() }],
                applicability: cute_lint::Applicability::Unsafe,
            }],
        };
        let mut log = Log::default();
        log.add("./k.py", text, &index, &[d]);
        let v = serde_json::to_value(log.finish()).unwrap();
        assert_eq!(v["version"], "2.1.0");
        let run = &v["runs"][0];
        assert_eq!(run["columnKind"], "utf16CodeUnits");
        assert_eq!(run["tool"]["driver"]["rules"].as_array().unwrap().len(), rules::ALL.len());
        let r = &run["results"][0];
        assert_eq!((&r["ruleId"], &r["ruleIndex"], &r["level"]), (&json!("CUTE001"), &json!(0), &json!("warning")));
        let physical = &r["locations"][0]["physicalLocation"];
        assert_eq!(physical["artifactLocation"], json!({"uri": "k.py", "uriBaseId": "%SRCROOT%"}));
        assert_eq!(physical["region"], json!({"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 17}));
        assert_eq!(r["relatedLocations"].as_array().unwrap().len(), 4);
        assert_eq!(
            r["properties"],
            json!({"name": "untoggled-phase", "notes": ["assumed 128 threads"], "help": "flip it"})
        );
        let flows = r["codeFlows"][0]["threadFlows"].as_array().unwrap();
        let ids: Vec<&str> = flows.iter().map(|f| f["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["all threads", "warp 0", "warps 1..3"]);
        let orders: Vec<Vec<i64>> = flows
            .iter()
            .map(|f| f["locations"].as_array().unwrap().iter().map(|l| l["executionOrder"].as_i64().unwrap()).collect())
            .collect();
        assert_eq!(orders, [vec![1], vec![2, 4], vec![3]]);
        let replacement = &r["fixes"][0]["artifactChanges"][0]["replacements"][0];
        assert_eq!(
            replacement["deletedRegion"],
            json!({"startLine": 2, "startColumn": 15, "endLine": 2, "endColumn": 17})
        );
        assert_eq!(replacement["insertedContent"]["text"], "phase");
        assert_eq!(r["fixes"][0]["description"]["text"], "track the parity");
    }
}
