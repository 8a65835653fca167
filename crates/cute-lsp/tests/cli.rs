//! The command line as a user and CI meet it: exit codes, the JSON contract,
//! `explain`, `rules`, `slice`, and bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cute_lsp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cute-lsp")).args(args).current_dir(root()).output().expect("cute-lsp runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const BUG: &str = "tests/fixtures/untoggled_phase/jacobi_cluster_bug.py";
const CLEAN: &str = "tests/fixtures/untoggled_phase/jacobi_cluster_clean.py";

#[test]
fn check_exit_codes() {
    assert_eq!(cute_lsp(&["check", BUG]).status.code(), Some(1));
    assert_eq!(cute_lsp(&["check", CLEAN]).status.code(), Some(0));
    assert_eq!(cute_lsp(&["check", "does/not/exist.py"]).status.code(), Some(2));
    assert_eq!(cute_lsp(&["check"]).status.code(), Some(2));
    assert_eq!(cute_lsp(&["check", "--format", "xml", CLEAN]).status.code(), Some(2));
}

#[test]
fn a_path_that_cannot_be_read_leaves_the_others_checked() {
    for format in ["human", "json"] {
        let out = cute_lsp(&["check", "--format", format, "does/not/exist.py", BUG, "tests/fixtures/no/such/dir"]);
        // The run fails, and says which paths, but the readable file's
        // finding is still reported.
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("cannot read `does/not/exist.py`"), "{stderr}");
        assert!(stderr.contains("cannot read `tests/fixtures/no/such/dir`"), "{stderr}");
        assert!(stdout(&out).contains("untoggled-phase"), "{}", stdout(&out));
        if format == "human" {
            assert!(stderr.contains("1 file(s) checked, 1 finding(s), 1 error(s), 2 path(s) not read"), "{stderr}");
        } else {
            let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one JSON array on stdout");
            assert_eq!(v.as_array().map(Vec::len), Some(1), "{v:#}");
        }
    }
}

#[test]
fn json_follows_the_contract() {
    let out = cute_lsp(&["check", "--format", "json", BUG]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one JSON array on stdout");
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 1, "{v:#}");
    let d = &arr[0];
    assert_eq!(d["file"], BUG);
    assert_eq!(d["code"], "CUTE001");
    assert_eq!(d["name"], "untoggled-phase");
    assert_eq!(d["severity"], "error");
    let text = std::fs::read_to_string(root().join(BUG)).unwrap();
    let line = text.lines().position(|l| l.contains("# expect: untoggled-phase")).unwrap();
    assert_eq!(d["range"]["start"]["line"], line);
    assert_eq!(d["range"]["start"]["character"], 8);
    let related = d["related"].as_array().unwrap();
    assert!(related.len() >= 3);
    for r in related {
        assert_eq!(r["file"], BUG);
        assert!(r["message"].as_str().unwrap().starts_with("step") || r["message"].as_str().unwrap().starts_with("stuck"));
        assert!(r["range"]["start"]["line"].is_u64());
        // Each step also as data (`cute-lsp trace` draws it).
        assert!(r["trace"]["kind"].is_string() && r["trace"]["first"].is_u64(), "{r}");
    }
    let fixes = d["fixes"].as_array().unwrap();
    assert!(!fixes.is_empty());
    assert!(fixes[0]["edits"][0]["new_text"].is_string());
}

#[test]
fn json_of_a_clean_directory_is_an_empty_array() {
    let dir = tempdir("clean");
    std::fs::copy(root().join(CLEAN), dir.join("k.py")).unwrap();
    std::fs::write(dir.join("no_kernels.py"), "x = 1\n").unwrap();
    let out = cute_lsp(&["check", "--format", "json", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out).trim(), "[]");
}

#[test]
fn bad_input_gets_a_diagnostic_not_a_crash() {
    let dir = tempdir("bad");
    std::fs::write(dir.join("binary.py"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let mut broken = std::fs::read_to_string(root().join(BUG)).unwrap();
    broken.insert_str(broken.find("for it in").unwrap(), "def (:\n");
    std::fs::write(dir.join("broken.py"), broken).unwrap();
    let out = cute_lsp(&["check", "--format", "json", dir.to_str().unwrap()]);
    assert!(matches!(out.status.code(), Some(0) | Some(1)), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<(&str, &str)> =
        v.as_array().unwrap().iter().map(|d| (d["file"].as_str().unwrap(), d["name"].as_str().unwrap())).collect();
    assert!(names.iter().any(|(f, n)| f.ends_with("binary.py") && *n == "analysis-incomplete"), "{names:?}");
    assert!(names.iter().any(|(f, n)| f.ends_with("broken.py") && *n == "analysis-incomplete"), "{names:?}");
}

#[test]
fn explain_and_rules() {
    let out = cute_lsp(&["explain", "CUTE001"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("untoggled-phase"));
    assert_eq!(stdout(&cute_lsp(&["explain", "deadlock"])), stdout(&cute_lsp(&["explain", "cute050"])));
    assert_eq!(cute_lsp(&["explain", "no-such-rule"]).status.code(), Some(2));
    let rules = stdout(&cute_lsp(&["rules"]));
    for name in ["untoggled-phase", "deadlock", "analysis-incomplete"] {
        assert!(rules.contains(name), "{rules}");
    }
}

#[test]
fn slice_keeps_the_synchronization_and_drops_the_datapath() {
    let out = cute_lsp(&["slice", CLEAN]);
    assert_eq!(out.status.code(), Some(0));
    let table = stdout(&out);
    let row = |needle: &str| {
        table.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no row for {needle}:\n{table}")).to_string()
    };
    for kept in ["mbarrier_wait(gate, phase)", "phase = phase ^ 1", "mbarrier_init(gate, 256)", "peer = 1 - my_cta"] {
        assert!(row(kept).contains(" yes "), "{kept} should be kept:\n{}", row(kept));
    }
    // The stencil's loads and stores matter to memory ordering only.
    for memory in ["nxt[tid] = (left + cur[tid] + right) / 3.0", "cur, nxt = nxt, cur"] {
        assert!(row(memory).contains(" mem "), "{memory} is kept for memory ordering only:\n{}", row(memory));
    }
    assert!(row("nxt[tid] = ").contains("memory: stores to `nxt`"), "{}", row("nxt[tid] = "));
    assert_eq!(cute_lsp(&["slice", CLEAN, "--kernel", "nope"]).status.code(), Some(2));
}

/// A helper's table: what a thread inlining it runs (its synchronization,
/// the store its caller may read) and the datapath loop it skips.
#[test]
fn slice_of_a_helper_shows_what_an_inlining_thread_runs() {
    let dir = tempdir("helper-slice");
    let file = dir.join("consume.py");
    std::fs::write(
        &file,
        r#"import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


@cute.jit
def consume(pipe, state, frag, n):
    pipe.consumer_wait(state)
    acc = cutlass.Float32(1.0)
    for i in cutlass.range(n):
        acc = acc * 0.5 + 1.0
    frag[0] = acc
    pipe.consumer_release(state)


@cute.kernel
def k(x: cute.Tensor, n: cutlass.Int32):
    storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
    group = pipeline.CooperativeGroup(pipeline.Agent.Thread, 32)
    pipe = pipeline.PipelineAsync.create(num_stages=2, producer_group=group, consumer_group=group, barrier_storage=storage)
    consume(pipe, pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2), x, n)
"#,
    )
    .unwrap();
    let out = cute_lsp(&["slice", file.to_str().unwrap(), "--kernel", "consume"]);
    assert_eq!(out.status.code(), Some(0));
    let table = stdout(&out);
    assert!(table.starts_with("helper consume"), "{table}");
    let row = |needle: &str| table.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no row for {needle}:\n{table}")).to_string();
    for kept in ["pipe.consumer_wait(state)", "frag[0] = acc", "pipe.consumer_release(state)"] {
        assert!(row(kept).contains(" yes "), "{}", row(kept));
    }
    for dropped in ["for i in cutlass.range(n)", "acc = acc * 0.5 + 1.0"] {
        assert!(row(dropped).contains(" datapath"), "{}", row(dropped));
    }
    assert_eq!(cute_lsp(&["slice", file.to_str().unwrap(), "--kernel", "nope"]).status.code(), Some(2));
    // A helper in a section left out for a syntax error: the error says so.
    let broken = dir.join("broken.py");
    std::fs::write(&broken, "import cutlass.cute as cute\n\n@cute.jit\ndef h(s):\n    s.advance(\n").unwrap();
    let out = cute_lsp(&["slice", broken.to_str().unwrap(), "--kernel", "h"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no kernel or helper named `h`") && stderr.contains("syntax errors at line 5"), "{stderr}");
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cute-lsp-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn check_reads_tool_cute_lsp_from_pyproject() {
    let dir = tempdir("config");
    std::fs::copy(root().join(BUG), dir.join("k.py")).unwrap();
    std::fs::write(dir.join("pyproject.toml"), "[tool.cute-lsp]\nseverity = { \"untoggled-phase\" = \"warning\" }\n").unwrap();
    let out = cute_lsp(&["check", "--format", "json", dir.join("k.py").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "a warning is not an error: {out:?}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v[0]["severity"], "warning");
    std::fs::write(dir.join("pyproject.toml"), "[tool.cute-lsp]\nignore = [\"untoggled-phase\"]\n").unwrap();
    let out = cute_lsp(&["check", "--format", "json", dir.join("k.py").to_str().unwrap()]);
    assert_eq!(stdout(&out).trim(), "[]");
}

/// A directory is checked on every core, and reported as if file by file:
/// the findings of each file, in the order of the files' paths.
#[test]
fn a_directory_reports_file_by_file_in_path_order() {
    let dir = "tests/fixtures/smem_race";
    let whole = cute_lsp(&["check", "--format", "json", dir]);
    let whole: serde_json::Value = serde_json::from_str(&stdout(&whole)).expect("one JSON array on stdout");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "fixtures not found");
    let mut one_by_one = Vec::new();
    for f in &files {
        let path = format!("{dir}/{}", f.file_name().unwrap().to_string_lossy());
        let out = cute_lsp(&["check", "--format", "json", &path]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("one JSON array on stdout");
        one_by_one.extend(v.as_array().unwrap().iter().cloned());
    }
    assert!(one_by_one.len() >= 2, "the bug twins are flagged");
    assert_eq!(whole, serde_json::Value::Array(one_by_one));
}
