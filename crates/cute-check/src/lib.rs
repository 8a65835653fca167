//! The checker of cute-lsp: build a model of one cluster from a kernel's sync
//! slice (`instantiate`, with `pipeline` for what the `cutlass.pipeline`
//! classes do), explore its interleavings under the transition relation of
//! `semantics` (`explore`, with the reductions documented there; `naive` is the
//! unreduced oracle, `promela` the export to SPIN), and turn a counterexample
//! into readable steps (`trace`); `memory` checks the ordering of memory
//! accesses over one execution of the same model; `overrun` looks for
//! named-barrier generations that get mixed up; `progress` names the waits of
//! one CTA on others through global memory and how many CTAs fit at once.
//!
//! It returns verdicts and findings with the notes that explain them; which
//! rule they are, and how they read to a user, is `cute-lint`'s.

pub mod explore;
pub mod instantiate;
pub mod memory;
pub mod model;
pub mod naive;
pub mod overrun;
pub mod pipeline;
pub mod promela;
pub mod progress;
pub mod semantics;
pub mod trace;

pub use explore::{explore, Budget, ExploreOptions, Outcome, Verdict};
pub use instantiate::{
    cost_of_other_ways, instantiate, instantiate_reusing, is_launch_condition, Decision, InstantiateOptions, Instantiated, OpenCondition, Reuse, Scenario, WarpCost, MAX_OPEN_CONDITIONS, UNKNOWN_LOOP_COUNTER,
};
pub use model::Model;
