//! The rule catalog. One module per rule: its code, its stable name, its
//! default severity, the documentation `cute-lsp explain` prints (a Markdown
//! file next to the module), and the function turning checker findings into
//! diagnostics.
//!
//! Names and codes are a contract with users (suppression comments, CI
//! configuration): never rename or renumber a shipped rule.

pub mod analysis_incomplete;
pub mod arrive_count_mismatch;
pub mod barrier_recycling;
pub mod bulk_group_in_flight;
pub mod deadlock;
pub mod divergent_barrier;
pub mod dsmem_race;
pub mod fence_after_sync;
pub mod forward_progress;
pub mod mbarrier_init_hazard;
pub mod missing_acquire;
pub mod missing_proxy_fence;
pub mod missing_release;
pub mod missing_tmem_fence;
pub mod missing_wait;
pub mod named_barrier_count_mismatch;
pub mod named_barrier_deadlock;
pub mod read_before_grid_dependency;
pub mod read_before_wait;
pub mod scope_too_narrow;
pub mod single_lane_collective;
pub mod smem_race;
pub mod tmem_lifetime;
pub mod tx_count_mismatch;
pub mod untoggled_phase;
pub mod vacuous_wait;

use crate::Severity;

#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    pub code: &'static str,
    pub name: &'static str,
    pub default_severity: Severity,
    /// One line, for `cute-lsp rules`.
    pub summary: &'static str,
    /// The full documentation, for `cute-lsp explain`.
    pub doc: &'static str,
}

/// Every implemented rule, in code order.
pub const ALL: &[&Rule] = &[
    &untoggled_phase::RULE,
    &vacuous_wait::RULE,
    &arrive_count_mismatch::RULE,
    &tx_count_mismatch::RULE,
    &mbarrier_init_hazard::RULE,
    &read_before_wait::RULE,
    &single_lane_collective::RULE,
    &fence_after_sync::RULE,
    &missing_proxy_fence::RULE,
    &missing_tmem_fence::RULE,
    &missing_acquire::RULE,
    &missing_release::RULE,
    &scope_too_narrow::RULE,
    &missing_wait::RULE,
    &named_barrier_count_mismatch::RULE,
    &named_barrier_deadlock::RULE,
    &barrier_recycling::RULE,
    &divergent_barrier::RULE,
    &smem_race::RULE,
    &dsmem_race::RULE,
    &bulk_group_in_flight::RULE,
    &tmem_lifetime::RULE,
    &deadlock::RULE,
    &forward_progress::RULE,
    &read_before_grid_dependency::RULE,
    &analysis_incomplete::RULE,
];

/// Look a rule up by name (`untoggled-phase`) or code (`CUTE001`, any case).
pub fn find(name_or_code: &str) -> Option<&'static Rule> {
    ALL.iter()
        .copied()
        .find(|r| r.name == name_or_code || r.code.eq_ignore_ascii_case(name_or_code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_are_unique_and_documented() {
        for (i, a) in ALL.iter().enumerate() {
            assert!(a.doc.contains(a.name), "{} doc must name the rule", a.code);
            assert!(a.doc.contains("## Example"), "{} doc needs an example", a.code);
            for b in &ALL[i + 1..] {
                assert_ne!(a.code, b.code);
                assert_ne!(a.name, b.name);
            }
        }
        assert_eq!(find("cute001").unwrap().name, "untoggled-phase");
        assert_eq!(find("deadlock").unwrap().code, "CUTE050");
        assert!(find("nope").is_none());
    }
}
