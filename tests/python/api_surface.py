"""Dump the call signatures of the CuTe DSL functions that cute-lsp models.

Prints a JSON object to stdout and writes the same text to api_surface.json
next to this script (the committed reference snapshot):

    {"cute.arch.mbarrier_arrive": ["mbar_ptr", "peer_cta_rank_in_cluster",
                                   "arrive_count", "*", "relaxed", "scope"],
     ...,
     "missing": ["cute.arch.mapa", ...]}

Each list holds the parameter names in declaration order, spelled the way
Python's own signatures are:

  "*"        marks where keyword-only parameters start,
  "/"        follows positional-only parameters,
  "*name"    is a variadic positional parameter, "**name" a variadic keyword one.

"barrier_calls" lists every public function, class and method of the package
whose signature takes a barrier or a pipeline (a parameter named like
`mbar_ptr`, `barrier_id`, `acc_pipeline`, or annotated with a pipeline class),
each under its shortest public name: cute-lsp must model each one or say why
it need not (crates/cute-ir/tests/api_surface.rs).

The `loc` / `ip` keyword parameters that every DSL op carries for MLIR
plumbing, and `self` on methods, are left out. Names that do not exist in the
installed package are listed under "missing" instead.

Run with the project venv:  .venv/bin/python tests/python/api_surface.py
"""

import importlib
import inspect
import json
import os
import pkgutil
import re
import sys

os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")

# Short prefix used in the output -> module that it names.
PREFIXES = {
    "cute.": "cutlass.cute",
    "cutlass.": "cutlass",
}

ARCH = [
    # mbarrier
    "mbarrier_init",
    "mbarrier_init_fence",
    "mbarrier_arrive",
    "mbarrier_arrive_and_expect_tx",
    "mbarrier_expect_tx",
    "mbarrier_wait",
    "mbarrier_try_wait",
    "mbarrier_test_wait",
    "mbarrier_conditional_try_wait",
    "cp_async_mbarrier_arrive_noinc",
    # thread / warp / CTA / cluster topology
    "thread_idx",
    "warp_idx",
    "lane_idx",
    "block_idx",
    "block_dim",
    "grid_dim",
    "block_idx_in_cluster",
    "block_in_cluster_idx",
    "block_in_cluster_dim",
    "cluster_idx",
    "cluster_dim",
    "cluster_size",
    "elect_one",
    "make_warp_uniform",
    # CTA / warp / named barriers, cluster barrier
    "sync_threads",
    "sync_warp",
    # warp collectives: shuffles, votes, reductions
    "shuffle_sync",
    "shuffle_sync_up",
    "shuffle_sync_down",
    "shuffle_sync_bfly",
    "vote_ballot_sync",
    "vote_any_sync",
    "vote_all_sync",
    "vote_uni_sync",
    "warp_reduction",
    "warp_reduction_max",
    "warp_reduction_sum",
    "warp_redux_sync",
    "barrier",
    "barrier_arrive",
    "cluster_arrive",
    "cluster_arrive_relaxed",
    "cluster_wait",
    # fences
    "fence_proxy",
    "fence_view_async_shared",
    "fence_view_async_tmem_load",
    "fence_view_async_tmem_store",
    "fence_acq_rel_cta",
    "fence_acq_rel_cluster",
    "fence_acq_rel_gpu",
    "fence_acq_rel_sys",
    # atomics and ordered memory access
    "atomic_add",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_max",
    "atomic_min",
    "atomic_exch",
    "atomic_cas",
    "atomic_fmax",
    "atomic_fmin",
    "load",
    "store",
    "red",
    # tensor memory: allocation, its address, deallocation
    "alloc_tmem",
    "retrieve_tmem_ptr",
    "relinquish_tmem_alloc_permit",
    "dealloc_tmem",
    # shared memory and DSMEM (peer CTA) addressing
    "alloc_smem",
    "map_dsmem_ptr",
    "store_async_dsmem",
    # async copy groups, PDL
    "cp_async_commit_group",
    "cp_async_wait_group",
    "cp_async_bulk_commit_group",
    "cp_async_bulk_wait_group",
    "griddepcontrol_wait",
    "griddepcontrol_launch_dependents",
    # Spellings seen in published pseudo-code; expected under "missing".
    "mapa",
    "mapa_shared_cluster",
    "cluster_rank_in_cluster",
    "thread_idx_x",
    "mbarrier_arrive_peer",
]

OTHER = [
    # kernel / host entry points and constexpr loops
    "cute.kernel",
    "cute.jit",
    "cute.compile",
    "cute.struct",
    "cute.copy",
    "cute.make_tensor",
    "cutlass.range",
    "cutlass.range_constexpr",
    "cutlass.const_expr",
    # shared memory allocation
    "cutlass.memory.SmemAllocator.allocate",
    "cutlass.memory.SmemAllocator.allocate_array",
    "cutlass.memory.SmemAllocator.allocate_tensor",
    "cutlass.utils.SmemAllocator.allocate",
    "cutlass.utils.SmemAllocator.allocate_array",
    # cutlass.pipeline: free functions and the classes built on mbarriers
    "cutlass.pipeline.make_pipeline_state",
    "cutlass.pipeline.pipeline_init_arrive",
    "cutlass.pipeline.pipeline_init_wait",
    "cutlass.pipeline.agent_sync",
    "cutlass.pipeline.CooperativeGroup",
    "cutlass.pipeline.NamedBarrier",
    "cutlass.pipeline.NamedBarrier.arrive",
    "cutlass.pipeline.NamedBarrier.arrive_and_wait",
    "cutlass.pipeline.NamedBarrier.sync",
    "cutlass.pipeline.PipelineState",
    "cutlass.pipeline.PipelineState.advance",
    "cutlass.pipeline.PipelineAsync.create",
    "cutlass.pipeline.PipelineAsync.producer_acquire",
    "cutlass.pipeline.PipelineAsync.producer_commit",
    "cutlass.pipeline.PipelineAsync.consumer_wait",
    "cutlass.pipeline.PipelineAsync.consumer_release",
    "cutlass.pipeline.PipelineAsync.producer_tail",
    "cutlass.pipeline.PipelineTmaAsync.create",
    "cutlass.pipeline.PipelineTmaUmma.create",
    "cutlass.pipeline.PipelineUmmaAsync.create",
    # tcgen05 MMA completion signalled on an mbarrier
    "cute.nvgpu.tcgen05.commit",
    # PTX-named primitives (cutlass.experimental.primitives)
    "cutlass.experimental.primitives.mapa",
    "cutlass.experimental.primitives.cluster_ctarank",
    "cutlass.experimental.primitives.mbarrier_init",
    "cutlass.experimental.primitives.fence_mbarrier_init",
    "cutlass.experimental.primitives.mbarrier_arrive",
    "cutlass.experimental.primitives.mbarrier_arrive_expect_tx",
    "cutlass.experimental.primitives.mbarrier_wait_parity",
    "cutlass.experimental.primitives.mbarrier_try_wait_parity",
]

SKIPPED_PARAMS = {"loc", "ip"}

# A parameter that takes an mbarrier, a barrier id or object, or a pipeline
# (`mbar_ptr`, `tma_bar_ptr`, `barrier_id`, `acc_pipeline`, `pipe`, ...).
BARRIER_PARAM = re.compile(r"mbar|barrier|pipeline|^bar$|^pipe$|_bar$|_bar_|^bar_|_pipe$")
# ...or is annotated as one of those classes.
BARRIER_ANNOTATION = re.compile(r"Pipeline|NamedBarrier|MbarrierArray")


def resolve(qualname):
    """Return the object named by `qualname`, or None if it does not exist."""
    for prefix, module in PREFIXES.items():
        if qualname.startswith(prefix):
            rest = qualname[len(prefix):].split(".")
            break
    else:
        raise ValueError(f"unknown prefix in {qualname}")
    # Import the longest module path that exists, then walk attributes.
    parts = module.split(".") + rest
    obj = None
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        attrs = parts[cut:]
        break
    else:
        return None
    for attr in attrs:
        if not hasattr(obj, attr):
            return None
        obj = getattr(obj, attr)
    return obj


def param_names(obj):
    target = obj
    if inspect.isclass(obj):
        target = obj.__init__
    sig = inspect.signature(target)
    names = []
    seen_kw_only = False
    params = list(sig.parameters.values())
    if params and params[0].name == "self":
        params = params[1:]
    for i, p in enumerate(params):
        if p.name in SKIPPED_PARAMS:
            continue
        if p.kind is p.VAR_POSITIONAL:
            names.append("*" + p.name)
            seen_kw_only = True
        elif p.kind is p.VAR_KEYWORD:
            names.append("**" + p.name)
        elif p.kind is p.KEYWORD_ONLY:
            if not seen_kw_only:
                names.append("*")
                seen_kw_only = True
            names.append(p.name)
        else:
            names.append(p.name)
        nxt = params[i + 1] if i + 1 < len(params) else None
        if p.kind is p.POSITIONAL_ONLY and (
            nxt is None or nxt.kind is not p.POSITIONAL_ONLY
        ):
            names.append("/")
    # A lone "*" left behind by dropping loc/ip carries no information.
    if names and names[-1] == "*":
        names.pop()
    return names


def takes_barrier(obj):
    """Whether a function's (or a class's constructor's) signature has a
    parameter named or annotated as a barrier or a pipeline."""
    try:
        sig = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
    except (TypeError, ValueError):
        return False
    return any(
        BARRIER_PARAM.search(p.name) or BARRIER_ANNOTATION.search(str(p.annotation))
        for p in sig.parameters.values()
        if p.name not in SKIPPED_PARAMS and p.name != "self"
    )


def barrier_calls():
    """The public functions, classes and methods of the installed package
    that take a barrier or a pipeline, each under its shortest public name
    (`cutlass.cute.nvgpu.tcgen05.commit`, not `...tcgen05.helpers.commit`)."""
    names = {}  # id of the function -> its public names

    def note(obj, name):
        if takes_barrier(obj):
            names.setdefault(id(obj), set()).add(name)

    def walk(modname):
        try:
            module = importlib.import_module(modname)
        except Exception:  # optional dependencies (torch, jax, tvm_ffi) absent
            return
        for attr, obj in sorted(vars(module).items()):
            if attr.startswith("_"):
                continue
            if inspect.isfunction(obj):
                note(obj, f"{modname}.{attr}")
            elif inspect.isclass(obj) and (obj.__module__ or "").startswith("cutlass"):
                note(obj, f"{modname}.{attr}")
                for mname, member in sorted(vars(obj).items()):
                    if mname.startswith("_"):
                        continue
                    func = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                    if inspect.isfunction(func):
                        note(func, f"{modname}.{attr}.{mname}")
        if hasattr(module, "__path__"):
            for info in sorted(pkgutil.iter_modules(module.__path__), key=lambda i: i.name):
                if not info.name.startswith("_"):
                    walk(f"{modname}.{info.name}")

    walk("cutlass")
    return sorted(min(found, key=lambda n: (len(n), n)) for found in names.values())


def main():
    import cutlass.cute  # noqa: F401  (fail early if the package is absent)

    surface = {}
    missing = []
    for qualname in ["cute.arch." + n for n in ARCH] + OTHER:
        obj = resolve(qualname)
        if obj is None:
            missing.append(qualname)
            continue
        try:
            surface[qualname] = param_names(obj)
        except (TypeError, ValueError):
            surface[qualname] = ["*args", "**kwargs"]
    surface["missing"] = missing
    surface["barrier_calls"] = barrier_calls()

    lines = ["{"]
    items = list(surface.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i + 1 < len(items) else ""
        lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    text = "\n".join(lines) + "\n"

    sys.stdout.write(text)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "api_surface.json")
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
