//! A kernel checked with its package gives the same diagnostics through the
//! database (the server's path, reading its package through a `Package`)
//! as through `analyze_file` (the command line's), for every module of the
//! package fixtures; and an edit to a sibling module's text, an input of
//! the database, changes the kernel's result.

use std::path::{Path, PathBuf};

use cute_lint::{analyze_file, lint_file, AnalysisOptions, Database, DiskSources, SourceFile};
use salsa::Setter;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").canonicalize().unwrap()
}

/// The modules of every package fixture.
fn package_modules() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![fixtures()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "py") && p.parent().unwrap().join("__init__.py").exists() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_database_checks_a_package_as_the_command_line_does() {
    let modules = package_modules();
    assert!(modules.len() >= 8, "{modules:?}");
    let mut found = 0;
    for path in modules {
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = analyze_file(&path, &text, &AnalysisOptions::default(), &DiskSources::default());
        let mut db = Database::default();
        db.with_package(vec![fixtures()]);
        let file = SourceFile::new(&db, path.display().to_string(), text);
        let got = lint_file(&db, file);
        assert_eq!(**got, expected, "{}", path.display());
        found += expected.len();
    }
    assert!(found > 0, "the bug twin's finding");
}

#[test]
fn editing_a_sibling_module_changes_the_kernels_result() {
    let dir = fixtures().join("named_barrier_count_mismatch/handoff_package_clean");
    let kernel = dir.join("kernel.py");
    let sync = dir.join("sync.py");
    let mut db = Database::default();
    let package = db.with_package(vec![fixtures()]);
    let kernel_file = SourceFile::new(&db, kernel.display().to_string(), std::fs::read_to_string(&kernel).unwrap());
    let sync_text = std::fs::read_to_string(&sync).unwrap();
    let sync_file = SourceFile::new(&db, sync.display().to_string(), sync_text.clone());
    package.set_open(&mut db).to(std::sync::Arc::new([(sync.clone(), sync_file)].into_iter().collect()));
    assert!(lint_file(&db, kernel_file).is_empty());
    let at = sync_text.rfind("Threads.BOTH").unwrap();
    let short = format!("{}Threads.CONSUMERS{}", &sync_text[..at], &sync_text[at + "Threads.BOTH".len()..]);
    sync_file.set_text(&mut db).to(short);
    let names: Vec<&str> = lint_file(&db, kernel_file).iter().map(|d| d.name).collect();
    assert_eq!(names, ["named-barrier-count-mismatch"]);
    sync_file.set_text(&mut db).to(sync_text);
    assert!(lint_file(&db, kernel_file).is_empty());
}

/// A library installed in the project's environment (`site-packages`,
/// outside the workspace): the database reads it when the package searches
/// there, and not otherwise.
#[test]
fn a_library_in_the_environment_is_read_when_the_package_searches_it() {
    let bug = fixtures().join("named_barrier_count_mismatch/handoff_package_bug");
    let dir = std::env::temp_dir().join(format!("cute-lint-package-environment-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let site = dir.join("env/lib/python3.11/site-packages/handoff_lib");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::create_dir_all(dir.join("app")).unwrap();
    std::fs::write(site.join("__init__.py"), "").unwrap();
    for module in ["sync.py", "barriers.py"] {
        std::fs::copy(bug.join(module), site.join(module)).unwrap();
    }
    let kernel = std::fs::read_to_string(bug.join("kernel.py"))
        .unwrap()
        .replace("from . import sync\n", "import handoff_lib.sync as sync\n")
        .replace("from .barriers import Threads\n", "from handoff_lib.barriers import Threads\n");
    let path = dir.join("app/kernel.py");
    std::fs::write(&path, &kernel).unwrap();
    let names = |search: Vec<PathBuf>| {
        let mut db = Database::default();
        db.with_package_searching(vec![dir.join("app")], search);
        let file = SourceFile::new(&db, path.display().to_string(), kernel.clone());
        lint_file(&db, file).iter().map(|d| d.name).collect::<Vec<_>>()
    };
    assert!(!names(Vec::new()).contains(&"named-barrier-count-mismatch"), "{:?}", names(Vec::new()));
    let found = names(vec![dir.join("env/lib/python3.11/site-packages")]);
    assert!(found.contains(&"named-barrier-count-mismatch"), "{found:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A script in a directory that is no package imports its sibling through
/// the directories above it (`from cute.fmha import helpers`, run with the
/// directory above `cute` on the path, as the CUTLASS examples are): the
/// sibling is read, so a barrier it waits at with a count fewer threads
/// reach is a hang, and the right count is silent.
#[test]
fn a_sibling_imported_through_a_namespace_package_is_read() {
    let dir = std::env::temp_dir().join(format!("cute-lint-namespace-package-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let module = dir.join("examples/cute/fmha");
    std::fs::create_dir_all(&module).unwrap();
    std::fs::write(
        module.join("helpers.py"),
        "import cutlass\nimport cutlass.cute as cute\n\n\n@cute.jit\ndef meet(threads: cutlass.Constexpr):\n    cute.arch.barrier(barrier_id=1, number_of_threads=threads)\n",
    )
    .unwrap();
    let kernel = |threads: u32| {
        format!(
            r#"import cutlass
import cutlass.cute as cute

from cute.fmha import helpers as fmha_helpers


@cute.kernel
def k(x: cute.Tensor):
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    if warp < 2:
        fmha_helpers.meet({threads})


@cute.jit
def host(x: cute.Tensor):
    k(x).launch(grid=[1, 1, 1], block=[128, 1, 1])
"#
        )
    };
    let path = module.join("kernel.py");
    let check = |text: &str| -> Vec<(&'static str, usize)> {
        analyze_file(&path, text, &AnalysisOptions::default(), &DiskSources::default())
            .into_iter()
            .map(|d| (d.name, text[..d.range.start as usize].matches('\n').count() + 1))
            .collect()
    };
    let bug = kernel(128);
    let call = bug[..bug.find("fmha_helpers.meet(").unwrap()].matches('\n').count() + 1;
    assert_eq!(check(&bug), vec![("named-barrier-deadlock", call)]);
    assert_eq!(check(&kernel(64)), vec![]);
    let _ = std::fs::remove_dir_all(&dir);
}
