//! Whether a value that can differ between lanes is, in fact, the same in the
//! lanes a lane stands in for.
//!
//! A lane stands in for later lanes of its warp (lane 1 for lanes 2 to 30 at
//! first) only while nothing it meets can set them apart (see `StandIn`). A
//! condition on the thread index often cannot in practice: `if tidx == 0:` is
//! false in every one of them, `if tidx < 64:` decides whole warps, and a name
//! that is lane-dependent somewhere in the kernel (`row = tidx` in one branch,
//! `row = bidx` in the other) may not be where it is read. While a lane runs,
//! the names the kernel binds are followed in the lanes it stands in for
//! ([`StoodInLanes`]): a lane-dependent binding is kept with what the names it
//! reads hold there, and evaluated for each lane from the thread-index calls
//! and those values when a check needs it. A condition or argument is evaluated
//! in each lane; the lanes that decide or compute it otherwise are left to run
//! on their own (`lane == 16` for `lane = tidx % 16`), and the running lane
//! goes on standing in for the rest.
//!
//! A helper inlined while a lane stands in is followed the same way: its
//! parameters hold what the call's arguments hold in the lanes, and what it
//! returns there is what the caller's name is bound to. What cannot be followed
//! (a helper whose arguments do not line up with its parameters, a method call
//! inside an expression, an attribute that can differ between lanes) is unknown
//! in those lanes, and leaves them all apart.
//!
//! Pipelines are compared as the package uses them: a pipeline's `tidx=` as an
//! offset from each lane's own index (`tidx - 32 * first_warp` is the same
//! offset in every lane), the object a pipeline method is called on as a value,
//! and what a pipeline call gives (the pipeline, its participants, a handle, a
//! `try_wait` token) is the running lane's in the lanes still stood in for,
//! which passed it alike arguments.
//!
//! [`LaneEvaluator`] evaluates as a thread does where that has no effect;
//! `tests/parallel.rs` checks that the model built with lanes standing in is
//! the one every lane builds.

use std::collections::BTreeSet;
use std::rc::Rc;

use cute_ir::api::{Api, Effect};
use cute_ir::ast::{Call, Expr, Target};
use cute_ir::eval::{self, eval, CallHandler, Env, Value};
use rustc_hash::FxHashMap as HashMap;

/// Where a thread is: what the thread-index calls return in it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Place {
    pub cta: u32,
    pub tid: u32,
    pub block: [u32; 3],
    pub grid: Option<[u32; 3]>,
    /// (first CTA, offset): the CTAs from the first on stand for the
    /// grid's last cluster, their block index `offset` further on.
    pub stands_in: Option<crate::model::StandsIn>,
    pub cluster: [u32; 3],
    pub cluster_base: u32,
    pub ctas: u32,
}

impl Place {
    /// The value of a call that reads the thread's place, `None` for any
    /// other.
    pub fn index(&self, api: Api) -> Option<Value> {
        let ints = |a: u32, b: u32, c: u32| Value::Tuple(vec![Value::Int(a as i64), Value::Int(b as i64), Value::Int(c as i64)]);
        Some(match api {
            Api::ThreadIdx => {
                let [bx, by, _] = self.block;
                let t = self.tid;
                ints(t % bx, (t / bx) % by, t / (bx * by))
            }
            Api::ThreadIdxX => Value::Int((self.tid % self.block[0]) as i64),
            Api::WarpIdx => Value::Int((self.tid / 32) as i64),
            Api::LaneIdx => Value::Int((self.tid % 32) as i64),
            Api::BlockIdx => match self.grid {
                Some([gx, gy, _]) => {
                    let c = match self.stands_in {
                        Some(s) => s.block_index(self.cta),
                        None => self.cta,
                    };
                    ints(c % gx, (c / gx) % gy, c / (gx * gy))
                }
                // Not known, but clusters tile the grid: each component is
                // the CTA's place in its cluster modulo the cluster's extent.
                None => {
                    let [cx, cy, cz] = self.cluster;
                    let r = self.cta - self.cluster_base;
                    let place = [r % cx, (r / cx) % cy, r / (cx * cy)];
                    Value::Tuple(
                        place.iter().zip([cx, cy, cz]).map(|(&p, m)| eval::known_modulo("the block index", m as i64, p as i64)).collect(),
                    )
                }
            },
            Api::ClusterRank => Value::Int((self.cta - self.cluster_base) as i64),
            Api::BlockInClusterIdx => {
                let [cx, cy, _] = self.cluster;
                let c = self.cta - self.cluster_base;
                ints(c % cx, (c / cx) % cy, c / (cx * cy))
            }
            Api::ClusterSize => Value::Int(self.ctas as i64),
            _ => return None,
        })
    }
}

/// Values in the lanes a lane stands in for.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum InLanes {
    /// The same value in every one of them.
    All(Value),
    /// Its value in each of them, by position in [`StoodInLanes`]'s lanes
    /// (a lane no longer stood in for holds `Value::None`).
    Each(Vec<Value>),
}

impl InLanes {
    /// `Each` of values all equal is `All`: what is computed from it then
    /// needs computing once.
    fn of(values: Vec<Value>) -> InLanes {
        match values.first() {
            Some(first) if values.iter().all(|v| v == first) => InLanes::All(first.clone()),
            _ => InLanes::Each(values),
        }
    }

    /// The value in the lane at position `i`.
    pub fn get(&self, i: usize) -> &Value {
        match self {
            InLanes::All(v) => v,
            InLanes::Each(vs) => &vs[i],
        }
    }

    /// `f` applied lane by lane to these values and `other`'s, over `lanes`
    /// positions.
    pub fn zip_with(&self, other: &InLanes, lanes: usize, f: impl Fn(&Value, &Value) -> Value) -> InLanes {
        match (self, other) {
            (InLanes::All(a), InLanes::All(b)) => InLanes::All(f(a, b)),
            _ => InLanes::of((0..lanes).map(|i| f(self.get(i), other.get(i))).collect()),
        }
    }
}

/// What a name holds in the lanes a lane stands in for.
#[derive(Clone, Debug)]
enum LaneBinding<'k> {
    /// The standing-in lane's value, in every one of them.
    Same,
    /// Values computed for them.
    Computed(Rc<InLanes>),
    /// Values to compute when a check reads them.
    Deferred(Rc<Deferred<'k>>),
    /// Not known there (a value no lane evaluator computes).
    Unknown,
}

/// What a call's argument holds in the lanes a lane stands in for.
#[derive(Clone, Debug)]
pub(super) enum ArgInLanes {
    /// It cannot differ between lanes: the running lane's value.
    Same,
    /// It can, and holds these.
    Values(Rc<InLanes>),
    /// It can, and is not known there.
    Unknown,
}

impl ArgInLanes {
    /// Whether it holds `running` in every lane.
    pub fn is_everywhere(&self, running: &Value) -> bool {
        matches!(self, ArgInLanes::Values(vs) if matches!(&**vs, InLanes::All(v) if v == running))
    }

    fn binding<'k>(self) -> LaneBinding<'k> {
        match self {
            ArgInLanes::Same => LaneBinding::Same,
            ArgInLanes::Values(vs) => LaneBinding::Computed(vs),
            ArgInLanes::Unknown => LaneBinding::Unknown,
        }
    }
}

/// A helper being inlined, seen from the lanes: its callers' bindings wait
/// while it runs.
struct Caller<'k> {
    bindings: HashMap<String, LaneBinding<'k>>,
    returned: Option<Option<Rc<InLanes>>>,
}

/// A binding evaluated in the lanes only when a condition or argument
/// reads it: most bindings of a lane-dependent value never are.
#[derive(Debug)]
struct Deferred<'k> {
    expr: &'k Expr,
    /// What the names it reads held when it was bound.
    inputs: Vec<(Rc<str>, Input<'k>)>,
    /// Deferred bindings it reads, through any number of others.
    depth: u32,
    value: std::cell::OnceCell<Option<Rc<InLanes>>>,
}

#[derive(Clone, Debug)]
enum Input<'k> {
    /// Not bound: the module's constant, or unknown.
    Unbound,
    /// One value in every lane.
    Value(Value),
    Computed(Rc<InLanes>),
    Deferred(Rc<Deferred<'k>>),
}

/// Deferred bindings read through more than this many others are
/// evaluated when bound, so that evaluating one never recurses deeply (a
/// loop that adds to a name on every iteration).
const MAX_DEFERRED_DEPTH: u32 = 32;

/// The values the kernel's names hold in the lanes a lane stands in for,
/// followed along its run: every binding of a name, in the kernel or in a
/// helper followed into, is evaluated for those lanes too, from their own
/// values of the names it reads, when a condition or argument needs it.
///
/// A name bound to a value that cannot differ between lanes holds the
/// running lane's value in all of them; one bound from a lane-dependent
/// expression is evaluated per lane by [`LaneEvaluator`] (once, when
/// nothing it reads differs between them), or is unknown there when that
/// evaluator cannot (a helper's result). A lane-dependent name bound in a
/// way this does not follow is taken as unknown, never as the running
/// lane's value.
pub(super) struct StoodInLanes<'k> {
    /// The lanes' thread indices, and whether each is still stood in for.
    tids: Vec<u32>,
    alive: Vec<bool>,
    /// The names of the kernel, or of the helper being inlined.
    bindings: HashMap<String, LaneBinding<'k>>,
    /// In a helper: what it returned in the lanes (`Some(None)`: not known
    /// there), once a `return` ran.
    returned: Option<Option<Rc<InLanes>>>,
    /// The helpers' callers, innermost last.
    callers: Vec<Caller<'k>>,
    /// The call a helper last returned from, by address, and what it
    /// returned in the lanes.
    last_return: Option<(usize, Option<Rc<InLanes>>)>,
    /// The names each expression reads (`None`: an attribute that can
    /// differ between lanes), by address of the expression and of the set
    /// of lane-dependent names it is read under.
    names: HashMap<(usize, usize), Option<Rc<[Rc<str>]>>>,
}

impl<'k> StoodInLanes<'k> {
    pub fn new(tids: Vec<u32>) -> Self {
        let alive = vec![true; tids.len()];
        StoodInLanes {
            tids,
            alive,
            bindings: HashMap::default(),
            returned: None,
            callers: Vec::new(),
            last_return: None,
            names: HashMap::default(),
        }
    }

    /// Helpers entered and not left.
    pub fn helpers(&self) -> usize {
        self.callers.len()
    }

    /// Enters a helper whose parameters hold `params` in the lanes.
    pub fn enter(&mut self, params: Vec<(String, ArgInLanes)>) {
        let bindings = params.into_iter().map(|(n, a)| (n, a.binding())).collect();
        let bindings = std::mem::replace(&mut self.bindings, bindings);
        self.callers.push(Caller { bindings, returned: self.returned.take() });
    }

    /// The helper entered last returns `values` in the lanes (`None`: not
    /// known there).
    pub fn set_returned(&mut self, values: Option<Rc<InLanes>>) {
        self.returned = Some(values);
    }

    /// Leaves the helper entered last, which `call` ran: what it returned
    /// in the lanes is kept for the binding of the call's value. A helper
    /// that ran to its end returned `None` in every lane.
    pub fn leave(&mut self, call: &Call) {
        let Caller { bindings, returned } = self.callers.pop().expect("a helper was entered");
        self.bindings = bindings;
        let values = std::mem::replace(&mut self.returned, returned).unwrap_or_else(|| Some(Rc::new(InLanes::All(Value::None))));
        self.last_return = Some((call as *const Call as usize, values));
    }

    /// A helper called by `call` ran without being followed into: what it
    /// returns is not known in the lanes.
    pub fn not_followed(&mut self, call: &Call) {
        self.last_return = Some((call as *const Call as usize, None));
    }

    /// What the helper `call` ran returned in the lanes, if it was the last
    /// to return: `Some(None)` where that is not known.
    pub fn returned_by(&mut self, call: &Call) -> Option<Option<Rc<InLanes>>> {
        match &self.last_return {
            Some((at, _)) if *at == call as *const Call as usize => self.last_return.take().map(|(_, v)| v),
            _ => None,
        }
    }

    /// The lanes still stood in for.
    pub fn tids(&self) -> Vec<u32> {
        self.tids.iter().zip(&self.alive).filter(|(_, &a)| a).map(|(&t, _)| t).collect()
    }

    /// Whether no lane is stood in for any more.
    pub fn is_empty(&self) -> bool {
        !self.alive.contains(&true)
    }

    /// Positions of the lanes (see [`InLanes::Each`]).
    pub fn positions(&self) -> usize {
        self.tids.len()
    }

    /// Keeps standing in for the lanes where `keep`, given a lane's
    /// position and thread index, is true: the others run on their own.
    pub fn keep(&mut self, keep: impl Fn(usize, u32) -> bool) {
        for (i, (alive, &tid)) in self.alive.iter_mut().zip(&self.tids).enumerate() {
            *alive &= keep(i, tid);
        }
    }

    /// The names `e` reads, `None` when it reads an attribute that can
    /// differ between lanes.
    fn names_of(&mut self, e: &Expr, lane_dependent: &BTreeSet<String>) -> Option<Rc<[Rc<str>]>> {
        self.names
            .entry((e as *const Expr as usize, lane_dependent as *const BTreeSet<String> as usize))
            .or_insert_with(|| {
                let mut names = Vec::new();
                names_read(e, lane_dependent, &mut names).then(|| names.into_iter().map(Rc::from).collect())
            })
            .clone()
    }

    /// What the names of `e` hold in the lanes now, `None` when one is not
    /// known there.
    fn inputs(&mut self, e: &Expr, env: &Env, lane_dependent: &BTreeSet<String>) -> Option<Vec<(Rc<str>, Input<'k>)>> {
        let names = self.names_of(e, lane_dependent)?;
        let mut inputs = Vec::with_capacity(names.len());
        for name in names.iter() {
            let n: &str = name;
            let input = match self.bindings.get(n) {
                Some(LaneBinding::Computed(values)) => Input::Computed(values.clone()),
                Some(LaneBinding::Deferred(d)) => Input::Deferred(d.clone()),
                Some(LaneBinding::Unknown) => return None,
                // Bound without being followed: not the running lane's
                // value unless it cannot differ between lanes.
                None if lane_dependent.contains(n) && env.contains_key(n) => return None,
                Some(LaneBinding::Same) | None => env.get(n).map_or(Input::Unbound, |v| Input::Value(v.clone())),
            };
            inputs.push((name.clone(), input));
        }
        Some(inputs)
    }

    /// The value of `e` in the lanes, or `None` where it cannot be known:
    /// it reads a name unknown in some lane, an attribute that can differ
    /// between lanes, or calls what [`LaneEvaluator`] does not evaluate.
    /// `env` holds the running lane's names, `lane` evaluates as it does.
    pub fn evaluate(&mut self, e: &Expr, env: &Env, lane_dependent: &BTreeSet<String>, lane: LaneEvaluator<'_>) -> Option<Rc<InLanes>> {
        let inputs = self.inputs(e, env, lane_dependent)?;
        self.compute(e, &inputs, lane)
    }

    /// Evaluates `e` in the lanes from `inputs`.
    fn compute(&self, e: &Expr, inputs: &[(Rc<str>, Input<'k>)], lane: LaneEvaluator<'_>) -> Option<Rc<InLanes>> {
        // One environment for every lane: the names with one value in all
        // of them are bound once, the others again for each lane.
        let mut lane_env = Env::default();
        let mut each: Vec<(&str, Rc<InLanes>)> = Vec::new();
        let inputs = inputs.iter().map(|(n, i)| (&**n, i));
        for (n, input) in inputs {
            let values = match input {
                Input::Unbound => continue,
                Input::Value(v) => {
                    lane_env.insert(n.to_string(), v.clone());
                    continue;
                }
                Input::Computed(values) => values.clone(),
                Input::Deferred(d) => self.force(d, lane)?,
            };
            match &*values {
                InLanes::All(v) => {
                    lane_env.insert(n.to_string(), v.clone());
                }
                InLanes::Each(_) => each.push((n, values)),
            }
        }
        // Bound once, then each lane's value put in place.
        for (n, _) in &each {
            lane_env.insert(n.to_string(), Value::None);
        }
        let in_lane = |i: usize, lane_env: &mut Env| {
            for (n, values) in &each {
                if let Some(slot) = lane_env.get_mut(*n) {
                    *slot = values.get(i).clone();
                }
            }
            let mut evaluator = LaneEvaluator { place: Place { tid: self.tids[i], ..lane.place }, failed: false, ..lane };
            let v = eval(e, lane_env, &mut evaluator);
            (!evaluator.failed).then_some(v)
        };
        let Some(first) = self.alive.iter().position(|&a| a) else {
            return Some(Rc::new(InLanes::Each(vec![Value::None; self.tids.len()])));
        };
        if each.is_empty() && !reads_place(e) {
            return in_lane(first, &mut lane_env).map(|v| Rc::new(InLanes::All(v)));
        }
        let mut values = Vec::with_capacity(self.tids.len());
        for i in 0..self.tids.len() {
            values.push(if self.alive[i] { in_lane(i, &mut lane_env)? } else { Value::None });
        }
        Some(Rc::new(InLanes::of(values)))
    }

    /// The values of a deferred binding, computed once.
    fn force(&self, d: &Deferred<'k>, lane: LaneEvaluator<'_>) -> Option<Rc<InLanes>> {
        d.value.get_or_init(|| self.compute(d.expr, &d.inputs, lane)).clone()
    }

    /// Binds the names of `target` to `value`, evaluated in the lanes when
    /// a check reads them.
    pub fn bind(&mut self, target: &Target, value: &'k Expr, env: &Env, lane_dependent: &BTreeSet<String>, lane: LaneEvaluator<'_>) {
        let Some(inputs) = self.inputs(value, env, lane_dependent) else {
            return self.bind_all(target, LaneBinding::Unknown);
        };
        // What reads only the running lane's values, and not the thread's
        // place, is what the running lane computed.
        if !reads_place(value) && inputs.iter().all(|(_, i)| matches!(i, Input::Value(_) | Input::Unbound)) {
            return self.bind_all(target, LaneBinding::Same);
        }
        let Target::Name(n) = target else {
            // Unpacking (`tidx, _, _ = thread_idx()`): evaluated now.
            let values = self.compute(value, &inputs, lane);
            return self.bind_values(target, values);
        };
        let depth = inputs.iter().map(|(_, i)| if let Input::Deferred(d) = i { d.depth + 1 } else { 0 }).max().unwrap_or(0);
        let binding = if depth < MAX_DEFERRED_DEPTH {
            LaneBinding::Deferred(Rc::new(Deferred { expr: value, inputs, depth, value: Default::default() }))
        } else {
            match self.compute(value, &inputs, lane) {
                Some(values) => LaneBinding::Computed(values),
                None => LaneBinding::Unknown,
            }
        };
        self.bindings.insert(n.clone(), binding);
    }

    /// Binds the names of `target` to `values` (`None`: not known in the
    /// lanes), unpacked as `assign` unpacks them.
    pub fn bind_values(&mut self, target: &Target, values: Option<Rc<InLanes>>) {
        let Some(values) = values else {
            return self.bind_all(target, LaneBinding::Unknown);
        };
        if let Target::Name(n) = target {
            self.bindings.insert(n.clone(), LaneBinding::Computed(values));
            return;
        }
        // Each lane's value unpacked as `assign` unpacks it.
        let mut names = target.bound_names();
        names.sort();
        names.dedup();
        let lanes = match &*values {
            InLanes::All(_) => 1,
            InLanes::Each(vs) => vs.len(),
        };
        let mut unpacked: Vec<Vec<Value>> = vec![Vec::with_capacity(lanes); names.len()];
        for i in 0..lanes {
            let mut lane_env = Env::default();
            eval::assign(target, values.get(i).clone(), &mut lane_env);
            for (k, n) in names.iter().enumerate() {
                match lane_env.remove(n) {
                    Some(v) => unpacked[k].push(v),
                    None => return self.bind_all(target, LaneBinding::Unknown),
                }
            }
        }
        for (n, mut vs) in names.into_iter().zip(unpacked) {
            let values = match &*values {
                InLanes::All(_) => InLanes::All(vs.pop().expect("one lane")),
                InLanes::Each(_) => InLanes::of(vs),
            };
            self.bindings.insert(n, LaneBinding::Computed(Rc::new(values)));
        }
    }

    /// Binds the names of `target` to the running lane's values in every
    /// lane.
    pub fn bind_same(&mut self, target: &Target) {
        self.bind_all(target, LaneBinding::Same)
    }

    fn bind_all(&mut self, target: &Target, binding: LaneBinding<'k>) {
        for n in target.bound_names() {
            self.bindings.insert(n, binding.clone());
        }
    }

    /// The values of name `n` in the lanes (`None`: not known there), given
    /// its value `running` in the running lane.
    pub fn values_of(&self, n: &str, running: &Value, lane_dependent: &BTreeSet<String>, lane: LaneEvaluator<'_>) -> Option<Rc<InLanes>> {
        match self.bindings.get(n) {
            Some(LaneBinding::Computed(values)) => Some(values.clone()),
            Some(LaneBinding::Deferred(d)) => self.force(d, lane),
            Some(LaneBinding::Same) => Some(Rc::new(InLanes::All(running.clone()))),
            None if !lane_dependent.contains(n) => Some(Rc::new(InLanes::All(running.clone()))),
            _ => None,
        }
    }
}

/// Whether `e` reads where the thread is (a call the API table marks as
/// topology: `thread_idx`, `lane_idx`, ...), which differs between lanes
/// whatever the names it reads.
fn reads_place(e: &Expr) -> bool {
    let mut calls = Vec::new();
    e.calls(&mut calls);
    calls.iter().any(|c| Api::of_call(c).is_some_and(|api| matches!(api.effect(), Effect::Topology)))
}

/// The names `e` reads (attributes apart), or false when it reads an
/// attribute that can differ between lanes (`self.row = tidx` elsewhere).
fn names_read<'e>(e: &'e Expr, lane_dependent: &BTreeSet<String>, out: &mut Vec<&'e str>) -> bool {
    match e {
        Expr::Name(n) => {
            if !out.contains(&n.as_str()) {
                out.push(n);
            }
            true
        }
        Expr::Attr { base, .. } => {
            if e.dotted().is_some_and(|d| lane_dependent.contains(&d)) {
                return false;
            }
            names_read(base, lane_dependent, out)
        }
        Expr::Call(c) => {
            names_read(&c.func, lane_dependent, out)
                && c.args.iter().all(|a| names_read(a, lane_dependent, out))
                && c.kwargs.iter().all(|(_, a)| names_read(a, lane_dependent, out))
        }
        Expr::Binary { lhs, rhs, .. } | Expr::Compare { lhs, rhs, .. } | Expr::BoolOp { lhs, rhs, .. } => {
            names_read(lhs, lane_dependent, out) && names_read(rhs, lane_dependent, out)
        }
        Expr::Unary { operand, .. } => names_read(operand, lane_dependent, out),
        Expr::IfExp { cond, then, orelse } => {
            names_read(cond, lane_dependent, out) && names_read(then, lane_dependent, out) && names_read(orelse, lane_dependent, out)
        }
        Expr::Subscript { base, index } => names_read(base, lane_dependent, out) && names_read(index, lane_dependent, out),
        Expr::Tuple(items) => items.iter().all(|a| names_read(a, lane_dependent, out)),
        Expr::Int(_) | Expr::Float | Expr::Bool(_) | Expr::Str(_) | Expr::None | Expr::Unknown(_) => true,
    }
}

/// Evaluates an expression as a thread would, without its effects: the
/// thread-index calls answer for its place, names not bound are the
/// module's constants, views of buffers and calls the thread knows nothing
/// about give what they give the thread, so do API calls whose value it
/// takes as the same unknown whatever their operands (a load, inline PTX,
/// a shuffle: `opaque_result`), and any other call that could act (an API
/// call, a helper of the file, a method of an object) makes the evaluation
/// fail.
#[derive(Clone, Copy)]
pub(super) struct LaneEvaluator<'g> {
    pub place: Place,
    pub globals: &'g Env,
    pub functions: &'g super::functions::FunctionIndex<'g>,
    pub failed: bool,
}

impl CallHandler for LaneEvaluator<'_> {
    fn call(&mut self, call: &Call, func: &Value, args: Vec<Value>, kwargs: Vec<(String, Value)>, env: &Env) -> Value {
        let value = match Api::of_call(call) {
            Some(Api::IntCast | Api::ConstExpr | Api::Range) => eval::pure_call(call, &args, &kwargs),
            Some(Api::MakeWarpUniform) => args.into_iter().next(),
            Some(api) => self.place.index(api).or_else(|| super::calls::opaque_result(api)),
            None => self.effect_free_call(call, func, &args, &kwargs, env),
        };
        value.unwrap_or_else(|| {
            self.failed = true;
            Value::unknown("a call another lane would make")
        })
    }

    fn unbound(&mut self, name: &String) -> Value {
        self.globals.get(name).cloned().unwrap_or_else(|| Value::unknown(format!("`{name}`")))
    }
}

impl LaneEvaluator<'_> {
    /// A call outside the API table, as `ThreadRun::call` takes it when it
    /// has no effect: a view of a buffer (`cute.local_tile(gX, tile,
    /// (lane,))`, `thr.partition_S(sA)`), a pure function of known values,
    /// or else the value the thread keeps for what it does not know (the
    /// same whatever the arguments). `None` where the thread would inline a
    /// helper, call a method, allocate or convert a pointer.
    fn effect_free_call(&mut self, call: &Call, func: &Value, args: &[Value], kwargs: &[(String, Value)], env: &Env) -> Option<Value> {
        if matches!(func, Value::Function { .. }) {
            return None;
        }
        match &call.func {
            _ if super::memory::is_generic_copy(call) => return None,
            Expr::Name(n) if self.functions.get(None, n).is_some() => return None,
            Expr::Name(n) => {
                if let Some(view) = super::memory::view_call(n, None, args) {
                    return Some(view);
                }
            }
            Expr::Attr { base, attr } => {
                if matches!(base.as_ref(), Expr::Name(b) if b == "self") || attr.starts_with("alloc") || attr.starts_with("sync_object") {
                    return None;
                }
                let base_value = eval(base, env, self);
                let receiver = Some(&base_value).filter(|v| base.is_dotted() && matches!(v, Value::Smem(_) | Value::Gmem(_)));
                if call.func.is_dotted() {
                    if let Some(view) = super::memory::view_call(attr, receiver, args) {
                        return Some(view);
                    }
                }
                // Conversions keep the pointer or number they convert, as
                // a thread takes them (`ptr.toint()`, `Int32(v).ir_value()`);
                // other methods of pointers and numbers are not followed.
                let converts = match &base_value {
                    Value::Gmem(_) | Value::Int(_) => matches!(attr.as_str(), "toint" | "ir_value" | "to_llvm_ptr" | "llvm_ptr" | "raw_ptr"),
                    Value::Smem(_) => matches!(attr.as_str(), "data_ptr" | "iterator" | "to_llvm_ptr" | "align" | "toint" | "ir_value" | "raw_ptr"),
                    _ => false,
                };
                if converts {
                    return Some(base_value);
                }
                if matches!(base_value, Value::Smem(_) | Value::Gmem(_) | Value::Int(_)) {
                    return None;
                }
            }
            _ => {}
        }
        match eval::pure_call(call, args, kwargs) {
            // An MMA atom: the thread adjusts it to the cluster.
            Some(Value::Object(_)) => None,
            Some(v) => Some(v),
            None => Some(Value::unknown(format!("`{}(...)`", call.func.dotted().unwrap_or_else(|| "call".to_string())))),
        }
    }
}
