//! CUTE042 bulk-group-in-flight: a shared buffer a TMA store may still be reading is written before the issuing
//! thread's bulk wait covers the store's group, or a thread ends with stores in flight. See `bulk_group_in_flight.md`;
//! the finding comes from the memory-ordering analysis (`cute_check::memory`, its `proxy` part) and is turned into a
//! diagnostic by `crate::memory`.

use super::Rule;
use crate::Severity;

pub const RULE: Rule = Rule {
    code: "CUTE042",
    name: "bulk-group-in-flight",
    default_severity: Severity::Error,
    summary: "a shared buffer a TMA store may still be reading is written before a bulk wait covers the store's group, or a thread ends with TMA stores in flight",
    doc: include_str!("bulk_group_in_flight.md"),
};
