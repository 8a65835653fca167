//! Finding the functions that CuTe DSL compiles: `@cute.kernel` (device code)
//! and `@cute.jit` (host code that launches kernels, or device helpers).
//!
//! [`may_define_kernels`] reads off the text alone whether a file can define
//! one at all (a decorator line spelling `kernel` or `jit`, or an import
//! renaming one): the command line parses no other file.

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

/// Whether `text` may define a function CuTe DSL compiles, read off the
/// text without parsing it: a decorator line that spells `kernel` or `jit`
/// (`@cute.kernel`, `@cute.jit(preprocess=False)`), or an import that
/// renames one of them (`from cutlass.cute import kernel as device`), after
/// which a decorator need not spell it. [`decorator_kind_of`] knows no
/// other way, so a file where neither occurs defines none and need not be
/// parsed: most of the Python files of a code base that uses the DSL in
/// places (host code, tests, benchmarks).
pub fn may_define_kernels(text: &str) -> bool {
    let spells_one = |s: &str| s.contains("kernel") || s.contains("jit");
    text.lines().any(|line| line.trim_start().starts_with('@') && spells_one(line))
        || ["kernel", "jit"].into_iter().any(|name| renamings(text, name).next().is_some())
}

/// The names `name` is renamed to in `text` (`device` for `kernel as
/// device`), read off the text (a section that does not parse included).
pub(crate) fn renamings<'t>(text: &'t str, name: &'t str) -> impl Iterator<Item = &'t str> + 't {
    text.match_indices(name).filter_map(move |(at, _)| {
        let rest = &text[at + name.len()..];
        let after_space = rest.trim_start();
        let alias = after_space.strip_prefix("as").filter(|r| r.starts_with(char::is_whitespace) && after_space.len() < rest.len())?;
        let alias = alias.trim_start();
        let end = alias.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(alias.len());
        (end > 0).then(|| &alias[..end])
    })
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
    fn a_file_without_a_kernel_decorator_or_a_renamed_one_defines_no_kernel() {
        let kernels = |src: &str| find_kernels(&parse(src).unwrap(), &ImportMap::from_tree(&parse(src).unwrap())).len();
        let defining = [
            "import cutlass.cute as cute\n\n@cute.kernel\ndef k(): pass\n",
            "import cutlass.cute as cute\n\nclass G:\n    @cute.jit(preprocess=False)\n    def run(self): pass\n",
            "from cutlass.cute import kernel as device\n\n@device\ndef k(): pass\n",
            "from cutlass.cute import (\n    jit  as  host,\n)\n\n@host\ndef run(): pass\n",
        ];
        for src in defining {
            assert_eq!(kernels(src), 1, "{src}");
            assert!(may_define_kernels(src), "{src}");
        }
        // Host code that compiles kernels defined elsewhere, and names them
        // in comments and calls.
        let host = "import cutlass.cute as cute\nfrom dataclasses import dataclass\n\n# the kernel is in gemm.py\n@dataclass\nclass Config:\n    tile: int\n\ndef run(kernel_fn):\n    compiled = cute.compile(kernel_fn)  # compiled on first use\n";
        assert_eq!(kernels(host), 0);
        assert!(!may_define_kernels(host));
    }

    /// Every fixture that defines a kernel is one the text says may.
    #[test]
    fn every_fixture_defining_kernels_may_define_them() {
        fn visit(dir: &std::path::Path, seen: &mut usize) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    visit(&path, seen);
                } else if path.extension().is_some_and(|e| e == "py") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let tree = parse(&text).unwrap();
                    if !find_kernels(&tree, &ImportMap::from_tree(&tree)).is_empty() {
                        *seen += 1;
                        assert!(may_define_kernels(&text), "{}", path.display());
                    }
                }
            }
        }
        let mut seen = 0;
        visit(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures"), &mut seen);
        assert!(seen > 100, "{seen} fixtures define kernels");
    }

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
