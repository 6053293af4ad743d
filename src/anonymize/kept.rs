//! Names that are never renamed, even when the sources declare them: keywords of the
//! grammars, reserved implementation names, and small lists of standard-library names whose
//! meaning comes from outside the corpus (overridden library methods, iterator protocols,
//! C library functions a compat header may re-declare).

use crate::graph::Lang;
use std::collections::HashSet;

/// Every identifier-shaped keyword of tree-sitter-c 0.24 (taken from its grammar.json): the
/// lexer turns these words into keyword tokens, so a declared name equal to one (`#define
/// TRUE 1`, `#define inline __inline`) must keep its spelling or the parse changes.
#[rustfmt::skip]
const C_KEYWORDS: &[&str] = &[
    "FALSE", "NULL", "TRUE", "_Alignas", "_Alignof", "_Atomic", "_Generic", "_Nonnull", "_Noreturn", "__alignof",
    "__alignof__", "__asm", "__asm__", "__attribute", "__attribute__", "__based", "__cdecl", "__clrcall", "__declspec",
    "__except", "__extension__", "__fastcall", "__finally", "__forceinline", "__inline", "__inline__", "__leave",
    "__restrict", "__restrict__", "__sptr", "__stdcall", "__thiscall", "__thread", "__try", "__unaligned", "__uptr",
    "__vectorcall", "__volatile__", "_alignof", "_unaligned", "alignas", "alignof", "asm", "auto", "bool", "break", "case",
    "char", "char16_t", "char32_t", "char64_t", "char8_t", "charptr_t", "const", "constexpr", "continue", "default",
    "defined", "do", "double", "else", "enum", "extern", "false", "float", "for", "goto", "if", "inline", "int",
    "int16_t", "int32_t", "int64_t", "int8_t", "intptr_t", "long", "max_align_t", "noreturn", "nullptr", "nullptr_t",
    "offsetof", "ptrdiff_t", "register", "restrict", "return", "short", "signed", "size_t", "sizeof", "ssize_t", "static",
    "struct", "switch", "thread_local", "true", "typedef", "uint16_t", "uint32_t", "uint64_t", "uint8_t", "uintptr_t",
    "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Imaginary", "_Static_assert",
    "_Thread_local", "_Pragma", "typeof", "__typeof__", "__VA_ARGS__", "__VA_OPT__", "__func__",
];

/// tree-sitter-cpp 0.23 keywords beyond the C ones.
#[rustfmt::skip]
const CPP_KEYWORDS: &[&str] = &[
    "and", "and_eq", "bitand", "bitor", "catch", "class", "co_await", "co_return", "co_yield", "compl", "concept",
    "consteval", "constinit", "decltype", "delete", "explicit", "final", "friend", "mutable", "namespace", "new",
    "noexcept", "not", "not_eq", "operator", "or", "or_eq", "override", "private", "protected", "public", "requires",
    "static_assert", "template", "this", "throw", "try", "typename", "using", "virtual", "xor", "xor_eq", "wchar_t",
    "const_cast", "dynamic_cast", "reinterpret_cast", "static_cast", "typeid", "export", "import", "module",
];

/// tree-sitter-java 0.23 keywords, contextual ones included, plus the reserved type name `var`.
#[rustfmt::skip]
const JAVA_KEYWORDS: &[&str] = &[
    "_", "abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class", "continue", "default",
    "do", "double", "else", "enum", "exports", "extends", "false", "final", "finally", "float", "for", "if",
    "implements", "import", "instanceof", "int", "interface", "long", "module", "native", "new", "null", "open",
    "opens", "package", "permits", "private", "protected", "provides", "public", "record", "requires", "return",
    "sealed", "short", "static", "strictfp", "super", "switch", "synchronized", "this", "throw", "throws", "to",
    "transient", "transitive", "true", "try", "uses", "void", "volatile", "when", "while", "with", "yield", "var",
    "const", "goto",
];

/// C standard library (and a few POSIX) names: a vendored header that re-declares `sqrt` or
/// `malloc` must not turn every call of the real function into `func_N`.
#[rustfmt::skip]
const C_LIBRARY: &[&str] = &[
    // program entry: keeps programs linkable
    "main",
    // stdio.h
    "printf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf", "vsprintf", "vsnprintf", "scanf", "fscanf",
    "sscanf", "vscanf", "vsscanf", "vfscanf", "puts", "fputs", "gets", "fgets", "putc", "fputc", "putchar", "getc",
    "fgetc", "getchar", "ungetc", "fopen", "fclose", "freopen", "fflush", "fread", "fwrite", "fseek", "ftell", "rewind",
    "fgetpos", "fsetpos", "feof", "ferror", "clearerr", "perror", "remove", "rename", "tmpfile", "tmpnam", "setbuf",
    "setvbuf", "FILE", "fpos_t", "EOF", "BUFSIZ", "stdin", "stdout", "stderr", "SEEK_SET", "SEEK_CUR", "SEEK_END",
    "fileno", "popen", "pclose",
    // stdlib.h
    "malloc", "calloc", "realloc", "free", "aligned_alloc", "abort", "exit", "atexit", "quick_exit", "_Exit", "getenv",
    "system", "abs", "labs", "llabs", "div", "ldiv", "lldiv", "div_t", "ldiv_t", "lldiv_t", "atoi", "atol", "atoll",
    "atof", "strtol", "strtoll", "strtoul", "strtoull", "strtod", "strtof", "strtold", "rand", "srand", "RAND_MAX",
    "qsort", "bsearch", "EXIT_SUCCESS", "EXIT_FAILURE",
    // string.h, ctype.h
    "memcpy", "memmove", "memset", "memcmp", "memchr", "strcpy", "strncpy", "strcat", "strncat", "strcmp", "strncmp",
    "strcoll", "strxfrm", "strchr", "strrchr", "strstr", "strspn", "strcspn", "strpbrk", "strtok", "strlen", "strerror",
    "strdup", "strndup", "strnlen", "strcasecmp", "strncasecmp", "isalnum", "isalpha", "isblank", "iscntrl", "isdigit",
    "isgraph", "islower", "isprint", "ispunct", "isspace", "isupper", "isxdigit", "tolower", "toupper",
    // math.h: the functions are MATH_STEMS (with their `f` and `l` forms, see `is_math_variant`)
    "isnan", "isinf", "isfinite", "isnormal", "signbit", "fpclassify",
    "HUGE_VAL", "HUGE_VALF", "INFINITY", "NAN", "M_PI", "M_E", "M_SQRT2", "M_LN2", "M_LN10", "M_LOG2E", "M_LOG10E",
    "M_PI_2", "M_PI_4", "M_1_PI", "M_2_PI", "M_2_SQRTPI", "M_SQRT1_2",
    // assert.h, errno.h, limits.h, float.h, stddef.h, stdint.h, stdarg.h, setjmp.h, signal.h, time.h, locale.h
    "assert", "NDEBUG", "errno", "EDOM", "ERANGE", "EINVAL", "ENOMEM", "EILSEQ", "CHAR_BIT", "CHAR_MIN", "CHAR_MAX",
    "SCHAR_MIN", "SCHAR_MAX", "UCHAR_MAX", "SHRT_MIN", "SHRT_MAX", "USHRT_MAX", "INT_MIN", "INT_MAX", "UINT_MAX",
    "LONG_MIN", "LONG_MAX", "ULONG_MAX", "LLONG_MIN", "LLONG_MAX", "ULLONG_MAX", "SIZE_MAX", "PTRDIFF_MIN",
    "PTRDIFF_MAX", "INTMAX_MIN", "INTMAX_MAX", "UINTMAX_MAX", "INT8_MIN", "INT8_MAX", "UINT8_MAX", "INT16_MIN",
    "INT16_MAX", "UINT16_MAX", "INT32_MIN", "INT32_MAX", "UINT32_MAX", "INT64_MIN", "INT64_MAX", "UINT64_MAX",
    "DBL_MAX", "DBL_MIN", "DBL_EPSILON", "DBL_DIG", "DBL_MANT_DIG", "FLT_MAX", "FLT_MIN", "FLT_EPSILON", "FLT_DIG",
    "LDBL_MAX", "LDBL_MIN", "LDBL_EPSILON", "FLT_RADIX", "wchar_t", "offsetof", "intmax_t", "uintmax_t", "off_t",
    "va_list", "va_start", "va_arg", "va_end", "va_copy", "jmp_buf", "setjmp", "longjmp", "signal", "raise",
    "sig_atomic_t", "SIGINT", "SIGSEGV", "SIGABRT", "SIGFPE", "SIGILL", "SIGTERM", "time", "clock", "difftime",
    "mktime", "strftime", "localtime", "gmtime", "asctime", "ctime", "time_t", "clock_t", "tm", "CLOCKS_PER_SEC",
    "timespec", "timeval", "setlocale", "localeconv",
    // compiler-defined macros a portable header tests or (re)defines
    "_WIN32", "_WIN64", "_MSC_VER", "_GNU_SOURCE", "_POSIX_C_SOURCE", "_XOPEN_SOURCE", "_DEFAULT_SOURCE",
    "_BSD_SOURCE", "_REENTRANT", "_FILE_OFFSET_BITS", "_LARGEFILE_SOURCE", "_DEBUG", "WIN32",
];

/// C++ names with a protocol meaning (range-for, iterator traits, ADL, std::exception):
/// renaming a class's `begin` or `value_type` would detach it from the library using it.
#[rustfmt::skip]
const CPP_PROTOCOL: &[&str] = &[
    "std", "begin", "end", "cbegin", "cend", "rbegin", "rend", "size", "empty", "swap", "data", "front", "back",
    "push_back", "emplace_back", "insert", "erase", "clear", "find", "at", "value_type", "iterator", "const_iterator",
    "reverse_iterator", "reference", "const_reference", "pointer", "const_pointer", "difference_type", "size_type",
    "iterator_category", "key_type", "mapped_type", "allocator_type", "element_type", "type", "value", "what", "hash",
    "get",
];

/// Java names defined by the JDK: java.lang types, annotations, and methods a class
/// overrides or implements (detected by this list, not by resolving supertypes).
#[rustfmt::skip]
const JAVA_LIBRARY: &[&str] = &[
    // java.lang types and annotations
    "Object", "String", "Integer", "Long", "Double", "Float", "Short", "Byte", "Character", "Boolean", "Number",
    "Math", "StrictMath", "System", "Thread", "Runnable", "Iterable", "Comparable", "Cloneable", "AutoCloseable",
    "Exception", "RuntimeException", "Error", "Throwable", "IllegalArgumentException", "IllegalStateException",
    "NullPointerException", "IndexOutOfBoundsException", "ArrayIndexOutOfBoundsException", "ArithmeticException",
    "UnsupportedOperationException", "ClassCastException", "CloneNotSupportedException", "Override", "Deprecated",
    "SuppressWarnings", "FunctionalInterface", "SafeVarargs", "Class", "Void", "Enum", "Record", "StringBuilder",
    "StringBuffer", "CharSequence", "Iterator",
    // Object, Comparable, Comparator, Cloneable, Serializable
    "main", "toString", "equals", "hashCode", "compareTo", "compare", "clone", "finalize", "serialVersionUID",
    "readObject", "writeObject", "readResolve", "writeReplace",
    // Runnable, Callable, AutoCloseable, Iterator, Iterable, functional interfaces
    "run", "call", "close", "iterator", "hasNext", "next", "remove", "forEach", "apply", "accept", "test",
    // Collection, List, Map, CharSequence, Throwable, enums, arrays
    "get", "set", "size", "add", "addAll", "contains", "isEmpty", "clear", "put", "containsKey", "length", "charAt",
    "subSequence", "getMessage", "getLocalizedMessage", "getCause", "values", "valueOf", "ordinal", "name",
];

/// The never-renamed names for the languages present in one anonymization run.
pub(crate) struct Kept {
    names: HashSet<&'static str>,
    c_family: bool,
    python: bool,
}

impl Kept {
    pub fn new(langs: &[Lang]) -> Kept {
        let c_family = langs.iter().any(|l| matches!(l, Lang::C | Lang::Cpp));
        let mut names = HashSet::new();
        if c_family {
            names.extend(C_KEYWORDS);
            names.extend(C_LIBRARY);
        }
        if langs.contains(&Lang::Cpp) {
            names.extend(CPP_KEYWORDS);
            names.extend(CPP_PROTOCOL);
        }
        if langs.contains(&Lang::Java) {
            names.extend(JAVA_KEYWORDS);
            names.extend(JAVA_LIBRARY);
        }
        if langs.contains(&Lang::Python) {
            names.extend(PYTHON_KEYWORDS);
            names.extend(PYTHON_LIBRARY);
        }
        if langs.contains(&Lang::Rust) {
            names.extend(RUST_KEYWORDS);
            names.extend(RUST_LIBRARY);
        }
        if langs.contains(&Lang::Go) {
            names.extend(GO_KEYWORDS);
            names.extend(GO_LIBRARY);
        }
        Kept { names, c_family, python: langs.contains(&Lang::Python) }
    }

    pub fn keeps(&self, name: &str) -> bool {
        self.names.contains(name)
            || (self.c_family && (reserved_c(name) || MATH_STEMS.contains(&name) || is_math_variant(name)))
            // Python's dunder names (`__init__`, `__lt__`) are protocol, not project names.
            || (self.python && name.len() > 4 && name.starts_with("__") && name.ends_with("__"))
    }

    /// Roots of library paths, even where the sources add to them (`namespace std {…}`
    /// specializations): `std::sort` stays `std::sort`.
    pub fn is_library_root(name: &str) -> bool {
        matches!(name, "std" | "boost" | "__gnu_cxx" | "java" | "javax" | "core" | "alloc")
    }

    /// Whether a generated name could be mistaken for a keyword of any of the three languages.
    pub fn is_keyword_anywhere(name: &str) -> bool {
        [C_KEYWORDS, CPP_KEYWORDS, JAVA_KEYWORDS, PYTHON_KEYWORDS, RUST_KEYWORDS, GO_KEYWORDS].iter().any(|k| k.contains(&name))
    }
}

/// Implementation-reserved C/C++ spellings that compilers give meaning to: `__x__`,
/// `__builtin_x` and other `__lowercase` extensions (the `_Capitalized` keywords are in
/// `C_KEYWORDS`). Project names such as `__MYLIB_H` or `_Set` are still renamed.
fn reserved_c(name: &str) -> bool {
    match name.strip_prefix("__") {
        Some(rest) => name.len() > 4 && name.ends_with("__") || rest.starts_with(|c: char| c.is_ascii_lowercase()),
        None => false,
    }
}

/// `sqrtf`, `fabsl`: the float and long double forms of a kept math.h function.
fn is_math_variant(name: &str) -> bool {
    let stem = match name.strip_suffix('f').or_else(|| name.strip_suffix('l')) {
        Some(s) if !s.is_empty() => s,
        _ => return false,
    };
    MATH_STEMS.contains(&stem)
}

/// Python keywords, soft keywords and the names with meaning to the language (`self`,
/// dunder methods are kept by [`Kept::keeps`]).
#[rustfmt::skip]
const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "match", "case", "type", "print", "exec",
    "self", "cls",
];

/// Python built-ins and the methods of built-in types: a corpus method named `append` or
/// `get` must not rename every list's and dict's.
#[rustfmt::skip]
const PYTHON_LIBRARY: &[&str] = &[
    "main", "abs", "all", "any", "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr",
    "classmethod", "compile", "complex", "delattr", "dict", "dir", "divmod", "enumerate", "eval", "filter", "float",
    "format", "frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex", "id", "input", "int", "isinstance",
    "issubclass", "iter", "len", "list", "locals", "map", "max", "memoryview", "min", "next", "object", "oct", "open",
    "ord", "pow", "property", "range", "repr", "reversed", "round", "set", "setattr", "slice", "sorted", "staticmethod",
    "str", "sum", "super", "tuple", "vars", "zip", "Exception", "ValueError", "TypeError", "KeyError", "IndexError",
    "RuntimeError", "StopIteration", "NotImplementedError", "NotImplemented", "AttributeError", "ZeroDivisionError",
    "AssertionError", "OverflowError", "ArithmeticError", "LookupError", "OSError", "IOError", "Ellipsis",
    // methods of list, dict, set, str
    "append", "extend", "insert", "remove", "pop", "clear", "index", "count", "sort", "reverse", "copy", "keys",
    "values", "items", "get", "setdefault", "update", "popitem", "add", "discard", "union", "intersection",
    "difference", "issubset", "issuperset", "join", "split", "strip", "lstrip", "rstrip", "replace", "startswith",
    "endswith", "find", "lower", "upper", "encode", "decode", "isdigit", "isalpha", "splitlines", "fromkeys",
    "args", "kwargs",
];

#[rustfmt::skip]
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self",
    "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "union", "macro_rules",
    "bool", "char", "str", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    "f32", "f64", "_",
];

/// The prelude and the methods of std traits a corpus implements (`fmt`, `next`, `cmp`):
/// renaming an impl's method would break the trait it implements.
#[rustfmt::skip]
const RUST_LIBRARY: &[&str] = &[
    "main", "Some", "None", "Ok", "Err", "Option", "Result", "Vec", "String", "Box", "Rc", "Arc", "Cell", "RefCell",
    "HashMap", "HashSet", "BTreeMap", "BTreeSet", "VecDeque", "BinaryHeap", "Default", "Clone", "Copy", "Debug",
    "Display", "PartialEq", "Eq", "PartialOrd", "Ord", "Hash", "Iterator", "IntoIterator", "From", "Into", "Drop",
    "Deref", "DerefMut", "Index", "IndexMut", "Add", "Sub", "Mul", "Div", "Rem", "Neg", "Not", "Fn", "FnMut", "FnOnce",
    "Send", "Sync", "Sized", "AsRef", "AsMut", "ToString", "Formatter", "Ordering", "Error", "Self",
    "new", "default", "clone", "fmt", "eq", "ne", "cmp", "partial_cmp", "hash", "next", "drop", "deref", "deref_mut",
    "index", "index_mut", "add", "sub", "mul", "div", "rem", "neg", "not", "from", "into", "as_ref", "as_mut",
    "into_iter", "iter", "iter_mut", "len", "is_empty", "push", "pop", "insert", "remove", "get", "get_mut", "contains",
    "map", "filter", "collect", "unwrap", "expect", "to_string", "swap", "min", "max", "size_hint", "next_back",
    "source", "description", "write_str", "with_capacity", "extend", "clear", "sort", "sort_by", "sort_unstable",
    "rev", "enumerate", "zip", "sum", "fold", "take", "skip", "chain", "any", "all", "position", "find",
    "entry", "or_insert", "or_insert_with", "and_modify", "contains_key", "keys", "values", "as_str", "as_slice",
    "to_vec", "to_owned", "split", "trim", "chars", "bytes", "lines", "parse", "ok", "err", "is_some", "is_none",
    "is_ok", "is_err", "unwrap_or", "unwrap_or_else", "unwrap_or_default", "cloned", "copied", "borrow",
    "borrow_mut", "write", "read", "lock", "peek", "first", "last", "truncate", "retain", "dedup", "drain",
    // The rest of the iterator methods that make a chain a loop (`lang::builder::rust`): a
    // renamed copy must build the same loops.
    "char_indices", "split_whitespace", "windows", "chunks", "chunks_exact", "values_mut", "for_each", "try_for_each",
    "product", "count", "try_fold", "reduce", "max_by", "min_by", "max_by_key", "min_by_key", "find_map", "rposition",
    "nth", "partition", "unzip", "filter_map", "flat_map", "flatten", "step_by", "take_while", "skip_while",
    "map_while", "inspect", "peekable", "scan",
];

#[rustfmt::skip]
const GO_KEYWORDS: &[&str] = &[
    "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for", "func", "go",
    "goto", "if", "import", "interface", "map", "package", "range", "return", "select", "struct", "switch", "type",
    "var", "nil", "true", "false", "iota", "bool", "byte", "rune", "string", "error", "int", "int8", "int16", "int32",
    "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr", "float32", "float64", "complex64", "complex128",
    "any", "comparable",
];

/// Go built-ins and the methods of standard interfaces a corpus implements
/// (`sort.Interface`, `heap.Interface`, `fmt.Stringer`, `error`, `io.Reader`).
#[rustfmt::skip]
const GO_LIBRARY: &[&str] = &[
    "main", "init", "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max", "min",
    "new", "panic", "print", "println", "real", "recover", "Len", "Less", "Swap", "Push", "Pop", "String", "Error",
    "Read", "Write", "Close", "ServeHTTP", "Unwrap", "Is", "As", "Format", "Scan", "MarshalJSON", "UnmarshalJSON",
];

#[rustfmt::skip]
const MATH_STEMS: &[&str] = &[
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "exp",
    "exp2", "expm1", "log", "log10", "log2", "log1p", "logb", "ilogb", "pow", "sqrt", "cbrt", "hypot", "fabs", "fmod",
    "remainder", "remquo", "fma", "fmax", "fmin", "fdim", "ceil", "floor", "trunc", "round", "lround", "llround", "rint",
    "lrint", "llrint", "nearbyint", "frexp", "ldexp", "modf", "scalbn", "scalbln", "copysign", "nan", "nextafter",
    "erf", "erfc", "tgamma", "lgamma", "nexttoward",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_and_variants() {
        let k = Kept::new(&[Lang::C]);
        assert!(k.keeps("__attribute__") && k.keeps("__builtin_expect") && k.keeps("_Bool") && k.keeps("sqrtf"));
        assert!(!k.keeps("__MYLIB_H") && !k.keeps("_Set") && !k.keeps("my_sqrt") && !k.keeps("self"));
        assert!(!k.keeps("toString"), "Java names are kept only when Java files are present");
        assert!(Kept::new(&[Lang::Java]).keeps("toString"));
    }
}
