//! Where code lives: tests, examples, demos and benchmarks use an algorithm more often than
//! they implement it, so every search lists results there after the rest.

/// Why a result in tests ([`is_test_path`]) comes after the others.
pub const TESTS_LAST: &str = "tests: in tests, examples or benchmarks, so listed after the code that implements";

/// Tests, examples, demos and benchmarks: code that uses an algorithm more often than it
/// implements it. A folder counts by any word of its name (`lib-tests`, `plugin.demo`).
const DIRS: [&str; 13] = ["test", "tests", "testing", "unittest", "unittests", "example", "examples", "demo", "demos", "bench", "benchmark", "benchmarks", "samples"];

/// Whether an indexed root is itself a folder of tests or examples: named exactly so
/// (`examples/` indexed beside `src/`), not by a word of a longer name (`test-repo`).
pub fn root_is_tests(root: &str) -> bool {
    let name = root.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next().unwrap_or("");
    DIRS.contains(&name.to_lowercase().as_str())
}

pub fn is_test_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split(['/', '\\']).collect();
    let Some((file, dirs)) = parts.split_last() else { return false };
    let stem = file.split('.').next().unwrap_or("");
    dirs.iter().any(|d| d.to_lowercase().split(['-', '_', '.']).any(|w| DIRS.contains(&w)))
        || stem.eq_ignore_ascii_case("test")
        || stem.eq_ignore_ascii_case("tests")
        || ["test_", "Test", "test-"].iter().any(|p| stem.starts_with(p))
        || ["_test", "Test", "Tests", "-test", "_tests"].iter().any(|p| stem.ends_with(p))
}

/// [`is_test_path`] of `path` below the longest of `roots` that holds it: the folders
/// above an indexed root (`/home/me/benchmarks/zlib`) say nothing about its files.
pub fn in_tests(path: &str, roots: &[String]) -> bool {
    let root = roots
        .iter()
        .map(|r| r.trim_end_matches(['/', '\\']))
        .filter(|r| !r.is_empty() && path.len() > r.len() && path.starts_with(r) && path[r.len()..].starts_with(['/', '\\']))
        .max_by_key(|r| r.len());
    match root {
        Some(r) => root_is_tests(r) || is_test_path(&path[r.len()..]),
        None => is_test_path(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_above_the_root_do_not_count() {
        let roots = vec!["/home/me/tests/zlib".to_string(), "/home/me/tests/zlib/contrib".to_string()];
        assert!(!in_tests("/home/me/tests/zlib/deflate.c", &roots));
        assert!(in_tests("/home/me/tests/zlib/test/example.c", &roots));
        assert!(in_tests("/home/me/tests/zlib/contrib/tests/x.c", &roots));
        // Outside every root (a shard's or an old index's paths): the whole path decides.
        assert!(in_tests("/elsewhere/tests/x.c", &roots));
        assert!(in_tests("/home/me/tests/zlibx/deflate.c", &roots));
        // A root that is itself a folder of examples, indexed beside the code.
        let roots = vec!["/p/src".to_string(), "/p/examples".to_string(), "/tmp/test-repo".to_string()];
        assert!(in_tests("/p/examples/bfs.c", &roots) && !in_tests("/p/src/bfs.c", &roots));
        assert!(!in_tests("/tmp/test-repo/heap.c", &roots));
    }

    #[test]
    fn test_and_example_paths() {
        assert!(is_test_path("/src/tests/unit/dijkstra.c"));
        assert!(is_test_path("/a/src/test/java/org/FooTest.java"));
        assert!(is_test_path("/a/examples/simple/bfs.c"));
        assert!(!is_test_path("/a/src/paths/dijkstra.c"));
        assert!(!is_test_path("/a/src/main/java/org/Contest.java"));
        assert!(is_test_path("/a/tests/test_heap.c") && is_test_path("/x/heap_test.c"));
        assert!(is_test_path("/proj-3.8/lib-tests/macros.h") && is_test_path("/proj/plugin.demo/gtk/callbacks.c"));
        assert!(is_test_path("/mathlib/demo/test.c") && is_test_path("/x/src/Tests.java"));
        assert!(!is_test_path("/a/latest/heap.c") && !is_test_path("/a/contest/heap.c") && !is_test_path("/a/testament.c"));
    }
}
