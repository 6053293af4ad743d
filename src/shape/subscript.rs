//! The array-index shape of a statement, with every name left out: how many one- and
//! two-dimensional subscripts it writes, whether two 2-D accesses chain through a shared
//! index (`d[i][k] + d[k][j]`, `A[i][k] * B[k][j]`), whether indices are offset by a
//! constant (`a[j + 1]`) and whether a subscript holds another (`a[p[i]]`).
//!
//! A lexical scan, not a parse: it reads C, C++, Java and p-code math alike (p-code also
//! writes `A[i, j]`), and a linearized index `a[i * n + j]` counts as two-dimensional.

/// Counts saturate at 255.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Subscripts {
    pub one: u8,
    pub two: u8,
    pub chain: u8,
    pub offset: u8,
    pub nested: u8,
}

impl Subscripts {
    pub fn to_bytes(self) -> [u8; 5] {
        [self.one, self.two, self.chain, self.offset, self.nested]
    }

    pub fn from_bytes(b: [u8; 5]) -> Subscripts {
        Subscripts { one: b[0], two: b[1], chain: b[2], offset: b[3], nested: b[4] }
    }

    pub fn any(self) -> bool {
        self.one > 0 || self.two > 0
    }

    pub fn add(&mut self, o: Subscripts) {
        self.one = self.one.saturating_add(o.one);
        self.two = self.two.saturating_add(o.two);
        self.chain = self.chain.saturating_add(o.chain);
        self.offset = self.offset.saturating_add(o.offset);
        self.nested = self.nested.saturating_add(o.nested);
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    Num,
    Punct(char),
}

fn lex(text: &str) -> Vec<Tok> {
    let cs: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_alphabetic() || c == '_' {
            let s = i;
            while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_' || cs[i] == '\'') {
                i += 1;
            }
            out.push(Tok::Name(cs[s..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '.') {
                i += 1;
            }
            out.push(Tok::Num);
        } else {
            if !c.is_whitespace() {
                out.push(Tok::Punct(c));
            }
            i += 1;
        }
    }
    out
}

/// What one index expression is.
#[derive(Clone, Debug, PartialEq)]
enum Idx {
    Var(String),
    Offset(String),
    Linear,
    Nested,
    Other,
}

fn classify(toks: &[Tok]) -> Idx {
    if toks.iter().any(|t| *t == Tok::Punct('[')) {
        return Idx::Nested;
    }
    match toks {
        [Tok::Name(v)] => Idx::Var(v.clone()),
        [Tok::Name(v), Tok::Punct('+' | '-'), Tok::Num] | [Tok::Num, Tok::Punct('+'), Tok::Name(v)] => Idx::Offset(v.clone()),
        _ => {
            let has = |c: char| toks.iter().any(|t| *t == Tok::Punct(c));
            if has('*') && (has('+') || has('-')) {
                Idx::Linear
            } else {
                Idx::Other
            }
        }
    }
}

/// Subscripts nested deeper than this inside one another (`a[b[c[…]]]`) are not read: the
/// scan recurses once a level, and real code nests two or three.
const MAX_NESTED: usize = 16;

/// Index lists of each access: `a[i][j]` → one access with two indices.
fn accesses(toks: &[Tok]) -> Vec<Vec<Idx>> {
    accesses_within(toks, 0)
}

fn accesses_within(toks: &[Tok], nested: usize) -> Vec<Vec<Idx>> {
    let mut out: Vec<Vec<Idx>> = Vec::new();
    let mut i = 0;
    let mut cur: Option<Vec<Idx>> = None;
    while i < toks.len() {
        let opens = toks[i] == Tok::Punct('[')
            && i > 0
            && matches!(toks[i - 1], Tok::Name(_) | Tok::Punct(']') | Tok::Punct(')'));
        if !opens {
            if let Some(c) = cur.take() {
                out.push(c);
            }
            i += 1;
            continue;
        }
        // Find the matching `]`, splitting top-level commas.
        let mut depth = 0usize;
        let mut j = i;
        let mut parts: Vec<&[Tok]> = Vec::new();
        let mut start = i + 1;
        while j < toks.len() {
            match toks[j] {
                Tok::Punct('[') | Tok::Punct('(') => depth += 1,
                Tok::Punct(']') | Tok::Punct(')') => {
                    depth -= 1;
                    if depth == 0 {
                        parts.push(&toks[start..j]);
                        break;
                    }
                }
                Tok::Punct(',') if depth == 1 => {
                    parts.push(&toks[start..j]);
                    start = j + 1;
                }
                _ => {}
            }
            j += 1;
        }
        let continues = toks[i - 1] == Tok::Punct(']');
        // `int[] a`: a type, not an access.
        if parts.iter().all(|p| p.is_empty()) {
            i = j + 1;
            continue;
        }
        let idx: Vec<Idx> = parts.iter().map(|p| classify(p)).collect();
        match (&mut cur, continues) {
            (Some(c), true) => c.extend(idx),
            _ => {
                if let Some(c) = cur.take() {
                    out.push(c);
                }
                cur = Some(idx);
            }
        }
        // Subscripts inside the brackets are accesses too (`a[p[i]]`).
        if nested < MAX_NESTED {
            for p in parts {
                out.extend(accesses_within(p, nested + 1));
            }
        }
        i = j + 1;
        if i < toks.len() && toks[i] != Tok::Punct('[') {
            if let Some(c) = cur.take() {
                out.push(c);
            }
        }
    }
    if let Some(c) = cur {
        out.push(c);
    }
    out
}

pub fn scan(text: &str) -> Subscripts {
    let toks = lex(text);
    let mut s = Subscripts::default();
    let mut pairs: Vec<(String, String)> = Vec::new();
    let bump = |x: &mut u8| *x = x.saturating_add(1);
    for a in accesses(&toks) {
        if a.len() >= 2 || a.iter().any(|i| *i == Idx::Linear) {
            bump(&mut s.two);
        } else {
            bump(&mut s.one);
        }
        for i in &a {
            match i {
                Idx::Offset(_) => bump(&mut s.offset),
                Idx::Nested => bump(&mut s.nested),
                _ => {}
            }
        }
        if let [first, second] = a.as_slice() {
            let name = |i: &Idx| match i {
                Idx::Var(v) | Idx::Offset(v) => Some(v.clone()),
                _ => None,
            };
            if let (Some(x), Some(y)) = (name(first), name(second)) {
                pairs.push((x, y));
            }
        }
    }
    let chained = pairs.iter().any(|(_, y)| pairs.iter().any(|(x2, y2)| x2 == y && y2 != y));
    if chained {
        s.chain = 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floyd_warshall_chains_in_code_and_pcode() {
        let c = scan("if (d[i][k] + d[k][j] < d[i][j]) d[i][j] = d[i][k] + d[k][j];");
        assert_eq!((c.one, c.two, c.chain), (0, 6, 1));
        let p = scan("D'[i][j] = min(D[i][j], D[i][k] + D[k][j])");
        assert_eq!((p.two, p.chain), (4, 1));
        let comma = scan("D[i, j] = min(D[i, j], D[i, k] + D[k, j])");
        assert_eq!((comma.two, comma.chain), (4, 1));
    }

    #[test]
    fn offsets_linear_and_nested() {
        let s = scan("a[j + 1] = a[j];");
        assert_eq!((s.one, s.two, s.offset), (2, 0, 1));
        assert_eq!(scan("x = m[i * n + j];").two, 1);
        let n = scan("parent[parent[x]] = y;");
        assert_eq!((n.one, n.nested), (2, 1));
        assert_eq!(scan("x = y + 1;"), Subscripts::default());
        assert_eq!(scan("int[] a = new int[n];").one, 1);
        assert_eq!(scan("c[i][j] += a[i][k] * b[k][j]").chain, 1);
        assert_eq!(scan("c[i][j] = a[i][j] + b[i][j]").chain, 0);
    }

    #[test]
    fn garbage_does_not_panic() {
        for t in ["]]]", "[[[", "a[", "a[]", "a[,]", "[1][2]", "a[b[c[d]]]", "x]["] {
            let _ = scan(t);
        }
    }
}
