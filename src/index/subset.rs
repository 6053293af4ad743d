//! A part of an index that a query is confined to: bitmaps over function ids and over node
//! ids, which FAISS reads as a selector (see `vectors::search_in`).

/// Functions and nodes a query may return. Built by `search::scope` from paths and
/// languages; `key` names what it was built from, so a repeated query reuses it.
#[derive(Clone, Debug, Default)]
pub struct Subset {
    pub key: String,
    /// Bit `f` set: function `f` is inside.
    pub functions: Vec<u8>,
    /// Bit `n` set: node `n` belongs to a function inside.
    pub nodes: Vec<u8>,
    /// Files and functions inside.
    pub files: usize,
    pub function_count: usize,
}

/// A bitmap of `n` bits, all clear.
pub fn bitmap(n: usize) -> Vec<u8> {
    vec![0; n.div_ceil(8)]
}

pub fn set(bits: &mut [u8], i: usize) {
    if let Some(b) = bits.get_mut(i / 8) {
        *b |= 1 << (i % 8);
    }
}

pub fn get(bits: &[u8], i: usize) -> bool {
    bits.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)
}

/// Sets bits `lo..hi`.
pub fn set_range(bits: &mut [u8], lo: usize, hi: usize) {
    for i in lo..hi.min(bits.len() * 8) {
        set(bits, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits() {
        let mut b = bitmap(20);
        assert_eq!(b.len(), 3);
        set_range(&mut b, 3, 11);
        set(&mut b, 19);
        set(&mut b, 400);
        let on: Vec<usize> = (0..24).filter(|&i| get(&b, i)).collect();
        assert_eq!(on, [3, 4, 5, 6, 7, 8, 9, 10, 19]);
        assert!(!get(&b, 400));
    }
}
