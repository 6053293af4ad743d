//! Call resolution by name and argument count, in tiers: the first tier with a candidate
//! wins and all its candidates become targets. What the syntax cannot decide (calls on a
//! receiver of unknown type, function pointers, library functions) resolves to nothing:
//! an external target.

use super::node::{CallRef, Lang};
use super::unit::{FileUnit, Function, SourceFile};
use std::collections::HashMap;

pub struct Resolver<'a> {
    functions: &'a [Function],
    files: &'a [SourceFile],
    by_name: HashMap<&'a str, Vec<u32>>,
}

fn family(l: Lang) -> u8 {
    match l {
        Lang::C | Lang::Cpp => 0,
        Lang::Java => 1,
        Lang::Pcode => 2,
    }
}

impl<'a> Resolver<'a> {
    pub fn new(functions: &'a [Function], files: &'a [SourceFile]) -> Self {
        let mut by_name: HashMap<&str, Vec<u32>> = HashMap::new();
        for (i, f) in functions.iter().enumerate().filter(|(_, f)| !f.removed) {
            by_name.entry(f.meta.name.as_str()).or_default().push(i as u32);
        }
        Resolver { functions, files, by_name }
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
        let Some(ids) = self.by_name.get(name) else { return Vec::new() };
        let project = self.files[caller.meta.file as usize].project;
        let cands: Vec<u32> = ids
            .iter()
            .copied()
            .filter(|&i| {
                let m = &self.f(i).meta;
                family(m.lang) == family(lang)
                    && self.files[m.file as usize].project == project
                    && m.accepts(call.argc)
                    && !m.name.starts_with("lambda$")
                    && (!m.file_local || m.file == caller.meta.file)
            })
            .collect();
        if cands.is_empty() {
            return Vec::new();
        }
        match lang {
            Lang::Java => self.java(caller, unit, call, cands),
            _ => self.c_family(caller, call, cands),
        }
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

/// `Outer.Inner` for a Java method whose scope is `package… Outer Inner`.
fn class_path(f: &Function, package: &str) -> String {
    let skip = if package.is_empty() { 0 } else { package.split('.').count() };
    f.meta.scope.iter().skip(skip).cloned().collect::<Vec<_>>().join(".")
}
