//! Where code lives: tests, examples, demos and benchmarks use an algorithm more often than
//! they implement it, so every search lists results there after the rest.

/// Why a result in tests ([`is_test_path`]) comes after the others.
pub const TESTS_LAST: &str = "tests: in tests, examples or benchmarks, so listed after the code that implements";

/// Tests, examples, demos and benchmarks: code that uses an algorithm more often than it
/// implements it. A folder counts by any word of its name (`lib-tests`, `plugin.demo`).
pub fn is_test_path(path: &str) -> bool {
    const DIRS: [&str; 13] = ["test", "tests", "testing", "unittest", "unittests", "example", "examples", "demo", "demos", "bench", "benchmark", "benchmarks", "samples"];
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
    let below = roots
        .iter()
        .map(|r| r.trim_end_matches(['/', '\\']))
        .filter(|r| !r.is_empty() && path.len() > r.len() && path.starts_with(r) && path[r.len()..].starts_with(['/', '\\']))
        .max_by_key(|r| r.len())
        .map_or(path, |r| &path[r.len()..]);
    is_test_path(below)
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
