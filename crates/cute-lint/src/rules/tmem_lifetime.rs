//! CUTE043 tmem-lifetime: tensor memory's address read before its allocation published it, tensor memory freed
//! while another thread of its CTA may still use it, freed twice, or never freed. See `tmem_lifetime.md`; the finding comes from the memory-ordering analysis
//! (`cute_check::memory`'s `tmem`) and is turned into a diagnostic by `crate::memory`, whose quick fix inserts
//! a CTA barrier before the free where every thread of the CTA reaches it.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE043",
    name: "tmem-lifetime",
    default_severity: Severity::Error,
    summary: "tensor memory freed while another thread may still use it (no barrier between its last use and the free), freed twice, or never freed, or its address read before the allocation published it",
    doc: include_str!("tmem_lifetime.md"),
};
