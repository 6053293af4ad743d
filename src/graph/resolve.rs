//! Call resolution by name and argument count, in tiers: the first tier with a candidate
//! wins and all its candidates become targets. What the syntax cannot decide (calls on a
//! receiver of unknown type, function pointers, library functions) resolves to nothing:
//! an external target.

use super::node::{CallRef, Lang};
use super::unit::{FileUnit, Function, SourceFile};
use std::collections::HashMap;
use std::path::Path;

pub struct Resolver<'a> {
    functions: &'a [Function],
    files: &'a [SourceFile],
    by_name: HashMap<&'a str, Vec<u32>>,
    /// Per file, the module path its language gives it (Python and Rust; empty otherwise),
    /// computed once: common names have thousands of candidates.
    modules: Vec<Vec<String>>,
}

fn family(l: Lang) -> u8 {
    match l {
        Lang::C | Lang::Cpp => 0,
        Lang::Java => 1,
        Lang::Pcode => 2,
        Lang::Python => 3,
        Lang::Rust => 4,
        Lang::Go => 5,
    }
}

impl<'a> Resolver<'a> {
    pub fn new(functions: &'a [Function], files: &'a [SourceFile]) -> Self {
        Self::over(functions, files, None)
    }

    /// A resolver for calls that look up only `names` (a Python call by class name also
    /// looks up `__init__`): the few calls an update resolves again need the candidates of
    /// a few names, not an index of every function's.
    pub fn for_names(functions: &'a [Function], files: &'a [SourceFile], names: &std::collections::HashSet<&str>) -> Self {
        Self::over(functions, files, Some(names))
    }

    fn over(functions: &'a [Function], files: &'a [SourceFile], names: Option<&std::collections::HashSet<&str>>) -> Self {
        let mut by_name: HashMap<&str, Vec<u32>> = HashMap::new();
        let wanted = |n: &str| names.is_none_or(|s| s.contains(n) || n == "__init__");
        for (i, f) in functions.iter().enumerate().filter(|(_, f)| !f.removed && wanted(&f.meta.name)) {
            by_name.entry(f.meta.name.as_str()).or_default().push(i as u32);
        }
        let modules = files
            .iter()
            .map(|f| match f.lang {
                Lang::Python => python_module(&f.path),
                Lang::Rust => rust_module(&f.path),
                _ => Vec::new(),
            })
            .collect();
        Resolver { functions, files, by_name, modules }
    }

    fn f(&self, id: u32) -> &'a Function {
        &self.functions[id as usize]
    }

    /// The name a call looks up: `this(...)` in Java names the caller's own class.
    pub fn callee_name<'c>(caller: &'c Function, call: &'c CallRef) -> &'c str {
        if caller.meta.lang == Lang::Java && call.name == "this" {
            caller.meta.scope.last().map_or("", String::as_str)
        } else {
            call.name.as_str()
        }
    }

    pub fn resolve(&self, caller: &Function, unit: &FileUnit, call: &CallRef) -> Vec<u32> {
        let lang = caller.meta.lang;
        let name = Self::callee_name(caller, call);
        if name.is_empty() {
            return Vec::new();
        }
        if lang == Lang::Python && !call.member && name.starts_with(|c: char| c.is_uppercase()) {
            // `Cls(…)` constructs: it runs `Cls.__init__`.
            let inits = self.candidates(caller, "__init__", call.argc);
            let ctor = |f: &Function| f.meta.scope.last().map(String::as_str) == Some(name);
            let hit = self.first_tier(
                &inits,
                &[&|f: &Function| ctor(f) && f.meta.file == caller.meta.file, &|f: &Function| {
                    ctor(f) && python_imported(unit, name, self.module(f), &f.meta.scope[..f.meta.scope.len().saturating_sub(1)])
                }],
            );
            if !hit.is_empty() {
                return hit;
            }
        }
        let cands = self.candidates(caller, name, call.argc);
        if cands.is_empty() {
            return Vec::new();
        }
        match lang {
            Lang::Java => self.java(caller, unit, call, cands),
            Lang::Python => self.python(caller, unit, call, cands),
            Lang::Rust => self.rust(caller, unit, call, cands),
            Lang::Go => self.go(caller, unit, call, cands),
            _ => self.c_family(caller, call, cands),
        }
    }

    /// Functions named `name` a call from `caller` with `argc` arguments may reach: same
    /// language family and project, an arity that fits, visible from the caller's file.
    fn candidates(&self, caller: &Function, name: &str, argc: u32) -> Vec<u32> {
        let Some(ids) = self.by_name.get(name) else { return Vec::new() };
        let lang = caller.meta.lang;
        let project = self.files[caller.meta.file as usize].project;
        let cands: Vec<u32> = ids
            .iter()
            .copied()
            .filter(|&i| {
                let m = &self.f(i).meta;
                family(m.lang) == family(lang)
                    && self.files[m.file as usize].project == project
                    && m.accepts(argc)
                    && !m.name.starts_with("lambda$")
                    && (!m.file_local || m.file == caller.meta.file)
            })
            .collect();
        cands
    }

    fn path(&self, f: &Function) -> &'a Path {
        &self.files[f.meta.file as usize].path
    }

    fn module(&self, f: &Function) -> &[String] {
        &self.modules[f.meta.file as usize]
    }

    /// Whether `f`'s full path (its file's module, then its scope) ends with `q`.
    fn full_path_ends_with(&self, f: &Function, q: &[String]) -> bool {
        let (module, scope) = (self.module(f), &f.meta.scope);
        q.len() <= module.len() + scope.len()
            && q.iter().rev().zip(scope.iter().rev().chain(module.iter().rev())).all(|(a, b)| a == b)
    }

    fn first_tier(&self, cands: &[u32], tiers: &[&dyn Fn(&Function) -> bool]) -> Vec<u32> {
        for t in tiers {
            let hit: Vec<u32> = cands.iter().copied().filter(|&i| t(self.f(i))).collect();
            if !hit.is_empty() {
                return hit;
            }
        }
        Vec::new()
    }

    fn c_family(&self, caller: &Function, call: &CallRef, cands: Vec<u32>) -> Vec<u32> {
        let cs = &caller.meta.scope;
        if call.member {
            // Only `this->f()` names its receiver's type; anything else may dispatch virtually.
            if call.qualifier == "this" {
                return self.first_tier(&cands, &[&|f: &Function| &f.meta.scope == cs]);
            }
            return Vec::new();
        }
        if !call.qualifier.is_empty() {
            let q: Vec<&str> = call.qualifier.trim_start_matches("::").split("::").filter(|s| !s.is_empty()).collect();
            return self.first_tier(&cands, &[&|f: &Function| {
                f.meta.scope.len() >= q.len() && f.meta.scope[f.meta.scope.len() - q.len()..].iter().map(String::as_str).eq(q.iter().copied())
            }]);
        }
        let file = caller.meta.file;
        self.first_tier(
            &cands,
            &[
                // Own class (or own namespace) first, then the file, then enclosing scopes.
                &|f: &Function| !cs.is_empty() && &f.meta.scope == cs,
                &|f: &Function| f.meta.file == file && f.meta.scope.is_empty(),
                &|f: &Function| f.meta.scope.len() <= cs.len() && cs.starts_with(&f.meta.scope),
            ],
        )
    }

    fn java(&self, caller: &Function, unit: &FileUnit, call: &CallRef, cands: Vec<u32>) -> Vec<u32> {
        let cs = &caller.meta.scope;
        let files = self.files;
        let pkg_of = |f: &Function| files[f.meta.file as usize].unit.package.clone();
        let imported = |f: &Function| {
            let p = pkg_of(f);
            let class = class_path(f, &p);
            unit.imports.iter().any(|imp| {
                imp == &format!("{p}.{class}") || imp == &format!("{p}.*") || imp.starts_with(&format!("{p}.{class}."))
            })
        };
        let same_package = |f: &Function| pkg_of(f) == unit.package;
        if call.member && call.qualifier != "this" {
            // `Type.m()` (a static call: the qualifier's last part starts upper-case) or
            // `new T()`-style names resolve by class; `obj.m()` needs a type we do not have.
            let q = call.qualifier.rsplit('.').next().unwrap_or("");
            if !q.chars().next().is_some_and(char::is_uppercase) {
                return Vec::new();
            }
            let of_class = |f: &Function| f.meta.scope.last().map(String::as_str) == Some(q);
            return self.first_tier(
                &cands,
                &[&|f: &Function| of_class(f) && f.meta.file == caller.meta.file, &|f: &Function| of_class(f) && same_package(f), &|f: &Function| of_class(f) && imported(f)],
            );
        }
        let is_ctor = |f: &Function| f.meta.scope.last() == Some(&f.meta.name);
        let this_class = call.name == "this";
        if this_class || (call.name.chars().next().is_some_and(char::is_uppercase) && !call.member) {
            // `new T(...)` and `this(...)`: constructors of T.
            return self.first_tier(
                &cands,
                &[
                    &|f: &Function| is_ctor(f) && (!this_class || &f.meta.scope == cs) && f.meta.file == caller.meta.file,
                    &|f: &Function| is_ctor(f) && same_package(f),
                    &|f: &Function| is_ctor(f) && imported(f),
                ],
            );
        }
        self.first_tier(
            &cands,
            &[
                &|f: &Function| &f.meta.scope == cs && !is_ctor(f),
                // Methods of enclosing classes, for inner and anonymous classes and lambdas.
                &|f: &Function| f.meta.scope.len() < cs.len() && cs.starts_with(&f.meta.scope) && !is_ctor(f),
                &|f: &Function| same_package(f) && !is_ctor(f),
                &|f: &Function| {
                    let p = pkg_of(f);
                    let class = class_path(f, &p);
                    unit.imports.iter().any(|imp| imp == &format!("{p}.{class}.{}", f.meta.name) || imp == &format!("{p}.{class}.*"))
                },
            ],
        )
    }
}

impl<'a> Resolver<'a> {
    /// Python: `self.m()` in the caller's class; `mod.f()` through an import; `Cls.m()`;
    /// `f()` nested in the caller, at the top of its module, or imported from another.
    fn python(&self, caller: &Function, unit: &FileUnit, call: &CallRef, cands: Vec<u32>) -> Vec<u32> {
        let cs = &caller.meta.scope;
        let file = caller.meta.file;
        if call.member {
            if call.qualifier == "self" || call.qualifier == "cls" {
                // The class is the caller's scope (its nearest class, for nested functions).
                return self.first_tier(
                    &cands,
                    &[&|f: &Function| f.meta.file == file && !f.meta.scope.is_empty() && cs.starts_with(&f.meta.scope)],
                );
            }
            let q = &call.qualifier;
            if q.starts_with(|c: char| c.is_uppercase()) && !q.contains('.') {
                return self.first_tier(&cands, &[&|f: &Function| f.meta.scope.last() == Some(q) && f.meta.file == file, &|f: &Function| {
                    f.meta.scope.last() == Some(q) && python_imported(unit, q, self.module(f), &f.meta.scope[..f.meta.scope.len() - 1])
                }]);
            }
            // `alias.f()` where `alias` (or `a.b`) names an imported module.
            let Some(module) = python_module_of(unit, q) else { return Vec::new() };
            return self.first_tier(&cands, &[&|f: &Function| f.meta.scope.is_empty() && module_matches(self.module(f), &module)]);
        }
        if !call.qualifier.is_empty() {
            return Vec::new();
        }
        let mut own = cs.clone();
        own.push(caller.meta.name.clone());
        self.first_tier(
            &cands,
            &[
                &|f: &Function| f.meta.file == file && f.meta.scope == own,
                &|f: &Function| f.meta.file == file && f.meta.scope.is_empty(),
                &|f: &Function| f.meta.scope.is_empty() && python_imported(unit, &call.name, self.module(f), &[]),
            ],
        )
    }

    /// Rust: `self.m()` in the caller's type; `path::f()` and `Type::f()` by the module
    /// path of files (`src/a/b.rs` is `a::b`) and inline modules; `f()` nested, in the
    /// caller's module, `use`d, or (for glob imports) anywhere in the crate.
    fn rust(&self, caller: &Function, unit: &FileUnit, call: &CallRef, cands: Vec<u32>) -> Vec<u32> {
        let cs = &caller.meta.scope;
        let file = caller.meta.file;
        if call.member {
            if call.qualifier != "self" {
                return Vec::new();
            }
            let own = |f: &Function| !cs.is_empty() && &f.meta.scope == cs;
            return self.first_tier(&cands, &[&|f: &Function| own(f) && f.meta.file == file, &own]);
        }
        if !call.qualifier.is_empty() {
            let mut q: Vec<String> = call.qualifier.split("::").map(str::to_string).collect();
            if q[0] == "Self" {
                q = cs.last().cloned().into_iter().collect();
            } else if let Some(path) = unit.imports.iter().find_map(|i| i.strip_prefix(&format!("{}=", q[0]))) {
                let mut p: Vec<String> = path.split("::").map(str::to_string).collect();
                p.extend(q.drain(1..));
                q = p;
            }
            let q: Vec<String> = q.into_iter().filter(|s| !matches!(s.as_str(), "crate" | "self" | "super" | "")).collect();
            // `crate::f`, `super::f`: a module-level function, found as an unqualified one.
            if !q.is_empty() {
                let ends = |f: &Function| self.full_path_ends_with(f, &q);
                return self.first_tier(&cands, &[&|f: &Function| ends(f) && f.meta.file == file, &ends]);
            }
        }
        let mut nested = cs.clone();
        nested.push(caller.meta.name.clone());
        let is_method = |f: &Function| f.meta.scope.last().is_some_and(|s| s.starts_with(|c: char| c.is_uppercase()));
        // `use a::b::f` names f's parent path; `use a::b::*` a parent path of anything.
        let parents: Vec<Vec<String>> = unit
            .imports
            .iter()
            .filter_map(|i| {
                let (local, path) = i.split_once('=')?;
                let mut p: Vec<String> = path.split("::").filter(|s| !matches!(*s, "crate" | "self" | "super" | "")).map(str::to_string).collect();
                if local == "*" {
                    return Some(p);
                }
                (local == call.name && p.pop().as_deref() == Some(call.name.as_str())).then_some(p)
            })
            .collect();
        let used = |f: &Function| parents.iter().any(|p| self.full_path_ends_with(f, p));
        self.first_tier(
            &cands,
            &[
                &|f: &Function| f.meta.file == file && f.meta.scope == nested,
                &|f: &Function| f.meta.file == file && !is_method(f) && cs.starts_with(&f.meta.scope),
                &|f: &Function| !is_method(f) && used(f),
                &|f: &Function| !is_method(f) && unit.imports.iter().any(|i| i.starts_with("*=")),
            ],
        )
    }

    /// Go: `r.m()` on the receiver in the receiver's type; `pkg.F()` in the folder an
    /// import names; `f()` in the caller's package (its folder).
    fn go(&self, caller: &Function, unit: &FileUnit, call: &CallRef, cands: Vec<u32>) -> Vec<u32> {
        let cs = &caller.meta.scope;
        let file = caller.meta.file;
        let dir = self.path(caller).parent();
        let same_dir = |f: &Function| self.path(f).parent() == dir;
        if call.member {
            if call.qualifier == "self" {
                let own = |f: &Function| !cs.is_empty() && &f.meta.scope == cs;
                return self.first_tier(&cands, &[&|f: &Function| own(f) && f.meta.file == file, &|f: &Function| own(f) && same_dir(f)]);
            }
            let Some(path) = unit.imports.iter().find_map(|i| i.strip_prefix(&format!("{}=", call.qualifier))) else {
                return Vec::new();
            };
            let last = path.rsplit('/').next().unwrap_or(path);
            let in_pkg = |f: &Function| {
                f.meta.scope.is_empty() && self.path(f).parent().and_then(Path::file_name).and_then(|d| d.to_str()) == Some(last)
            };
            return self.first_tier(&cands, &[&in_pkg]);
        }
        self.first_tier(
            &cands,
            &[&|f: &Function| f.meta.file == file && f.meta.scope.is_empty(), &|f: &Function| same_dir(f) && f.meta.scope.is_empty()],
        )
    }
}

/// The folders and stem of a path, without its extension.
fn path_parts(path: &Path) -> Vec<String> {
    path.with_extension("")
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => s.to_str().map(str::to_string),
            _ => None,
        })
        .collect()
}

/// The module path of a Python file: its folders and stem (`pkg/sub/mod.py` is
/// `pkg.sub.mod`; a package's `__init__.py` is the package).
fn python_module(path: &Path) -> Vec<String> {
    let mut parts = path_parts(path);
    if parts.last().is_some_and(|p| p == "__init__") {
        parts.pop();
    }
    parts
}

/// Whether a module path ends with the dotted `module` (leading dots of a relative import
/// dropped).
fn module_matches(path: &[String], module: &str) -> bool {
    let want: Vec<&str> = module.trim_start_matches('.').split('.').filter(|s| !s.is_empty()).collect();
    !want.is_empty() && path.len() >= want.len() && path[path.len() - want.len()..].iter().map(String::as_str).eq(want.iter().copied())
}

/// The module a qualifier names through the file's imports: `np` for `import numpy as np`,
/// `a.b` for `import a.b`, `mod` for `from pkg import mod`.
fn python_module_of(unit: &FileUnit, q: &str) -> Option<String> {
    unit.imports.iter().find_map(|i| {
        let (local, path) = i.split_once('=')?;
        if local == q {
            Some(path.to_string())
        } else {
            q.strip_prefix(&format!("{local}.")).map(|rest| format!("{path}.{rest}"))
        }
    })
}

/// Whether `name`, defined in the module `module` under `scope`, is imported by the unit:
/// `from m import name` (or `*`) where `m` is that file's module.
fn python_imported(unit: &FileUnit, name: &str, module: &[String], scope: &[String]) -> bool {
    if !scope.is_empty() {
        return false;
    }
    unit.imports.iter().any(|i| {
        let Some((local, full)) = i.split_once('=') else { return false };
        if local == "*" {
            return module_matches(module, full);
        }
        local == name && full.rsplit_once('.').is_some_and(|(m, n)| n == name && module_matches(module, m))
    })
}

/// The module path of a Rust file: its folders below `src` and its stem, with `lib.rs`,
/// `main.rs` and `mod.rs` standing for their folder.
fn rust_module(path: &Path) -> Vec<String> {
    let parts = path_parts(path);
    let start = parts.iter().rposition(|p| p == "src").map_or(0, |i| i + 1);
    let mut out = parts[start..].to_vec();
    if out.last().is_some_and(|p| matches!(p.as_str(), "lib" | "main" | "mod")) {
        out.pop();
    }
    out
}

/// `Outer.Inner` for a Java method whose scope is `package… Outer Inner`.
fn class_path(f: &Function, package: &str) -> String {
    let skip = if package.is_empty() { 0 } else { package.split('.').count() };
    f.meta.scope.iter().skip(skip).cloned().collect::<Vec<_>>().join(".")
}
