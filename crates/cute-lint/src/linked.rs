//! Diagnostics of a check that linked other files (`cute_ir::link`), moved
//! back to the files they are in.
//!
//! A check runs on one address space: the file checked, then each linked
//! module past it. At this edge every location in a linked module becomes a
//! location in that file ([`Related::file`]). A diagnostic's own location
//! must be in the file checked, which is where the editor shows it: a finding
//! inside a linked helper is reported on the kernel's call that reaches the
//! helper (or on the kernel's name), and its first related location is where
//! it really is. A quick fix that would edit a linked module is dropped: the
//! fix belongs to a check of that module.

use cute_ir::ast::FunctionDef;
use cute_ir::Module;
use cute_syntax::TextRange;

use crate::diagnostic::OtherFile;
use crate::{Diagnostic, Related};

/// The text a check of a linked module reads: the file's own text, then
/// each linked file's at its base, so that every position of the linked
/// module reads its own source.
pub fn linked_text(text: &str, module: &Module) -> String {
    let mut out = String::with_capacity(module.linked.last().map_or(text.len(), |f| (f.base + f.len) as usize));
    out.push_str(text);
    for f in &module.linked {
        // Padding that ends a line, so each file starts on a line of its own.
        let gap = f.base as usize - out.len();
        out.extend(std::iter::repeat_n(' ', gap.saturating_sub(1)));
        out.push('\n');
        out.push_str(&f.text);
    }
    out
}

/// `d`, found checking `kernel`, with its locations in the files they are in.
pub fn relocate(mut d: Diagnostic, module: &Module, kernel: &FunctionDef) -> Diagnostic {
    if module.linked.is_empty() {
        return d;
    }
    let other = |r: TextRange| {
        module.linked_file(r).map(|f| (OtherFile { path: f.path.as_path().into(), text: f.text.clone() }, f.local(r)))
    };
    for r in &mut d.related {
        if let Some((file, local)) = other(r.range) {
            r.range = local;
            r.file = Some(file);
        }
    }
    if let Some((file, local)) = other(d.range) {
        let (at, how) = match call_reaching(module, kernel, d.range) {
            Some((call, callee)) => (call, format!("through `{callee}`")),
            None => (kernel.name_range, "in a function of another module".to_string()),
        };
        d.related.insert(0, Related { range: local, message: d.label.clone(), file: Some(file), event: None });
        d.label = format!("{}, {how}", d.label);
        d.range = at;
    }
    d.fixes.retain(|f| f.edits.iter().all(|e| !module.is_linked(e.range)));
    d
}

/// The call in `kernel`'s body that reaches the linked function holding
/// `site`, directly or through other linked functions, and the name of the
/// function it calls.
fn call_reaching(module: &Module, kernel: &FunctionDef, site: TextRange) -> Option<(TextRange, String)> {
    let holding = module.functions.iter().filter(|f| f.range.start <= site.start && site.end <= f.range.end).min_by_key(|f| f.range.len())?;
    // The linked functions that reach `holding`, by the names calls spell.
    let mut reaching: Vec<&FunctionDef> = vec![holding];
    let mut i = 0;
    while i < reaching.len() && reaching.len() < 64 {
        let target = reaching[i].name.clone();
        let callers: Vec<&FunctionDef> = module
            .functions
            .iter()
            .filter(|f| module.is_linked(f.range) && !reaching.iter().any(|r| std::ptr::eq(*r, *f)))
            .filter(|f| cute_ir::ast::any_call(&f.body, |c| cute_ir::slice::callee_name(c) == Some(target.as_str())))
            .collect();
        reaching.extend(callers);
        i += 1;
    }
    let mut found = None;
    cute_ir::ast::for_each_expr(&kernel.body, &mut |e| {
        let mut calls = Vec::new();
        e.calls(&mut calls);
        for c in calls {
            if found.is_none() {
                if let Some(f) = cute_ir::slice::callee_name(c).and_then(|n| reaching.iter().find(|f| f.name == n)) {
                    found = Some((c.range, f.display_name()));
                }
            }
        }
    });
    found
}
