//! Conditions run both ways record, on every kernel of the fixtures and the
//! corpus, the synchronization that deciding every condition false records:
//! a condition is run both ways only where no synchronization lies under it
//! (`instantiate/both_ways.rs`). Each way then decides a subset of the
//! conditions the unreduced run decides.

use std::collections::BTreeSet;

use cute_check::{instantiate, InstantiateOptions, Instantiated, Scenario};

mod files;
use files::repository_files;

/// The shipped options: conditions run both ways.
fn both_ways() -> InstantiateOptions {
    InstantiateOptions { both_ways: true, ..InstantiateOptions::default() }
}

/// The run that a construct, a budget or the clock did not cut short.
fn settled(run: &Instantiated) -> bool {
    run.model.unresolved.is_empty() && !run.model.out_of_time && !run.other_ways_over_budget
}

fn decided(run: &Instantiated) -> BTreeSet<u32> {
    run.open_conditions.iter().map(|c| c.stmt).collect()
}

/// Compares the two on every kernel of `files`: (kernels compared, those
/// that decide fewer conditions per way with both ways).
fn compare(files: &[std::path::PathBuf]) -> (usize, usize) {
    let (mut compared, mut fewer) = (0, 0);
    files::for_each_kernel(files, |k| {
        let run = |options: &InstantiateOptions| instantiate(k.module, k.kernel, &k.kept, &k.launch, &Scenario::new(), options);
        let (both, per_way) = (run(&both_ways()), run(&InstantiateOptions { both_ways: false, ..both_ways() }));
        if !settled(&both) || !settled(&per_way) {
            return;
        }
        let what = format!("{}: {}", k.path.display(), k.kernel.name);
        assert_eq!(both.model.barriers, per_way.model.barriers, "{what}");
        assert_eq!(both.model.groups, per_way.model.groups, "{what}");
        assert!(decided(&both).is_subset(&decided(&per_way)), "{what}: {:?} against {:?}", decided(&both), decided(&per_way));
        compared += 1;
        fewer += usize::from(decided(&both).len() < decided(&per_way).len());
    });
    eprintln!("{compared} kernels compared; {fewer} decide fewer conditions per way");
    (compared, fewer)
}

#[test]
fn conditions_run_both_ways_record_the_synchronization_of_deciding_them_false() {
    let (compared, fewer) = compare(&repository_files());
    assert!(compared > 100, "{compared} kernels compared");
    assert!(fewer > 0, "no kernel has a condition run both ways");
}

/// The same on the code bases named by `CUTE_LSP_COMPARE_DIRS` (paths
/// separated by `:`), e.g. public code bases fetched for a sweep.
#[test]
#[ignore = "needs CUTE_LSP_COMPARE_DIRS"]
fn conditions_run_both_ways_record_the_synchronization_of_deciding_them_false_on_other_code() {
    compare(&files::files_to_compare_on());
}
