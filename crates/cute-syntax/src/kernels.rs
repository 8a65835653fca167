//! Finding the functions that CuTe DSL compiles: `@cute.kernel` (device
//! code) and `@cute.jit` (host code that launches kernels, or device helpers).

use tree_sitter::{Node, QueryCursor, StreamingIterator};

use crate::{node_text, ImportMap, Queries, SyntaxTree, TextRange};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecoratorKind {
    Kernel,
    Jit,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelDef {
    pub name: String,
    /// The enclosing class for methods.
    pub class_name: Option<String>,
    pub kind: DecoratorKind,
    /// The `def` node (not the decorated wrapper), by byte range.
    pub def_range: TextRange,
    pub name_range: TextRange,
}

impl KernelDef {
    /// `Class.method` for methods, the bare name otherwise.
    pub fn display_name(&self) -> String {
        match &self.class_name {
            Some(c) => format!("{c}.{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// Classify a decorator expression (`cute.kernel`, `cute.jit(preprocess=False)`, ...).
pub fn decorator_kind_of(imports: &ImportMap, expr: &str) -> Option<DecoratorKind> {
    let expr = expr.trim_start_matches('@').trim();
    let callee = expr.split('(').next().unwrap_or(expr).trim();
    let qualified = imports.qualify(callee).unwrap_or_else(|| {
        if imports.wildcards().iter().any(|w| w == "cutlass.cute") {
            // `from cutlass.cute import *` then `@kernel`
            format!("cutlass.cute.{callee}")
        } else if let Some(rest) = callee.strip_prefix("cute.") {
            // Snippets pasted without their imports use the usual alias.
            format!("cutlass.cute.{rest}")
        } else {
            callee.to_string()
        }
    });
    match qualified.as_str() {
        "cutlass.cute.kernel" => Some(DecoratorKind::Kernel),
        "cutlass.cute.jit" => Some(DecoratorKind::Jit),
        _ => None,
    }
}

pub fn find_kernels(tree: &SyntaxTree, imports: &ImportMap) -> Vec<KernelDef> {
    let q = &Queries::get().kernels;
    let decorator = q.capture_index_for_name("decorator").unwrap();
    let name = q.capture_index_for_name("name").unwrap();
    let definition = q.capture_index_for_name("definition").unwrap();
    let mut out: Vec<KernelDef> = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(q, tree.root(), tree.text.as_bytes());
    while let Some(m) = matches.next() {
        let capture = |i| m.captures().iter().find(|c| c.index == i).map(|c| c.node);
        let (Some(dec), Some(name_node), Some(def)) = (capture(decorator), capture(name), capture(definition))
        else {
            continue;
        };
        let Some(kind) = decorator_kind_of(imports, node_text(&tree.text, dec)) else { continue };
        let Some(function) = def.child_by_field_name("definition") else { continue };
        let def_range = TextRange::of(&function);
        if out.iter().any(|k| k.def_range == def_range) {
            continue; // several decorators on one function
        }
        out.push(KernelDef {
            name: node_text(&tree.text, name_node).to_string(),
            class_name: enclosing_class(&tree.text, def),
            kind,
            def_range,
            name_range: TextRange::of(&name_node),
        });
    }
    out.sort_by_key(|k| k.def_range);
    out
}

fn enclosing_class(text: &str, node: Node<'_>) -> Option<String> {
    let mut cur = node.parent();
    while let Some(n) = cur {
        if n.kind() == "class_definition" {
            return n.child_by_field_name("name").map(|c| node_text(text, c).to_string());
        }
        if n.kind() == "function_definition" {
            return None;
        }
        cur = n.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    #[test]
    fn finds_kernels_and_methods_in_any_spelling() {
        let src = "\
import cutlass.cute as cute
from cutlass import cute as c
from cutlass.cute import kernel

@cute.kernel
def k1(x): pass

@c.jit(preprocess=False)
def host(x): pass

@kernel
def k2(): pass

@other.kernel
def not_one(): pass

class Op:
    @cute.kernel
    def k3(self): pass
";
        let tree = parse(src).unwrap();
        let imports = ImportMap::from_tree(&tree);
        let ks = find_kernels(&tree, &imports);
        let names: Vec<_> = ks.iter().map(|k| (k.display_name(), k.kind)).collect();
        assert_eq!(
            names,
            vec![
                ("k1".to_string(), DecoratorKind::Kernel),
                ("host".to_string(), DecoratorKind::Jit),
                ("k2".to_string(), DecoratorKind::Kernel),
                ("Op.k3".to_string(), DecoratorKind::Kernel),
            ]
        );
    }
}
