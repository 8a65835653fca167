//! Synchronization written as inline PTX.
//!
//! Kernels reach instructions the DSL does not wrap through
//! `llvm.inline_asm(result_type, operands, asm_string, constraints, ...)`,
//! usually inside a small `@dsl_user_op` helper:
//!
//! ```python
//! llvm.inline_asm(T.i32(), [ptr.toint().ir_value()],
//!                 "ld.global.acquire.gpu.b32 $0, [$1];", "=r,l", ...)
//! ```
//!
//! This module reads the assembly text into the instructions that matter to
//! synchronization (loads and stores with memory semantics, `red` and `atom`,
//! `multimem.st`, `fence.acq_rel`/`fence.sc`/`membar`, `fence.proxy.async`,
//! `griddepcontrol.wait`,
//! and a spin loop written in the assembly: a labelled `ld`, a `setp` on the
//! word read and a `bra` back, [`PtxSync::SpinLoad`]) with their qualifiers
//! and the operands they address, and names the ones the checker does not
//! model (other branches, a predicate on a synchronizing instruction,
//! barriers and mbarrier operations written by hand) so that they are reported
//! instead of ignored: the kernel is `analysis-incomplete`, naming the
//! instruction. Arithmetic and register moves are of no interest and dropped.
//!
//! A call whose assembly synchronizes is an API call like the DSL's
//! (`Api::InlineAsm`): each instruction's address operand (`[$k]`, numbered
//! after the outputs of the constraint string, [`output_count`]) is looked up
//! among the call's operands, through `ptr.toint().ir_value()` or
//! `llvm.ptrtoint(T.i64(), ptr.llvm_ptr)`. The helpers
//! that wrap such calls (`@dsl_user_op def ld_acquire(ptr)`) are inlined as any
//! helper of the file, so a spin loop on one,
//! `while v != n: v = ld_acquire(ptr)` included, is a blocking read; helpers in
//! other files are not followed. The quick fixes rewrite the qualifiers in the
//! string ([`with_semantics`], [`with_scope`]: `red.relaxed` to `red.release`).

use crate::ast::CmpOp;

/// One synchronization-relevant instruction of an inline PTX string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtxSync {
    /// `ld.{sem}.{scope}.global...`: a read of the word at operand `addr`.
    /// `sem` is `None` for a plain (weak) load.
    Load { addr: usize, sem: Option<String>, scope: Option<String> },
    /// `st.{sem}.{scope}.global... [addr], value`.
    Store { addr: usize, value: Option<PtxValue>, sem: Option<String>, scope: Option<String> },
    /// `red` or `atom` at operand `addr`: `op` is the operation (`add`,
    /// `exch`, `max`, ...) and `value` the operand it applies, when it is an
    /// operand of the call or a literal rather than a register of the
    /// snippet.
    ReadModifyWrite {
        addr: usize,
        op: String,
        value: Option<PtxValue>,
        sem: Option<String>,
        scope: Option<String>,
        /// `atom` returns the old value; `red` does not.
        returns: bool,
    },
    /// `fence.acq_rel.{scope}`, `fence.sc.{scope}`, `membar.{level}`.
    Fence { scope: Option<String> },
    /// `fence.proxy.async...`: orders generic-proxy accesses with the async
    /// proxy.
    ProxyFence,
    /// `griddepcontrol.wait`: the thread waits until the grids this one
    /// depends on have completed and their memory is visible
    /// (`griddepcontrol.launch_dependents` only lets the next grid start,
    /// and is no synchronization of this one).
    GridDependencyWait,
    /// A spin loop written in the assembly: a labelled `ld` of operand
    /// `addr` into a register, a `setp` comparing that register with
    /// `value`, and a branch back to the label on the result. The thread
    /// goes on once the value read satisfies `exit_when` (`Ne`: it spins
    /// while the word equals `value`).
    SpinLoad { addr: usize, sem: Option<String>, scope: Option<String>, exit_when: CmpOp, value: PtxValue },
    /// An instruction that synchronizes in a way the checker does not model.
    Unmodelled { what: String },
}

/// A value an instruction stores, adds or compares with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtxValue {
    /// An operand of the call (`$1`), numbered as `addr` is.
    Operand(usize),
    /// A literal of the assembly.
    Immediate(i64),
}

/// Memory-semantics qualifiers of PTX, as the DSL spells them (`sem=`).
const SEMANTICS: &[&str] = &["relaxed", "acquire", "release", "acq_rel", "sc", "weak", "volatile"];
/// Scope qualifiers, as the DSL spells them (`scope=`).
const SCOPES: &[(&str, &str)] = &[("cta", "cta"), ("cluster", "cluster"), ("gpu", "gpu"), ("sys", "sys")];
/// Opcodes that synchronize and are not modelled when written by hand.
const UNMODELLED: &[&str] = &["bar", "barrier", "mbarrier", "cp", "elect", "griddepcontrol", "multimem", "st.async", "red.async"];

/// One instruction: opcode, dotted qualifiers and operand text.
#[derive(Debug)]
struct Instruction<'a> {
    /// The label in front of it (`SPIN:`), the last when there are several.
    label: Option<&'a str>,
    /// `@%p` or `@!%p`: the predicate as written after the `@`.
    predicate: Option<&'a str>,
    opcode: &'a str,
    qualifiers: Vec<&'a str>,
    operands: Vec<&'a str>,
}

/// The synchronization instructions of an assembly string, in order.
pub fn sync_instructions(asm: &str) -> Vec<PtxSync> {
    let mut out = Vec::new();
    let all = instructions(asm);
    let mut i = 0;
    while i < all.len() {
        if let Some(spin) = spin_loop(&all[i..]) {
            out.push(spin);
            i += 3;
            continue;
        }
        let ins = &all[i];
        i += 1;
        if let Some(sync) = classify(ins) {
            let sync = match sync {
                // A predicated synchronization instruction runs or not on
                // a value the checker does not have.
                s if ins.predicate.is_some() && !matches!(s, PtxSync::Unmodelled { .. }) => PtxSync::Unmodelled {
                    what: format!("a predicated `{}`", ins.opcode),
                },
                s => s,
            };
            out.push(sync);
        }
    }
    out
}

/// Whether an assembly string holds any synchronization instruction.
pub fn synchronizes(asm: &str) -> bool {
    !sync_instructions(asm).is_empty()
}

fn instructions(asm: &str) -> Vec<Instruction<'_>> {
    let mut out = Vec::new();
    let mut label = None;
    for raw in asm.split([';', '\n']) {
        // Braces open and close register scopes; vector operands keep theirs.
        let mut text = raw.trim().trim_start_matches(['{', ' ', '\t']).trim_end_matches(['}', ' ', '\t']).trim();
        // Labels (`SPIN:`) stand in front of their instruction, or on a
        // line of their own before it.
        while let Some((name, rest)) = text.split_once(':') {
            let is_label = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
            if !is_label || rest.starts_with(':') {
                break;
            }
            label = Some(name.trim());
            text = rest.trim();
        }
        if text.is_empty() || text.starts_with("//") || text.starts_with('.') {
            continue;
        }
        let mut predicate = None;
        if let Some(rest) = text.strip_prefix('@') {
            let (p, r) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            predicate = Some(p);
            text = r.trim();
        }
        let (head, operands) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let mut parts = head.split('.');
        let opcode = parts.next().unwrap_or("");
        out.push(Instruction {
            label: label.take(),
            predicate,
            opcode,
            qualifiers: parts.filter(|q| !q.is_empty()).collect(),
            operands: split_operands(operands),
        });
    }
    out
}

/// Operands separated by top-level commas (`{a, b}` vectors stay whole).
fn split_operands(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim());
    }
    out
}

fn classify(ins: &Instruction<'_>) -> Option<PtxSync> {
    let has = |q: &str| ins.qualifiers.contains(&q);
    let sem = || SEMANTICS.iter().find(|s| has(s)).map(|s| s.to_string());
    let scope = || SCOPES.iter().find(|(q, _)| has(q)).map(|(_, s)| s.to_string());
    let full = format!("{}.{}", ins.opcode, ins.qualifiers.first().copied().unwrap_or(""));
    match full.as_str() {
        "griddepcontrol.wait" => return Some(PtxSync::GridDependencyWait),
        "griddepcontrol.launch_dependents" => return None,
        _ => {}
    }
    // `multimem.st`: a store to every copy of a multicast object, which
    // for this kernel's memory is a store to the address it names.
    if full == "multimem.st" {
        let addr = operand_index(ins.operands.first()?)?;
        let sem = sem().filter(|s| s != "weak");
        return Some(PtxSync::Store { addr, value: None, sem, scope: scope() });
    }
    if UNMODELLED.contains(&ins.opcode) || UNMODELLED.contains(&full.as_str()) {
        return Some(PtxSync::Unmodelled { what: format!("`{}`", head_text(ins)) });
    }
    match ins.opcode {
        "bra" | "brx" | "call" | "ret" | "exit" => Some(PtxSync::Unmodelled { what: format!("a `{}` inside the assembly", ins.opcode) }),
        "ld" | "st" => {
            // Only memory with a synchronization meaning: global or generic
            // addresses (shared-memory loads are data, not counters), and
            // loads with semantics.
            let addr = ins.operands.iter().position(|o| o.starts_with('['))?;
            let addr = operand_index(ins.operands[addr])?;
            if has("shared") || has("local") || has("param") || has("const") {
                return None;
            }
            let sem = sem().filter(|s| s != "weak");
            if ins.opcode == "ld" {
                Some(PtxSync::Load { addr, sem, scope: scope() })
            } else {
                let value = ins.operands.last().and_then(|o| value_of(o));
                Some(PtxSync::Store { addr, value, sem, scope: scope() })
            }
        }
        "red" | "atom" => {
            let at = ins.operands.iter().position(|o| o.starts_with('['))?;
            let addr = operand_index(ins.operands[at])?;
            let op = ["add", "inc", "dec", "exch", "cas", "min", "max", "and", "or", "xor"]
                .iter()
                .find(|o| has(o))
                .map_or("other", |o| o)
                .to_string();
            let value = ins.operands.get(at + 1).and_then(|o| value_of(o));
            Some(PtxSync::ReadModifyWrite { addr, op, value, sem: sem(), scope: scope(), returns: ins.opcode == "atom" })
        }
        // `fence.proxy.tensormap::generic`: orders generic writes of a
        // tensor map (the host's, or `tensormap.replace`) with the TMA
        // unit's reads of it. What a tensor map holds is not modelled, and
        // this fence orders nothing else.
        "fence" if ins.qualifiers.iter().any(|q| q.starts_with("tensormap")) => None,
        "fence" if has("proxy") => has("async").then_some(PtxSync::ProxyFence).or(Some(PtxSync::Unmodelled {
            what: format!("`{}`", head_text(ins)),
        })),
        "fence" => Some(PtxSync::Fence { scope: scope() }),
        "membar" => Some(PtxSync::Fence {
            scope: Some(if has("cta") { "cta" } else if has("sys") { "sys" } else { "gpu" }.to_string()),
        }),
        _ => None,
    }
}

/// `L: ld... %r, [$k]; setp.<cmp> %p, %r, x; @%p bra L;` at the start of
/// `ins`: a loop that reads the word at `$k` until the comparison fails
/// (`@!%p`: until it holds). Any other shape is not one.
fn spin_loop(ins: &[Instruction<'_>]) -> Option<PtxSync> {
    let [load, setp, branch, ..] = ins else { return None };
    let label = load.label?;
    if load.opcode != "ld" || load.predicate.is_some() || setp.opcode != "setp" || setp.predicate.is_some() || branch.opcode != "bra" {
        return None;
    }
    let Some(PtxSync::Load { addr, sem, scope }) = classify(load) else { return None };
    let register = *load.operands.first()?;
    let (&[predicate, a, b], Some(&cmp)) = (setp.operands.as_slice(), setp.qualifiers.first()) else { return None };
    let cmp = setp_comparison(cmp)?;
    // The comparison with the word read on the left.
    let (cmp, other) = match (a == register, b == register) {
        (true, false) => (cmp, b),
        (false, true) => (cmp.mirrored()?, a),
        _ => return None,
    };
    let loops_while = match branch.predicate? {
        p if p == predicate => cmp,
        p if p.strip_prefix('!') == Some(predicate) => cmp.negated()?,
        _ => return None,
    };
    if branch.operands.first() != Some(&label) {
        return None;
    }
    let value = value_of(other)?;
    Some(PtxSync::SpinLoad { addr, sem, scope, exit_when: loops_while.negated()?, value })
}

/// A `setp` comparison (`lo`, `hs`... of unsigned words are the same
/// orders).
fn setp_comparison(cmp: &str) -> Option<CmpOp> {
    Some(match cmp {
        "eq" => CmpOp::Eq,
        "ne" => CmpOp::Ne,
        "lt" | "lo" => CmpOp::Lt,
        "le" | "ls" => CmpOp::Le,
        "gt" | "hi" => CmpOp::Gt,
        "ge" | "hs" => CmpOp::Ge,
        _ => return None,
    })
}

/// An operand of the call (`$1`) or an integer literal.
fn value_of(text: &str) -> Option<PtxValue> {
    match operand_index(text) {
        Some(k) => Some(PtxValue::Operand(k)),
        None => immediate(text).map(PtxValue::Immediate),
    }
}

/// A PTX integer literal (`1`, `-2`, `0x10`).
fn immediate(text: &str) -> Option<i64> {
    let t = text.trim();
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let magnitude = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex.trim_end_matches(['U', 'u']), 16).ok()?,
        None => digits.trim_end_matches(['U', 'u']).parse().ok()?,
    };
    Some(if negative { -magnitude } else { magnitude })
}

fn head_text(ins: &Instruction<'_>) -> String {
    std::iter::once(ins.opcode).chain(ins.qualifiers.iter().copied()).collect::<Vec<_>>().join(".")
}

/// `$3` or `[$3]` (an offset such as `[$3+4]` leaves the word unknown and
/// is not read as the operand's own address).
fn operand_index(text: &str) -> Option<usize> {
    let t = text.trim().trim_start_matches('[').trim_end_matches(']').trim();
    t.strip_prefix('$')?.parse().ok()
}

/// The number of output operands of a constraint string (`"=r,l"` -> 1):
/// `$k` with `k` below it is an output, above it input `k - outputs`.
pub fn output_count(constraints: &str) -> usize {
    constraints.split(',').filter(|c| c.trim_start().starts_with('=')).count()
}

/// The source text of an assembly string with the memory semantics of its
/// first instruction of the given kind changed to `sem` (a missing scope
/// becomes `gpu`, which a semantics qualifier requires): with `reads`, the
/// first `ld` or `atom`, else the first `red`, `atom` or `st`. The text
/// is that of the string literal in the file, quotes and all, so that the
/// edit replaces it in place. `None` when no such instruction is found.
pub fn with_semantics(source: &str, reads: bool, sem: &str) -> Option<String> {
    rewrite_first(source, reads, |op, quals| {
        // `acq_rel` is for an `atom`: a load can only acquire, a `red` or a
        // store only release.
        let sem = match (op, sem) {
            ("ld", "acq_rel") => "acquire",
            ("red" | "st", "acq_rel") => "release",
            _ => sem,
        };
        let had_scope = quals.iter().any(|q| SCOPES.iter().any(|(s, _)| s == q));
        let at = quals.iter().position(|q| SEMANTICS.contains(&q.as_str()));
        match at {
            Some(i) if quals[i] == "volatile" => {
                quals[i] = sem.to_string();
                if !had_scope {
                    quals.insert(i + 1, "sys".to_string());
                }
            }
            Some(i) => quals[i] = sem.to_string(),
            None => {
                quals.insert(0, sem.to_string());
                if !had_scope {
                    quals.insert(1, "gpu".to_string());
                }
            }
        }
    })
}

/// As [`with_semantics`], changing or adding the scope qualifier.
pub fn with_scope(source: &str, reads: bool, scope: &str) -> Option<String> {
    rewrite_first(source, reads, |_, quals| match quals.iter().position(|q| SCOPES.iter().any(|(s, _)| s == q)) {
        Some(i) => quals[i] = scope.to_string(),
        None => {
            let after_sem = quals.iter().position(|q| SEMANTICS.contains(&q.as_str())).map_or(0, |i| i + 1);
            quals.insert(after_sem, scope.to_string());
        }
    })
}

fn rewrite_first(source: &str, reads: bool, change: impl Fn(&str, &mut Vec<String>)) -> Option<String> {
    let opcodes: &[&str] = if reads { &["ld", "atom"] } else { &["red", "atom", "st"] };
    let bytes = source.as_bytes();
    // Only inside string literals: the text may be a whole call.
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < source.len() {
        match (quote, bytes[i]) {
            (None, q @ (b'"' | b'\'')) => quote = Some(q),
            (Some(q), c) if c == q && bytes[i - 1] != b'\\' => quote = None,
            _ => {}
        }
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b'.');
        if quote.is_some() && starts_word {
            if let Some(op) = opcodes.iter().find(|op| source[i..].starts_with(&format!("{op}."))) {
                let start = i + op.len();
                let end = start + source[start..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == ':')).unwrap_or(source.len() - start);
                let mut quals: Vec<String> = source[start..end].split('.').filter(|q| !q.is_empty()).map(str::to_string).collect();
                change(op, &mut quals);
                return Some(format!("{}{op}.{}{}", &source[..i], quals.join("."), &source[end..]));
            }
        }
        i += source[i..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_flash_attention_lock_helpers() {
        assert_eq!(
            sync_instructions("ld.global.acquire.gpu.b32 $0, [$1];"),
            vec![PtxSync::Load { addr: 1, sem: Some("acquire".into()), scope: Some("gpu".into()) }]
        );
        assert_eq!(
            sync_instructions("red.release.gpu.global.add.s32 [$0], $1;"),
            vec![PtxSync::ReadModifyWrite {
                addr: 0,
                op: "add".into(),
                value: Some(PtxValue::Operand(1)),
                sem: Some("release".into()),
                scope: Some("gpu".into()),
                returns: false
            }]
        );
        assert_eq!(sync_instructions("fence.acq_rel.gpu;"), vec![PtxSync::Fence { scope: Some("gpu".into()) }]);
        assert_eq!(sync_instructions("membar.gl;"), vec![PtxSync::Fence { scope: Some("gpu".into()) }]);
        assert_eq!(sync_instructions("fence.proxy.async.shared::cta;"), vec![PtxSync::ProxyFence]);
    }

    /// The spin waits of flashinfer's MoE kernels, and the same loop
    /// spelled otherwise: an immediate, the register on the right, the
    /// branch on the negated predicate.
    #[test]
    fn a_spin_loop_in_the_assembly_is_a_wait() {
        let moe = "{\n.reg .pred %p0;\n.reg .s32 %val;\nspin_loop:\n  ld.global.acquire.gpu.s32 %val, [$0];\n  setp.eq.s32 %p0, %val, $1;\n  @%p0 bra spin_loop;\n}";
        assert_eq!(
            sync_instructions(moe),
            vec![PtxSync::SpinLoad {
                addr: 0,
                sem: Some("acquire".into()),
                scope: Some("gpu".into()),
                exit_when: CmpOp::Ne,
                value: PtxValue::Operand(1)
            }]
        );
        let until = "WAIT: ld.relaxed.gpu.global.u32 %v, [$1];\n setp.lt.u32 %done, 3, %v;\n @!%done bra WAIT;";
        assert!(matches!(
            &sync_instructions(until)[..],
            [PtxSync::SpinLoad { addr: 1, exit_when: CmpOp::Gt, value: PtxValue::Immediate(3), .. }]
        ));
        // A branch elsewhere, or a loop that does more than wait, is not one.
        let elsewhere = "L: ld.acquire.gpu.global.u32 %v, [$0];\n setp.eq.u32 %p, %v, 0;\n @%p bra DONE;";
        assert!(sync_instructions(elsewhere).iter().any(|s| matches!(s, PtxSync::Unmodelled { .. })));
    }

    /// flashinfer's NVLink all-reduce publishes with `multimem.st` (a
    /// store to every copy of a multicast object): a store to the address
    /// it names, with its semantics; other `multimem` instructions stay
    /// unmodelled.
    #[test]
    fn a_multicast_store_is_a_store() {
        assert_eq!(
            sync_instructions("multimem.st.relaxed.sys.global.v4.bf16x2 [$0], {$1, $2, $3, $4};"),
            vec![PtxSync::Store { addr: 0, value: None, sem: Some("relaxed".into()), scope: Some("sys".into()) }]
        );
        assert!(matches!(&sync_instructions("multimem.ld_reduce.relaxed.sys.global.add.f32 $0, [$1];")[0], PtxSync::Unmodelled { .. }));
    }

    #[test]
    fn a_tensor_map_fence_orders_nothing_modelled() {
        assert!(!synchronizes("fence.proxy.tensormap::generic.acquire.gpu [$0], 128;"));
        assert_eq!(sync_instructions("fence.proxy.async.global;"), vec![PtxSync::ProxyFence]);
    }

    #[test]
    fn grid_dependency_control() {
        assert_eq!(sync_instructions("griddepcontrol.wait;"), vec![PtxSync::GridDependencyWait]);
        assert!(!synchronizes("griddepcontrol.launch_dependents;"));
    }

    #[test]
    fn arithmetic_is_not_synchronization() {
        assert!(!synchronizes("cvt.rn.bf16x2.f32 $0, $1, $2;"));
        assert!(!synchronizes("{ .reg .b32 t; mov.b32 t, $1; }"));
        assert!(!synchronizes("ld.shared.b32 $0, [$1];"));
    }

    #[test]
    fn control_flow_and_hand_written_barriers_are_named() {
        let spin = "{\n\t.reg .b32 %old;\n\tatom.release.gpu.global.add.u32 %old, [$0], %delta;\n\tSPIN:\n\tld.relaxed.gpu.global.b32 %cur, [$0];\n\t@%waiting bra SPIN;\n\tfence.acq_rel.gpu;\n\t}";
        let found = sync_instructions(spin);
        assert!(matches!(&found[0], PtxSync::ReadModifyWrite { value: None, returns: true, .. }));
        assert!(found.iter().any(|s| matches!(s, PtxSync::Unmodelled { what } if what.contains("bra"))));
        assert!(matches!(&sync_instructions("mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;")[0], PtxSync::Unmodelled { .. }));
        assert!(matches!(&sync_instructions("@p red.release.gpu.global.add.s32 [$0], 1;")[0], PtxSync::Unmodelled { .. }));
    }

    #[test]
    fn outputs_come_first_in_the_numbering() {
        assert_eq!(output_count("=r,l"), 1);
        assert_eq!(output_count("l,r"), 0);
    }

    #[test]
    fn rewrites_semantics_and_scope_in_the_source_text() {
        assert_eq!(
            with_semantics("\"red.relaxed.gpu.global.add.s32 [$0], $1;\"", false, "release").unwrap(),
            "\"red.release.gpu.global.add.s32 [$0], $1;\""
        );
        assert_eq!(with_semantics("\"red.global.add.s32 [$0], $1;\"", false, "release").unwrap(), "\"red.release.gpu.global.add.s32 [$0], $1;\"");
        assert_eq!(with_semantics("\"ld.volatile.global.b32 $0, [$1];\"", true, "acquire").unwrap(), "\"ld.acquire.sys.global.b32 $0, [$1];\"");
        assert_eq!(with_scope("\"ld.global.acquire.cta.b32 $0, [$1];\"", true, "gpu").unwrap(), "\"ld.global.acquire.gpu.b32 $0, [$1];\"");
        assert_eq!(with_semantics("\"cvt.rn.f32 $0, $1;\"", true, "acquire"), None);
        // In a whole call, only the assembly string is rewritten.
        assert_eq!(
            with_semantics("llvm.inline_asm(None, [st.x], \"red.relaxed.gpu.global.add.s32 [$0], $1;\", \"l,r\")", false, "release").unwrap(),
            "llvm.inline_asm(None, [st.x], \"red.release.gpu.global.add.s32 [$0], $1;\", \"l,r\")"
        );
        // An update and a spin in one string: `acq_rel`, asked for the
        // string as a whole, is what each instruction can take.
        let both = "\"red.relaxed.gpu.global.add.s32 [$0], 1; W: ld.relaxed.gpu.global.b32 %v, [$0];\"";
        assert_eq!(with_semantics(both, true, "acq_rel").unwrap(), "\"red.relaxed.gpu.global.add.s32 [$0], 1; W: ld.acquire.gpu.global.b32 %v, [$0];\"");
        assert_eq!(with_semantics(both, false, "acq_rel").unwrap(), "\"red.release.gpu.global.add.s32 [$0], 1; W: ld.relaxed.gpu.global.b32 %v, [$0];\"");
    }
}
