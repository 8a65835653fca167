//! How a kernel is launched: block and cluster shape, and the values of its
//! parameters (`cutlass.Constexpr` arguments in particular), read from the
//! `kernel(...).launch(grid=, block=, cluster=)` call in a `@cute.jit` host
//! function of the same file and from the `cute.compile(host, ...)` call that
//! gives the host function its arguments.
//!
//! Each `@cute.jit` host function of the file is run for the launches it
//! makes. A kernel without a launch, or whose launch's shapes do not
//! resolve, is checked with assumed shapes (`assumed_shape`), and the model
//! says so.
//!
//! Its parts, each in a module of its own:
//! - `module_env`: the values of the file's module level (constants,
//!   classes, shared-storage structs);
//! - `host`: host code, run sequentially as the CPU runs it at compile time;
//! - `params`: the values a host function's parameters take (the
//!   `cute.compile` call, the scope it sits in, the call the file runs);
//! - `finder`: the `kernel(...).launch(...)` calls a host function makes,
//!   with their shapes, and those in branches its values do not take;
//! - `entry`: the configuration a file runs its own kernels with (its
//!   `__main__` block, the command line's defaults);
//! - `assumed_shape`: the shapes a kernel is checked with when its launch's
//!   do not resolve, and the host values computed from them;
//! - `roles`: the warps a kernel dispatches roles to, from its own tests of
//!   the warp index.

use std::collections::BTreeMap;

use cute_syntax::{DecoratorKind, TextRange};

use crate::ast::{Expr, FunctionDef};
use crate::eval::{eval, Bindings, Env, Value};
use crate::module::Module;

mod assumed_shape;
mod entry;
mod finder;
mod host;
mod module_env;
mod params;
pub mod roles;
use assumed_shape::HostAssumptions;
use finder::{launches_not_taken, run_host};
use host::HostCalls;
use params::construct_from_file;
pub use assumed_shape::{cluster_when_unknown, AssumedCluster, ASSUMED_THREADS_PER_CTA};
pub use module_env::module_env;
pub use roles::{role_skeleton, role_tests, role_tests_where, single_definitions, threads_reaching_roles};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Launch {
    /// Threads per CTA (x, y, z), when known.
    pub block: Option<[u32; 3]>,
    /// CTAs per cluster (x, y, z); `[1, 1, 1]` when the launch names none.
    pub cluster: Option<[u32; 3]>,
    /// CTAs in the grid (x, y, z), when known.
    pub grid: Option<[u32; 3]>,
    /// Values of the kernel's parameters (including `self`).
    pub params: Bindings,
    /// Module-level constants.
    pub globals: Bindings,
    /// Where the launch was found, if it was.
    pub site: Option<TextRange>,
    /// When `block` is assumed (the launch's did not resolve): the note
    /// that says so.
    pub block_assumed: Option<String>,
    /// What was assumed of the cluster shape, and of the host values
    /// computed from the assumed shapes.
    pub assumptions: Vec<String>,
    /// The `use_pdl=` argument of the launch (programmatic dependent
    /// launch), as written, when it gives one.
    pub use_pdl: Option<String>,
    /// What the launch says of how many CTAs fit on an SM at once (for
    /// `forward-progress`).
    pub residency: LaunchResidency,
}

/// The arguments of a launch that decide how many of its CTAs can be
/// resident at once, and where its grid comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LaunchResidency {
    /// `smem=`: dynamic shared memory bytes per CTA, when it resolves.
    pub smem: Option<u64>,
    /// `min_blocks_per_mp=`, when it resolves and is positive.
    pub min_blocks_per_mp: Option<u32>,
    /// `cooperative=True`: every CTA is resident at once, or the launch fails.
    pub cooperative: bool,
    /// The name the grid is computed from when it is the device's SM count
    /// or its maximum of active clusters (`max_active_clusters`,
    /// `get_device_multiprocessor_count`): the persistent idiom, a grid
    /// made to fit.
    pub from_device: Option<String>,
}

impl Launch {
    pub fn threads_per_cta(&self) -> Option<u32> {
        self.block.map(|b| b[0] * b[1] * b[2])
    }

    pub fn ctas_per_cluster(&self) -> Option<u32> {
        self.cluster.map(|c| c[0] * c[1] * c[2])
    }
}

/// The launches of every kernel of a file, found by running each host
/// function once.
pub struct Launches {
    globals: Env,
    found: Vec<Found>,
}

/// A launch found in a host function.
struct Found {
    /// The class of the launched method, if it is one.
    class: Option<String>,
    kernel: String,
    launch: Launch,
    /// The host function, by index in the module's functions.
    host: usize,
    /// The `block=` argument, when it did not resolve.
    unresolved_block: Option<Expr>,
    /// The `cluster=` argument, when it did not resolve.
    unresolved_cluster: Option<Expr>,
}

impl Launches {
    pub fn of_module(module: &Module) -> Launches {
        let globals = module_env(module);
        let mut handler = HostCalls::new(module);
        let mut found = Vec::new();
        for (index, host) in module.functions.iter().enumerate() {
            // The host code of the file itself: a module linked in is
            // another file's, whose launches are its own.
            if host.decorator == Some(DecoratorKind::Jit) && !module.is_linked(host.range) {
                found.extend(run_host(module, index, &globals, &mut handler));
            }
        }
        found.extend(launches_not_taken(module, &found, &globals));
        Launches { globals, found }
    }

    /// The launch `found` with the block and cluster shapes `kernel` is
    /// checked with where the launch's do not resolve, and the host values
    /// computed from those shapes (see [`assumed_shape`]). A shape whose
    /// `block=` or `cluster=` argument cannot be solved for stays unknown;
    /// `None` when neither can, or running the host code again with the
    /// solution does not give the shapes assumed.
    fn with_assumed_shape(&self, module: &Module, found: &Found, kernel: &FunctionDef, threads: u32) -> Option<Launch> {
        const MAX_RUNS: usize = 4;
        let cluster = cluster_when_unknown(kernel);
        let mut values = BTreeMap::new();
        let mut solve = |arg: &Option<Expr>, dims: [u32; 3]| -> Option<[u32; 3]> {
            let shape = Value::Tuple(dims.iter().map(|&d| Value::Int(d.into())).collect());
            let mut solution = values.clone();
            assumed_shape::solve(arg.as_ref()?, &shape, &mut solution).then(|| {
                values = solution;
                dims
            })
        };
        let block = solve(&found.unresolved_block, [threads, 1, 1]);
        let cluster_shape = solve(&found.unresolved_cluster, cluster.shape);
        if block.is_none() && cluster_shape.is_none() {
            return None;
        }
        let single_cta = found.launch.cluster.or(cluster_shape).is_some_and(|c| c.iter().product::<u32>() == 1);
        for _ in 0..MAX_RUNS {
            let mut handler = HostCalls { assumed: Some(HostAssumptions::new(values, single_cta)), ..HostCalls::new(module) };
            let relaunched = run_host(module, found.host, &self.globals, &mut handler)
                .into_iter()
                .find(|f| f.kernel == found.kernel && f.class == found.class);
            let mut taken = handler.assumed.take()?;
            // Names solved in this run were computed from before they got
            // their values: run again.
            if let Some(more) = taken.next_run() {
                values = more;
                continue;
            }
            let as_assumed = |f: &Found| {
                block.is_none_or(|b| f.launch.block == Some(b)) && cluster_shape.is_none_or(|c| f.launch.cluster == Some(c))
            };
            let relaunched = relaunched.filter(as_assumed)?;
            let mut assumptions = relaunched.launch.assumptions.clone();
            if cluster_shape.is_some() {
                assumptions.extend(cluster.note.map(str::to_string));
            }
            let described = taken.describe_taken();
            if !described.is_empty() {
                assumptions.push(format!("the host code computes its values with {}", described.join(", ")));
            }
            if taken.single_cta_mmas {
                assumptions.push(crate::layout::SINGLE_CTA_MMA.to_string());
            }
            let block_assumed = block.map(|_| block_assumed_note(kernel, threads));
            return Some(Launch { block_assumed, assumptions, ..relaunched.launch });
        }
        None
    }

    /// The launch of `kernel`. Always returns a `Launch`. A launch found with
    /// a block or cluster shape that does not resolve gets the shapes the
    /// kernel is checked with, and the host values computed from them,
    /// where its arguments can be solved for them (the block is assumed in
    /// any case, and said); a launch not found has no shape (`None`) and
    /// the caller states its assumption. Parameters not known are `Unknown`.
    pub fn of_kernel(&self, module: &Module, kernel: &FunctionDef) -> Launch {
        let launch = self.of_kernel_with(module, kernel, ASSUMED_THREADS_PER_CTA);
        if launch.block_assumed.is_none() {
            return launch;
        }
        // Four warps leave out a role the kernel dispatches to a later
        // warp: assume as many warp groups as reach it.
        let mut env = self.globals.clone();
        env.extend(launch.params.iter().map(|(k, v)| (k.clone(), v.clone())));
        match roles::threads_reaching_roles(kernel, &env) {
            Some((threads, warp)) => {
                let mut wider = self.of_kernel_with(module, kernel, threads);
                if wider.block != Some([threads, 1, 1]) {
                    return launch;
                }
                wider.block_assumed = wider.block_assumed.map(|note| {
                    format!("{note}, the warp groups that reach warp {warp}, the highest its tests of the warp index select")
                });
                wider
            }
            None => launch,
        }
    }

    /// [`Launches::of_kernel`], with `threads` per CTA where the block is
    /// assumed.
    fn of_kernel_with(&self, module: &Module, kernel: &FunctionDef, threads: u32) -> Launch {
        let globals = &self.globals;
        let mut handler = HostCalls::new(module);
        let found = self.found.iter().find(|f| f.kernel == kernel.name && f.class.as_deref() == kernel.class_name.as_deref());
        let mut launch = match found {
            Some(f) if f.launch.cluster.is_none() || f.launch.block.is_none() => {
                let mut launch = self.with_assumed_shape(module, f, kernel, threads).unwrap_or_else(|| f.launch.clone());
                if launch.block.is_none() {
                    launch.block = Some([threads, 1, 1]);
                    launch.block_assumed = Some(block_assumed_note(kernel, threads));
                }
                launch
            }
            Some(f) => f.launch.clone(),
            None => Launch {
                block: None,
                cluster: None,
                grid: None,
                params: Bindings::new(),
                globals: Bindings::new(),
                site: None,
                block_assumed: None,
                assumptions: Vec::new(),
                use_pdl: None,
                residency: LaunchResidency::default(),
            },
        };
        launch.globals = globals.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        // Parameters the launch did not give: defaults, else unknown.
        for p in &kernel.params {
            if launch.params.contains_key(&p.name) {
                continue;
            }
            let v = match &p.default {
                Some(d) => eval(d, globals, &mut handler),
                None => Value::unknown(format!("the argument `{}` of `{}`", p.name, kernel.display_name())),
            };
            launch.params.insert(p.name.clone(), v);
        }
        if kernel.is_method() && !matches!(launch.params.get("self"), Some(Value::Object(_))) {
            // A method launched from code we could not follow: construct the
            // object from a `Class(...)` call in the file, or with defaults.
            let class = kernel.class_name.clone().unwrap_or_default();
            let obj = construct_from_file(module, &class, globals, &mut handler);
            launch.params.insert("self".to_string(), obj);
            launch.assumptions.append(&mut handler.configuration);
        }
        launch
    }
}

fn block_assumed_note(kernel: &FunctionDef, threads: u32) -> String {
    format!("the block shape of the launch of `{}` is not known statically: assuming {threads} threads per CTA", kernel.display_name())
}

/// Resolve the launch of one kernel (see [`Launches`] to resolve them all).
pub fn resolve_launch(module: &Module, kernel: &FunctionDef) -> Launch {
    Launches::of_module(module).of_kernel(module, kernel)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn self_attr(launch: &Launch, name: &str) -> Option<Value> {
        let Some(Value::Object(o)) = launch.params.get("self") else { return None };
        o.attrs.get(name).cloned()
    }

    /// A class whose sizes come from its caller, set up by a method the
    /// host calls before launching (as the CUTLASS examples are written).
    pub(super) const CALLER_SIZED: &str = "\
import cutlass.cute as cute
class Gemm:
    def __init__(self, cluster_shape_mn, warps):
        self.cluster_shape_mn = cluster_shape_mn
        self.warps = warps
    def _setup_attributes(self):
        self.cluster_shape_mnk = (*self.cluster_shape_mn, 1)
        self.num_mcast = self.cluster_shape_mn[0] + self.cluster_shape_mn[1] - 1
        self.threads_per_cta = 32 * self.warps
        self.num_warps = self.threads_per_cta // 32
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        self._setup_attributes()
        self.kernel(x).launch(grid=[1, 1, 1], block=[self.threads_per_cta, 1, 1], cluster=self.cluster_shape_mnk)
def run(cluster_shape_mn, warps):
    cute.compile(Gemm(cluster_shape_mn, warps), None)
";

    #[test]
    fn host_values_are_computed_from_the_shapes_assumed_for_an_unknown_launch() {
        let m = crate::lower_text(CALLER_SIZED).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!((l.block, l.cluster), (Some([ASSUMED_THREADS_PER_CTA, 1, 1]), Some([1, 1, 1])));
        // `self.cluster_shape_mnk` is solved first, then what it was
        // computed from, `self.cluster_shape_mn`, in a second run.
        assert_eq!(self_attr(&l, "num_mcast"), Some(Value::Int(1)));
        assert_eq!(self_attr(&l, "num_warps"), Some(Value::Int(4)));
        assert!(l.block_assumed.is_some());
        let notes = l.assumptions.join("\n");
        assert!(notes.contains("`self.cluster_shape_mn` = (1, 1)") && notes.contains("`self.threads_per_cta` = 128"), "{notes}");
    }

    #[test]
    fn a_shape_that_cannot_be_solved_for_stays_unknown_in_the_host() {
        // A block computed by a call: no name to give the assumed size to.
        let src = CALLER_SIZED.replace("block=[self.threads_per_cta, 1, 1]", "block=[max(self.threads_per_cta, 64), 1, 1]");
        let m = crate::lower_text(&src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        // The cluster is solved all the same.
        assert_eq!(l.cluster, Some([1, 1, 1]));
        assert_eq!(self_attr(&l, "num_mcast"), Some(Value::Int(1)));
        // The block is assumed, and says so; the values computed from it are
        // not known.
        assert_eq!(l.block, Some([ASSUMED_THREADS_PER_CTA, 1, 1]));
        assert!(l.block_assumed.is_some());
        assert!(self_attr(&l, "num_warps").is_some_and(|v| v.is_unknown()));
        assert!(!l.assumptions.join("\n").contains("threads_per_cta"), "{l:?}");
    }

    #[test]
    fn with_one_cta_assumed_the_hosts_mmas_span_one_cta() {
        let src = "\
import cutlass.cute as cute
from cutlass.cute.nvgpu import tcgen05
import cutlass.utils.blackwell_helpers as sm100_utils
class Gemm:
    def __init__(self, use_2cta_instrs, cluster_shape_mn):
        self.cta_group = tcgen05.CtaGroup.TWO if use_2cta_instrs else tcgen05.CtaGroup.ONE
        self.cluster_shape_mn = cluster_shape_mn
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        tiled_mma = sm100_utils.make_trivial_tiled_mma(x, self.cta_group)
        self.cluster_layout_vmnk = cute.tiled_divide(cute.make_layout((*self.cluster_shape_mn, 1)), (tiled_mma.thr_id.shape,))
        self.num_mcast_ctas_a = cute.size(self.cluster_layout_vmnk.shape[2])
        self.kernel(x).launch(grid=[1, 1, 1], block=[128, 1, 1], cluster=(*self.cluster_shape_mn, 1))
";
        let m = crate::lower_text(src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!(l.cluster, Some([1, 1, 1]));
        assert_eq!(self_attr(&l, "num_mcast_ctas_a"), Some(Value::Int(1)));
        assert!(l.assumptions.iter().any(|a| a == crate::layout::SINGLE_CTA_MMA), "{:?}", l.assumptions);
    }

    #[test]
    fn an_mma_atom_of_an_architecture_named_op_spans_its_cta_group() {
        // The blockscaled kernels build their MMA in a static method from an
        // operation named for its architecture, wrapped in an atom.
        let src = "\
import cutlass.cute as cute
from cutlass.cute.nvgpu import tcgen05
class Gemm:
    def __init__(self, use_2cta_instrs, cluster_shape_mn):
        self.cta_group = tcgen05.CtaGroup.TWO if use_2cta_instrs else tcgen05.CtaGroup.ONE
        self.cluster_shape_mn = cluster_shape_mn
    @staticmethod
    def make_mma(cta_group, shape_mn):
        op = tcgen05.SM103MmaMXF4Op((*shape_mn, 96), cta_group, tcgen05.OperandSource.SMEM)
        return cute.make_tiled_mma(cute.make_mma_atom(op))
    @cute.kernel
    def kernel(self, x):
        pass
    @cute.jit
    def __call__(self, x):
        tiled_mma = self.make_mma(self.cta_group, (128, 128))
        self.cluster_layout_vmnk = cute.tiled_divide(cute.make_layout((*self.cluster_shape_mn, 1)), (tiled_mma.thr_id.shape,))
        self.num_mcast_ctas_b = cute.size(self.cluster_layout_vmnk.shape[1])
        self.kernel(x).launch(grid=[1, 1, 1], block=[128, 1, 1], cluster=(*self.cluster_shape_mn, 1))
";
        let m = crate::lower_text(src).unwrap();
        let l = resolve_launch(&m, m.kernels().next().unwrap());
        assert_eq!(self_attr(&l, "num_mcast_ctas_b"), Some(Value::Int(1)));
        assert!(l.assumptions.iter().any(|a| a == crate::layout::SINGLE_CTA_MMA), "{:?}", l.assumptions);
    }
}
