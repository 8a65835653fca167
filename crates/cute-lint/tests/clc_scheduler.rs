//! `ClcDynamicPersistentTileScheduler` and the proxy fence after its reads of
//! a cluster launch control response: the fixture pair, and the other ways of
//! saying whether the scheduler fences (by default, by keyword, by position,
//! a value not known statically).

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic};

fn fixture(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").join(path)).unwrap()
}

fn names(src: &str) -> Vec<&'static str> {
    let mut n: Vec<&'static str> = analyze_text(src, &AnalysisOptions::default()).iter().map(|d: &Diagnostic| d.name).collect();
    n.sort();
    n
}

const NO_FENCE: &str = "storage.clc_response.data_ptr(), insert_fence=False\n";

#[test]
fn a_scheduler_that_does_not_fence_is_flagged_at_each_release_of_a_response() {
    let bug = fixture("missing_proxy_fence/clc_scheduler_no_fence_bug.py");
    assert_eq!(names(&bug), ["missing-proxy-fence", "missing-proxy-fence"]);
    assert_eq!(names(&fixture("missing_proxy_fence/clc_scheduler_no_fence_clean.py")), ["analysis-incomplete"]);
    // The default fences, and so does `insert_fence=True`, by keyword or by
    // position.
    let default = bug.replace(NO_FENCE, "storage.clc_response.data_ptr()\n");
    assert_eq!(names(&default), ["analysis-incomplete"]);
    assert_eq!(names(&bug.replace(NO_FENCE, "storage.clc_response.data_ptr(), insert_fence=True\n")), ["analysis-incomplete"]);
    assert_eq!(names(&bug.replace(NO_FENCE, "storage.clc_response.data_ptr(), True\n")), ["analysis-incomplete"]);
    assert_eq!(names(&bug.replace(NO_FENCE, "storage.clc_response.data_ptr(), False\n")), ["missing-proxy-fence", "missing-proxy-fence"]);
}

#[test]
fn whether_the_scheduler_fences_not_known_statically_is_said() {
    let bug = fixture("missing_proxy_fence/clc_scheduler_no_fence_bug.py");
    let unknown = bug.replace(NO_FENCE, "storage.clc_response.data_ptr(), insert_fence=x.shape[0] > 0\n");
    let d = analyze_text(&unknown, &AnalysisOptions::default());
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].name, "analysis-incomplete");
    assert!(d[0].message.contains("insert_fence") || d[0].related.iter().any(|r| r.message.contains("insert_fence")), "{d:#?}");
}
