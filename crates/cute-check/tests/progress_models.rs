//! The verdicts `cute_check::progress` gives each shape of inter-CTA wait
//! under the OBE, LOBE and HSA progress models (`WaitShape::terminates`),
//! checked against the termination oracle of Sorensen et al., "Specifying
//! and Testing GPU Workgroup Progress Models" (OOPSLA 2021): programs of
//! `AXB` instructions (`pc = mem[loc] == val ? jump : pc + 1`, then
//! `mem[loc] = exch` when it exchanges), each progress model a function from
//! its state to the set of threads it treats fairly, and under weak fairness
//! a program fails to terminate iff a reachable cycle of steps has every
//! thread of its (constant) fair set step in it.
//!
//! The models are those of the paper, without an occupancy bound: a thread
//! that has not taken a step is not sure to start, which is the case of a
//! grid that exceeds what fits at once. Each shape is written for three or
//! four CTAs (threads here), by block index.

use std::collections::{BTreeSet, HashMap, HashSet};

use cute_check::progress::{ProgressModel, WaitShape};

#[derive(Clone, Copy)]
struct Axb {
    loc: usize,
    val: u8,
    jump: usize,
    exch: Option<u8>,
}

/// `while mem[loc] == 0: pass` at `pc`.
fn spin(loc: usize, pc: usize) -> Axb {
    Axb { loc, val: 0, jump: pc, exch: None }
}

/// `mem[loc] = 1` at `pc`.
fn set(loc: usize, pc: usize) -> Axb {
    Axb { loc, val: 0, jump: pc + 1, exch: Some(1) }
}

/// The state of a progress model: the fair set, the lowest unfinished
/// thread, the finished threads.
#[derive(Clone, PartialEq, Eq, Hash)]
struct ModelState {
    fair: BTreeSet<usize>,
    lowest: usize,
    done: BTreeSet<usize>,
}

fn fair(model: ProgressModel, s: &ModelState) -> BTreeSet<usize> {
    match model {
        ProgressModel::Hsa => [s.lowest].into_iter().collect(),
        _ => s.fair.clone(),
    }
}

fn after_step(model: ProgressModel, s: &ModelState, t: usize) -> ModelState {
    let mut s = s.clone();
    match model {
        ProgressModel::Obe => {
            s.fair.insert(t);
        }
        ProgressModel::Lobe => s.fair.extend((0..=t).filter(|u| !s.done.contains(u))),
        ProgressModel::Hsa => {}
    }
    s
}

fn after_end(s: &ModelState, t: usize) -> ModelState {
    let mut s = s.clone();
    s.fair.remove(&t);
    s.done.insert(t);
    while s.done.contains(&s.lowest) {
        s.lowest += 1;
    }
    s
}

type State = (Vec<u8>, Vec<usize>, BTreeSet<usize>, ModelState);

/// Whether `progs` terminates under `model`, with weak fairness.
fn terminates(progs: &[Vec<Axb>], model: ProgressModel) -> bool {
    let n = progs.len();
    let locs = progs.iter().flatten().map(|i| i.loc + 1).max().unwrap_or(0);
    let init: State = (vec![0; locs], vec![0; n], BTreeSet::new(), ModelState { fair: BTreeSet::new(), lowest: 0, done: BTreeSet::new() });
    // Step edges only (a cycle holds no thread's end): (thread, fair set, next).
    let mut steps: HashMap<State, Vec<(usize, BTreeSet<usize>, State)>> = HashMap::new();
    let mut seen: HashSet<State> = [init.clone()].into_iter().collect();
    let mut todo = vec![init];
    while let Some(s) = todo.pop() {
        let (mem, pcs, ended, ms) = &s;
        let f = fair(model, ms);
        let mut out = Vec::new();
        for t in (0..n).filter(|t| !ended.contains(t)) {
            let next = if pcs[t] >= progs[t].len() {
                let mut ended = ended.clone();
                ended.insert(t);
                (mem.clone(), pcs.clone(), ended, after_end(ms, t))
            } else {
                let i = progs[t][pcs[t]];
                let (mut mem, mut pcs) = (mem.clone(), pcs.clone());
                pcs[t] = if mem[i.loc] == i.val { i.jump } else { pcs[t] + 1 };
                if let Some(x) = i.exch {
                    mem[i.loc] = x;
                }
                let next = (mem, pcs, ended.clone(), after_step(model, ms, t));
                out.push((t, f.clone(), next.clone()));
                next
            };
            if seen.insert(next.clone()) {
                todo.push(next);
            }
        }
        steps.insert(s, out);
    }
    // Strongly connected components of the step graph (Tarjan, iterative).
    let nodes: Vec<State> = seen.into_iter().collect();
    let index_of: HashMap<&State, usize> = nodes.iter().enumerate().map(|(i, s)| (s, i)).collect();
    let succ: Vec<Vec<(usize, usize, BTreeSet<usize>)>> =
        nodes.iter().map(|s| steps[s].iter().map(|(t, f, n)| (index_of[n], *t, f.clone())).collect()).collect();
    let comp = sccs(&succ);
    let comp = &comp;
    for members in group(comp) {
        let inner: Vec<(usize, &BTreeSet<usize>)> = members
            .iter()
            .flat_map(|&v| succ[v].iter().filter(move |(w, _, _)| comp[*w] == comp[v]).map(|(_, t, f)| (*t, f)))
            .collect();
        let Some((_, f)) = inner.first() else { continue };
        let steppers: BTreeSet<usize> = inner.iter().map(|(t, _)| *t).collect();
        if f.is_subset(&steppers) {
            return false;
        }
    }
    true
}

fn group(comp: &[usize]) -> Vec<Vec<usize>> {
    let mut by: HashMap<usize, Vec<usize>> = HashMap::new();
    for (v, c) in comp.iter().enumerate() {
        by.entry(*c).or_default().push(v);
    }
    by.into_values().collect()
}

fn sccs(succ: &[Vec<(usize, usize, BTreeSet<usize>)>]) -> Vec<usize> {
    let n = succ.len();
    let (mut index, mut low, mut comp) = (vec![usize::MAX; n], vec![0; n], vec![usize::MAX; n]);
    let (mut stack, mut on) = (Vec::new(), vec![false; n]);
    let (mut next, mut comps) = (0, 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut call = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on[root] = true;
        while let Some(&mut (v, ref mut i)) = call.last_mut() {
            if *i < succ[v].len() {
                let w = succ[v][*i].0;
                *i += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on[w] = true;
                    call.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    loop {
                        let w = stack.pop().expect("on the stack");
                        on[w] = false;
                        comp[w] = comps;
                        if w == v {
                            break;
                        }
                    }
                    comps += 1;
                }
            }
        }
    }
    comp
}

/// Flags `f[i]` are locations `i`.
fn chain_on_earlier(n: usize) -> Vec<Vec<Axb>> {
    (0..n).map(|i| if i == 0 { vec![set(0, 0)] } else { vec![spin(i - 1, 0), set(i, 1)] }).collect()
}

fn chain_on_later(n: usize) -> Vec<Vec<Axb>> {
    (0..n).map(|i| if i == n - 1 { vec![set(i, 0)] } else { vec![spin(i + 1, 0), set(i, 1)] }).collect()
}

/// Each CTA raises its flag, then waits for every other's.
fn grid_barrier(n: usize) -> Vec<Vec<Axb>> {
    (0..n)
        .map(|i| {
            let mut p = vec![set(i, 0)];
            for j in (0..n).filter(|&j| j != i) {
                let pc = p.len();
                p.push(spin(j, pc));
            }
            p
        })
        .collect()
}

fn check(shape: WaitShape, progs: &[Vec<Axb>]) {
    for model in ProgressModel::ALL {
        assert_eq!(Some(terminates(progs, model)), shape.terminates(model), "{shape:?} under {}", model.name());
    }
}

#[test]
fn the_oracle_gives_the_paper_s_verdicts() {
    // Fig. 3: T0 stores the flag, T1 spins on it (one-way producer-consumer,
    // increasing id): T0 may never start under OBE; HSA and LOBE run it.
    let prodcons = vec![vec![set(0, 0)], vec![spin(0, 0)]];
    assert!(!terminates(&prodcons, ProgressModel::Obe));
    assert!(terminates(&prodcons, ProgressModel::Hsa));
    assert!(terminates(&prodcons, ProgressModel::Lobe));
    // Fig. 8: the same with decreasing id: T0 spins, T1 stores.
    let decreasing = vec![vec![spin(0, 0)], vec![set(0, 0)]];
    assert!(!terminates(&decreasing, ProgressModel::Obe));
    assert!(!terminates(&decreasing, ProgressModel::Hsa));
    assert!(!terminates(&decreasing, ProgressModel::Lobe));
}

#[test]
fn shapes_get_the_oracle_s_verdicts() {
    for n in [2, 3, 4] {
        check(WaitShape::Earlier, &chain_on_earlier(n));
        check(WaitShape::Later, &chain_on_later(n));
        check(WaitShape::AllToAll, &grid_barrier(n));
    }
}

/// One test of the suite of Sorensen et al. (`<n>_simple.txt`), as `AXB`
/// programs: `Mem[x] = v;`, `if (Mem[x] == v) goto j;`, `if
/// (Exch(Mem[x],e) == v) goto j;` (`goto END`: past the last instruction).
fn parse_litmus(text: &str) -> Option<Vec<Vec<Axb>>> {
    let mut progs: Vec<Vec<Axb>> = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("THREAD") {
            progs.push(Vec::new());
            continue;
        }
        let prog = progs.last_mut()?;
        let (pc, rest) = line.split_once(": ")?;
        let pc: usize = pc.parse().ok()?;
        let num = |s: &str| s.trim().parse::<usize>().ok();
        let mem = |s: &str| num(s.trim().strip_prefix("Mem[")?.strip_suffix(']')?);
        let i = if let Some(store) = rest.strip_suffix(';').filter(|r| !r.starts_with("if")) {
            let (loc, v) = store.split_once(" = ")?;
            Axb { loc: mem(loc)?, val: 0, jump: pc + 1, exch: Some(num(v)? as u8) }
        } else {
            let cond = rest.strip_prefix("if (")?;
            let (cond, target) = cond.split_once(") goto ")?;
            let target = target.strip_suffix(';')?;
            let (lhs, v) = cond.rsplit_once(" == ")?;
            let jump = if target == "END" { usize::MAX } else { num(target)? };
            let (loc, exch) = match lhs.strip_prefix("Exch(") {
                Some(e) => {
                    let (loc, e) = e.strip_suffix(')')?.split_once(',')?;
                    (mem(loc)?, Some(num(e)? as u8))
                }
                None => (mem(lhs)?, None),
            };
            Axb { loc, val: num(v)? as u8, jump, exch }
        };
        prog.push(i);
    }
    for p in &mut progs {
        let len = p.len();
        p.iter_mut().filter(|i| i.jump == usize::MAX).for_each(|i| i.jump = len);
    }
    Some(progs)
}

/// The shape of each wait of a litmus test in cute-lsp's terms, when every
/// wait is a spin on a flag (`if (Mem[x] == v) goto` itself) that exactly
/// one other thread writes, only ever with values that end the wait, and no
/// thread exchanges: a wait on a thread chosen by static index, earlier or
/// later. `None` for the tests that are not (locks, exchanges, flags
/// written back).
fn shapes(progs: &[Vec<Axb>]) -> Option<Vec<WaitShape>> {
    let mut out = Vec::new();
    for (t, p) in progs.iter().enumerate() {
        for (pc, i) in p.iter().enumerate() {
            if i.exch.is_some() && i.jump != pc + 1 {
                return None;
            }
            if i.exch.is_some() {
                continue;
            }
            if i.jump != pc {
                return None;
            }
            let writers: Vec<(usize, u8)> =
                progs.iter().enumerate().flat_map(|(u, q)| q.iter().filter(|w| w.loc == i.loc).filter_map(move |w| w.exch.map(|v| (u, v)))).collect();
            let setters: BTreeSet<usize> = writers.iter().map(|(u, _)| *u).collect();
            if setters.len() != 1 || setters.contains(&t) || writers.iter().any(|(_, v)| *v == i.val) {
                return None;
            }
            let setter = *setters.iter().next().expect("one");
            out.push(if setter > t { WaitShape::Later } else { WaitShape::Earlier });
        }
    }
    Some(out)
}

/// The suite of 483 progress litmus tests of Sorensen et al.
/// (`github.com/tyler-utah/AlloyForwardProgress`, its `artifact/cadp`
/// directory, given by `ALLOY_FORWARD_PROGRESS`), against the verdicts its
/// CADP runs give (`alloy_output_processed/csv/<MODEL>_results.csv`, weak
/// fairness): the oracle above must agree on every test, and the shapes
/// cute-lsp names must agree wherever they apply. Run with `cargo test -p
/// cute-check --test progress_models -- --ignored` and the variable set.
#[test]
#[ignore = "needs a checkout of the suite, named by ALLOY_FORWARD_PROGRESS"]
fn the_litmus_suite() {
    let dir = std::path::PathBuf::from(std::env::var("ALLOY_FORWARD_PROGRESS").expect("ALLOY_FORWARD_PROGRESS: the suite's artifact/cadp directory"));
    let mut tests = 0;
    let mut report = Vec::new();
    for model in ProgressModel::ALL {
        let (mut oracle_agrees, mut classified, mut shapes_agree) = (0, 0, 0);
        let mut disagreements = Vec::new();
        let mut sizes: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("alloy_output").is_dir()).collect();
        sizes.sort();
        tests = 0;
        for size in &sizes {
            let csv = std::fs::read_to_string(size.join(format!("alloy_output_processed/csv/{}_results.csv", model.name()))).unwrap();
            for row in csv.lines().skip(1) {
                let cols: Vec<&str> = row.split(',').collect();
                let (Some(name), Some(verdict)) = (cols.first(), cols.get(1)) else { continue };
                let expected = match *verdict {
                    "P" => true,
                    "F" => false,
                    _ => continue,
                };
                let text = std::fs::read_to_string(size.join(format!("alloy_output/{name}/{name}_simple.txt"))).unwrap();
                let progs = parse_litmus(&text).unwrap_or_else(|| panic!("{}/{name}: not read", size.display()));
                tests += 1;
                if terminates(&progs, model) == expected {
                    oracle_agrees += 1;
                } else {
                    disagreements.push(format!("oracle {}/{name}", size.display()));
                }
                if let Some(shapes) = shapes(&progs) {
                    classified += 1;
                    let predicted = shapes.iter().all(|s| s.terminates(model) == Some(true));
                    if predicted == expected {
                        shapes_agree += 1;
                    } else {
                        disagreements.push(format!("shapes {shapes:?} {}/{name}", size.display()));
                    }
                }
            }
        }
        report.push(format!(
            "{}: the oracle agrees on {oracle_agrees} of {tests}; {classified} tests are waits by static index, whose shapes agree on {shapes_agree}",
            model.name()
        ));
        assert!(disagreements.is_empty(), "{}: {disagreements:#?}", model.name());
    }
    assert_eq!(tests, 483);
    println!("{}", report.join("\n"));
}
