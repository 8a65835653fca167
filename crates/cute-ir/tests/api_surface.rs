//! The API table must speak the installed package's language: every
//! function it knows under `cute.arch` exists in `tests/python/api_surface.json`
//! (dumped from nvidia-cutlass-dsl by `tests/python/api_surface.py`), with the
//! parameters the table binds positionally in the same order; names missing
//! there must be known pasted or legacy spellings.

use std::collections::BTreeMap;

/// Spellings from blog posts and older DSL versions, recognised on purpose.
const NOT_IN_THE_PACKAGE: &[&str] = &[
    "mapa_shared_cluster",
    "mapa",
    "thread_idx_x",
    "cluster_rank_in_cluster",
    "cta_rank_in_cluster",
    "mbarrier_init_arrive_cnt",
    "mbarrier_init_tx_bytes",
    "atomic_load",
];

#[test]
fn table_matches_the_installed_signatures() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/python/api_surface.json");
    let surface = json_lists(&std::fs::read_to_string(path).unwrap());
    let mut checked = 0;
    for (name, params) in cute_ir::api::Api::table() {
        match surface.get(&format!("cute.arch.{name}")) {
            Some(real) => {
                let positional: Vec<&str> = real.iter().map(String::as_str).take_while(|p| *p != "*").collect();
                assert!(
                    params.len() <= positional.len() && positional[..params.len()] == params[..],
                    "cute.arch.{name}: the table binds {params:?}, the package has {real:?}"
                );
                checked += 1;
            }
            None => assert!(NOT_IN_THE_PACKAGE.contains(&name), "cute.arch.{name} is not in the installed package"),
        }
    }
    assert!(checked >= 30, "only {checked} functions checked");
}

/// `{"name": ["param", ...], ...}`: just enough JSON to read the dump
/// without a dependency (values that are not lists of strings are skipped).
fn json_lists(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut rest = text.trim().trim_start_matches('{');
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let end = after.find('"').unwrap();
        let key = after[..end].to_string();
        let after = after[end + 1..].trim_start().trim_start_matches(':').trim_start();
        match after.strip_prefix('[') {
            Some(list) => {
                let close = list.find(']').unwrap();
                let items = list[..close]
                    .split(',')
                    .map(|s| s.trim().trim_matches('"').to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                out.insert(key, items);
                rest = &list[close + 1..];
            }
            None => rest = after,
        }
    }
    out
}
