//! Operator-family counts per language, table-driven. Each row: text, expected counts as
//! letters: A add/sub, M mul/div, I indexing, P modulo, B bit, L logical, R relational.

use beryl::features::{count_pcode, count_source, Family, OpCounts};
use beryl::graph::Lang;

fn expect(spec: &str) -> OpCounts {
    let mut c = OpCounts::default();
    for part in spec.split_whitespace() {
        let (f, n) = part.split_at(1);
        let fam = match f {
            "A" => Family::AddSub,
            "M" => Family::MulDiv,
            "I" => Family::Index,
            "P" => Family::Modulo,
            "B" => Family::Bit,
            "L" => Family::Logical,
            "R" => Family::Relational,
            _ => panic!("bad spec {spec}"),
        };
        c.0[fam as usize] += n.parse::<u32>().expect("count");
    }
    c
}

fn check(lang: Lang, rows: &[(&str, &str)]) {
    let mut bad = Vec::new();
    for (text, spec) in rows {
        let got = count_source(lang, text);
        if got != expect(spec) {
            bad.push(format!("{text:?}: got {got}, want {}", expect(spec)));
        }
    }
    assert!(bad.is_empty(), "{} mismatches in {}:\n{}", bad.len(), lang.name(), bad.join("\n"));
}

#[test]
fn c_operators() {
    check(
        Lang::C,
        &[
            ("x = y + 1;", "A1"),
            ("x += 2;", "A1"),
            ("x -= y - 1;", "A2"),
            ("i++;", "A1"),
            ("--i;", "A1"),
            ("x = -y;", "A1"),
            ("a = b * c / d;", "M2"),
            ("a *= 2;", "M1"),
            ("*p = 3;", ""),
            ("x = *p * *q;", "M1"),
            ("int *p = &x;", ""),
            ("int **pp = &p;", ""),
            ("f(&x, *y);", ""),
            ("y = a & b;", "B1"),
            ("y &= mask;", "B1"),
            ("y = a[i][j];", "I2"),
            ("int a[10];", ""),
            ("c[i][j] = c[i][j] + a[i][k] * b[k][j];", "I8 A1 M1"),
            ("r = a % b;", "P1"),
            ("r %= 7;", "P1"),
            ("x <<= 2;", "B1"),
            ("x >>= k;", "B1"),
            ("x = x << 3 | (y & 0x7);", "B3"),
            ("x = ~y ^ z;", "B2"),
            ("x |= 1;", "B1"),
            ("ok = a && !b || c;", "L3"),
            ("lo <= hi", "R1"),
            ("a[mid] < key", "I1 R1"),
            ("find_set(u) != find_set(v)", "R1"),
            ("j >= 0 && a[j] > key", "R2 L1 I1"),
            ("a == b", "R1"),
            ("p->next = q.next;", ""),
            ("p->val = p->val + 1;", "A1"),
            ("return a + b;", "A1"),
            ("return;", ""),
            ("int mid = lo + (hi - lo) / 2;", "A2 M1"),
            ("case N + 1", "A1"),
            ("x = sizeof(int) * n;", "M1"),
            ("x = (int)y - 1;", "A1"),
            ("x = cond ? a + 1 : b;", "A1"),
            ("unsigned h = (h * 31 + c) % size;", "M1 A1 P1"),
            ("", ""),
            ("while_loop_label:", ""),
        ],
    );
}

#[test]
fn cpp_operators() {
    check(
        Lang::Cpp,
        &[
            ("std::vector<int> v(n);", ""),
            ("std::map<int, std::vector<int>> m;", ""),
            ("x = std::max<int>(a, b) + 1;", "A1"),
            ("i < n", "R1"),
            ("a < b && c > d", "R2 L1"),
            ("x = a < b;", "R1"),
            ("i < v.size()", "R1"),
            ("int& r = x;", ""),
            ("auto&& y = f();", ""),
            ("std::cout << x << std::endl;", "B2"),
            ("a = b and not c;", "L2"),
            ("x = y bitand z;", "B1"),
            ("x xor_eq y;", "B1"),
            ("a = b not_eq c;", "R1"),
            ("auto f = [&](int i) { return v[i] * 2; };", "I1 M1"),
            ("p->x = q[i]->y;", "I1"),
            ("int *p = new int[n];", ""),
            ("auto [a, b] = pairs[i];", "I1"),
            ("x = a <=> b;", "R1"),
            ("*it += 1;", "A1"),
            ("++it;", "A1"),
            ("r = static_cast<int>(x) % m;", "P1"),
            ("dist[v] = dist[u] + w;", "I2 A1"),
            ("const Node* n = &nodes[i];", "I1"),
            ("x = y ^ (z | w);", "B2"),
            ("if_ok = !empty() || size() > 0;", "L2 R1"),
            ("int x : xs", ""),
            ("auto& e : edges", ""),
            ("std::swap(a[i], a[j]);", "I2"),
        ],
    );
}

#[test]
fn java_operators() {
    check(
        Lang::Java,
        &[
            ("x >>>= 2;", "B1"),
            ("y = x >>> 3;", "B1"),
            ("y = x >> 3 << 1;", "B2"),
            ("obj instanceof String", ""),
            ("List<Integer> xs = new ArrayList<>();", ""),
            ("Map<String, List<Integer>> m = new HashMap<>();", ""),
            ("int[] a = new int[n];", ""),
            ("a[j + 1] = a[j];", "I2 A1"),
            ("s = \"a\" + b;", "A1"),
            ("boolean ok = !done && i < n;", "L2 R1"),
            ("j--;", "A1"),
            ("x = a % b == 0 ? a : b;", "P1 R1"),
            ("int key = a[i];", "I1"),
            ("x ^= y;", "B1"),
            ("m[i][j] = Math.min(m[i][j], m[i][k] + m[k][j]);", "I8 A1"),
            ("int x : xs", ""),
            ("case 3", ""),
            ("int j = i - 1", "A1"),
            ("i < a.length", "R1"),
            ("this.x = -y;", "A1"),
            ("return a * b / c;", "M2"),
            ("x = (a & 0xff) | (b << 8);", "B3"),
            ("done = a != b || c == d;", "R2 L1"),
            ("throw new IllegalArgumentException(\"n < 0\");", ""),
            ("catch (IOException e)", ""),
        ],
    );
}

#[test]
fn pcode_operators() {
    let rows: &[(&str, bool, &str)] = &[
        ("C[i][j] ← C[i][j] + A[i][k] · B[k][j]", false, "I8 A1 M1"),
        ("i ≤ n", true, "R1"),
        ("x = y", true, "R1"),
        ("x = y", false, ""),
        ("x ← y", false, ""),
        ("x := y", false, ""),
        ("p <- p + 1", false, "A1"),
        ("a mod b", false, "P1"),
        ("a MOD b = 0", true, "P1 R1"),
        ("a % b", false, "P1"),
        ("not found and i < n", true, "L2 R1"),
        ("a ∧ b ∨ ¬c", true, "L3"),
        ("a && b || !c", true, "L3"),
        ("q ← ⌊(p + r) / 2⌋", false, "A1 M1"),
        ("q ← ⌈n / 2⌉", false, "M1"),
        ("d[v] ← ∞", false, "I1"),
        ("d[v] > d[u] + w(u, v)", true, "I2 R1 A1"),
        ("A[i, j] ← 0", false, "I2"),
        ("f(A[i], j)", false, "I1"),
        ("A[f(i, j)]", false, "I1"),
        ("L ← [1, 2, 3]", false, ""),
        ("x ≠ NIL", true, "R1"),
        ("x ≥ 1 and y ≤ 2", true, "R2 L1"),
        ("x >= 1 or y <= 2", true, "R2 L1"),
        ("n × n", false, "M1"),
        ("k ← k div 2", false, "M1"),
        ("x xor y", false, "B1"),
        ("x ⊕ y", false, "B1"),
        ("x << 1", false, "B1"),
        ("x & 1", false, "B1"),
        ("2^k", false, ""),
        ("|S| = 0", true, "R1"),
        ("S ← S ∪ {v}", false, ""),
        ("y ← -x", false, "A1"),
        ("y ← x − 1", false, "A1"),
        ("i ← i + 1", false, "A1"),
        ("x += 1", false, "A1"),
        ("1e-5 < eps", true, "R1"),
        ("i = 1 to n", false, ""),
        ("a != b", true, "R1"),
        ("a == b", false, "R1"),
        ("Σ a_i", false, "A1"),
        ("∏ x", false, "M1"),
        ("Π x_i", false, "M1"),
        ("σ ← π · r", false, "M1"),
        ("key ← A[j]", false, "I1"),
        ("A[i + 1] ← A[i]", false, "I2 A1"),
        ("i > 0 and A[i] > key", true, "R2 L1 I1"),
        ("", false, ""),
    ];
    let mut bad = Vec::new();
    for (text, test, spec) in rows {
        let got = count_pcode(text, *test);
        if got != expect(spec) {
            bad.push(format!("{text:?} (test {test}): got {got}, want {}", expect(spec)));
        }
    }
    assert!(bad.is_empty(), "{} mismatches in p-code:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn same_algorithm_same_counts_across_languages() {
    // The matrix-product step of Figure 1 written four ways.
    let want = expect("I8 A1 M1");
    assert_eq!(count_source(Lang::C, "C[i][j] = C[i][j] + A[i][k] * B[k][j];"), want);
    assert_eq!(count_source(Lang::Cpp, "C[i][j] = C[i][j] + A[i][k] * B[k][j];"), want);
    assert_eq!(count_source(Lang::Java, "C[i][j] = C[i][j] + A[i][k] * B[k][j];"), want);
    assert_eq!(count_pcode("C[i][j] ← C[i][j] + A[i][k] · B[k][j]", false), want);
    assert_eq!(count_source(Lang::Pcode, "C[i][j] ← C[i][j] + A[i][k] × B[k][j]"), want);
}

#[test]
fn broken_code_still_counts_and_never_panics() {
    // Unbalanced text from a damaged file: whatever tree-sitter recovers is counted.
    let c = count_source(Lang::C, "x = a + b * (c");
    assert!(c.get(Family::AddSub) >= 1, "{c}");
    for lang in [Lang::C, Lang::Cpp, Lang::Java] {
        for t in ["}}}", "((((", "\"unterminated", "#define X 1", "/* open comment", "a[", "<<<>>>"] {
            let _ = count_source(lang, t);
        }
    }
}
