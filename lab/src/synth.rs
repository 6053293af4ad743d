//! Deterministic C-like texts for benchmarks: statement-sized (about 10 tokens) and
//! function-sized (about 140 tokens). All texts of one call are distinct.

/// A small linear congruential generator: the same seed gives the same texts everywhere.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.next() % xs.len()]
    }
}

const VARS: &[&str] = &["i", "j", "k", "n", "lo", "hi", "mid", "sum", "key", "count", "left", "right", "dist", "weight", "tmp"];
const ARRS: &[&str] = &["a", "b", "buf", "heap", "parent", "rank", "dp", "edges", "keys", "nodes"];
const OPS: &[&str] = &["+", "-", "*", "/", "%", "<<", "&"];
const CMPS: &[&str] = &["<", "<=", ">", ">=", "==", "!="];

fn statement(r: &mut Lcg, serial: usize) -> String {
    let (v, w, a) = (r.pick(VARS), r.pick(VARS), r.pick(ARRS));
    match r.next() % 6 {
        0 => format!("{v} = {a}[{w}] {} {serial};", r.pick(OPS)),
        1 => format!("if ({v} {} {a}[{serial}])", r.pick(CMPS)),
        2 => format!("{a}[{v}] = {a}[{w} + {serial}];"),
        3 => format!("while ({v} {} {w} && {serial} > 0)", r.pick(CMPS)),
        4 => format!("int {v}{serial} = {w} {} 2;", r.pick(OPS)),
        _ => format!("return {a}[{v}] {} {serial};", r.pick(OPS)),
    }
}

/// `n` distinct statement-sized texts.
pub fn statements(n: usize, seed: u64) -> Vec<String> {
    let mut r = Lcg(seed);
    (0..n).map(|i| statement(&mut r, i)).collect()
}

/// `n` distinct function-sized texts: a signature and a dozen statements in a loop.
pub fn functions(n: usize, seed: u64) -> Vec<String> {
    let mut r = Lcg(seed);
    (0..n)
        .map(|i| {
            let mut s = format!("int {}_{i}(int *{}, int n) {{ for (int i = 0; i < n; i++) {{ ", r.pick(&["find", "merge", "relax", "update", "sift"]), r.pick(ARRS));
            for j in 0..11 {
                s.push_str(&statement(&mut r, i * 16 + j));
                s.push(' ');
            }
            s.push_str("} return 0; }");
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn deterministic_and_distinct() {
        let a = super::statements(100, 7);
        assert_eq!(a, super::statements(100, 7));
        let set: std::collections::HashSet<_> = a.iter().collect();
        assert_eq!(set.len(), 100);
        assert_eq!(super::functions(3, 1), super::functions(3, 1));
    }
}
