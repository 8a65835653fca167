//! `cute-lsp check` on kernels whose definitions live in other files: a
//! package's sibling modules (relative and absolute imports), a library found
//! through `--src` or the configuration's `src`, and packages that import in
//! a cycle, import what is missing or import a module that does not parse.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn cute_lsp_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cute-lsp")).args(args).current_dir(dir).output().expect("cute-lsp runs")
}

fn json(o: &Output) -> Vec<Value> {
    serde_json::from_slice::<Value>(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout))).as_array().unwrap().clone()
}

fn fixture(path: &str) -> String {
    std::fs::read_to_string(root().join("tests/fixtures/named_barrier_count_mismatch").join(path)).unwrap()
}

/// A directory of its own, removed first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cute-lsp-check-package-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_finding_in_a_sibling_module_is_reported_on_the_kernels_call() {
    let dir = root().join("tests/fixtures/named_barrier_count_mismatch");
    let out = cute_lsp_in(&dir, &["check", "--format", "json", "handoff_package_bug", "handoff_package_clean"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let found = json(&out);
    assert_eq!(found.len(), 1, "only the bug package's kernel, and no device function checked as a kernel: {found:?}");
    let d = &found[0];
    assert_eq!(d["name"], "named-barrier-count-mismatch");
    assert_eq!(d["file"], "handoff_package_bug/kernel.py");
    let kernel = fixture("handoff_package_bug/kernel.py");
    let line = kernel.lines().position(|l| l.contains("sync.wait_for_tile()")).unwrap();
    assert_eq!(d["range"]["start"]["line"], line as u64);
    let sync = dir.join("handoff_package_bug/sync.py");
    let wait_line = fixture("handoff_package_bug/sync.py").lines().position(|l| l.contains("Threads.CONSUMERS")).unwrap();
    let related = d["related"].as_array().unwrap();
    assert!(
        related.iter().any(|r| r["file"] == sync.display().to_string() && r["range"]["start"]["line"] == wait_line as u64),
        "the wait in sync.py: {related:?}"
    );
    // The text report shows the sibling's lines.
    let text = cute_lsp_in(&dir, &["check", "handoff_package_bug"]);
    let report = String::from_utf8_lossy(&text.stdout);
    assert!(report.contains("line 15 of handoff_package_bug/sync.py"), "{report}");
}

/// The kernel of the bug package importing its device functions from a
/// library elsewhere (`from handoff_lib.sync import ...`).
fn split_layout(name: &str) -> PathBuf {
    let dir = scratch(name);
    let kernel = fixture("handoff_package_bug/kernel.py")
        .replace("from . import sync\n", "import handoff_lib.sync as sync\n")
        .replace("from .barriers import Threads\n", "from handoff_lib.barriers import Threads\n");
    write(&dir, "app/kernel.py", &kernel);
    write(&dir, "lib/handoff_lib/__init__.py", "");
    write(&dir, "lib/handoff_lib/sync.py", &fixture("handoff_package_bug/sync.py"));
    write(&dir, "lib/handoff_lib/barriers.py", &fixture("handoff_package_bug/barriers.py"));
    dir
}

fn rules_of(o: &Output) -> Vec<String> {
    json(o).iter().map(|d| d["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_library_outside_the_package_is_found_through_src() {
    let dir = split_layout("src");
    let alone = cute_lsp_in(&dir, &["check", "--format", "json", "app/kernel.py"]);
    assert!(!rules_of(&alone).contains(&"named-barrier-count-mismatch".to_string()), "the library is not found: {:?}", rules_of(&alone));
    let with_src = cute_lsp_in(&dir, &["check", "--format", "json", "--src", "lib", "app/kernel.py"]);
    assert!(rules_of(&with_src).contains(&"named-barrier-count-mismatch".to_string()), "{:?}", rules_of(&with_src));
    // A root that is not there is an error of the command line.
    let missing = cute_lsp_in(&dir, &["check", "--src", "nowhere", "app/kernel.py"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--src nowhere: not a directory"));
    // The same from the configuration, relative to the file that says it.
    write(&dir, "pyproject.toml", "[tool.cute-lsp]\nsrc = [\"lib\"]\n");
    let configured = cute_lsp_in(&dir.join("app"), &["check", "--format", "json", "kernel.py"]);
    assert!(rules_of(&configured).contains(&"named-barrier-count-mismatch".to_string()), "{:?}", rules_of(&configured));
    write(&dir, "pyproject.toml", "[tool.cute-lsp]\nsrc = [\"lib\", \"gone\"]\n");
    let told = cute_lsp_in(&dir.join("app"), &["check", "--format", "json", "kernel.py"]);
    assert!(String::from_utf8_lossy(&told.stderr).contains("src: `") && String::from_utf8_lossy(&told.stderr).contains("gone` is not a directory"), "{}", String::from_utf8_lossy(&told.stderr));
}

/// The library installed in a Python environment (`site-packages`): found
/// through the configuration's `python`, the active `$VIRTUAL_ENV`, or a
/// `.venv` beside the configuration file, and not otherwise.
#[test]
fn a_library_installed_in_the_environment_is_found_there() {
    let dir = split_layout("environment");
    let found = |o: &Output| rules_of(o).contains(&"named-barrier-count-mismatch".to_string());
    let check = |virtual_env: Option<&Path>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cute-lsp"));
        cmd.args(["check", "--format", "json", "kernel.py"]).current_dir(dir.join("app")).env_remove("VIRTUAL_ENV");
        if let Some(env) = virtual_env {
            cmd.env("VIRTUAL_ENV", env);
        }
        cmd.output().expect("cute-lsp runs")
    };
    // Installed in an environment elsewhere: not found without it.
    let env = dir.join("env");
    let site = env.join("lib/python3.11/site-packages");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::rename(dir.join("lib/handoff_lib"), site.join("handoff_lib")).unwrap();
    write(&dir, "pyproject.toml", "[tool.cute-lsp]\n");
    assert!(!found(&check(None)), "{:?}", rules_of(&check(None)));
    // The active virtual environment.
    assert!(found(&check(Some(&env))), "{:?}", rules_of(&check(Some(&env))));
    // The configuration's interpreter, or the environment's directory.
    write(&dir, "env/bin/python", "");
    for python in ["env/bin/python", "env"] {
        write(&dir, "pyproject.toml", &format!("[tool.cute-lsp]\npython = \"{python}\"\n"));
        assert!(found(&check(None)), "python = {python}: {:?}", rules_of(&check(None)));
    }
    // A `.venv` beside the configuration file.
    write(&dir, "pyproject.toml", "[tool.cute-lsp]\n");
    std::fs::rename(&env, dir.join(".venv")).unwrap();
    assert!(found(&check(None)), "{:?}", rules_of(&check(None)));
    // A value that is no path is said.
    write(&dir, "pyproject.toml", "[tool.cute-lsp]\npython = 3\n");
    let told = check(None);
    assert!(String::from_utf8_lossy(&told.stderr).contains("python: expected the path"), "{}", String::from_utf8_lossy(&told.stderr));
}

#[test]
fn cycles_missing_modules_and_broken_modules_degrade_to_what_is_known() {
    let dir = scratch("broken");
    let kernel = fixture("handoff_package_bug/kernel.py")
        .replace("from . import sync\n", "from . import sync\nfrom . import missing\nfrom .broken import nothing\n")
        .replace("        sync.publish_tile()\n", "        sync.publish_tile()\n        missing.helper()\n        nothing()\n");
    write(&dir, "pkg/__init__.py", "from .kernel import handoff\n");
    write(&dir, "pkg/kernel.py", &kernel);
    // `sync` imports the kernel module back: a cycle.
    write(&dir, "pkg/sync.py", &fixture("handoff_package_bug/sync.py").replace("from .barriers import", "from . import kernel\nfrom .barriers import"));
    write(&dir, "pkg/barriers.py", &fixture("handoff_package_bug/barriers.py"));
    write(&dir, "pkg/broken.py", "def nothing(:\n    pass\n");
    let out = cute_lsp_in(&dir, &["check", "--format", "json", "pkg"]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(rules_of(&out).contains(&"named-barrier-count-mismatch".to_string()), "{:?}", rules_of(&out));
    // What could not be followed is said, on the kernel.
    let notes: Vec<String> =
        json(&out).iter().filter(|d| d["name"] == "analysis-incomplete").map(|d| d["message"].as_str().unwrap().to_string()).collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("`pkg.missing` is not found"), "{notes:?}");
    assert!(notes[0].contains("`pkg.broken` does not parse, and `nothing` is not among what could be read of it"), "{notes:?}");
}

/// A Blackwell GEMM's epilogue warps take each accumulator through
/// `utils.gemm.sm100.epilogue(...)`, the installed nvidia-cutlass-dsl's
/// helper (its waits and releases on the accumulator pipeline), `EXTRA`
/// after their loop; warp 4 produces one accumulator per tile.
const SM100_EPILOGUE_KERNEL: &str = r#"import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils as utils


class Gemm:
    def __init__(self):
        self.c_dtype = cutlass.Float32
        self.use_2cta_instrs = False

    @cute.kernel
    def kernel(self, tCtAcc_base: cute.Tensor, tCgC: cute.Tensor, epi_tile: cute.Tile, tiles: cutlass.Int32):
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        tidx, _, _ = cute.arch.thread_idx()
        storage = utils.SmemAllocator().allocate_array(cutlass.Int64, 4)
        acc_pipeline = pipeline.PipelineUmmaAsync.create(
            barrier_storage=storage,
            num_stages=2,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 4),
        )
        if warp_idx == 4:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 2)
            for t in cutlass.range(tiles, unroll=1):
                acc_pipeline.producer_acquire(state)
                acc_pipeline.producer_commit(state)
                state.advance()
            acc_pipeline.producer_tail(state)
        if warp_idx < 4:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 2)
            for t in cutlass.range(tiles, unroll=1):
                state = utils.gemm.sm100.epilogue(self, tidx, tCtAcc_base, tCgC, epi_tile, None, (t, 0, 0), state, acc_pipeline)
EXTRA

    @cute.jit
    def __call__(self, tCtAcc_base: cute.Tensor, tCgC: cute.Tensor, epi_tile: cute.Tile, tiles: cutlass.Int32):
        self.kernel(tCtAcc_base, tCgC, epi_tile, tiles).launch(grid=[1, 1, 1], block=[160, 1, 1])
"#;

/// The helpers of the DSL that the API table does not model
/// (`cutlass.utils.gemm.sm100`'s epilogues) are read from the installed
/// package's source, found in the Python environment: a kernel built on
/// them is checked, and a hang inside them is found. Without the
/// environment, the kernel is not checked, and says why.
#[test]
fn the_installed_dsl_s_helpers_are_read_from_its_source() {
    let venv = root().join(".venv");
    assert!(venv.join("bin/python").exists(), "the README's setup makes {} with nvidia-cutlass-dsl", venv.display());
    let dir = scratch("dsl-helper");
    write(&dir, "clean.py", &SM100_EPILOGUE_KERNEL.replace("EXTRA\n", ""));
    let extra = "            state = utils.gemm.sm100.epilogue(self, tidx, tCtAcc_base, tCgC, epi_tile, None, (0, 0, 0), state, acc_pipeline)\n";
    write(&dir, "bug.py", &SM100_EPILOGUE_KERNEL.replace("EXTRA\n", extra));
    let check = |file: &str, env: Option<&Path>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cute-lsp"));
        cmd.args(["check", "--format", "json", file]).current_dir(&dir).env_remove("VIRTUAL_ENV");
        if let Some(env) = env {
            cmd.env("VIRTUAL_ENV", env);
        }
        json(&cmd.output().expect("cute-lsp runs"))
    };
    for file in ["clean.py", "bug.py"] {
        let alone = check(file, None);
        assert!(
            alone.len() == 1 && alone[0]["name"] == "analysis-incomplete" && alone[0]["message"].as_str().unwrap().contains("`utils.gemm.sm100.epilogue(...)`"),
            "{file}: {alone:?}"
        );
    }
    let clean = check("clean.py", Some(&venv));
    assert!(clean.iter().all(|d| d["name"] == "analysis-incomplete" && d["message"].as_str().unwrap().contains("bounded number of loop iterations")), "{clean:?}");
    let bug = check("bug.py", Some(&venv));
    let hang = bug.iter().find(|d| d["name"] == "deadlock").unwrap_or_else(|| panic!("{bug:?}"));
    // On a call of the helper: the kernel's line that reaches the wait.
    let at = hang["range"]["start"]["line"].as_u64().unwrap() as usize;
    let text = SM100_EPILOGUE_KERNEL.replace("EXTRA\n", extra);
    assert!(text.lines().nth(at).unwrap().contains("utils.gemm.sm100.epilogue("), "{hang}");
}

/// `slice` and `promela` read a file of a package as `check` does, with
/// the device functions of its sibling modules linked in: the calls of the
/// kernel into them are kept for the synchronization they make, and the
/// model has their barrier.
#[test]
fn slice_and_promela_see_the_package_check_sees() {
    let dir = root().join("tests/fixtures/named_barrier_count_mismatch");
    let slice = cute_lsp_in(&dir, &["slice", "handoff_package_bug/kernel.py"]);
    assert_eq!(slice.status.code(), Some(0), "{}", String::from_utf8_lossy(&slice.stderr));
    let table = String::from_utf8_lossy(&slice.stdout);
    for call in ["sync.publish_tile()", "sync.wait_for_tile()"] {
        let row = table.lines().find(|l| l.contains(call)).unwrap_or_else(|| panic!("{call}: {table}"));
        assert!(row.contains(" yes ") && row.contains("which synchronizes"), "{row}");
    }
    let promela = cute_lsp_in(&dir, &["promela", "handoff_package_bug/kernel.py"]);
    assert_eq!(promela.status.code(), Some(0), "{}", String::from_utf8_lossy(&promela.stderr));
    let model = String::from_utf8_lossy(&promela.stdout);
    assert!(model.contains("#define NBARS 1") && model.contains("named barrier 1"), "{model}");
}
