//! Element types, layouts and tensor shapes, as far as they are known before
//! run time: what transaction byte counts are computed from.
//!
//! `cute.size_in_bytes(dtype, layout)` is how kernels declare the bytes a TMA
//! copy delivers, and the copy delivers its destination tensor (a shared memory
//! view of known element type and shape). Both sides are evaluated here from
//! the constants of the file: `cutlass.Float16` is a type of 16 bits,
//! `cute.make_layout((BM, BK, STAGES))` a layout of that shape with compact
//! column-major strides, `cute.slice_(layout, (None, None, 0))` the layout of
//! its first two modes; `make_ordered_layout` and `tile_to_shape` make layouts
//! too, followed through `group_modes`, `tma_partition` and slicing. Values
//! carry their element type (`cutlass.Float16`, a struct's `MemRange` field,
//! `allocate_tensor`). Anything else (a layout built by a helper of the
//! package, a swizzle atom, a runtime shape, a multicast copy) stays unknown,
//! and so does every size computed from it.
//!
//! Shared-storage structs: a `@cute.struct` class ([`STRUCT`]) holds its
//! fields' element types, their element counts and their order. One defined at
//! module level is evaluated with the module's constants
//! (`launch::module_env`); one defined in a function (the host method, as most
//! examples write it) is lowered to a binding of its name evaluated where the
//! class statement runs, so its counts read `self` (`lower.rs`,
//! `eval::struct_definition`).
//!
//! With one CTA per cluster, a tcgen05 MMA whose CTA group is not known spans
//! one CTA ([`SINGLE_CTA_MMA`] is the note that says so).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::ast::{Call, Expr};
use crate::eval::{Object, Value};

/// The class of an element type value (`cutlass.Float16`).
pub const DTYPE: &str = "dtype";
/// The class of a layout value.
pub const LAYOUT: &str = "Layout";
/// The class of a `@cute.struct` whose fields are shared memory
/// (`MemRange[dtype, n]`): its attributes are the fields' element types,
/// and their element counts under [`struct_len_key`].
pub const STRUCT: &str = "cute.struct";

/// The callee of the call a struct class defined in a function is lowered
/// to (see `eval::struct_definition`); no import names it.
pub const STRUCT_DEFINITION: &str = "#cute.struct definition";

/// The attribute of a [`STRUCT`] value that holds its fields' names in the
/// order they are declared (a tuple of strings).
pub const STRUCT_FIELDS: &str = "#fields";

/// The attribute of a [`STRUCT`] value that holds the element count of
/// `field` (no Python name starts with `#`).
pub fn struct_len_key(field: &str) -> String {
    format!("#len {field}")
}

/// Element types of the CuTe DSL and their width in bits.
const DTYPES: &[(&str, u32)] = &[
    ("Float64", 64),
    ("Int64", 64),
    ("Uint64", 64),
    ("Float32", 32),
    ("TFloat32", 32),
    ("Int32", 32),
    ("Uint32", 32),
    ("Float16", 16),
    ("BFloat16", 16),
    ("Int16", 16),
    ("Uint16", 16),
    ("Int8", 8),
    ("Uint8", 8),
    ("Float8E4M3FN", 8),
    ("Float8E4M3", 8),
    ("Float8E5M2", 8),
    ("Float8E8M0FNU", 8),
    ("Float6E2M3FN", 6),
    ("Float6E3M2FN", 6),
    ("Float4E2M1FN", 4),
    ("Int4", 4),
    ("Uint4", 4),
];

/// Whether `name` is the name of an element type (`Float16`): the cheap
/// test before [`dtype_named`] builds the dotted name.
pub fn is_dtype_name(name: &str) -> bool {
    DTYPES.iter().any(|(n, _)| *n == name)
}

/// The element type a dotted name spells (`cutlass.Float16`,
/// `cutlass.cute.Float32`, `Float16`).
pub fn dtype_named(dotted: &str) -> Option<Value> {
    let mut parts = dotted.rsplit('.');
    let last = parts.next()?;
    let root_ok = match dotted.split('.').next() {
        Some(root) if root == last => true,
        Some(root) => matches!(root, "cutlass" | "cute" | "cutlass_dsl"),
        None => false,
    };
    let &(name, width) = DTYPES.iter().find(|(n, _)| *n == last)?;
    root_ok.then(|| dtype(name, width))
}

fn dtype(name: &str, width: u32) -> Value {
    let attrs = [
        ("name".to_string(), Value::Str(name.to_string())),
        ("width".to_string(), Value::Int(width as i64)),
    ];
    Value::Object(Arc::new(Object {
        class: DTYPE.to_string(),
        attrs: attrs.into_iter().collect(),
    }))
}

/// (name, width in bits) of an element type value.
pub fn dtype_of(v: &Value) -> Option<(String, u32)> {
    let Value::Object(o) = v else { return None };
    if o.class != DTYPE {
        return None;
    }
    let name = match o.attrs.get("name") {
        Some(Value::Str(s)) => s.clone(),
        _ => return None,
    };
    let width = o.attrs.get("width").and_then(Value::as_int)?;
    Some((name, width as u32))
}

/// The element type (as written) and the element count of a struct field
/// annotation (`MemRange[dtype, n]`, possibly inside `Align[...]`).
pub fn memrange_parts(annotation: &Expr) -> Option<(String, Option<&Expr>)> {
    let Expr::Subscript { base, index } = annotation else {
        return None;
    };
    let base = base.dotted()?;
    let items: Vec<&Expr> = match index.as_ref() {
        Expr::Tuple(items) => items.iter().collect(),
        e => vec![e],
    };
    if base.ends_with("MemRange") {
        return Some((items.first()?.dotted()?, items.get(1).copied()));
    }
    if base.ends_with("Align") {
        return items.first().and_then(|e| memrange_parts(e));
    }
    None
}

/// A layout of concrete shape and strides: one (extent, stride) per leaf,
/// grouped by top-level mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub modes: Vec<Vec<(i64, i64)>>,
}

impl Layout {
    pub fn size(&self) -> i64 {
        self.modes.iter().flatten().map(|(e, _)| *e).product()
    }

    /// One past the largest index the layout maps to (what
    /// `size_in_bytes` counts).
    pub fn cosize(&self) -> i64 {
        if self.modes.iter().flatten().any(|(e, _)| *e == 0) {
            return 0;
        }
        1 + self
            .modes
            .iter()
            .flatten()
            .map(|(e, s)| (e - 1) * s.abs())
            .sum::<i64>()
    }

    pub fn to_value(&self) -> Value {
        let mode = |m: &Vec<(i64, i64)>, pick: fn(&(i64, i64)) -> i64| match m.as_slice() {
            [one] => Value::Int(pick(one)),
            many => Value::Tuple(many.iter().map(|l| Value::Int(pick(l))).collect()),
        };
        let shape = Value::Tuple(self.modes.iter().map(|m| mode(m, |l| l.0)).collect());
        let stride = Value::Tuple(self.modes.iter().map(|m| mode(m, |l| l.1)).collect());
        let attrs: BTreeMap<String, Value> =
            [("shape".to_string(), shape), ("stride".to_string(), stride)]
                .into_iter()
                .collect();
        Value::Object(Arc::new(Object {
            class: LAYOUT.to_string(),
            attrs,
        }))
    }

    pub fn of_value(v: &Value) -> Option<Layout> {
        let Value::Object(o) = v else { return None };
        if o.class != LAYOUT {
            return None;
        }
        let (shape, stride) = (o.attrs.get("shape")?, o.attrs.get("stride")?);
        let (Value::Tuple(shape), Value::Tuple(stride)) = (shape, stride) else {
            return None;
        };
        let modes = shape
            .iter()
            .zip(stride)
            .map(|(s, d)| {
                let mut es = Vec::new();
                let mut ds = Vec::new();
                leaves(s, &mut es)?;
                leaves(d, &mut ds)?;
                (es.len() == ds.len()).then(|| es.into_iter().zip(ds).collect())
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Layout { modes })
    }

    /// A compact layout of `shape` whose leaves are laid out in `order`
    /// (rank of each top-level mode; `None`: column-major).
    fn compact(shape: &Value, order: Option<&[i64]>) -> Option<Layout> {
        let top: Vec<Value> = match shape {
            Value::Tuple(items) => items.clone(),
            v => vec![v.clone()],
        };
        let mut extents: Vec<Vec<i64>> = Vec::new();
        for m in &top {
            let mut es = Vec::new();
            leaves(m, &mut es)?;
            extents.push(es);
        }
        let mut modes: Vec<Vec<(i64, i64)>> = extents
            .iter()
            .map(|es| es.iter().map(|&e| (e, 0)).collect())
            .collect();
        let mut by_rank: Vec<usize> = (0..top.len()).collect();
        if let Some(order) = order {
            if order.len() != top.len() {
                return None;
            }
            by_rank.sort_by_key(|&i| order[i]);
        }
        let mut stride = 1i64;
        for i in by_rank {
            for leaf in &mut modes[i] {
                leaf.1 = stride;
                stride = stride.checked_mul(leaf.0)?;
            }
        }
        Some(Layout { modes })
    }

    /// `tiled_divide` by one extent per leading mode, each a single leaf
    /// it divides: `((t0, t1, ..), s0 / t0, s1 / t1, .., other modes)`.
    fn tiled_divide(&self, tiles: &[i64]) -> Option<Layout> {
        if tiles.len() > self.modes.len() {
            return None;
        }
        let mut tile_mode = Vec::new();
        let mut rest = Vec::new();
        for (mode, &t) in self.modes.iter().zip(tiles) {
            let [(extent, stride)] = mode.as_slice() else { return None };
            if t <= 0 || extent % t != 0 {
                return None;
            }
            tile_mode.push((t, *stride));
            rest.push(vec![(extent / t, stride * t)]);
        }
        let modes = std::iter::once(tile_mode).chain(rest).chain(self.modes[tiles.len()..].iter().cloned()).collect();
        Some(Layout { modes })
    }

    /// The modes a slicing coordinate keeps (`None` in their place).
    fn slice(&self, coord: &Value) -> Option<Layout> {
        let Value::Tuple(items) = coord else {
            return matches!(coord, Value::None).then(|| self.clone());
        };
        if items.len() != self.modes.len() {
            return None;
        }
        let modes = self
            .modes
            .iter()
            .zip(items)
            .filter(|(_, c)| matches!(c, Value::None))
            .map(|(m, _)| m.clone())
            .collect();
        Some(Layout { modes })
    }
}

/// The extent of a shape that is one integer, or a tuple of one (`(2,)`, a
/// rank-1 layout's shape).
fn single_extent(v: &Value) -> Option<i64> {
    let mut extents = Vec::new();
    leaves(v, &mut extents)?;
    match extents.as_slice() {
        [e] => Some(*e),
        _ => None,
    }
}

fn leaves(v: &Value, out: &mut Vec<i64>) -> Option<()> {
    match v {
        Value::Int(i) if *i >= 0 => out.push(*i),
        Value::Tuple(items) => {
            for i in items {
                leaves(i, out)?;
            }
        }
        _ => return None,
    }
    Some(())
}

/// The element type and shape of a tensor in shared memory, when both are
/// known, and how they were found (for messages).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tile {
    pub dtype: String,
    pub width: u32,
    /// Top-level modes, each the product of its leaves.
    pub modes: Vec<i64>,
}

impl Tile {
    pub fn new(dtype: &Value, layout: &Value) -> Option<Tile> {
        let (name, width) = dtype_of(dtype)?;
        let layout = Layout::of_value(layout)?;
        Some(Tile {
            dtype: name,
            width,
            modes: layout
                .modes
                .iter()
                .map(|m| m.iter().map(|l| l.0).product())
                .collect(),
        })
    }

    pub fn elements(&self) -> i64 {
        self.modes.iter().product()
    }

    pub fn bytes(&self) -> i64 {
        (self.elements() * self.width as i64 + 7) / 8
    }

    /// The view an index selects: modes indexed by `None` stay, the others
    /// are fixed. `None` when the index does not address the top-level modes.
    pub fn slice(&self, index: &Value) -> Option<Tile> {
        let Value::Tuple(items) = index else {
            return None;
        };
        // A coordinate into a mode (`(None, 0)`) keeps part of it: not
        // followed.
        if items.len() != self.modes.len()
            || items.iter().any(|c| !matches!(c, Value::None | Value::Int(_) | Value::Unknown(..)))
        {
            return None;
        }
        let modes = self
            .modes
            .iter()
            .zip(items)
            .filter(|(_, c)| matches!(c, Value::None))
            .map(|(m, _)| *m)
            .collect();
        Some(Tile {
            modes,
            ..self.clone()
        })
    }

    /// `cute.group_modes(t, begin, end)`.
    pub fn group(&self, begin: i64, end: i64) -> Option<Tile> {
        let n = self.modes.len() as i64;
        let (b, e) = (begin.clamp(0, n), end.clamp(0, n));
        if b >= e {
            return None;
        }
        let mut modes = self.modes[..b as usize].to_vec();
        modes.push(self.modes[b as usize..e as usize].iter().product());
        modes.extend_from_slice(&self.modes[e as usize..]);
        Some(Tile {
            modes,
            ..self.clone()
        })
    }

    /// "32 x 32 Float32 elements"
    pub fn describe(&self) -> String {
        let shape = if self.modes.is_empty() {
            "1".to_string()
        } else {
            self.modes
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(" x ")
        };
        format!("{shape} {} elements", self.dtype)
    }
}

/// The class of a `tcgen05.CtaGroup` member (attribute `size`: the CTAs one
/// MMA spans).
pub const CTA_GROUP: &str = "CtaGroup";
/// The class of a tiled MMA made by the Blackwell helpers
/// (`sm100_utils.make_trivial_tiled_mma(..., cta_group, ...)`): attributes
/// `cta_group` and `thr_id`, the layout of the CTAs one MMA spans (unknown
/// when the CTA group is).
pub const TCGEN05_MMA: &str = "Tcgen05TiledMma";

/// `tcgen05.CtaGroup.ONE` (1) or `.TWO` (2).
pub fn cta_group(n: i64) -> Value {
    Value::Object(Arc::new(Object { class: CTA_GROUP.to_string(), attrs: [("size".to_string(), Value::Int(n))].into_iter().collect() }))
}

/// The layout `n:1`, the `thr_id` of a tcgen05 MMA over `n` CTAs.
pub fn cta_layout(n: i64) -> Value {
    Layout { modes: vec![vec![(n, 1)]] }.to_value()
}

/// `make_trivial_tiled_mma` / `make_blockscaled_trivial_tiled_mma` of the
/// Blackwell helpers (`cutlass.utils.blackwell_helpers`, `utils.sm100`): a
/// tiled MMA whose `thr_id` is its CTA group, read off the argument that is a
/// `CtaGroup` (keyword `cta_group=` or positional). `None` for other calls.
///
/// The MMA operations of `cute.nvgpu.tcgen05` (`tcgen05.MmaF16BF16Op(...,
/// CtaGroup.TWO, ...)`) are read the same way, and `cute.make_tiled_mma(op)`
/// of one is a tiled MMA of its CTA group.
pub fn tcgen05_tiled_mma(call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
    // Every call evaluated comes here: its name is spelled out only for the
    // few whose last part may be one of these.
    let last = last_part(call)?;
    // `cute.make_tiled_mma(op)`, `cute.make_mma_atom(op)` and the tiled MMA
    // of that atom span the CTAs of the operation's group.
    if last == "make_tiled_mma" || last == "make_mma_atom" {
        return args.first().filter(|op| matches!(op, Value::Object(o) if o.class == TCGEN05_MMA)).cloned();
    }
    let maker = matches!(last, "make_trivial_tiled_mma" | "make_blockscaled_trivial_tiled_mma");
    // `MmaF16BF16Op`, and the ones named for their architecture
    // (`SM103MmaMXF4Op`, `SM107BlockScaledMmaMXF8F6F4Op`).
    if !maker && !(last.contains("Mma") && last.ends_with("Op")) {
        return None;
    }
    let path = call.qualname.clone().or_else(|| call.func.dotted())?.to_ascii_lowercase();
    let mma_op = !maker && path.contains("tcgen05.");
    if !mma_op {
        if !maker {
            return None;
        }
        if path.contains("sm90") || !(path.contains("sm10") || path.contains("blackwell")) {
            return None;
        }
    }
    let is_group = |v: &Value| matches!(v, Value::Object(o) if o.class == CTA_GROUP);
    let group = kwargs
        .iter()
        .find(|(k, _)| k == "cta_group")
        .map(|(_, v)| v)
        .or_else(|| args.iter().find(|v| is_group(v)));
    let size = match group {
        Some(Value::Object(o)) if o.class == CTA_GROUP => o.attrs.get("size").and_then(Value::as_int),
        _ => None,
    };
    let (cta_group, thr_id) = match size {
        Some(n) => (Value::Int(n), cta_layout(n)),
        None => (Value::unknown("the CTA group of a tcgen05 MMA"), Value::unknown("the CTA group of a tcgen05 MMA")),
    };
    let attrs = [("cta_group".to_string(), cta_group), ("thr_id".to_string(), thr_id)].into_iter().collect();
    Some(Value::Object(Arc::new(Object { class: TCGEN05_MMA.to_string(), attrs })))
}

/// The class of a tiled MMA made by the Hopper helpers
/// (`sm90_utils.make_trivial_tiled_mma(..., atom_layout_mnk, tiler_mn)`):
/// attribute `size`, the threads that issue it. A warpgroup MMA atom is
/// issued by the 128 threads of a warp group, and the tiled MMA repeats it
/// `atom_layout_mnk` times, one warp group each.
pub const WARPGROUP_MMA: &str = "WarpgroupTiledMma";

/// Threads of one warpgroup MMA atom.
const WARPGROUP_THREADS: i64 = 128;

/// `make_trivial_tiled_mma` of the Hopper helpers
/// (`cutlass.utils.hopper_helpers`, `utils.sm90`): a [`WARPGROUP_MMA`],
/// its size known when `atom_layout_mnk` (keyword or sixth argument) is.
/// `None` for other calls.
pub fn warpgroup_tiled_mma(call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
    if last_part(call)? != "make_trivial_tiled_mma" {
        return None;
    }
    let path = call.qualname.clone().or_else(|| call.func.dotted())?.to_ascii_lowercase();
    if !(path.contains("hopper") || path.contains("sm90")) {
        return None;
    }
    let atoms = kwargs.iter().find(|(k, _)| k == "atom_layout_mnk").map(|(_, v)| v).or_else(|| args.get(5));
    let size = match atoms {
        Some(Value::Tuple(items)) => items.iter().map(Value::as_int).product::<Option<i64>>().filter(|&n| n > 0),
        _ => None,
    };
    let size = match size {
        Some(n) => Value::Int(n * WARPGROUP_THREADS),
        None => Value::unknown("the atom layout of a warpgroup MMA"),
    };
    let attrs = [("size".to_string(), size)].into_iter().collect();
    Some(Value::Object(Arc::new(Object { class: WARPGROUP_MMA.to_string(), attrs })))
}

/// What [`with_single_cta_mmas`] assumes, for the notes of a model.
pub const SINGLE_CTA_MMA: &str =
    "the CTA group of a tcgen05 MMA is not known statically: with one CTA per cluster an MMA spans one CTA (`thr_id` of size 1)";

/// With one CTA per cluster a tcgen05 MMA spans one CTA (a CTA pair needs a
/// peer in the cluster): the same value with the `thr_id` of every such MMA
/// whose CTA group is not known set to `1:1`. Whether anything changed is
/// returned beside it.
pub fn with_single_cta_mmas(v: &Value, depth: u32) -> Option<Value> {
    match v {
        Value::Object(o) if o.class == TCGEN05_MMA => {
            if !o.attrs.get("thr_id").is_some_and(Value::is_unknown) {
                return None;
            }
            let mut o = (**o).clone();
            o.attrs.insert("cta_group".to_string(), Value::Int(1));
            o.attrs.insert("thr_id".to_string(), cta_layout(1));
            Some(Value::Object(Arc::new(o)))
        }
        Value::Object(o) if depth < 2 => {
            let mut changed = None;
            for (k, a) in &o.attrs {
                if let Some(new) = with_single_cta_mmas(a, depth + 1) {
                    changed.get_or_insert_with(|| (**o).clone()).attrs.insert(k.clone(), new);
                }
            }
            changed.map(|o| Value::Object(Arc::new(o)))
        }
        Value::Tuple(items) if depth < 2 => {
            let new: Vec<Option<Value>> = items.iter().map(|i| with_single_cta_mmas(i, depth + 1)).collect();
            new.iter().any(Option::is_some).then(|| {
                Value::Tuple(items.iter().zip(new).map(|(i, n)| n.unwrap_or_else(|| i.clone())).collect())
            })
        }
        _ => None,
    }
}

/// The last part of the function's name (`MmaF16BF16Op` of
/// `tcgen05.MmaF16BF16Op`), read without building the dotted name.
pub(crate) fn last_part(call: &Call) -> Option<&str> {
    match (&call.qualname, &call.func) {
        (Some(q), _) => q.rsplit('.').next(),
        (None, Expr::Attr { attr, .. }) => Some(attr),
        (None, Expr::Name(n)) => Some(n),
        (None, _) => None,
    }
}

/// The function's name when it is one of `cute`'s or `cutlass`'s (asked of
/// every call evaluated, so without building the dotted name).
fn last_segment(call: &Call) -> Option<&str> {
    fn root(e: &Expr) -> Option<&str> {
        match e {
            Expr::Name(n) => Some(n),
            Expr::Attr { base, .. } => root(base),
            _ => None,
        }
    }
    let (root, last) = match &call.qualname {
        Some(q) => (q.split('.').next().unwrap_or(""), q.rsplit('.').next()?),
        None => match &call.func {
            Expr::Attr { attr, .. } => (root(&call.func)?, attr.as_str()),
            Expr::Name(n) => (n.as_str(), n.as_str()),
            _ => return None,
        },
    };
    matches!(root, "cute" | "cutlass").then_some(last)
}

/// The layout and size functions of `cute` (`make_layout`,
/// `make_ordered_layout`, `tile_to_shape`, `slice_`, `size`, `cosize`,
/// `size_in_bytes`), evaluated on known values. `None` for other calls; an
/// unknown value when the arguments are not known.
pub fn call(call: &Call, args: &[Value], kwargs: &[(String, Value)]) -> Option<Value> {
    let name = last_segment(call)?;
    let arg = |name: &str, pos: usize| {
        kwargs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
            .or(args.get(pos))
    };
    let unknown = || Value::unknown(format!("`{}(...)`", call.func.dotted().unwrap_or_default()));
    let ints = |v: &Value| -> Option<Vec<i64>> {
        match v {
            Value::Tuple(items) => items.iter().map(Value::as_int).collect(),
            Value::Int(i) => Some(vec![*i]),
            _ => None,
        }
    };
    let value = match name {
        "make_layout" => {
            let shape = arg("shape", 0)?;
            match arg("stride", 1) {
                None | Some(Value::None) => Layout::compact(shape, None).map(|l| l.to_value()),
                Some(stride) => {
                    let layout = Object {
                        class: LAYOUT.to_string(),
                        attrs: [
                            (
                                "shape".to_string(),
                                match shape {
                                    Value::Tuple(_) => shape.clone(),
                                    v => Value::Tuple(vec![v.clone()]),
                                },
                            ),
                            (
                                "stride".to_string(),
                                match stride {
                                    Value::Tuple(_) => stride.clone(),
                                    v => Value::Tuple(vec![v.clone()]),
                                },
                            ),
                        ]
                        .into_iter()
                        .collect(),
                    };
                    Layout::of_value(&Value::Object(Arc::new(layout))).map(|l| l.to_value())
                }
            }
        }
        "make_ordered_layout" => {
            let order = arg("order", 1).and_then(ints);
            Layout::compact(arg("shape", 0)?, order.as_deref()).map(|l| l.to_value())
        }
        // A layout atom tiled to a shape: compact over the shape, whatever
        // the atom (only its size and its modes are read).
        "tile_to_shape" => {
            let order = arg("order", 2).and_then(ints);
            arg("trg_shape", 1)
                .and_then(|s| Layout::compact(s, order.as_deref()))
                .map(|l| l.to_value())
        }
        // `cute.tiled_divide(cluster_layout, (mma.thr_id.shape,))`: how
        // the CTAs of a cluster split into MMA peers and multicast groups.
        "tiled_divide" => {
            let layout = Layout::of_value(arg("target", 0)?);
            // A tile is an extent or a layout of one leaf (`mma.thr_id`
            // itself, `2:1`), which divides by its extent.
            let tile = |v: &Value| match Layout::of_value(v) {
                Some(l) if l.modes.iter().flatten().count() == 1 => Some(l.size()),
                Some(_) => None,
                None => single_extent(v),
            };
            let tiles: Option<Vec<i64>> = match arg("tiler", 1)? {
                Value::Tuple(items) => items.iter().map(tile).collect(),
                v => tile(v).map(|t| vec![t]),
            };
            layout.zip(tiles).and_then(|(l, t)| l.tiled_divide(&t)).map(|l| l.to_value())
        }
        "slice_" => {
            let layout = Layout::of_value(arg("src", 0)?)?;
            layout.slice(arg("coord", 1)?).map(|l| l.to_value())
        }
        "size" | "cosize" => {
            let v = arg("a", 0)?;
            let mode = arg("mode", 1).and_then(ints);
            // `cute.size(tiled_mma)`: the threads of a warpgroup MMA.
            if let (Value::Object(o), None, "size") = (v, &mode, name) {
                if o.class == WARPGROUP_MMA {
                    return o.attrs.get("size").cloned();
                }
            }
            let layout = match v {
                Value::Object(_) => Layout::of_value(v),
                shape => Layout::compact(shape, None),
            };
            layout
                .and_then(|l| match mode.as_deref() {
                    None => Some(l),
                    Some([m]) => l.modes.get(*m as usize).map(|m| Layout {
                        modes: vec![m.clone()],
                    }),
                    Some(_) => None,
                })
                .map(|l| Value::Int(if name == "size" { l.size() } else { l.cosize() }))
        }
        "size_in_bytes" => {
            let (_, width) = dtype_of(arg("dtype", 0)?)?;
            match arg("layout", 1)? {
                Value::None => Some(Value::Int(0)),
                l => Layout::of_value(l).map(|l| Value::Int((l.cosize() * width as i64 + 7) / 8)),
            }
        }
        _ => return None,
    };
    Some(value.unwrap_or_else(unknown))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(shape: &[i64]) -> Value {
        Layout::compact(
            &Value::Tuple(shape.iter().map(|&i| Value::Int(i)).collect()),
            None,
        )
        .unwrap()
        .to_value()
    }

    #[test]
    fn sizes_of_compact_layouts_and_slices() {
        let l = Layout::of_value(&layout(&[64, 32, 4])).unwrap();
        assert_eq!(
            l.modes,
            vec![vec![(64, 1)], vec![(32, 64)], vec![(4, 2048)]]
        );
        assert_eq!(l.size(), 8192);
        let stage = l
            .slice(&Value::Tuple(vec![Value::None, Value::None, Value::Int(0)]))
            .unwrap();
        assert_eq!(stage.cosize(), 2048);
        // A slice across the stages is not compact: its cosize counts the gaps.
        let rows = l
            .slice(&Value::Tuple(vec![Value::Int(0), Value::None, Value::None]))
            .unwrap();
        assert_eq!(rows.size(), 128);
        assert_eq!(rows.cosize(), 1 + 31 * 64 + 3 * 2048);
    }

    #[test]
    fn a_cluster_divided_by_its_mma_peers() {
        // (2, 4, 1) CTAs over MMAs of two CTAs: pairs along M, 1 pair in M,
        // 4 CTAs along N.
        let cluster = Layout::of_value(&layout(&[2, 4, 1])).unwrap();
        let divided = cluster.tiled_divide(&[2]).unwrap();
        assert_eq!(divided.modes, vec![vec![(2, 1)], vec![(1, 2)], vec![(4, 2)], vec![(1, 8)]]);
        let Value::Object(o) = divided.to_value() else { panic!("a layout is an object") };
        assert_eq!(o.attrs["shape"], Value::Tuple(vec![Value::Int(2), Value::Int(1), Value::Int(4), Value::Int(1)]));
        // A tile that does not divide its mode is not followed.
        assert_eq!(cluster.tiled_divide(&[3]), None);
    }

    #[test]
    fn tensor_views() {
        let t = Tile::new(&dtype_named("cutlass.Float16").unwrap(), &layout(&[64, 32, 4])).unwrap();
        let grouped = t.group(0, 2).unwrap();
        assert_eq!(grouped.modes, vec![2048, 4]);
        let stage = grouped.slice(&Value::Tuple(vec![Value::None, Value::unknown("stage")])).unwrap();
        assert_eq!(stage.bytes(), 4096);
        // Part of a mode: not followed.
        let part = Value::Tuple(vec![Value::Tuple(vec![Value::None, Value::Int(0)]), Value::Int(1)]);
        assert!(grouped.slice(&part).is_none());
    }

    #[test]
    fn element_types() {
        assert_eq!(
            dtype_of(&dtype_named("cutlass.BFloat16").unwrap()),
            Some(("BFloat16".to_string(), 16))
        );
        assert!(dtype_named("torch.float16").is_none());
        assert!(dtype_named("cutlass.Constexpr").is_none());
    }
}
