//! The database's per-kernel path against the whole-file path
//! (`analyze_text`), and what an edit re-checks. (Its own test binary: the
//! check counters are per process, so the tests here run one at a time.)

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use cute_lint::{
    analyze_text, check_counts, lint_file, lint_file_with, AnalysisOptions, CheckCounts, Database, Diagnostic, SourceFile,
};
use salsa::Setter;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap()
}

/// Every Python file under tests/fixtures and tests/corpus.
fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "py") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("tests/fixtures"), &mut out);
    walk(&root().join("tests/corpus"), &mut out);
    out.sort();
    assert!(out.len() >= 20, "fixtures not found: {out:?}");
    out
}

fn whole(text: &str) -> Vec<Diagnostic> {
    analyze_text(text, &AnalysisOptions::default())
}

/// Options whose budget ends an exploration by its state count, never by
/// the clock, so that both paths stop at the same point on a model that
/// random edits made large.
fn bounded() -> AnalysisOptions {
    AnalysisOptions { max_states: 20_000, max_time: std::time::Duration::from_secs(600), ..AnalysisOptions::default() }
}

/// The database's diagnostics of `file` and the whole-file path's of
/// `text`, its text. The two are independent, so the whole-file path runs
/// on a thread of its own meanwhile.
fn both(db: &Database, file: SourceFile, text: &str) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    std::thread::scope(|scope| {
        let whole = scope.spawn(|| analyze_text(text, &bounded()));
        let incremental = lint_file_with(db, file, bounded()).as_ref().clone();
        (incremental, whole.join().expect("the whole-file path panicked"))
    })
}

fn checks_since(before: CheckCounts) -> (usize, usize) {
    let now = check_counts();
    (now.explorations - before.explorations, now.instantiations - before.instantiations)
}

/// A small deterministic generator, so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// An edit an editor could make: lines inserted, removed, duplicated or
/// swapped, indented or dedented, characters typed or deleted (possibly
/// breaking the syntax for a while), comments added.
fn random_edit(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    if lines.is_empty() {
        return "x = 1\n".to_string();
    }
    let at = rng.below(lines.len());
    match rng.below(11) {
        0 => lines.insert(at, "\n".to_string()),
        1 => lines.insert(at, "# a comment line\n".to_string()),
        2 => {
            lines.remove(at);
        }
        3 => {
            let line = lines[at].clone();
            lines.insert(at, line);
        }
        4 if at + 1 < lines.len() => lines.swap(at, at + 1),
        5 => {
            let line = &mut lines[at];
            let cut = line.char_indices().map(|(i, _)| i).nth(rng.below(line.chars().count())).unwrap_or(0);
            line.insert(cut, ['(', ')', ':', ' ', 'x', '1', '#'][rng.below(7)]);
        }
        6 => {
            let line = &mut lines[at];
            if let Some((i, _)) = line.char_indices().nth(rng.below(line.chars().count())) {
                line.remove(i);
            }
        }
        8 => lines[at].insert_str(0, "    "),
        9 => {
            let spaces = lines[at].chars().take_while(|c| *c == ' ').count().min(4);
            lines[at].replace_range(..spaces, "");
        }
        7 => {
            let indent: String = lines[at].chars().take_while(|c| *c == ' ').collect();
            lines.insert(at, format!("{indent}tmp_{} = {}\n", rng.below(100), rng.below(5)));
        }
        _ => {
            // Parity literals and counts: the synchronization itself.
            let line = &mut lines[at];
            for (from, to) in [("phase", "1 - phase"), ("0)", "1)"), ("1)", "0)"), ("128", "64"), ("256", "255")] {
                if line.contains(from) {
                    *line = line.replacen(from, to, 1);
                    break;
                }
            }
        }
    }
    lines.concat()
}

#[test]
fn per_kernel_path_equals_whole_file_path_on_every_fixture() {
    let _serial = serial();
    let mut db = Database::default();
    let file = SourceFile::new(&db, "f.py".to_string(), String::new());
    for path in sources() {
        let text = std::fs::read_to_string(&path).unwrap();
        file.set_text(&mut db).to(text.clone());
        let expected = whole(&text);
        let got = lint_file(&db, file).as_ref().clone();
        assert_eq!(got, expected, "{}", path.display());
    }
}

#[test]
fn per_kernel_path_equals_whole_file_path_along_random_edits() {
    let _serial = serial();
    let seeds: u64 = std::env::var("CUTE_LSP_EDIT_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    let steps = 12;
    let (mut whole_files, mut edits) = (0, 0);
    for path in sources() {
        let original = std::fs::read_to_string(&path).unwrap();
        for seed in 1..=seeds {
            let mut db = Database::default();
            let file = SourceFile::new(&db, "f.py".to_string(), original.clone());
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ original.len() as u64);
            let mut text = original.clone();
            let _ = lint_file_with(&db, file, bounded());
            let fallbacks = check_counts().whole_file;
            for step in 0..steps {
                text = random_edit(&text, &mut rng);
                file.set_text(&mut db).to(text.clone());
                let (got, expected) = both(&db, file, &text);
                assert_eq!(got, expected, "{} seed {seed} step {step}; text:\n{text}", path.display());
            }
            whole_files += check_counts().whole_file - fallbacks;
            edits += steps;
        }
    }
    // Broken syntax falls back at times; most edits must not.
    eprintln!("{whole_files} of {edits} edits checked the whole file");
    assert!(whole_files * 4 < edits, "{whole_files} of {edits} edits checked the whole file");
}

/// The top-level import statements of `text` (a statement in
/// parentheses or continued with a backslash taken whole, a docstring's
/// line that starts with "from" not one) and the rest of it.
fn split_imports(text: &str) -> (Vec<String>, String) {
    let (mut imports, mut rest) = (Vec::new(), String::new());
    let mut lines = text.split_inclusive('\n');
    let mut in_string = false;
    while let Some(line) = lines.next() {
        let statement_start = !in_string && (line.starts_with("import ") || line.starts_with("from "));
        in_string ^= line.matches("\"\"\"").count() % 2 == 1;
        if !statement_start {
            rest.push_str(line);
            continue;
        }
        let mut statement = line.to_string();
        let open = |s: &str| s.matches('(').count() > s.matches(')').count() || s.trim_end().ends_with('\\');
        while open(&statement) {
            let Some(more) = lines.next() else { break };
            statement.push_str(more);
        }
        imports.push(statement);
    }
    (imports, rest)
}

/// The names an import statement binds (`import a.b` binds `a`).
fn names_bound(import: &str) -> Vec<String> {
    let flat = import.replace(['(', ')', '\\', '\n'], " ");
    let names = match flat.split_once(" import ") {
        Some((from, names)) if from.starts_with("from ") => names.to_string(),
        _ => flat.trim_start_matches("import ").to_string(),
    };
    names
        .split(',')
        .filter_map(|part| {
            let words: Vec<&str> = part.split_whitespace().collect();
            match words.as_slice() {
                [_, "as", alias] => Some(alias.to_string()),
                [name] => Some(name.split('.').next().unwrap_or(name).to_string()),
                _ => None,
            }
        })
        .collect()
}

/// The functions and classes `text` defines at its top level.
fn names_defined(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.strip_prefix("async ").unwrap_or(line);
            let name = line.strip_prefix("def ").or_else(|| line.strip_prefix("class "))?;
            let end = name.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(name.len());
            Some(name[..end].to_string())
        })
        .collect()
}

/// Several kernels in one file, as a package module holds them: the
/// fixtures one after the other, their imports gathered at the top. The
/// rest of the file must not bleed into one kernel's frame, moving them
/// must carry their diagnostics, and most edits must re-check only the
/// kernels they touch (an import in the middle of the file would make
/// every edit check the whole file).
#[test]
fn a_file_of_many_fixtures() {
    let _serial = serial();
    let (mut header, mut body) = (Vec::new(), String::new());
    let mut bound: std::collections::BTreeMap<String, String> = Default::default();
    let mut defined = std::collections::BTreeSet::new();
    let mut fixtures = 0;
    // The modules of the fixture packages import each other.
    let alone = |p: &&PathBuf| p.to_string_lossy().contains("fixtures") && !p.with_file_name("__init__.py").exists();
    for path in sources().iter().filter(alone) {
        let (imports, rest) = split_imports(&std::fs::read_to_string(path).unwrap());
        // A fixture that binds a name another binds to something else
        // stays out: one file cannot import both. So does one that defines
        // a name an earlier one defines (a bug twin and its clean twin):
        // the file would hold two definitions of it.
        let names: Vec<(String, String)> = imports.iter().flat_map(|i| names_bound(i).into_iter().map(move |n| (n, i.clone()))).collect();
        let definitions = names_defined(&rest);
        if names.iter().any(|(n, i)| bound.get(n).is_some_and(|other| other != i)) || definitions.iter().any(|d| defined.contains(d)) {
            continue;
        }
        defined.extend(definitions);
        fixtures += 1;
        for (name, import) in names {
            bound.insert(name, import.clone());
            if !header.contains(&import) {
                header.push(import);
            }
        }
        body.push_str(&rest);
        body.push('\n');
    }
    let original = header.concat() + &body;
    let mut db = Database::default();
    let file = SourceFile::new(&db, "all.py".to_string(), original.clone());
    let (got, expected) = both(&db, file, &original);
    assert_eq!(got, expected);
    let findings = got.len();
    assert!(fixtures >= 20 && findings >= 20, "{fixtures} fixtures, {findings} findings");
    let fallbacks = check_counts().whole_file;
    let mut rng = Rng(7);
    let steps = 40;
    for step in 0..steps {
        // Each an edit of the file as it was: a section one edit breaks
        // would otherwise stay broken for the rest of the run (the random
        // edits of each fixture's own file test edits on edits).
        let text = random_edit(&original, &mut rng);
        file.set_text(&mut db).to(text.clone());
        let (got, expected) = both(&db, file, &text);
        assert_eq!(got, expected, "step {step}");
    }
    let whole_files = check_counts().whole_file - fallbacks;
    eprintln!("{fixtures} fixtures, {findings} findings; {whole_files} of {steps} edits checked the whole file");
    assert!(whole_files * 4 < steps, "{whole_files} of {steps} edits checked the whole file");
}

#[test]
fn only_synchronization_edits_re_check() {
    let _serial = serial();
    let mut db = Database::default();
    let text = fixture("tests/fixtures/untoggled_phase/jacobi_cluster_bug.py");
    let file = SourceFile::new(&db, "jacobi.py".to_string(), text.clone());
    let before = check_counts();
    let first = lint_file(&db, file).clone();
    assert_eq!(first.len(), 1);
    let (explored, instantiated) = checks_since(before);
    assert!(explored >= 1 && instantiated >= 1);

    // A comment, arithmetic on registers only, and lines inserted above the
    // kernel: positions move, neither the synchronization nor the memory
    // accesses do.
    let edited = text
        .replace("# 3-point stencil;", "# three-point stencil;")
        .replace("        left = cur[tid]\n", "        bias = tid * 2 + 1  # registers only\n        left = cur[tid]\n")
        .replacen("import cutlass\n", "import cutlass\n\n# a new comment line\n", 1);
    assert_ne!(edited, text);
    assert!(edited.contains("bias = tid"));
    let before = check_counts();
    file.set_text(&mut db).to(edited.clone());
    let second = lint_file(&db, file).clone();
    assert_eq!(checks_since(before), (0, 0), "a non-synchronization edit checked again");
    assert_eq!(second.as_ref(), &whole(&edited));
    assert_eq!(second[0].code, first[0].code);
    let moved = |t: &str, d: &Diagnostic| t[..d.range.start as usize].matches('\n').count();
    assert_eq!(moved(&edited, &second[0]), moved(&text, &first[0]) + 2, "the diagnostic follows its line");

    // The formula of a value stored into shared memory changes, its loads
    // and its store do not: nothing is checked again.
    let formula = edited.replace("/ 3.0", "* 0.3333");
    assert_ne!(formula, edited);
    let before = check_counts();
    file.set_text(&mut db).to(formula.clone());
    let reformulated = lint_file(&db, file).clone();
    assert_eq!(checks_since(before), (0, 0), "a stored value's arithmetic checked again");
    assert_eq!(reformulated.as_ref(), &whole(&formula));

    // An edit to a value bound to a name (which an index could read) is
    // instantiated again for the memory-ordering analysis; the
    // synchronization model is the same, so it is not explored again.
    let accesses = formula.replace("left = cur[tid - 1]", "left = cur[tid - 1] + 0.0");
    assert_ne!(accesses, formula);
    let before = check_counts();
    file.set_text(&mut db).to(accesses.clone());
    let accessed = lint_file(&db, file).clone();
    assert_eq!(checks_since(before), (0, 1), "an edit to a memory access is instantiated again, once");
    assert_eq!(accessed.as_ref(), &whole(&accesses));
    assert_eq!((accessed[0].code, accessed[0].range), (second[0].code, second[0].range));

    // Fixing the parity changes the model: checked again, and clean.
    let fixed = edited.replace("cute.arch.mbarrier_wait(gate, cutlass.Int32(0))", "cute.arch.mbarrier_wait(gate, it % 2)");
    let before = check_counts();
    file.set_text(&mut db).to(fixed.clone());
    let third = lint_file(&db, file).clone();
    let (explored, instantiated) = checks_since(before);
    assert!(explored >= 1 && instantiated >= 1);
    assert!(third.is_empty(), "{third:?}");

    // Restoring the bug finds both checks memoized.
    let before = check_counts();
    file.set_text(&mut db).to(edited.clone());
    assert_eq!(lint_file(&db, file).as_ref(), second.as_ref());
    assert_eq!(checks_since(before), (0, 0));
}

/// Three copies of the clean Jacobi smoother (`k0`..`k2`, launched by
/// `host0`..`host2` with 3, 4 and 5 rounds) in one file.
fn three_smoothers() -> String {
    let clean = fixture("tests/fixtures/untoggled_phase/jacobi_cluster_clean.py");
    let kernel_at = clean.find("@cute.kernel").unwrap();
    let main_at = clean.find("if __name__").unwrap();
    let body = &clean[kernel_at..main_at];
    let mut text = clean[..kernel_at].to_string();
    for i in 0..3 {
        text.push_str(&body.replace("jacobi_kernel", &format!("k{i}")).replace("jacobi_smoother", &format!("host{i}")));
    }
    text.push_str("if __name__ == \"__main__\":\n    arr = make_fake_compact_tensor(cutlass.Float32, (2 * HALF,))\n");
    for i in 0..3 {
        text.push_str(&format!("    cute.compile(host{i}, arr, {})\n", i + 3));
    }
    text
}

/// Two copies of a kernel under different names: an edit inside one
/// re-checks that one only.
#[test]
fn an_edit_inside_one_kernel_re_checks_that_kernel_only() {
    let _serial = serial();
    let text = three_smoothers();
    let mut db = Database::default();
    let file = SourceFile::new(&db, "three.py".to_string(), text.clone());
    assert!(lint_file(&db, file).is_empty());

    // The second kernel's wait gets a constant parity: one kernel, one model.
    let wait = "cute.arch.mbarrier_wait(gate, phase)";
    let at = text.match_indices(wait).nth(1).unwrap().0;
    let mut edited = text.clone();
    edited.replace_range(at..at + wait.len(), "cute.arch.mbarrier_wait(gate, 0)");
    let before = check_counts();
    file.set_text(&mut db).to(edited.clone());
    let found = lint_file(&db, file).clone();
    assert_eq!(checks_since(before), (1, 1));
    assert_eq!(found.as_ref(), &whole(&edited));
    assert_eq!(found.len(), 1);

    // Launch arguments changed for the third kernel only.
    let relaunched = edited.replace("cute.compile(host2, arr, 5)", "cute.compile(host2, arr, 6)");
    let before = check_counts();
    file.set_text(&mut db).to(relaunched.clone());
    let found = lint_file(&db, file).clone();
    assert_eq!(checks_since(before), (1, 1));
    assert_eq!(found.as_ref(), &whole(&relaunched));
}

/// A line typed key by key in one kernel (an unclosed `(` and `[` for a
/// while): the broken kernel is left out and named, the other kernels are
/// not checked again, nothing but the syntax-error note is published, and
/// each keystroke's result is that of checking the text as one.
#[test]
fn a_line_typed_in_one_kernel_leaves_the_others_alone() {
    let _serial = serial();
    let text = three_smoothers();
    let mut db = Database::default();
    let file = SourceFile::new(&db, "typed.py".to_string(), text.clone());
    assert!(lint_file(&db, file).is_empty());

    let at = text.match_indices("        nxt[tid] = (left").nth(1).unwrap().0;
    let typed = "        probe = (left + cur[tid - 1]) * 2.0\n";
    let mut broken_keystrokes = 0;
    for n in 1..typed.len() {
        let edited = format!("{}{}\n{}", &text[..at], &typed[..n], &text[at..]);
        let before = check_counts();
        file.set_text(&mut db).to(edited.clone());
        let found = lint_file(&db, file).as_ref().clone();
        assert_eq!(found, whole(&edited), "after {:?}", &typed[..n]);
        let open = typed[..n].matches('(').count() > typed[..n].matches(')').count();
        if open {
            broken_keystrokes += 1;
            // Only the syntax note, naming the kernel being typed in.
            assert_eq!(found.len(), 1, "after {:?}: {found:#?}", &typed[..n]);
            assert_eq!(found[0].code, "CUTE090");
            assert!(found[0].message.contains("`k1` is not checked until it parses"), "{}", found[0].message);
            assert_eq!(checks_since(before).1, 0, "after {:?}: kernels were instantiated again", &typed[..n]);
        }
    }
    assert!(broken_keystrokes >= 15, "{broken_keystrokes}");
}

/// Memory-ordering findings move with their lines: comment lines inserted
/// above a kernel and inside it re-run no check, not even the
/// memory-ordering analysis, and give the same diagnostics as checking the
/// edited file as one.
#[test]
fn comment_edits_do_not_analyse_memory_again() {
    let _serial = serial();
    for rel in ["tests/fixtures/fence_after_sync/persistent_refill_bug.py", "tests/fixtures/missing_release/relaxed_publish_bug.py"] {
        let text = fixture(rel);
        let mut db = Database::default();
        let file = SourceFile::new(&db, "memory.py".to_string(), text.clone());
        let before = check_counts();
        let first = lint_file(&db, file).clone();
        assert!(check_counts().memory_analyses > before.memory_analyses, "{rel}: the memory analysis ran");
        assert_eq!(first.as_ref(), &whole(&text), "{rel}");
        assert!(!first.is_empty(), "{rel}: the bug twin has a finding");

        // A comment line above the kernel, and one inside it just above the
        // line the finding is on.
        let marker = text.find("# expect:").unwrap();
        let line_start = text[..marker].rfind('\n').unwrap() + 1;
        let indent: String = text[line_start..].chars().take_while(|c| *c == ' ').collect();
        let mut edited = text.clone();
        edited.insert_str(line_start, &format!("{indent}# a comment inside the kernel\n"));
        let kernel = edited.find("@cute.kernel").unwrap();
        edited.insert_str(kernel, "# a comment above the kernel\n");
        let before = check_counts();
        file.set_text(&mut db).to(edited.clone());
        let second = lint_file(&db, file).clone();
        let now = check_counts();
        assert_eq!(
            (now.explorations - before.explorations, now.instantiations - before.instantiations, now.memory_analyses - before.memory_analyses),
            (0, 0, 0),
            "{rel}: a comment edit checked again"
        );
        assert_eq!(second.as_ref(), &whole(&edited), "{rel}");
        let line = |t: &str, d: &Diagnostic| t[..d.range.start as usize].matches('\n').count();
        assert_eq!(first.len(), second.len());
        for (a, b) in first.iter().zip(second.iter()) {
            assert_eq!(a.code, b.code);
            assert_eq!(line(&edited, b), line(&text, a) + 2, "{rel}: the finding follows its line");
        }
    }
}

/// A launch that loses its `grid=`/`block=` line (an edit half done): both
/// paths take the block shape as not known, and say so alike.
#[test]
fn a_launch_that_loses_its_shape() {
    let _guard = serial();
    let text = fixture("tests/fixtures/missing_proxy_fence/reload_no_fence_bug.py");
    let db = Database::default();
    let file = SourceFile::new(&db, "kernel.py".to_string(), text.clone());
    let (incremental, full) = both(&db, file, &text);
    assert_eq!(incremental, full);
    let mut db = db;
    for cut in ["        grid=[1, 1, 1], block=[NUM_THREADS, 1, 1]\n", "    row_max_kernel(tma_atom, tma_src, rowmax, smem_layout).launch(\n        grid=[1, 1, 1], block=[NUM_THREADS, 1, 1]\n    )\n"] {
        assert!(text.contains(cut));
        let edited = text.replace(cut, "");
        file.set_text(&mut db).to(edited.clone());
        let (incremental, full) = both(&db, file, &edited);
        assert_eq!(incremental, full, "after cutting {cut:?}");
    }
}

/// A kernel that creates a package's subclass of a modelled pipeline class
/// (`subclass_package_bug`: `create` and `producer_commit` overridden in a
/// sibling module) keeps its check across edits that leave its
/// synchronization alone, and is checked again when the subclass's `create`
/// or an override changes.
#[test]
fn a_kernel_on_a_pipeline_subclass_is_checked_again_only_when_its_synchronization_changes() {
    let _serial = serial();
    let fixtures = root().join("tests/fixtures").canonicalize().unwrap();
    let dir = fixtures.join("arrive_count_mismatch/subclass_package_bug");
    let (kernel, pipeline) = (dir.join("kernel.py"), dir.join("pipeline.py"));
    let mut db = Database::default();
    let package = db.with_package(vec![fixtures.clone()]);
    let kernel_text = std::fs::read_to_string(&kernel).unwrap();
    let kernel_file = SourceFile::new(&db, kernel.display().to_string(), kernel_text.clone());
    let pipeline_text = std::fs::read_to_string(&pipeline).unwrap();
    let pipeline_file = SourceFile::new(&db, pipeline.display().to_string(), pipeline_text.clone());
    package.set_open(&mut db).to(std::sync::Arc::new([(pipeline.clone(), pipeline_file)].into_iter().collect()));
    let names = |db: &Database| lint_file(db, kernel_file).iter().map(|d| d.name).collect::<Vec<_>>();
    assert_eq!(names(&db), ["arrive-count-mismatch"]);

    // Lines above the kernel and a comment inside it: nothing checked again.
    let moved = kernel_text
        .replacen("STAGES = 2\n", "# ring depth\nSTAGES = 2\n", 1)
        .replacen("        acc = cutlass.Float32(0.0)\n", "        acc = cutlass.Float32(0.0)  # running sum\n", 1);
    assert_ne!(moved, kernel_text);
    let before = check_counts();
    kernel_file.set_text(&mut db).to(moved);
    assert_eq!(names(&db), ["arrive-count-mismatch"]);
    assert_eq!(checks_since(before), (0, 0), "an edit outside the synchronization checked again");

    // The subclass's `create` no longer keeps `elect_one_commit`: every
    // producer thread commits, as its group counts.
    let create = pipeline_text.replacen("\"_elect_one_commit\", elect_one_commit)", "\"_elect_one_commit\", False)", 1);
    assert_ne!(create, pipeline_text);
    pipeline_file.set_text(&mut db).to(create);
    assert_eq!(names(&db), Vec::<&str>::new(), "the subclass's `create` changed");
    pipeline_file.set_text(&mut db).to(pipeline_text.clone());
    assert_eq!(names(&db), ["arrive-count-mismatch"]);

    // The override commits from every thread whatever it was created with.
    let commit = pipeline_text.replacen("            self._elect_one_commit,\n", "            False,\n", 1);
    assert_ne!(commit, pipeline_text);
    pipeline_file.set_text(&mut db).to(commit);
    assert_eq!(names(&db), Vec::<&str>::new(), "the override changed");
}
