//! Loops whose trip count is not known statically: explored for
//! `InstantiateOptions::unknown_trip_count` iterations (3), and the verdict
//! says it is bounded.
//!
//! Every unknown count is taken to be that same number, and a bound that is
//! such a count minus or plus a constant (`range(k_tiles - 1)`) that many fewer
//! or more, so loops over `n` and `n - 1` keep the difference the code has (a
//! consumer that waits once before its loop and once per iteration of it); a
//! count bounded by a known one (`range(min(stages, n))`) runs no more than
//! that bound (`trip_bound.rs`).
//!
//! A name the kernel's loops run up to (`k_tiles = cute.size(gA, mode=[3])`, or
//! a kernel argument) takes that count of three itself, so that the rest of the
//! kernel agrees with its loops (`state.count < k_tiles` refills exactly the
//! tiles the consumer takes). Not when lanes may compute it differently (the
//! extent of a thread's own slice, `cute.size(tCrA, mode=[2])`, is the same in
//! every lane), nor when the kernel compares it with the thread index
//! (`if tidx < num_bins:` decides which threads take part, and three would be a
//! launch no caller makes). A count so taken makes a finding a warning with the
//! assumption stated, and a clean verdict an `analysis-incomplete` note.
//!
//! A `while` loop that counts a name down (`while k_tile_count > 0:`, the name
//! bound to an unknown count) takes that count the same way: the name, and its
//! copies and offsets (`identity.rs`), become the count that runs the loop the
//! iterations explored when the body takes one from it each time, so the
//! tests in the loop (`if k_tile_count == 0:` after the decrement, on the last
//! tile) are those of a run with that many tiles rather than decided apart.
//!
//! The iterations explored are the loop's first ones. Where the loop's start
//! and step are known (`range(n)`, `cutlass.range(1, n, 2)`), so is its counter
//! in them (`if k == 0:` holds in the first alone), and, in the loop, a call
//! written as its stop has the value those iterations give it
//! (`if idx == cute.size(t, mode=[1]) - 1:` holds in the last one explored of
//! `for idx in cutlass.range(cute.size(t, mode=[1]))`). Otherwise a condition
//! on the counter of such a loop is decided alike in every iteration of a
//! scenario, which no run does: findings that need it are not reported, and the
//! kernel is "checked only in part".

use cute_ir::api::Api;
use cute_ir::ast::{BinOp, Call, CmpOp, Expr, Target};
use cute_ir::eval::{eval, Env, Value};

use super::{trip_bound, InstantiateOptions, ThreadRun, UNKNOWN_LOOP_COUNTER};

pub(super) fn count_taken_note(name: &str, options: &InstantiateOptions) -> String {
    format!(
        "`{name}` is not known statically: it is taken as {}, the iterations a loop of unknown length is explored for",
        options.unknown_trip_count
    )
}

/// The call a range's stop is, less or plus a constant (`range(cute.size(t)
/// - 1)`), and that constant (`-1`).
pub(super) fn stop_call(iter: &Expr) -> Option<(&Call, i64)> {
    match stop_of(iter)? {
        (Expr::Call(call), offset) => Some((call, offset)),
        _ => None,
    }
}

/// The name a range's stop is, less or plus a constant (`range(n - 1)`),
/// and that constant.
pub(super) fn stop_name(iter: &Expr) -> Option<(&str, i64)> {
    match stop_of(iter)? {
        (Expr::Name(name), offset) => Some((name.as_str(), offset)),
        _ => None,
    }
}

/// A range's stop less or plus constants: the expression and the constant.
fn stop_of(iter: &Expr) -> Option<(&Expr, i64)> {
    let Expr::Call(range) = iter else { return None };
    let mut stop = match range.args.as_slice() {
        [stop] | [_, stop] | [_, stop, _] => stop,
        _ => return None,
    };
    let mut offset = 0;
    loop {
        match stop {
            Expr::Binary { op: op @ (BinOp::Add | BinOp::Sub), lhs, rhs } => {
                let Expr::Int(c) = **rhs else { return None };
                offset += if *op == BinOp::Add { c } else { -c };
                stop = lhs;
            }
            other => return Some((other, offset)),
        }
    }
}

impl<'a> ThreadRun<'a> {
    /// The values of a loop's target in the iterations a loop over `iter`,
    /// whose trip count is not known (it evaluated to `it`), is explored for,
    /// and whether the loop's stop was then pushed onto `known_stops`.
    /// The verdict becomes a bounded one.
    pub(super) fn explored_iterations(&mut self, iter: &'a Expr, it: &Value, env: &Env) -> (Vec<Value>, bool) {
        let mut stop_known = false;
        self.shared.bounded = true;
        let why = match it { Value::Unknown(w, _) => w.to_string(), _ => "the loop's trip count".to_string() };
        self.shared.notes.insert(format!(
            "{why} is not known statically: the loop is explored for {} iterations",
            self.options.unknown_trip_count
        ));
        let mut trips = match self.trips_off_the_unknown_count(iter, env) {
            Some(offset) if offset != 0 => {
                self.shared.notes.insert(
                    "a loop whose bound is an unknown count minus or plus a constant (`range(n - 1)`) is explored for that many fewer or more iterations"
                        .to_string(),
                );
                (self.options.unknown_trip_count as i64 + offset).max(0) as usize
            }
            _ => self.options.unknown_trip_count as usize,
        };
        if let Some(bound) = self.known_bound_on_trips(iter, env).filter(|&b| b < trips) {
            self.shared.notes.insert(
                "a loop whose unknown trip count is bounded by a known one (`range(min(stages, n))`) is explored for no more iterations than that bound"
                    .to_string(),
            );
            trips = bound;
        }
        // The iterations explored are the loop's first: where it
        // starts and steps is known, so is its counter in them
        // (`if k == 0:` holds in the first alone), and so is its
        // stop, as far as they go.
        let values = match self.known_start_and_step(iter, env) {
            Some((start, step)) => {
                let trips = trips as i64;
                if let Some((stop, offset)) = stop_call(iter) {
                    self.known_stops.push((stop, self.inline_depth, Value::Int(start + trips * step - offset)));
                    stop_known = true;
                }
                (0..trips).map(|k| Value::Int(start + k * step)).collect()
            }
            None => (0..trips).map(|_| Value::unknown(UNKNOWN_LOOP_COUNTER)).collect(),
        };
        (values, stop_known)
    }

    /// A name the loop over `iter` runs up to (`for i in range(n):`) that is
    /// not known statically, and the value it has in the `trips` iterations
    /// explored: they are the loop's first, so where its start and step are
    /// known, the stop is where they end (`if i == n - 1:` holds in the last
    /// one explored). In the loop alone: after it, the name is as unknown
    /// as before (a helper's `subtile_cnt = cute.size(...)`; a kernel's own
    /// counts are taken as explored throughout, see
    /// [`Self::take_unknown_count_as_explored`]).
    pub(super) fn stop_name_in_loop(&mut self, iter: &'a Expr, trips: usize, env: &Env) -> Option<(&'a str, Value)> {
        let (name, offset) = stop_name(iter)?;
        if !env.get(name).is_some_and(Value::is_unknown) || self.lane_varying.contains(name) {
            return None;
        }
        let (start, step) = self.known_start_and_step(iter, env)?;
        Some((name, Value::Int(start + trips as i64 * step - offset)))
    }

    /// For `range(stop)` / `range(start, stop)` (`cutlass.range` too) whose
    /// stop is an unknown count plus or minus constants (`k_tiles - 1`) and
    /// whose start is a known integer: the iterations it runs beyond or
    /// short of the unknown count. Every unknown count is explored as the
    /// same number, so loops over `k_tiles` and over `k_tiles - 1` (a
    /// consumer that waits once before its loop and once per iteration of
    /// it) keep the difference the code has.
    pub(super) fn trips_off_the_unknown_count(&mut self, iter: &Expr, env: &Env) -> Option<i64> {
        let Expr::Call(call) = iter else { return None };
        if call.dotted_name()? != "range" || call.args.len() > 3 || call.args.is_empty() {
            return None;
        }
        if let Some(step) = call.args.get(2) {
            if eval(step, env, self).as_int() != Some(1) {
                return None;
            }
        }
        let (start, stop) = match call.args.as_slice() {
            [stop] => (0, stop),
            [start, stop, ..] => (eval(start, env, self).as_int()?, stop),
            _ => return None,
        };
        let mut offset = 0i64;
        let mut base = stop;
        loop {
            match base {
                Expr::Binary { op: BinOp::Add, lhs, rhs } if matches!(**rhs, Expr::Int(_)) => {
                    let Expr::Int(c) = **rhs else { unreachable!() };
                    offset += c;
                    base = lhs;
                }
                Expr::Binary { op: BinOp::Sub, lhs, rhs } if matches!(**rhs, Expr::Int(_)) => {
                    let Expr::Int(c) = **rhs else { unreachable!() };
                    offset -= c;
                    base = lhs;
                }
                _ => break,
            }
        }
        matches!(eval(base, env, self), Value::Unknown(..)).then_some(offset - start)
    }

    /// A known bound on the trips of a kernel loop over `iter` whose trip
    /// count is not known (see [`trip_bound`]). None in helpers (their
    /// names are not the kernel's), and where the bound may differ between
    /// the lanes a lane stands in for.
    pub(super) fn known_bound_on_trips(&mut self, iter: &Expr, env: &Env) -> Option<usize> {
        if self.inline_depth > 0 || (self.stands_in() && self.varies_here(iter)) {
            return None;
        }
        let definitions = self.definitions;
        trip_bound::loop_bound(iter, definitions, env, self).map(|b| b as usize)
    }

    /// Where a range whose stop is not known starts and how it steps, when
    /// those are (`range(n)`, `cutlass.range(1, n, 2, unroll=1)`).
    pub(super) fn known_start_and_step(&mut self, iter: &Expr, env: &Env) -> Option<(i64, i64)> {
        let Expr::Call(call) = iter else { return None };
        if Api::of_call(call) != Some(Api::Range) {
            return None;
        }
        let mut int = |e: &Expr| eval(e, env, self).as_int();
        match call.args.as_slice() {
            [_] => Some((0, 1)),
            [start, _] => Some((int(start)?, 1)),
            [start, _, step] => Some((int(start)?, int(step)?)).filter(|&(_, step)| step != 0),
            _ => None,
        }
    }

    /// `k_tiles = cute.size(...)`, not known statically, where `k_tiles` is
    /// a bound of the kernel's loops: it takes the count a loop of unknown
    /// length is explored for (see [`trip_bound::loop_bound_names`]), and
    /// the verdict is a bounded one.
    pub(super) fn take_unknown_count_as_explored(&mut self, targets: &[Target], value: &Expr, v: &mut Value, env: &Env) {
        let [Target::Name(name)] = targets else { return };
        // Not where lanes may compute it differently: every lane must take
        // the same count, whether it stands in for others or not, and a
        // branch on it must not be taken to split the warp.
        if !v.is_unknown() || !self.loop_bounds.contains(name) || self.lane_varying.contains(name) || self.varies_here(value) {
            return;
        }
        // A count bounded by a known one (`min(stages, k_tiles)`) is no
        // larger.
        let definitions = self.definitions;
        let explored = i64::from(self.options.unknown_trip_count);
        let bound = trip_bound::at_most(value, definitions, env, self).map_or(explored, |b| b.clamp(0, explored));
        *v = Value::Int(bound);
        self.shared.bounded = true;
        self.shared.notes.insert(count_taken_note(name, self.options));
    }

    /// `while n > 0:` (`n != 0`, `n >= 1`, `0 < n`) where `n` holds an
    /// unknown value bound in this thread: every value of this frame that is
    /// it or an offset of it becomes known, with `n` the explored count
    /// above the bound. Whether it did; the verdict is then a bounded one.
    pub(super) fn take_counted_down_as_explored(&mut self, cond: &Expr, env: &mut Env) -> bool {
        let Expr::Compare { op, lhs, rhs } = cond else { return false };
        let (name, op, bound) = match (lhs.as_ref(), *op, rhs.as_ref()) {
            (Expr::Name(n), op, Expr::Int(c)) => (n, op, *c),
            (Expr::Int(c), CmpOp::Lt, Expr::Name(n)) => (n, CmpOp::Gt, *c),
            (Expr::Int(c), CmpOp::Ne, Expr::Name(n)) => (n, CmpOp::Ne, *c),
            _ => return false,
        };
        let explored = i64::from(self.options.unknown_trip_count);
        let start = match op {
            CmpOp::Gt | CmpOp::Ne => bound.checked_add(explored),
            CmpOp::Ge => bound.checked_add(explored - 1),
            _ => return false,
        };
        let Some(start) = start else { return false };
        let Some(Value::Unknown(_, identity)) = env.get(name.as_str()) else { return false };
        if !identity.is_known() || self.lane_varying.contains(name.as_str()) || self.varies_here(lhs) || self.varies_here(rhs) {
            return false;
        }
        let counted = *identity;
        for value in env.values_mut() {
            if let Value::Unknown(_, other) = value {
                if let Some(known) = other.offset_from(counted).and_then(|offset| start.checked_add(offset)) {
                    *value = Value::Int(known);
                }
            }
        }
        self.shared.bounded = true;
        self.shared.notes.insert(count_taken_note(name, self.options));
        true
    }
}
