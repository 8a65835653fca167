//! Which CTAs of a cluster the signals of a Blackwell pipeline reach, as the
//! installed package computes them (`cutlass/pipeline/sm100.py`) from the
//! pipeline's `cta_layout_vmnk`.
//!
//! The layout numbers the CTAs of the cluster by a coordinate `(v, m, n, k)`:
//! `v` is the CTA's place in the pair a two-CTA (`CtaGroup.TWO`) MMA spans,
//! `m` and `n` its tile's row and column among the CTAs that share loads by
//! multicast. A CTA's rank is the layout of its coordinate; the package reads
//! coordinates back with `get_flat_coord(rank)`, so the layout must number
//! the CTAs in order (a compact layout, as `tiled_divide` of
//! `make_layout(cluster_shape)` is).
//!
//! - `PipelineTmaUmma` (TMA loads, MMA consumers): only the leader CTA of a
//!   pair (`v == 0`) announces the bytes on its `full` barrier (the TMA
//!   copies of both CTAs complete it); the MMA's `tcgen05.commit` releases
//!   the stage on the `empty` barriers of every CTA whose loads it read: the
//!   CTAs of its row (A is multicast along N), of its column (B along M),
//!   and those of its peer's (`mcast_mode_mn` chooses rows, columns or both).
//! - `PipelineUmmaAsync` (MMA producers, thread consumers): the commit
//!   reaches the `full` barriers of both CTAs of the pair; each consumer
//!   thread releases on the `empty` barrier of the pair's leader (rank
//!   `rank // 2 * 2`). Its `producer_tail` is made by even ranks only, and
//!   waits once, for the last stage used.
//! - `PipelineAsyncUmma` (thread producers, MMA consumers): producers arrive
//!   on the `full` barrier of the pair's leader; the commit releases both
//!   CTAs of the pair.
//!
//! With one CTA per MMA (`v` of extent 1) a pair is the CTA itself, and
//! every signal but `PipelineTmaUmma`'s multicast release stays in the CTA.
//!
//! A leader's `full` phase completes only once the copies of the CTAs it
//! reads from have landed: each such CTA's acquire counts as one arrival on
//! it (on top of the producers the kernel counts), so the leader cannot
//! consume a stage its peer has not loaded. A `PipelineTmaUmma` created with
//! `enable_multicast_signaling=True` counts one `empty` arrival per consumer
//! warp and multicast peer, as the package recounts its consumer group. A
//! block index whose grid is not known is still known modulo the cluster's
//! extent (clusters tile the grid), so `bidx % 2 == 0` picks the leader of a
//! pair.
//!
//! When the cluster shape is unknown, the one-CTA cluster is checked and
//! said. A layout the model cannot read, or the Hopper `PipelineTmaAsync`
//! over a cluster (one lane per peer signals), is reported as not checked.

use cute_ir::eval::Value;
use cute_ir::layout::Layout;

use super::Kind;

/// A cluster laid out as `(v, m, n, k)`: the extent and stride of each mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterLayout {
    extents: [i64; 4],
    strides: [i64; 4],
}

type Coord = [i64; 4];

impl ClusterLayout {
    /// The layout a pipeline is created with, for a cluster of `ctas` CTAs;
    /// why the model cannot read it otherwise.
    pub fn of_value(v: &Value, ctas: u32) -> Result<ClusterLayout, String> {
        let layout = Layout::of_value(v).ok_or_else(|| match v {
            Value::Unknown(why, _) => format!("its `cta_layout_vmnk` is not known statically, from {why}"),
            _ => "its `cta_layout_vmnk` is not known statically".to_string(),
        })?;
        let modes: Vec<(i64, i64)> = layout
            .modes
            .iter()
            .map(|m| match m.as_slice() {
                [leaf] => Some(*leaf),
                _ => None,
            })
            .collect::<Option<_>>()
            .filter(|m: &Vec<_>| m.len() == 4)
            .ok_or_else(|| "its `cta_layout_vmnk` is not a layout of four single modes (V, M, N, K)".to_string())?;
        let layout = ClusterLayout {
            extents: [modes[0].0, modes[1].0, modes[2].0, modes[3].0],
            strides: [modes[0].1, modes[1].1, modes[2].1, modes[3].1],
        };
        let size: i64 = layout.extents.iter().product();
        if size != i64::from(ctas) {
            return Err(format!("its `cta_layout_vmnk` spans {size} CTAs, its cluster {ctas}"));
        }
        if (0..ctas).any(|r| layout.rank(layout.coord(r)) != r) {
            return Err("its `cta_layout_vmnk` does not number the CTAs of the cluster in order".to_string());
        }
        Ok(layout)
    }

    /// The CTAs along M and along N (the layout's second and third modes).
    pub fn extents_mn(&self) -> (i64, i64) {
        (self.extents[1], self.extents[2])
    }

    /// The coordinate of the CTA of rank `rank` (`get_flat_coord`: the
    /// first mode varies fastest).
    fn coord(&self, rank: u32) -> Coord {
        let mut rest = i64::from(rank);
        let mut c = [0; 4];
        for (i, e) in self.extents.iter().enumerate() {
            c[i] = rest % e;
            rest /= e;
        }
        c
    }

    fn rank(&self, c: Coord) -> u32 {
        c.iter().zip(&self.strides).map(|(x, d)| x * d).sum::<i64>() as u32
    }

    /// The CTAs whose coordinate differs from `c` in `mode` only
    /// (`create_tma_multicast_mask(layout, c, mcast_mode=mode)`).
    fn line(&self, c: Coord, mode: usize) -> impl Iterator<Item = u32> + '_ {
        (0..self.extents[mode]).map(move |x| {
            let mut other = c;
            other[mode] = x;
            self.rank(other)
        })
    }

    /// The other CTA of `c`'s pair (`v ^ 1`); `c` itself when an MMA spans
    /// one CTA.
    fn peer(&self, c: Coord) -> Coord {
        let mut p = c;
        if self.extents[0] > 1 {
            p[0] ^= 1;
        }
        p
    }

    fn pair_size(&self) -> u32 {
        self.extents[0] as u32
    }
}

/// What one CTA of the cluster does with a pipeline: whether it is the
/// leader of its pair, and the ranks of the CTAs whose `full` and `empty`
/// barriers its producer's and consumer's signals arrive on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signals {
    pub leader: bool,
    pub full: Vec<u32>,
    pub empty: Vec<u32>,
    /// `PipelineTmaUmma`: the other leaders whose `full` barrier this CTA's
    /// TMA copies of a stage complete, and the other CTAs whose copies
    /// complete this CTA's when it leads.
    ///
    /// A leader announces the bytes of the whole stage, and the phase
    /// completes only once they have landed: its own copies and those its
    /// MMA reads from the other CTAs (the peer's half, and what the CTAs of
    /// its row and column multicast to it). Those are the CTAs its release
    /// reaches, each of which copies only after acquiring the stage (waiting
    /// on its own `empty` barrier). The model counts each such CTA's copies
    /// as one arrival on the leader's `full` barrier, made when it acquires
    /// the stage, on top of the producers the kernel counts: without them the
    /// leader's MMA could consume and release a stage its peers have not
    /// loaded yet.
    pub delivers_to: Vec<u32>,
    pub delivered_by: Vec<u32>,
}

/// The signals of the CTA of rank `rank`. `mcast_mode_mn`: whether releases
/// reach the CTAs of the row (A's multicast) and of the column (B's).
pub fn signals(kind: Kind, layout: &ClusterLayout, rank: u32, mcast_mode_mn: (bool, bool)) -> Signals {
    let c = layout.coord(rank);
    let pair = |c: Coord| layout.line(c, 0).chain(layout.line(layout.peer(c), 0)).collect::<Vec<_>>();
    let two_cta = layout.pair_size() > 1;
    let (full, empty) = match kind {
        Kind::TmaUmma => {
            let mut empty = Vec::new();
            for at in [c, layout.peer(c)] {
                if mcast_mode_mn.0 {
                    empty.extend(layout.line(at, 2));
                }
                if mcast_mode_mn.1 {
                    empty.extend(layout.line(at, 1));
                }
            }
            (vec![rank], empty)
        }
        Kind::UmmaAsync => (layout.line(c, 0).collect(), if two_cta { vec![rank / 2 * 2] } else { vec![rank] }),
        Kind::AsyncUmma if two_cta => {
            let size = layout.pair_size();
            (vec![rank / size * size], pair(c))
        }
        _ => (vec![rank], vec![rank]),
    };
    let tidy = |mut v: Vec<u32>| {
        v.sort_unstable();
        v.dedup();
        v
    };
    let empty = tidy(empty);
    // The releases reach exactly the CTAs whose copies the MMA reads (the
    // relation is symmetric: rows, columns and pairs), so this CTA's copies
    // complete the phases of the leaders among them.
    let leader = c[0] == 0;
    let (delivers_to, delivered_by) = match kind {
        Kind::TmaUmma => (
            empty.iter().copied().filter(|&r| r != rank && layout.coord(r)[0] == 0).collect(),
            if leader { empty.iter().copied().filter(|&r| r != rank).collect() } else { Vec::new() },
        ),
        _ => (Vec::new(), Vec::new()),
    };
    Signals { leader, full: tidy(full), empty, delivers_to, delivered_by }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cute.tiled_divide(cute.make_layout((cm, cn, 1)), (v,))`.
    fn vmnk(v: i64, cm: i64, cn: i64) -> ClusterLayout {
        let m = cm / v;
        ClusterLayout { extents: [v, m, cn, 1], strides: [1, v, v * m, v * m * cn] }
    }

    #[test]
    fn a_pair_of_ctas_releases_both_and_only_its_leader_announces() {
        let layout = vmnk(2, 2, 1);
        let leader = signals(Kind::TmaUmma, &layout, 0, (true, true));
        assert_eq!(leader, Signals { leader: true, full: vec![0], empty: vec![0, 1], delivers_to: vec![], delivered_by: vec![1] });
        // The peer only copies its half, into the leader's phase.
        let peer = signals(Kind::TmaUmma, &layout, 1, (true, true));
        assert!(!peer.leader);
        assert_eq!((peer.delivers_to, peer.delivered_by), (vec![0], vec![]));
        // The accumulator: the commit fills both, both release the leader.
        let umma_async = signals(Kind::UmmaAsync, &layout, 1, (true, true));
        assert_eq!((umma_async.full, umma_async.empty), (vec![0, 1], vec![0]));
        let async_umma = signals(Kind::AsyncUmma, &layout, 1, (true, true));
        assert_eq!((async_umma.full, async_umma.empty), (vec![0], vec![0, 1]));
    }

    #[test]
    fn multicast_releases_reach_the_row_and_the_column() {
        // Four CTAs of one-CTA MMAs in a 2 x 2 cluster: rank = m + 2 n.
        let layout = vmnk(1, 2, 2);
        assert_eq!(signals(Kind::TmaUmma, &layout, 0, (true, true)).empty, vec![0, 1, 2]);
        assert_eq!(signals(Kind::TmaUmma, &layout, 3, (true, true)).empty, vec![1, 2, 3]);
        // Along one mode only: A's multicast is along N (the CTAs of the row).
        assert_eq!(signals(Kind::TmaUmma, &layout, 0, (true, false)).empty, vec![0, 2]);
        assert_eq!(signals(Kind::TmaUmma, &layout, 0, (false, true)).empty, vec![0, 1]);
        // Every CTA leads its own MMA; the accumulator stays in the CTA.
        let s = signals(Kind::TmaUmma, &layout, 3, (true, true));
        assert!(s.leader);
        // Every CTA leads: each one's copies complete its row's and column's.
        assert_eq!((s.delivers_to, s.delivered_by), (vec![1, 2], vec![1, 2]));
        let umma_async = signals(Kind::UmmaAsync, &layout, 3, (true, true));
        assert_eq!((umma_async.full, umma_async.empty), (vec![3], vec![3]));
    }

    #[test]
    fn pairs_of_a_larger_cluster_release_their_rows_and_columns() {
        // Two pairs along M, two columns: rank = v + 2 m + 4 n.
        let layout = vmnk(2, 4, 2);
        let s = signals(Kind::TmaUmma, &layout, 2, (true, true));
        assert!(s.leader);
        // Row of (0, 1, 0) and of its peer (1, 1, 0): ranks 2, 6 and 3, 7;
        // column: the pairs of n = 0, ranks 0 to 3.
        assert_eq!(s.empty, vec![0, 1, 2, 3, 6, 7]);
        // Leaders among them: ranks 0 and 6.
        assert_eq!(s.delivers_to, vec![0, 6]);
        assert_eq!(signals(Kind::UmmaAsync, &layout, 7, (true, true)).empty, vec![6]);
    }

    #[test]
    fn a_layout_that_does_not_cover_the_cluster_is_not_read() {
        let value = |shape: &[i64]| {
            let l = Layout { modes: shape.iter().scan(1, |s, &e| { let d = *s; *s *= e; Some(vec![(e, d)]) }).collect() };
            l.to_value()
        };
        assert!(ClusterLayout::of_value(&value(&[2, 1, 1, 1]), 2).is_ok());
        assert!(ClusterLayout::of_value(&value(&[2, 1, 1, 1]), 4).unwrap_err().contains("spans 2 CTAs"));
        assert!(ClusterLayout::of_value(&value(&[2, 2, 1]), 4).is_err());
        assert!(ClusterLayout::of_value(&Value::unknown("x"), 2).is_err());
    }
}
