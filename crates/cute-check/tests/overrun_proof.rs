//! The happens-before proof that named-barrier generations stay apart never
//! clears a model the exhaustive search convicts, on every kernel of the
//! fixtures and the corpus, and it clears the ping-pong and producer and
//! consumer kernels there without a search. The search itself, which
//! explores the moves between two registrations in one order, agrees with
//! the search over every interleaving there.

use cute_check::explore::Budget;
use cute_check::overrun::{generations_ordered, search, search_unreduced, Verdict};
use cute_check::{instantiate, InstantiateOptions, Scenario};
use cute_ir::launch::Launches;

mod files;

#[test]
fn the_proof_never_clears_what_the_search_convicts() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let files = files::repository_files();
    let budget = Budget { max_states: 2_000_000, max_time: std::time::Duration::from_secs(30), ..Budget::default() };
    let (mut proven, mut convicted) = (Vec::new(), Vec::new());
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let module = cute_ir::lower_text(&text).unwrap();
        let launches = Launches::of_module(&module);
        for kernel in module.kernels() {
            let launch = launches.of_kernel(&module, kernel);
            let kept = cute_ir::slice_kernel(&module, kernel, &text).kept_ids();
            let model = instantiate(&module, kernel, &kept, &launch, &Scenario::new(), &InstantiateOptions::default()).model;
            let name = format!("{}: {}", path.strip_prefix(&root).unwrap().display(), kernel.name);
            let searched = search(&model, &budget);
            let every = search_unreduced(&model, &budget);
            if every != Verdict::OutOfBudget {
                assert_eq!(
                    std::mem::discriminant(&searched),
                    std::mem::discriminant(&every),
                    "{name}: the reduced search says {searched:?}, every interleaving {every:?}"
                );
            }
            if generations_ordered(&model) {
                assert_eq!(searched, Verdict::Clear, "{name}: proven, but the search says otherwise");
                proven.push(name);
            } else if matches!(searched, Verdict::Found(_)) {
                convicted.push(name);
            }
        }
    }
    // Neither side is vacuous: the fixtures hold both protocols that keep
    // generations apart and ones that mix them up.
    assert!(proven.iter().any(|n| n.contains("barrier_recycling/") && n.contains("clean")), "proven: {proven:?}");
    assert!(convicted.iter().any(|n| n.contains("barrier_recycling/") && n.contains("bug")), "convicted: {convicted:?}");
}
