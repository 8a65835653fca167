//! Edits that leave a kernel's synchronization alone must not explore it
//! again; edits that change it must. (Its own test binary: the exploration
//! counter is per process.)

use std::sync::atomic::Ordering;

use cute_check::explore::EXPLORATIONS;
use cute_lint::{lint_file, Database, SourceFile};
use salsa::Setter;

fn fixture() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/untoggled_phase/jacobi_cluster_bug.py");
    std::fs::read_to_string(path).unwrap()
}

fn explorations() -> usize {
    EXPLORATIONS.load(Ordering::Relaxed)
}

#[test]
fn only_synchronization_edits_re_check() {
    let mut db = Database::default();
    let text = fixture();
    let file = SourceFile::new(&db, "jacobi.py".to_string(), text.clone());
    let first = lint_file(&db, file).clone();
    assert_eq!(first.len(), 1);
    let after_first = explorations();
    assert!(after_first >= 1);

    // A comment and a datapath change, plus lines inserted above the kernel:
    // positions move, the synchronization does not.
    let edited = text
        .replace("# 3-point stencil;", "# three-point stencil;")
        .replace("/ 3.0", "* 0.3333")
        .replacen("import cutlass\n", "import cutlass\n\n# a new comment line\n", 1);
    assert_ne!(edited, text);
    file.set_text(&mut db).to(edited.clone());
    let second = lint_file(&db, file).clone();
    assert_eq!(explorations(), after_first, "a non-synchronization edit explored again");
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].code, first[0].code);
    let moved = |t: &str, d: &cute_lint::Diagnostic| t[..d.range.start as usize].matches('\n').count();
    assert_eq!(moved(&edited, &second[0]), moved(&text, &first[0]) + 2, "the diagnostic follows its line");

    // Fixing the parity changes the model: explored again, and clean.
    let fixed = edited.replace("cute.arch.mbarrier_wait(gate, cutlass.Int32(0))", "cute.arch.mbarrier_wait(gate, it % 2)");
    file.set_text(&mut db).to(fixed);
    let third = lint_file(&db, file).clone();
    assert!(explorations() > after_first);
    assert!(third.is_empty(), "{third:?}");
}
