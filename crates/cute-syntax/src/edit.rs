//! The bytes an edit replaced, found by comparing the texts before and after
//! it: an editor sends a keystroke at a time, and what follows it (a tree
//! re-parsed incrementally, line starts moved) needs only where it was.

/// Length of the common prefix of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    // Blocks of 64 bytes compare as one `memcmp` each.
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n].iter().zip(&b[i..n]).take_while(|(x, y)| x == y).count()
}

/// Length of the common suffix of `a` and `b`, at most `max`.
fn common_suffix(a: &[u8], b: &[u8], max: usize) -> usize {
    const BLOCK: usize = 64;
    let (la, lb) = (a.len(), b.len());
    let mut i = 0;
    while i + BLOCK <= max && a[la - i - BLOCK..la - i] == b[lb - i - BLOCK..lb - i] {
        i += BLOCK;
    }
    i + a[..la - i].iter().rev().zip(b[..lb - i].iter().rev()).take(max - i).take_while(|(x, y)| x == y).count()
}

/// The byte range an edit replaced: `(start, old_end, new_end)`, such that
/// `old[..start] == new[..start]` and `old[old_end..] == new[new_end..]`,
/// with the range as short as the two texts allow.
pub fn edited_range(old: &str, new: &str) -> (usize, usize, usize) {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let prefix = common_prefix(o, n);
    let suffix = common_suffix(o, n, o.len().min(n.len()) - prefix);
    (prefix, o.len() - suffix, n.len() - suffix)
}
