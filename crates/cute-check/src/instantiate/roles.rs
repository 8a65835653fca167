//! Warp roles an assumed block leaves out.
//!
//! A kernel whose block shape is not known is run with an assumed one, as
//! many warp groups as reach the warps its role tests select (see
//! `cute_ir::launch::threads_reaching_roles`). A test that still selects a
//! warp the block does not have (an index no host value gives before the
//! kernel runs, or past the largest block) would have the model check the
//! kernel without that role, in silence: such a kernel is not checked,
//! naming the branch.

use rustc_hash::FxHashMap as HashMap;

use cute_ir::ast::{Expr, FunctionDef, Stmt};

use super::functions::KeptStatements;
use cute_ir::eval::Env;
use cute_syntax::TextRange;

/// The first branch of the kernel's own code that compares the warp index
/// with a known warp no thread of `warps` warps has (`warp_idx == 8`,
/// `warp_idx >= 8`): its statement and that warp. Only branches the slice
/// keeps count: a role whose branch holds nothing the model runs is not
/// left out of it by the block, and the model must not depend on what the
/// slice drops (the editor's database keys instantiations by the kept
/// statements).
pub(super) fn role_beyond_block(kernel: &FunctionDef, kept: &KeptStatements, definitions: &HashMap<String, &Expr>, env: &Env, warps: u32) -> Option<(TextRange, i64)> {
    let in_model = |s: &Stmt| kept.contains(s.id) || kept.memory_control(s.id);
    cute_ir::launch::role_tests_where(kernel, definitions, env, &in_model).into_iter().find(|&(_, w)| w >= i64::from(warps))
}
