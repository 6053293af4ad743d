//! What the CLI tests share.
#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;

/// Rewrites a generation's `meta.json` through `edit` consistently everywhere it is held
/// (the file, the database's copy, the database's checksum): what a build with those
/// values would have written.
pub fn forge_meta(gen: &Path, edit: impl Fn(&mut Value)) {
    let meta_path = gen.join("meta.json");
    let mut meta: Value = serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap()).unwrap();
    edit(&mut meta);
    let mut held = meta.clone();
    held["checksums"].as_object_mut().unwrap().remove("index.sqlite");
    let db = gen.join("index.sqlite");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE meta SET value = ?1 WHERE key = 'meta'", [serde_json::to_string_pretty(&held).unwrap()]).unwrap();
    drop(conn);
    meta["checksums"]["index.sqlite"] = beryl::index::checksum(&std::fs::read(&db).unwrap()).into();
    std::fs::write(&meta_path, serde_json::to_string_pretty(&meta).unwrap()).unwrap();
}
