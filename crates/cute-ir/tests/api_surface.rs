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

/// `tcgen05.commit` and the other functions of `cutlass.cute.nvgpu` the table
/// knows take the parameters it binds, in that order.
#[test]
fn nvgpu_functions_match_the_installed_signatures() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/python/api_surface.json");
    let surface = json_lists(&std::fs::read_to_string(path).unwrap());
    for (name, params) in cute_ir::api::Api::nvgpu_table() {
        let real = surface.get(&format!("cute.nvgpu.{name}")).unwrap_or_else(|| panic!("cute.nvgpu.{name} is not dumped"));
        let positional: Vec<&str> = real.iter().map(String::as_str).take_while(|p| *p != "*").collect();
        assert!(params.len() <= positional.len() && positional[..params.len()] == params[..], "cute.nvgpu.{name}: the table binds {params:?}, the package has {real:?}");
        assert!(cute_ir::api::Api::lookup(&format!("cutlass.cute.nvgpu.{name}")).is_some(), "cute.nvgpu.{name}");
    }
}

/// Every public function, class and method of the installed package that
/// takes a barrier or a pipeline (`barrier_calls`, found by its signature)
/// is one the API table knows (modelled, or reported as not modelled where
/// a kernel reaches it), or one listed as synchronizing nothing, or as
/// completing bytes only, with the reason, or one of a helper module of the
/// DSL that is linked from its source. A function
/// the package gains is none of these until it is looked at; and a listed
/// name the package no longer has is stale.
#[test]
fn every_call_that_takes_a_barrier_is_modelled_or_classified() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/python/api_surface.json");
    let surface = json_lists(&std::fs::read_to_string(path).unwrap());
    let calls = surface.get("barrier_calls").expect("the dump lists `barrier_calls`");
    assert!(calls.len() > 100, "only {} calls take a barrier", calls.len());
    let classified: Vec<&str> = cute_ir::api::NOT_SYNCHRONIZATION
        .iter()
        .chain(cute_ir::api::COMPLETES_BYTES)
        .map(|(name, _)| *name)
        .collect();
    // The DSL's helper modules are linked from the installed source, as a
    // package's own helpers are (`cute_ir::link::DSL_HELPER_MODULES`).
    let linked = |c: &str| cute_ir::link::DSL_HELPER_MODULES.iter().any(|m| c.starts_with(&format!("{m}.")));
    let unknown: Vec<&String> = calls
        .iter()
        .filter(|c| cute_ir::api::Api::lookup(c).is_none() && !classified.contains(&c.as_str()) && !linked(c))
        .collect();
    assert!(unknown.is_empty(), "neither modelled nor classified (see cute_ir::api): {unknown:?}");
    for name in classified {
        assert!(calls.iter().any(|c| c == name), "{name} is classified but the package has no such call taking a barrier");
        assert!(cute_ir::api::Api::lookup(name).is_none(), "{name} is classified and in the API table");
    }
}
