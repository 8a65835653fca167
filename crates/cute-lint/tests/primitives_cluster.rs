//! The cluster forms of `cutlass.experimental.primitives`: a `tcgen05_commit`
//! with a `multicast_mask=` arrives on the barrier at the same offset in each
//! CTA of the mask, and `cp_async_bulk_tensor_shared_cluster_global` is a TMA
//! load into the CTAs of its mask. The fixture pairs, other cluster sizes and
//! spellings, and the forms the model does not follow (bytes one CTA
//! delivers to another's barrier, masks not known), which are named.

use cute_lint::{analyze_text, AnalysisOptions, Diagnostic};

fn fixture(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").join(path)).unwrap()
}

fn check(src: &str) -> Vec<Diagnostic> {
    analyze_text(src, &AnalysisOptions::default())
}

fn names(src: &str) -> Vec<&'static str> {
    let mut n: Vec<&'static str> = check(src).iter().map(|d| d.name).collect();
    n.sort();
    n.dedup();
    n
}

/// `src` launched as `ctas` CTAs in one cluster of that many.
fn in_cluster(src: &str, ctas: u32) -> String {
    let out = src.replace("CLUSTER = 2\n", &format!("CLUSTER = {ctas}\n"));
    assert_ne!(out, src, "the fixture names its cluster size");
    out
}

const COMMIT_BUG: &str = "deadlock/primitives_commit_mask_bug.py";
const COMMIT_CLEAN: &str = "deadlock/primitives_commit_mask_clean.py";

#[test]
fn a_commit_whose_mask_names_another_cta_leaves_its_own_barrier_waiting() {
    let bug = check(&fixture(COMMIT_BUG));
    let deadlocks: Vec<&Diagnostic> = bug.iter().filter(|d| d.name == "deadlock").collect();
    assert_eq!(deadlocks.len(), 1, "{bug:#?}");
    assert!(deadlocks[0].message.contains("CTA 1"), "{}", deadlocks[0].message);
    assert!(!deadlocks[0].related.is_empty(), "a trace");
    assert!(check(&fixture(COMMIT_CLEAN)).is_empty());
}

#[test]
fn commit_masks_over_other_cluster_sizes_and_spellings() {
    let clean = fixture(COMMIT_CLEAN);
    let mask = "multicast_mask=1 << rank)";
    // Four CTAs, each naming itself: silent.
    assert!(check(&in_cluster(&clean, 4)).is_empty());
    // The mask as the package's own type.
    assert!(check(&clean.replace(mask, "multicast_mask=cutlass.Int16(1 << rank))")).is_empty());
    // A pair mask in a cluster of four: CTAs 0 and 1 get four arrivals a
    // phase, CTAs 2 and 3 none.
    let pair = check(&in_cluster(&clean.replace(mask, "multicast_mask=3)"), 4));
    assert!(pair.iter().any(|d| matches!(d.name, "arrive-count-mismatch" | "deadlock") && d.message.contains("done")), "{pair:#?}");
    // Every CTA signalling both of a pair of two, and waiting for two
    // arrivals: each barrier gets one from each CTA.
    let both = clean.replace(mask, "multicast_mask=3)").replace("prims.mbarrier_init(done, 1)", "prims.mbarrier_init(done, 2)");
    assert!(check(&both).is_empty(), "{:#?}", check(&both));
    // A mask naming a CTA the cluster does not have is not checked, said.
    let outside = check(&clean.replace(mask, "multicast_mask=4)"));
    assert_eq!(outside.len(), 1, "{outside:#?}");
    assert_eq!(outside[0].name, "analysis-incomplete");
    assert!(outside[0].message.contains("multicast mask"), "{}", outside[0].message);
}

const TMA_BUG: &str = "read_before_wait/primitives_cluster_tma_bug.py";
const TMA_CLEAN: &str = "read_before_wait/primitives_cluster_tma_clean.py";
const TMA_CALL: &str = "(smem, tma_src_desc.get_ptr(), (0, 0), mbar, [])";

#[test]
fn a_cluster_tma_load_into_this_cta_orders_its_reads_by_its_barrier() {
    let bug = check(&fixture(TMA_BUG));
    assert_eq!(bug.len(), 1, "{bug:#?}");
    assert_eq!(bug[0].name, "read-before-wait");
    assert!(check(&fixture(TMA_CLEAN)).is_empty());
    // A mask naming this CTA alone, and the one-CTA group, are the same load.
    for kwargs in ["multicast_mask=1", "group=prims.CTAGroup.CTA_1", "group=\"cta_1\""] {
        let with = |src: &str| src.replace(TMA_CALL, &format!("(smem, tma_src_desc.get_ptr(), (0, 0), mbar, [], {kwargs})"));
        assert_eq!(names(&with(&fixture(TMA_BUG))), ["read-before-wait"], "{kwargs}");
        assert!(check(&with(&fixture(TMA_CLEAN))).is_empty(), "{kwargs}");
    }
}

#[test]
fn bytes_delivered_to_another_ctas_barrier_are_named_not_checked() {
    let clean = fixture(TMA_CLEAN);
    let cluster = |src: &str| {
        src.replace("grid=(1, 1, 1), block=(THREADS, 1, 1))", "grid=(2, 1, 1), block=(THREADS, 1, 1), cluster=(2, 1, 1))")
    };
    let two = cluster(&clean);
    assert!(check(&two).is_empty(), "{:#?}", check(&two));
    for (kwargs, why) in [
        ("group=prims.CTAGroup.CTA_2", "pair leader"),
        ("multicast_mask=3", "multicast_mask"),
        ("multicast_mask=cutlass.Int16(1 << (1 - cute.arch.block_idx_in_cluster()))", "multicast_mask"),
        ("multicast_mask=dst.shape[0]", "multicast mask"),
    ] {
        let src = two.replace(TMA_CALL, &format!("(smem, tma_src_desc.get_ptr(), (0, 0), mbar, [], {kwargs})"));
        let d = check(&src);
        assert_eq!(d.len(), 1, "{kwargs}: {d:#?}");
        assert_eq!(d[0].name, "analysis-incomplete", "{kwargs}");
        assert!(d[0].message.contains(why), "{kwargs}: {}", d[0].message);
    }
}
