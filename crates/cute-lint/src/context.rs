//! What a rule sees of one checked kernel.

use cute_check::model::Model;
use cute_check::trace::Step;
use cute_ir::ast::{Call, FunctionDef, Stmt, StmtKind};
use cute_ir::Module;
use cute_syntax::{LineIndex, TextRange};

use crate::{Related, Severity};

pub struct KernelContext<'a> {
    pub text: &'a str,
    pub index: &'a LineIndex,
    pub module: &'a Module,
    pub kernel: &'a FunctionDef,
}

/// A line a message names (`line 12`, `line 12 of pkg.sync`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceLine {
    pub line: u32,
    /// The linked module it is in, when not the file checked.
    pub module: Option<String>,
}

impl std::fmt::Display for SourceLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.module {
            None => write!(f, "{}", self.line),
            Some(m) => write!(f, "{} of `{m}`", self.line),
        }
    }
}

impl KernelContext<'_> {
    /// The source line (1-based) of an offset, for messages: of the file
    /// checked, or of a module linked into its check.
    pub fn line(&self, offset: u32) -> SourceLine {
        match self.module.linked_file(TextRange { start: offset, end: offset }) {
            Some(f) => {
                let local = f.local(TextRange { start: offset, end: offset });
                SourceLine { line: LineIndex::new(&f.text).line_of(local.start) + 1, module: Some(f.module.clone()) }
            }
            None => SourceLine { line: self.index.line_of(offset) + 1, module: None },
        }
    }

    pub fn slice(&self, range: TextRange) -> &str {
        self.text.get(range.start as usize..range.end as usize).unwrap_or("")
    }

    /// Leading whitespace of the line holding `offset`.
    pub fn indentation_at(&self, offset: u32) -> String {
        let line = self.index.line_of(offset);
        self.index.line_text(line).chars().take_while(|c| c.is_whitespace()).collect()
    }

    /// Byte range of the whole line holding `offset`, with its line break.
    pub fn full_line(&self, offset: u32) -> TextRange {
        let line = self.index.line_of(offset);
        let start = self.index.line_start(line);
        let end = self.index.line_start(line + 1);
        TextRange { start, end }
    }

    /// Byte range of the whole lines the statement at `range` spans, with
    /// the last line break.
    pub fn statement_lines(&self, range: TextRange) -> TextRange {
        TextRange { start: self.full_line(range.start).start, end: self.next_line_start(range.end.saturating_sub(1).max(range.start)) }
    }

    /// An edit putting `line` on a line of its own before the line holding
    /// `at`, at that line's indentation.
    pub fn insert_line_before(&self, at: TextRange, line: &str) -> crate::Edit {
        let start = self.full_line(at.start).start;
        crate::Edit { range: TextRange { start, end: start }, new_text: format!("{}{line}\n", self.indentation_at(at.start)) }
    }

    /// An edit putting `line` on a line of its own after the lines of the
    /// statement at `stmt`, at the statement's indentation.
    pub fn insert_line_after(&self, stmt: TextRange, line: &str) -> crate::Edit {
        let start = self.statement_lines(stmt).end;
        crate::Edit { range: TextRange { start, end: start }, new_text: format!("{}{line}\n", self.indentation_at(stmt.start)) }
    }

    /// Offset just after the line break of the line holding `offset`.
    pub fn next_line_start(&self, offset: u32) -> u32 {
        let line = self.index.line_of(offset);
        self.index.line_start(line + 1)
    }

    /// The function of this file that holds `range`, and the chain of
    /// statements from its body down to the innermost one holding `range`.
    pub fn ancestors(&self, range: TextRange) -> Option<(&FunctionDef, Vec<&Stmt>)> {
        let f = self
            .module
            .functions
            .iter()
            .filter(|f| f.range.start <= range.start && range.end <= f.range.end)
            .min_by_key(|f| f.range.len())?;
        let mut chain = Vec::new();
        let mut stmts: &[Stmt] = &f.body;
        'descend: loop {
            for s in stmts {
                if s.range.start <= range.start && range.end <= s.range.end {
                    chain.push(s);
                    stmts = match &s.kind {
                        StmtKind::If { then, orelse, .. } => {
                            if then.iter().any(|c| c.range.start <= range.start && range.end <= c.range.end) {
                                then
                            } else {
                                orelse
                            }
                        }
                        StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => body,
                        _ => break 'descend,
                    };
                    continue 'descend;
                }
            }
            break;
        }
        Some((f, chain))
    }

    /// The statements of the block inside `parent` (the kernel's body when
    /// none) that holds `inner`: the branch of an `if` it is in, or the
    /// body of a loop or `with`.
    pub fn block_holding<'c>(&'c self, parent: Option<&'c Stmt>, inner: TextRange) -> &'c [Stmt] {
        let holds = |b: &[Stmt]| b.iter().any(|s| s.range.start <= inner.start && inner.end <= s.range.end);
        match parent.map(|p| &p.kind) {
            None => &self.kernel.body,
            Some(StmtKind::If { then, orelse, .. }) => {
                if holds(then) {
                    then
                } else {
                    orelse
                }
            }
            Some(StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. }) => body,
            Some(_) => &[],
        }
    }

    /// The classes of the module whose name the kernel's text spells
    /// (`allocate(SharedStorage)`): the ones a quick fix may edit. A class
    /// the kernel does not name is not in its frame (`incremental.rs`).
    pub fn classes_named_by_kernel(&self) -> impl Iterator<Item = &cute_ir::module::ClassDef> {
        let text = self.slice(self.kernel.range);
        let words: std::collections::BTreeSet<&str> = text.split(|c: char| !c.is_alphanumeric() && c != '_').collect();
        self.module.classes.iter().filter(move |c| words.contains(c.name.as_str()) && self.module.linked_file(c.range).is_none())
    }

    /// The kernel statement with this id (`MemOp::stmt`).
    pub fn kernel_statement(&self, id: cute_ir::ast::StmtId) -> Option<&Stmt> {
        fn find(stmts: &[Stmt], id: cute_ir::ast::StmtId) -> Option<&Stmt> {
            stmts.iter().find_map(|s| {
                if s.id == id {
                    return Some(s);
                }
                match &s.kind {
                    StmtKind::If { then, orelse, .. } => find(then, id).or_else(|| find(orelse, id)),
                    StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => find(body, id),
                    _ => None,
                }
            })
        }
        find(&self.kernel.body, id)
    }

    /// Whether an expression can differ between the threads of a CTA: it
    /// reads the thread, warp or lane index, or a kernel variable assigned
    /// from one.
    pub fn varies_across_threads(&self, e: &cute_ir::ast::Expr) -> bool {
        use cute_ir::api::Api;
        let reads = |e: &cute_ir::ast::Expr, names: &std::collections::BTreeSet<String>| {
            let mut calls = Vec::new();
            e.calls(&mut calls);
            let mut uses = Vec::new();
            e.collect_uses(&mut uses);
            calls.iter().any(|c| matches!(c.api, Some(Api::ThreadIdx | Api::ThreadIdxX | Api::WarpIdx | Api::LaneIdx | Api::ElectOne)))
                || uses.iter().any(|u| names.contains(u))
        };
        let mut names = std::collections::BTreeSet::new();
        loop {
            let before = names.len();
            fn assigns<'s>(stmts: &'s [Stmt], out: &mut Vec<(&'s [cute_ir::ast::Target], &'s cute_ir::ast::Expr)>) {
                for s in stmts {
                    match &s.kind {
                        StmtKind::Assign { targets, value } => out.push((targets, value)),
                        StmtKind::If { then, orelse, .. } => {
                            assigns(then, out);
                            assigns(orelse, out);
                        }
                        StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::With { body, .. } => assigns(body, out),
                        _ => {}
                    }
                }
            }
            let mut all = Vec::new();
            assigns(&self.kernel.body, &mut all);
            for (targets, value) in all {
                if reads(value, &names) {
                    for t in targets {
                        let mut defs = Vec::new();
                        t.collect_defs(&mut defs);
                        names.extend(defs);
                    }
                }
            }
            if names.len() == before {
                break;
            }
        }
        reads(e, &names)
    }

    /// The text range of an argument of the call at `site`: the keyword
    /// argument named one of `names`, else the positional argument at
    /// `position` (when it is not a keyword argument).
    pub fn argument_range(&self, site: TextRange, names: &[&str], position: usize) -> Option<TextRange> {
        let text = self.slice(site);
        let open = text.find('(')?;
        let mut depth = 0;
        let mut start = open + 1;
        let mut args: Vec<(usize, usize)> = Vec::new();
        for (i, ch) in text.char_indices().skip_while(|(i, _)| *i < open) {
            match ch {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth -= 1;
                    if depth == 0 {
                        args.push((start, i));
                        break;
                    }
                }
                ',' if depth == 1 => {
                    args.push((start, i));
                    start = i + 1;
                }
                _ => {}
            }
        }
        let trimmed = |(a, b): (usize, usize)| {
            let s = &text[a..b];
            let lead = s.len() - s.trim_start().len();
            let body = s.trim();
            (a + lead, a + lead + body.len(), body)
        };
        let args: Vec<(usize, usize, &str)> = args.into_iter().map(trimmed).filter(|a| !a.2.is_empty()).collect();
        // `name=value`, not `a == b`.
        let keyword_value = |body: &str, name: &str| -> Option<usize> {
            let rest = body.strip_prefix(name)?.trim_start().strip_prefix('=')?;
            (!rest.starts_with('=')).then(|| body.len() - rest.trim_start().len())
        };
        let is_keyword = |body: &str| {
            let name: String = body.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            !name.is_empty() && keyword_value(body, &name).is_some()
        };
        let pick = args
            .iter()
            .find_map(|&(a, _, body)| names.iter().find_map(|k| keyword_value(body, k).map(|lead| (a + lead, a + body.len()))))
            .or_else(|| args.get(position).filter(|a| !is_keyword(a.2)).map(|a| (a.0, a.1)))?;
        Some(TextRange { start: site.start + pick.0 as u32, end: site.start + pick.1 as u32 })
    }

    /// How the call at `site` names the `arch` module (`cute.arch`,
    /// `cutlass.cute.arch`), for a call inserted next to it; `cute.arch`
    /// when it names none.
    pub fn arch_prefix(&self, site: TextRange) -> String {
        self.call_at(site)
            .and_then(|c| c.func.dotted())
            .and_then(|d| d.find(".arch.").map(|i| d[..i + ".arch".len()].to_string()))
            .unwrap_or_else(|| "cute.arch".to_string())
    }

    /// The call whose range is exactly `site`.
    pub fn call_at(&self, site: TextRange) -> Option<&Call> {
        let (_, chain) = self.ancestors(site)?;
        let stmt = chain.last()?;
        let mut calls = Vec::new();
        match &stmt.kind {
            StmtKind::Expr(e) | StmtKind::Assign { value: e, .. } | StmtKind::AugAssign { value: e, .. } => e.calls(&mut calls),
            StmtKind::If { cond: e, .. } | StmtKind::While { cond: e, .. } => e.calls(&mut calls),
            StmtKind::Return(Some(e)) => e.calls(&mut calls),
            _ => {}
        }
        calls.into_iter().find(|c| c.range == site)
    }
}

pub fn steps_to_related(steps: Vec<Step>) -> Vec<Related> {
    steps.into_iter().map(|s| Related { range: s.site, message: s.message, file: None, event: Some(s.event) }).collect()
}

/// Error when the verdict rests on nothing but the code; warning when it
/// rests on an assumption the diagnostic states.
pub fn severity_for(model: &Model, extra_assumptions: &[String]) -> Severity {
    if model.assumptions.is_empty() && extra_assumptions.is_empty() {
        Severity::Error
    } else {
        Severity::Warning
    }
}
