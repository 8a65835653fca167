//! What each top-level name of a file stands for, according to its imports.

use std::collections::HashMap;

use tree_sitter::{QueryCursor, StreamingIterator};

use crate::{node_text, Queries, SyntaxTree};

/// Local name -> fully qualified dotted path, built from the file's import
/// statements (at any nesting level: imports inside functions count too,
/// which over-approximates but never misses a spelling).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportMap {
    names: HashMap<String, String>,
    /// Modules imported with `from m import *`.
    wildcards: Vec<String>,
}

impl ImportMap {
    pub fn from_tree(tree: &SyntaxTree) -> Self {
        let queries = Queries::get();
        let q = &queries.imports;
        let idx = |name| q.capture_index_for_name(name).unwrap();
        let (module, alias, from, name, wildcard) =
            (idx("module"), idx("alias"), idx("from"), idx("name"), idx("wildcard"));
        let mut map = ImportMap::default();
        let mut cursor = QueryCursor::new();
        for statement in import_statements(tree.root()) {
            let mut matches = cursor.matches(q, statement, tree.text.as_bytes());
            while let Some(m) = matches.next() {
            let get = |i| m.captures().iter().find(|c| c.index == i).map(|c| node_text(&tree.text, c.node));
            let alias_text = get(alias);
            if let Some(module_path) = get(module) {
                match alias_text {
                    // `import a.b as x`: x is a.b
                    Some(a) => map.insert(a, module_path),
                    // `import a.b`: binds `a`, and `a.b.f` qualifies itself
                    None => {
                        let head = module_path.split('.').next().unwrap_or(module_path);
                        map.insert(head, head)
                    }
                }
            } else if let Some(from_path) = get(from) {
                if get(wildcard).is_some() {
                    map.wildcards.push(from_path.to_string());
                } else if let Some(imported) = get(name) {
                    let local = alias_text.unwrap_or(imported);
                    // `from . import c` is `.c`, `from .a import c` is `.a.c`.
                    let sep = if from_path.ends_with('.') { "" } else { "." };
                    map.insert(local, &format!("{from_path}{sep}{imported}"));
                }
            }
            }
        }
        map
    }

    fn insert(&mut self, local: &str, path: &str) {
        self.names.insert(local.to_string(), path.to_string());
    }

    pub fn get(&self, local: &str) -> Option<&str> {
        self.names.get(local).map(String::as_str)
    }

    /// Every local name and the path it stands for, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut all: Vec<(&str, &str)> = self.names.iter().map(|(l, q)| (l.as_str(), q.as_str())).collect();
        all.sort();
        all.into_iter()
    }

    pub fn wildcards(&self) -> &[String] {
        &self.wildcards
    }

    /// Qualify a dotted expression such as `cute.arch.mbarrier_wait`.
    /// Returns `None` when its first segment is not imported.
    pub fn qualify(&self, dotted: &str) -> Option<String> {
        let (head, rest) = match dotted.split_once('.') {
            Some((h, r)) => (h, Some(r)),
            None => (dotted, None),
        };
        let base = self.get(head)?;
        Some(match rest {
            Some(rest) => format!("{base}.{rest}"),
            None => base.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    fn map(src: &str) -> ImportMap {
        ImportMap::from_tree(&parse(src).unwrap())
    }

    #[test]
    fn spellings() {
        let m = map(
            "import cutlass\nimport cutlass.cute as cute\nfrom cutlass import cute as c2\n\
             from cutlass.cute.arch import mbarrier_wait, mbarrier_arrive as arrive\n\
             import cutlass.pipeline\nfrom cutlass.cute.arch import *\n",
        );
        assert_eq!(m.qualify("cute.arch.mbarrier_wait").as_deref(), Some("cutlass.cute.arch.mbarrier_wait"));
        assert_eq!(m.qualify("c2.arch.barrier").as_deref(), Some("cutlass.cute.arch.barrier"));
        assert_eq!(m.qualify("mbarrier_wait").as_deref(), Some("cutlass.cute.arch.mbarrier_wait"));
        assert_eq!(m.qualify("arrive").as_deref(), Some("cutlass.cute.arch.mbarrier_arrive"));
        assert_eq!(m.qualify("cutlass.pipeline.PipelineAsync").as_deref(), Some("cutlass.pipeline.PipelineAsync"));
        assert_eq!(m.qualify("numpy.zeros"), None);
        assert_eq!(m.wildcards(), ["cutlass.cute.arch"]);
    }
}

/// The import statements of a file, at any nesting level: statements live
/// only in the bodies of the module and of compound statements, so only
/// those are walked (the query matching on every node of every expression
/// of a large file would cost more than parsing it).
fn import_statements(root: tree_sitter::Node<'_>) -> Vec<tree_sitter::Node<'_>> {
    let mut found = Vec::new();
    let mut pending = vec![root];
    while let Some(node) = pending.pop() {
        match node.kind() {
            "import_statement" | "import_from_statement" => found.push(node),
            "module" | "block" | "if_statement" | "elif_clause" | "else_clause" | "for_statement" | "while_statement"
            | "try_statement" | "except_clause" | "except_group_clause" | "finally_clause" | "with_statement"
            | "function_definition" | "class_definition" | "decorated_definition" | "match_statement" | "case_clause"
            | "ERROR" => {
                let mut cursor = node.walk();
                pending.extend(node.named_children(&mut cursor));
            }
            _ => {}
        }
    }
    // In the order of the file: a later import of a name wins.
    found.sort_by_key(|n| n.start_byte());
    found
}
