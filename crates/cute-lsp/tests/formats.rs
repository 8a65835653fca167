//! The formats of `check` for CI and review, read back the way their
//! consumers read them: `concise` lines and `github` workflow commands parsed
//! into path, line, column, code and name; the `sarif` log against the JSON
//! contract for every fixture (the same findings, rules, lines and columns,
//! the trace as a code flow, fixes that fix).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cute_lsp_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cute-lsp")).args(args).current_dir(dir).output().expect("cute-lsp runs")
}

fn cute_lsp(args: &[&str]) -> Output {
    cute_lsp_in(&root(), args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json_of(o: &Output) -> Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", stdout(o)))
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cute-lsp-formats-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const BUG: &str = "tests/fixtures/untoggled_phase/jacobi_cluster_bug.py";
const BUG_LINE: u64 = 78;

/// The one diagnostic of the JSON format for `path` (run in `dir`).
fn the_json_diagnostic(dir: &Path, path: &str) -> Value {
    let v = json_of(&cute_lsp_in(dir, &["check", "--format", "json", path]));
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 1, "{v:#}");
    arr[0].clone()
}

/// A concise line: `path:line:col: CODE name: message`.
fn parse_concise(line: &str) -> (String, u64, u64, String, String, String) {
    let mut parts = line.splitn(4, ':');
    let (path, l, c, rest) =
        (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let rest = rest.strip_prefix(' ').unwrap_or_else(|| panic!("no space after the column: {line}"));
    let (code_name, message) = rest.split_once(": ").unwrap_or_else(|| panic!("no `: ` before the message: {line}"));
    let (code, name) = code_name.split_once(' ').unwrap();
    (path.to_string(), l.parse().unwrap(), c.parse().unwrap(), code.to_string(), name.to_string(), message.to_string())
}

#[test]
fn concise_is_one_line_per_finding_that_parses_back() {
    let out = cute_lsp(&["check", "--format", "concise", BUG]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let d = the_json_diagnostic(&root(), BUG);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let (path, line, col, code, name, message) = parse_concise(lines[0]);
    assert_eq!(path, BUG);
    assert_eq!(line, BUG_LINE);
    assert_eq!(line, d["range"]["start"]["line"].as_u64().unwrap() + 1);
    assert_eq!(col, 9);
    assert_eq!(col, d["range"]["start"]["character"].as_u64().unwrap() + 1);
    assert_eq!((code.as_str(), name.as_str()), ("CUTE001", "untoggled-phase"));
    assert_eq!(message, d["message"].as_str().unwrap());
    // The summary goes to stderr, as with `human`.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cute-lsp: 1 file(s) checked, 1 finding(s), 1 error(s)"), "{stderr}");
}

#[test]
fn concise_over_the_fixtures_has_a_line_per_json_diagnostic() {
    let json = json_of(&cute_lsp(&["check", "--format", "json", "tests/fixtures"]));
    let out = cute_lsp(&["check", "--format", "concise", "tests/fixtures"]);
    let text = stdout(&out);
    let lines: Vec<_> = text.lines().map(parse_concise).collect();
    let json = json.as_array().unwrap();
    assert_eq!(lines.len(), json.len(), "{text}");
    for ((path, line, _, code, name, message), d) in lines.iter().zip(json) {
        assert_eq!(path, d["file"].as_str().unwrap());
        assert_eq!(*line, d["range"]["start"]["line"].as_u64().unwrap() + 1);
        assert_eq!((code.as_str(), name.as_str()), (d["code"].as_str().unwrap(), d["name"].as_str().unwrap()));
        assert_eq!(message, d["message"].as_str().unwrap());
    }
}

/// GitHub's unescaping of a workflow command's property value or message.
fn unescape(s: &str) -> String {
    s.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
}

/// A workflow command: its name, its properties, its message.
fn parse_command(line: &str) -> (String, BTreeMap<String, String>, String) {
    let rest = line.strip_prefix("::").unwrap_or_else(|| panic!("not a workflow command: {line}"));
    let (head, message) = rest.split_once("::").unwrap();
    let (command, properties) = head.split_once(' ').unwrap();
    let properties = properties
        .split(',')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or_else(|| panic!("property without `=`: {kv} in {line}"));
            (k.to_string(), unescape(v))
        })
        .collect();
    (command.to_string(), properties, unescape(message))
}

#[test]
fn github_commands_parse_back() {
    let out = cute_lsp(&["check", "--format", "github", BUG]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let d = the_json_diagnostic(&root(), BUG);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let (command, p, message) = parse_command(lines[0]);
    assert_eq!(command, "error");
    let keys: Vec<&str> = p.keys().map(String::as_str).collect();
    assert_eq!(keys, ["col", "endColumn", "endLine", "file", "line", "title"]);
    assert_eq!(p["file"], BUG);
    assert_eq!(p["line"], BUG_LINE.to_string());
    assert_eq!(p["col"], "9");
    let at = |k: &str, side: &str| (d["range"][side][k].as_u64().unwrap() + 1).to_string();
    assert_eq!((&p["line"], &p["col"]), (&at("line", "start"), &at("character", "start")));
    assert_eq!((&p["endLine"], &p["endColumn"]), (&at("line", "end"), &at("character", "end")));
    assert_eq!(p["title"], "CUTE001 untoggled-phase");
    assert_eq!(message, d["message"].as_str().unwrap());
}

#[test]
fn github_commands_follow_the_severity_and_a_relative_path() {
    // A warning (the severity set in pyproject.toml) and an info finding,
    // in a directory given as `./`.
    let dir = tempdir("github");
    std::fs::copy(root().join(BUG), dir.join("k.py")).unwrap();
    std::fs::write(dir.join("pyproject.toml"), "[tool.cute-lsp]\nseverity = { \"untoggled-phase\" = \"warning\" }\n")
        .unwrap();
    std::fs::write(dir.join("broken.py"), "import cutlass.cute as cute\n\n@cute.kernel\ndef k(:\n    pass\n").unwrap();
    let out = cute_lsp_in(&dir, &["check", "--format", "github", "./"]);
    let text = stdout(&out);
    let commands: Vec<_> = text.lines().map(parse_command).collect();
    let kinds: Vec<(&str, &str, &str)> =
        commands.iter().map(|(c, p, _)| (c.as_str(), p["file"].as_str(), p["title"].as_str())).collect();
    assert!(kinds.contains(&("warning", "k.py", "CUTE001 untoggled-phase")), "{text}");
    assert!(kinds.contains(&("notice", "broken.py", "CUTE090 analysis-incomplete")), "{text}");
}

/// The SARIF log of `check --format sarif ARGS` (run in `dir`).
fn sarif_in(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["check", "--format", "sarif"];
    all.extend_from_slice(args);
    let out = cute_lsp_in(dir, &all);
    assert!(matches!(out.status.code(), Some(0) | Some(1)), "{out:?}");
    json_of(&out)
}

fn results(log: &Value) -> &Vec<Value> {
    assert_eq!(log["version"], "2.1.0");
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    runs[0]["results"].as_array().unwrap()
}

fn region(location: &Value) -> &Value {
    &location["physicalLocation"]["region"]
}

/// A JSON range and a SARIF region are the same place: 1-based lines, and
/// 1-based UTF-16 columns against 0-based ones.
fn assert_same_place(range: &Value, region: &Value) {
    let one_based = |v: &Value| v.as_u64().unwrap() + 1;
    let got = [&region["startLine"], &region["startColumn"], &region["endLine"], &region["endColumn"]]
        .map(|v| v.as_u64().unwrap());
    let want =
        [&range["start"]["line"], &range["start"]["character"], &range["end"]["line"], &range["end"]["character"]]
            .map(one_based);
    assert_eq!(got, want, "{range} vs {region}");
}

fn by_file(items: Vec<(String, &Value)>) -> BTreeMap<String, Vec<&Value>> {
    let mut map: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for (file, item) in items {
        map.entry(file).or_default().push(item);
    }
    map
}

fn fixture_files() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "py") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root().join("tests/fixtures"), &mut files);
    let mut files: Vec<String> =
        files.iter().map(|p| p.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/")).collect();
    files.sort();
    files
}

#[test]
fn sarif_of_every_fixture_has_the_json_findings() {
    let json = json_of(&cute_lsp(&["check", "--format", "json", "tests/fixtures"]));
    let json = json.as_array().unwrap();
    let log = sarif_in(&root(), &["tests/fixtures"]);
    let results = results(&log);
    let run = &log["runs"][0];
    assert_eq!(run["columnKind"], "utf16CodeUnits");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();

    // One result per diagnostic, file by file, in the same order.
    let diagnostics = by_file(json.iter().map(|d| (d["file"].as_str().unwrap().to_string(), d)).collect());
    let found = by_file(
        results
            .iter()
            .map(|r| {
                let artifact = &r["locations"][0]["physicalLocation"]["artifactLocation"];
                assert_eq!(artifact["uriBaseId"], "%SRCROOT%", "{r:#}");
                (artifact["uri"].as_str().unwrap().to_string(), r)
            })
            .collect(),
    );
    assert_eq!(results.len(), json.len());
    let files = fixture_files();
    assert!(files.len() > 100, "{files:?}");
    let mut with_findings = 0;
    for file in &files {
        let (ds, rs) =
            (diagnostics.get(file).cloned().unwrap_or_default(), found.get(file).cloned().unwrap_or_default());
        assert_eq!(rs.len(), ds.len(), "{file}");
        with_findings += usize::from(!ds.is_empty());
        for (d, r) in ds.iter().zip(&rs) {
            assert_eq!(r["ruleId"], d["code"], "{file}");
            assert_eq!(r["message"]["text"], d["message"], "{file}");
            let level = match d["severity"].as_str().unwrap() {
                "info" => "note",
                other => other,
            };
            assert_eq!(r["level"], level, "{file}");
            let index = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[index]["id"], d["code"], "{file}");
            assert_eq!(rules[index]["name"], d["name"], "{file}");
            let locations = r["locations"].as_array().unwrap();
            assert_eq!(locations.len(), 1, "{file}");
            assert_eq!(
                region(&locations[0])["startLine"].as_u64().unwrap(),
                d["range"]["start"]["line"].as_u64().unwrap() + 1,
                "{file}"
            );
            assert_same_place(&d["range"], region(&locations[0]));
            // Every related entry, in order, at its place.
            let related = d["related"].as_array().unwrap();
            let sarif_related = r["relatedLocations"].as_array().map(Vec::as_slice).unwrap_or_default();
            assert_eq!(sarif_related.len(), related.len(), "{file}");
            for (i, (a, b)) in related.iter().zip(sarif_related).enumerate() {
                assert_eq!(b["id"], i as u64 + 1);
                assert_eq!(b["message"]["text"], a["message"], "{file}");
                assert_same_place(&a["range"], region(b));
            }
            // Notes and help are kept.
            let notes = d["notes"].as_array().unwrap();
            assert_eq!(
                r["properties"]["notes"].as_array().map(Vec::as_slice).unwrap_or_default(),
                notes.as_slice(),
                "{file}"
            );
            assert_eq!(r["properties"]["help"], d["help"], "{file}");
            // Fixes: one per fix, one replacement per edit.
            let fixes = d["fixes"].as_array().unwrap();
            let sarif_fixes = r["fixes"].as_array().map(Vec::as_slice).unwrap_or_default();
            assert_eq!(sarif_fixes.len(), fixes.len(), "{file}");
            for (f, s) in fixes.iter().zip(sarif_fixes) {
                assert_eq!(s["description"]["text"], f["title"]);
                let replacements = s["artifactChanges"][0]["replacements"].as_array().unwrap();
                for (e, rep) in f["edits"].as_array().unwrap().iter().zip(replacements) {
                    assert_same_place(&e["range"], &rep["deletedRegion"]);
                    assert_eq!(rep["insertedContent"]["text"], e["new_text"]);
                }
            }
        }
    }
    assert!(with_findings > 50, "{with_findings} fixture files with findings");

    // The driver lists every rule `cute-lsp rules` lists, in order.
    let catalogue = stdout(&cute_lsp(&["rules"]));
    let listed: Vec<(&str, &str)> = catalogue
        .lines()
        .map(|l| {
            let mut words = l.split_whitespace();
            (words.next().unwrap(), words.next().unwrap())
        })
        .collect();
    let described: Vec<(&str, &str)> =
        rules.iter().map(|r| (r["id"].as_str().unwrap(), r["name"].as_str().unwrap())).collect();
    assert_eq!(described, listed);
    let first = &rules[0];
    assert_eq!(first["help"]["markdown"].as_str().unwrap(), stdout(&cute_lsp(&["explain", "CUTE001"])));
    assert!(!first["help"]["text"].as_str().unwrap().contains("```"));
    assert_eq!(first["defaultConfiguration"]["level"], "error");
    assert_eq!(run["tool"]["driver"]["name"], "cute-lsp");
    assert_eq!(run["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn the_trace_is_a_code_flow_in_step_order() {
    let d = the_json_diagnostic(&root(), BUG);
    let log = sarif_in(&root(), &[BUG]);
    let results = results(&log);
    assert_eq!(results.len(), 1);
    let flows = results[0]["codeFlows"].as_array().unwrap();
    assert_eq!(flows.len(), 1);
    let thread_flows = flows[0]["threadFlows"].as_array().unwrap();
    let mut steps: Vec<&Value> = thread_flows.iter().flat_map(|t| t["locations"].as_array().unwrap()).collect();
    steps.sort_by_key(|l| l["executionOrder"].as_u64().unwrap());
    let orders: Vec<u64> = steps.iter().map(|l| l["executionOrder"].as_u64().unwrap()).collect();
    let related = d["related"].as_array().unwrap();
    assert_eq!(orders, (1..=related.len() as u64).collect::<Vec<_>>());
    for (step, r) in steps.iter().zip(related) {
        assert_eq!(step["location"]["message"]["text"], r["message"]);
        assert_same_place(&r["range"], region(&step["location"]));
    }
    // One thread flow per thread group: every step of a flow names its group.
    let ids: Vec<&str> = thread_flows.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["all threads", "warp 0 of CTA 0", "warps 1..3 of CTA 0", "warp 0 of CTA 1", "warps 1..3 of CTA 1"]
    );
    for flow in &thread_flows[1..] {
        let group = flow["id"].as_str().unwrap();
        for l in flow["locations"].as_array().unwrap() {
            let message = l["location"]["message"]["text"].as_str().unwrap();
            let (_, who) = message.split_once(": ").unwrap();
            let who = who.strip_prefix("one of ").or_else(|| who.strip_prefix("2 of ")).unwrap_or(who);
            assert!(who.starts_with(&format!("{group} ")), "{message} in the flow of {group}");
        }
    }
}

#[test]
fn sarif_columns_are_utf16_and_concise_columns_are_characters() {
    // Before the wait on line 78: "é" (1 UTF-16 unit) and "😀" (2 units).
    let dir = tempdir("columns");
    let text = std::fs::read_to_string(root().join(BUG)).unwrap();
    let text = text.replacen(
        "        cute.arch.mbarrier_wait(gate, cutlass.Int32(0))",
        "        _ = \"é😀\"; cute.arch.mbarrier_wait(gate, cutlass.Int32(0))",
        1,
    );
    std::fs::write(dir.join("k.py"), &text).unwrap();
    let d = the_json_diagnostic(&dir, "k.py");
    assert_eq!(d["range"]["start"]["character"], 19);
    let log = sarif_in(&dir, &["k.py"]);
    let r = &results(&log)[0];
    assert_eq!(region(&r["locations"][0])["startLine"], 78);
    assert_eq!(region(&r["locations"][0])["startColumn"], 20);
    assert_same_place(&d["range"], region(&r["locations"][0]));
    let concise = stdout(&cute_lsp_in(&dir, &["check", "--format", "concise", "k.py"]));
    assert!(concise.starts_with("k.py:78:19: CUTE001 untoggled-phase: "), "{concise}");
    let github = stdout(&cute_lsp_in(&dir, &["check", "--format", "github", "k.py"]));
    assert!(github.starts_with("::error file=k.py,line=78,endLine=78,col=19,"), "{github}");
}

/// Apply SARIF replacements (1-based lines, UTF-16 columns) to `text`.
fn apply(text: &str, replacements: &[Value]) -> String {
    let offset = |line: u64, col: u64| {
        let start: usize = text.split_inclusive('\n').take(line as usize - 1).map(str::len).sum();
        let mut units = 0;
        for (i, ch) in text[start..].char_indices() {
            if units >= col - 1 || ch == '\n' {
                return start + i;
            }
            units += ch.len_utf16() as u64;
        }
        text.len()
    };
    let mut edits: Vec<(usize, usize, &str)> = replacements
        .iter()
        .map(|r| {
            let g = &r["deletedRegion"];
            let at = |l: &str, c: &str| offset(g[l].as_u64().unwrap(), g[c].as_u64().unwrap());
            (at("startLine", "startColumn"), at("endLine", "endColumn"), r["insertedContent"]["text"].as_str().unwrap())
        })
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (start, end, new) in edits {
        out.replace_range(start..end, new);
    }
    out
}

#[test]
fn the_sarif_fix_fixes_the_bug() {
    let log = sarif_in(&root(), &[BUG]);
    let r = &results(&log)[0];
    let change = &r["fixes"][0]["artifactChanges"][0];
    assert_eq!(change["artifactLocation"]["uri"], BUG);
    let fixed = apply(&std::fs::read_to_string(root().join(BUG)).unwrap(), change["replacements"].as_array().unwrap());
    let dir = tempdir("fixed");
    std::fs::write(dir.join("k.py"), fixed).unwrap();
    let out = cute_lsp_in(&dir, &["check", "--format", "sarif", "k.py"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(results(&json_of(&out)).is_empty());
}

#[test]
fn sarif_uris_are_relative_to_the_working_directory() {
    // An absolute path below the working directory is made relative to it.
    let absolute = root().join(BUG).canonicalize().unwrap();
    let log = sarif_in(&root(), &[absolute.to_str().unwrap()]);
    let artifact = &results(&log)[0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(artifact["uri"], BUG);
    assert_eq!(artifact["uriBaseId"], "%SRCROOT%");
    let base = log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"].as_str().unwrap();
    let cwd = root().canonicalize().unwrap();
    assert_eq!(base, format!("file://{}/", cwd.to_str().unwrap()));
    // A file outside it keeps an absolute `file:` URI; a space is encoded.
    let dir = tempdir("outside");
    let file = dir.join("a kernel.py");
    std::fs::copy(root().join(BUG), &file).unwrap();
    let log = sarif_in(&root(), &[file.to_str().unwrap()]);
    let artifact = &results(&log)[0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(artifact["uri"], format!("file://{}", file.to_str().unwrap().replace(' ', "%20")));
    assert!(artifact.get("uriBaseId").is_none(), "{artifact}");
}

#[test]
fn a_clean_run_is_a_log_with_no_results() {
    let log = sarif_in(&root(), &["tests/fixtures/untoggled_phase/jacobi_cluster_clean.py"]);
    assert!(results(&log).is_empty());
    assert!(!log["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap().is_empty());
    let out = cute_lsp(&["check", "--format", "concise", "tests/fixtures/untoggled_phase/jacobi_cluster_clean.py"]);
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
}
