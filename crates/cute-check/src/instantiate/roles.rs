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

use cute_ir::ast::{Expr, FunctionDef};
use cute_ir::eval::Env;
use cute_syntax::TextRange;

/// The first branch of the kernel's own code that compares the warp index
/// with a known warp no thread of `warps` warps has (`warp_idx == 8`,
/// `warp_idx >= 8`): its statement and that warp.
pub(super) fn role_beyond_block(kernel: &FunctionDef, definitions: &HashMap<String, &Expr>, env: &Env, warps: u32) -> Option<(TextRange, i64)> {
    cute_ir::launch::role_tests(kernel, definitions, env).into_iter().find(|&(_, w)| w >= i64::from(warps))
}
