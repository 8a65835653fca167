//! The checkable model of a kernel: one cluster of CTAs, each thread a
//! straight-line sequence of synchronization operations, threads with equal
//! sequences grouped (they are interchangeable, which the explorer exploits).

use cute_syntax::TextRange;

pub type BarrierIx = u32;

/// What kind of object a barrier is. CTA barriers (`sync_threads`), named
/// barriers and the cluster barrier are modelled as mbarriers that are
/// initialised before the kernel starts, with one arrival per participant
/// and a generation bit as phase.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BarrierKind {
    Mbarrier,
    CtaBarrier,
    NamedBarrier(i64),
    ClusterBarrier,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Barrier {
    /// How the user's code names it (`gate`, `full + 1`), for messages.
    pub name: String,
    pub cta: u32,
    pub kind: BarrierKind,
    /// Expected arrivals per phase for barriers initialised before the
    /// kernel runs (CTA, named and cluster barriers); mbarriers get theirs
    /// from an `Init` operation.
    pub preset_count: Option<u32>,
}

impl Barrier {
    pub fn display(&self, ctas: u32) -> String {
        match self.kind {
            BarrierKind::ClusterBarrier => "the cluster barrier".to_string(),
            BarrierKind::CtaBarrier if ctas > 1 => format!("the CTA barrier of CTA {}", self.cta),
            BarrierKind::CtaBarrier => "the CTA barrier".to_string(),
            _ if ctas > 1 => format!("`{}` of CTA {}", self.name, self.cta),
            _ => format!("`{}`", self.name),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `mbarrier_init(bar, count)`.
    Init { bar: BarrierIx, count: u32 },
    /// One arrival of `count` on `bar` (local or remote).
    Arrive { bar: BarrierIx, count: u32 },
    /// Block while the current phase parity of `bar` equals `parity`.
    Wait { bar: BarrierIx, parity: u8 },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Op {
    pub kind: OpKind,
    /// The call in the user's code.
    pub site: TextRange,
}

/// Threads that run the same sequence of operations. In code where a warp
/// runs converged, its lane 0 acts for the whole warp (its arrivals count
/// once per lane) and the other lanes have no operations of their own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Group {
    pub ops: Vec<Op>,
    /// (cta, thread index within the CTA), ascending.
    pub threads: Vec<(u32, u32)>,
}

impl Group {
    pub fn size(&self) -> u32 {
        self.threads.len() as u32
    }

    /// "CTA 0, threads 1..127" / "thread 0 of CTA 1" / "threads 0, 32, 64 of CTA 0".
    pub fn describe(&self, ctas: u32) -> String {
        describe_threads(&self.threads, ctas)
    }
}

/// Threads of one cluster, for messages. Lane 0 of a warp stands for its
/// whole warp in converged code, so it is named as the warp.
pub fn describe_threads(threads: &[(u32, u32)], ctas: u32) -> String {
    let mut parts = Vec::new();
    let mut by_cta: std::collections::BTreeMap<u32, (Vec<u32>, Vec<u32>)> = Default::default();
    for &(c, t) in threads {
        let entry = by_cta.entry(c).or_default();
        if t % 32 == 0 {
            entry.0.push(t / 32);
        } else {
            entry.1.push(t);
        }
    }
    for (cta, (warps, lanes)) in by_cta {
        let mut who = Vec::new();
        if !warps.is_empty() {
            who.push(if warps.len() == 1 { format!("warp {}", ranges(&warps)) } else { format!("warps {}", ranges(&warps)) });
        }
        if !lanes.is_empty() {
            who.push(if lanes.len() == 1 { format!("thread {}", ranges(&lanes)) } else { format!("threads {}", ranges(&lanes)) });
        }
        let who = who.join(" and ");
        parts.push(if ctas > 1 { format!("{who} of CTA {cta}") } else { who });
    }
    parts.join(", ")
}

fn ranges(ids: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(if j > i { format!("{}..{}", ids[i], ids[j]) } else { ids[i].to_string() });
        i = j + 1;
    }
    if out.len() > 4 {
        let n = out.len();
        format!("{}, ... ({} ranges)", out[..3].join(", "), n)
    } else {
        out.join(", ")
    }
}

/// Something the model could not resolve, which stops the check of the
/// kernel. `what` is the reason as a clause ("the parity passed to this
/// `mbarrier_wait` is not known statically").
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unresolved {
    pub site: TextRange,
    pub what: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Model {
    pub kernel: String,
    pub ctas: u32,
    pub threads_per_cta: u32,
    pub barriers: Vec<Barrier>,
    pub groups: Vec<Group>,
    /// Assumptions the verdict rests on (launch shape, loop bounds, ...).
    pub assumptions: Vec<String>,
    /// Whether some loop was cut at a bound (the verdict is bounded).
    pub bounded: bool,
    /// Values the synchronization depends on that could not be resolved.
    pub unresolved: Vec<Unresolved>,
    /// Warp-collective operations reached by part of a warp only: (site,
    /// what, who) — a TMA or bulk `cute.copy` (which elects a lane itself)
    /// under `elect_one` or a lane test, `elect_one` inside `elect_one`,
    /// `sync_warp` inside a branch that splits the warp.
    pub partial_warp_collectives: Vec<(TextRange, String, String)>,
}

impl Model {
    /// The same model with every operation's source range replaced by its
    /// rank among the model's distinct ranges, and without the notes that
    /// mention positions: what exploration depends on, and nothing that
    /// moves when lines are inserted above the kernel. Returns the sites
    /// table to map ranks back.
    pub fn position_independent(&self) -> (Model, Vec<TextRange>) {
        let mut sites: Vec<TextRange> = self.groups.iter().flat_map(|g| g.ops.iter().map(|o| o.site)).collect();
        sites.sort();
        sites.dedup();
        let rank = |r: TextRange| {
            let i = sites.binary_search(&r).expect("every site is in the table") as u32;
            TextRange { start: i, end: i }
        };
        let groups = self
            .groups
            .iter()
            .map(|g| Group {
                ops: g.ops.iter().map(|o| Op { kind: o.kind.clone(), site: rank(o.site) }).collect(),
                threads: g.threads.clone(),
            })
            .collect();
        let model = Model {
            kernel: String::new(),
            ctas: self.ctas,
            threads_per_cta: self.threads_per_cta,
            barriers: self.barriers.clone(),
            groups,
            assumptions: Vec::new(),
            bounded: self.bounded,
            unresolved: Vec::new(),
            partial_warp_collectives: Vec::new(),
        };
        (model, sites)
    }

    pub fn thread_count(&self) -> u32 {
        self.groups.iter().map(Group::size).sum()
    }

    pub fn op_count(&self) -> usize {
        self.groups.iter().map(|g| g.ops.len()).sum()
    }
}
