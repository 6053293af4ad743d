//! The SQLite half of an index: files, functions, nodes, ICFG edges and the identity of
//! the model, encoder and feature schema that made the vectors.
//!
//! Statement nodes, nine tenths of the rows, are in a file of their own ([`NODES`]) that a
//! full build writes and no update changes: later generations link it and hold the nodes
//! added since in the main database's `nodes` table, so an update copies a database a
//! tenth the size. A removed function's nodes stay in that file, unread: every read of a
//! node goes through a live function or a live node id.

use super::stamps::Stamp;
use super::IndexError;
use crate::graph::{EdgeKind, Icfg, NodeKind};
use petgraph::visit::EdgeRef;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::Path;

/// The file of the nodes a full build wrote, beside the main database.
pub const NODES: &str = "nodes.sqlite";

const NODES_SCHEMA: &str = "
CREATE TABLE nodes(id INTEGER PRIMARY KEY, function INTEGER NOT NULL, kind INTEGER NOT NULL,
                   start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, text TEXT NOT NULL);
";

const SCHEMA: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL, hash TEXT NOT NULL, lang TEXT NOT NULL,
                   lines INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE TABLE functions(id INTEGER PRIMARY KEY, file INTEGER NOT NULL, name TEXT NOT NULL, qualified TEXT NOT NULL,
                   start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, entry INTEGER NOT NULL);
CREATE TABLE nodes(id INTEGER PRIMARY KEY, function INTEGER NOT NULL, kind INTEGER NOT NULL,
                   start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, text TEXT NOT NULL);
CREATE TABLE skipped(path TEXT PRIMARY KEY, hash TEXT NOT NULL, reason TEXT NOT NULL);
CREATE TABLE node_kinds(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE edge_kinds(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
";

fn edge_kind_code(k: EdgeKind) -> u8 {
    EdgeKind::ALL.iter().position(|&q| q == k).unwrap_or(0) as u8
}

/// Every edge of `icfg` as stored: (source, target, kind code), sorted.
pub fn edge_rows(icfg: &Icfg) -> Vec<(u32, u32, u8)> {
    let mut v: Vec<(u32, u32, u8)> =
        icfg.graph.edge_references().map(|e| (e.source().index() as u32, e.target().index() as u32, edge_kind_code(*e.weight()))).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn insert_meta(tx: &rusqlite::Transaction, meta: &[(&str, String)]) -> Result<(), IndexError> {
    let mut st = tx.prepare("INSERT INTO meta VALUES (?1, ?2)").map_err(db)?;
    for (k, v) in meta {
        st.execute(params![k, v]).map_err(db)?;
    }
    Ok(())
}

/// Inserts the rows of `files` and `functions` (and, where `with_nodes`, their nodes).
fn insert(
    tx: &rusqlite::Transaction,
    icfg: &Icfg,
    files: &[(u32, &str)],
    functions: std::ops::Range<u32>,
    meta: &[(&str, String)],
    with_nodes: bool,
) -> Result<(), IndexError> {
    insert_meta(tx, meta)?;
    let mut st = tx.prepare("INSERT INTO files VALUES (?1, ?2, ?3, ?4, ?5, ?6)").map_err(db)?;
    for &(i, hash) in files {
        let f = &icfg.files[i as usize];
        st.execute(params![i as i64, f.path.to_string_lossy(), hash, f.lang.name(), f.lines, f.bytes as i64]).map_err(db)?;
    }
    let mut st = tx.prepare("INSERT INTO functions VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)").map_err(db)?;
    for i in functions.clone() {
        let f = &icfg.functions[i as usize];
        if f.removed {
            continue;
        }
        let m = &f.meta;
        st.execute(params![i as i64, m.file, m.name, m.qualified(), m.lines.0, m.lines.1, f.entry.index() as i64]).map_err(db)?;
    }
    if with_nodes {
        insert_nodes(tx, icfg, functions)?;
    }
    Ok(())
}

/// Inserts the nodes of the live functions of `functions` (a node's file is its
/// function's).
fn insert_nodes(tx: &rusqlite::Transaction, icfg: &Icfg, functions: std::ops::Range<u32>) -> Result<(), IndexError> {
    let mut sn = tx.prepare("INSERT INTO nodes VALUES (?1, ?2, ?3, ?4, ?5, ?6)").map_err(db)?;
    for i in functions.filter(|&i| !icfg.functions[i as usize].removed) {
        for n in icfg.function_nodes(i) {
            let w = &icfg.graph[petgraph::graph::NodeIndex::new(n)];
            sn.execute(params![n as i64, w.function, node_kind_code(w.kind), w.lines.0, w.lines.1, w.text.as_str()]).map_err(db)?;
        }
    }
    Ok(())
}

/// Replaces the stamps ([`super::stamps`]); the table is made where an index written
/// before stamps lacks it.
/// Drops the stamps of `gone` and sets `stamps`, the others kept.
fn change_stamps(tx: &rusqlite::Transaction, gone: &[String], stamps: &[(String, Stamp)]) -> Result<(), IndexError> {
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS stamps(path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
                                           ctime INTEGER NOT NULL, ino INTEGER NOT NULL, hash TEXT NOT NULL) WITHOUT ROWID;",
    )
    .map_err(db)?;
    let mut del = tx.prepare("DELETE FROM stamps WHERE path = ?1").map_err(db)?;
    for p in gone {
        del.execute([p]).map_err(db)?;
    }
    let mut st = tx.prepare("INSERT OR REPLACE INTO stamps VALUES (?1, ?2, ?3, ?4, ?5, ?6)").map_err(db)?;
    for (p, s) in stamps {
        st.execute(params![p, s.size as i64, s.mtime_ns, s.ctime_ns, s.ino as i64, s.hash]).map_err(db)?;
    }
    Ok(())
}

fn set_skipped(tx: &rusqlite::Transaction, skipped: &[(String, String, String)]) -> Result<(), IndexError> {
    let mut st = tx.prepare("INSERT OR REPLACE INTO skipped VALUES (?1, ?2, ?3)").map_err(db)?;
    for (p, h, r) in skipped {
        st.execute(params![p, h, r]).map_err(db)?;
    }
    Ok(())
}

// Kinds are stored as their position in `NodeKind::ALL` / `EdgeKind::ALL` (names in the
// `*_kinds` tables): as text they would be a sixth of the database.
fn node_kind_code(k: NodeKind) -> i64 {
    NodeKind::ALL.iter().position(|&q| q == k).unwrap_or(0) as i64
}

#[derive(Clone, Debug)]
pub struct FileRow {
    pub id: u32,
    pub path: String,
    pub hash: String,
    pub lang: String,
    pub lines: u32,
}

#[derive(Clone, Debug)]
pub struct FunctionRow {
    pub id: u32,
    pub file: u32,
    pub name: String,
    pub qualified: String,
    pub lines: (u32, u32),
    /// ICFG id of its ENTRY node; its other nodes follow.
    pub entry: u32,
}

#[derive(Clone, Debug)]
pub struct NodeRow {
    pub id: u32,
    pub file: u32,
    pub function: u32,
    pub kind: String,
    pub lines: (u32, u32),
    pub text: String,
}

pub struct Store {
    conn: Connection,
    /// Whether [`NODES`] is attached (as `base`): a generation of format 18 or older holds
    /// every node in the main database.
    base: bool,
}

fn db(e: rusqlite::Error) -> IndexError {
    IndexError::Sqlite(e.to_string())
}

impl Store {
    /// Writes a new database holding `icfg`, with its nodes in [`NODES`] beside it (both
    /// at once); `hashes[i]` is the content hash of file `i`, `skipped` the files not
    /// indexed (path, content hash, reason).
    pub fn create(path: &Path, icfg: &Icfg, hashes: &[String], skipped: &[(String, String, String)], stamps: &[(String, Stamp)], meta: &[(&str, String)]) -> Result<(), IndexError> {
        // Private until the index is swapped in, so no journal is needed.
        let open = |p: &Path, schema: &str| -> Result<Connection, IndexError> {
            let conn = Connection::open(p).map_err(db)?;
            conn.execute_batch("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;").map_err(db)?;
            conn.execute_batch(schema).map_err(db)?;
            Ok(conn)
        };
        let nodes_path = path.with_file_name(NODES);
        std::thread::scope(|s| {
            let nodes = s.spawn(|| -> Result<(), IndexError> {
                let mut conn = open(&nodes_path, NODES_SCHEMA)?;
                let tx = conn.transaction().map_err(db)?;
                insert_nodes(&tx, icfg, 0..icfg.functions.len() as u32)?;
                tx.commit().map_err(db)
            });
            let mut conn = open(path, SCHEMA)?;
            let tx = conn.transaction().map_err(db)?;
            {
                let mut st = tx.prepare("INSERT INTO node_kinds VALUES (?1, ?2)").map_err(db)?;
                for k in NodeKind::ALL {
                    st.execute(params![node_kind_code(k), k.name()]).map_err(db)?;
                }
                let mut st = tx.prepare("INSERT INTO edge_kinds VALUES (?1, ?2)").map_err(db)?;
                for (i, k) in EdgeKind::ALL.iter().enumerate() {
                    st.execute(params![i as i64, k.name()]).map_err(db)?;
                }
                let files = (0..icfg.files.len() as u32).map(|i| (i, hashes.get(i as usize).map(String::as_str).unwrap_or(""))).collect::<Vec<_>>();
                insert(&tx, icfg, &files, 0..icfg.functions.len() as u32, meta, false)?;
                set_skipped(&tx, skipped)?;
                // A database made afresh: no stamps to drop.
                change_stamps(&tx, &[], stamps)?;
            }
            tx.commit().map_err(db)?;
            nodes.join().unwrap_or_else(|_| Err(IndexError::Sqlite(format!("{}: the writing thread failed", nodes_path.display()))))
        })
    }

    /// Replaces the `meta` rows of the database at `path` (a full build writes the rows of
    /// the graphs first and the meta once the files it sums are written).
    pub fn set_meta(path: &Path, meta: &[(&str, String)]) -> Result<(), IndexError> {
        let mut conn = Connection::open(path).map_err(db)?;
        conn.execute_batch("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;").map_err(db)?;
        let tx = conn.transaction().map_err(db)?;
        tx.execute("DELETE FROM meta", []).map_err(db)?;
        insert_meta(&tx, meta)?;
        tx.commit().map_err(db)?;
        Ok(())
    }

    /// Brings a copy of an earlier database up to date in one transaction: rows of
    /// `removed_files` and `removed_functions` (with their nodes that it holds) go, and the
    /// files `files` (id, hash) and functions `functions` of `icfg` are added, their nodes
    /// in its own `nodes` table ([`NODES`] is linked, never written). An `edges` table of
    /// an older index goes: `graph.bin` holds the edges.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        path: &Path,
        icfg: &Icfg,
        removed_files: &[u32],
        removed_functions: &[u32],
        files: &[(u32, &str)],
        functions: std::ops::Range<u32>,
        skipped: &[(String, String, String)],
        (stamps_gone, stamps): (&[String], &[(String, Stamp)]),
        meta: &[(&str, String)],
    ) -> Result<(), IndexError> {
        let mut conn = Connection::open(path).map_err(db)?;
        conn.execute_batch("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;").map_err(db)?;
        let tx = conn.transaction().map_err(db)?;
        {
            let mut st = tx.prepare("DELETE FROM files WHERE id = ?1").map_err(db)?;
            for &f in removed_files {
                st.execute([f]).map_err(db)?;
            }
            let mut del_f = tx.prepare("DELETE FROM functions WHERE id = ?1").map_err(db)?;
            let mut del_n = tx.prepare("DELETE FROM nodes WHERE id >= ?1 AND id < ?2").map_err(db)?;
            for &f in removed_functions {
                del_f.execute([f]).map_err(db)?;
                let r = icfg.function_nodes(f);
                del_n.execute([r.start as i64, r.end as i64]).map_err(db)?;
            }
            tx.execute("DROP TABLE IF EXISTS edges", []).map_err(db)?;
            tx.execute("DELETE FROM meta", []).map_err(db)?;
            tx.execute("DELETE FROM skipped", []).map_err(db)?;
            insert(&tx, icfg, files, functions, meta, true)?;
            set_skipped(&tx, skipped)?;
            change_stamps(&tx, stamps_gone, stamps)?;
        }
        tx.commit().map_err(db)?;
        Ok(())
    }

    /// Sets the text of each node of `nodes` (ascending) to the one this database holds:
    /// what an update that decoded its ICFG without texts needs of the files it touches.
    pub fn fill_texts(&self, icfg: &mut Icfg, nodes: &[u32]) -> Result<(), IndexError> {
        let sql = match self.base {
            true => "SELECT id, text FROM main.nodes WHERE id BETWEEN ?1 AND ?2 UNION ALL SELECT id, text FROM base.nodes WHERE id BETWEEN ?1 AND ?2",
            false => "SELECT id, text FROM main.nodes WHERE id BETWEEN ?1 AND ?2",
        };
        let mut st = self.conn.prepare_cached(sql).map_err(db)?;
        let mut i = 0;
        while i < nodes.len() {
            // A run of consecutive ids is one range query.
            let mut j = i + 1;
            while j < nodes.len() && nodes[j] == nodes[j - 1] + 1 {
                j += 1;
            }
            let mut rows = st.query(params![nodes[i] as i64, nodes[j - 1] as i64]).map_err(db)?;
            while let Some(row) = rows.next().map_err(db)? {
                let (id, text): (i64, String) = (row.get(0).map_err(db)?, row.get(1).map_err(db)?);
                let n = usize::try_from(id).ok().filter(|&n| n < icfg.graph.node_count()).ok_or_else(|| IndexError::Corrupt(format!("the database holds node {id}, past the ICFG's")))?;
                icfg.graph[petgraph::graph::NodeIndex::new(n)].text = text.into();
            }
            i = j;
        }
        Ok(())
    }

    pub fn open(path: &Path) -> Result<Store, IndexError> {
        if !path.is_file() {
            return Err(IndexError::Corrupt(format!("{} is missing", path.display())));
        }
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .map_err(|e| IndexError::Corrupt(format!("{}: {e}", path.display())))?;
        let nodes = path.with_file_name(NODES);
        let base = nodes.is_file();
        if base {
            conn.execute("ATTACH DATABASE ?1 AS base", [nodes.to_string_lossy()]).map_err(|e| IndexError::Corrupt(format!("{}: {e}", nodes.display())))?;
        }
        // A damaged file often opens fine and fails on the first read: read now.
        let store = Store { conn, base };
        store.meta("schema").map_err(|e| IndexError::Corrupt(format!("{}: {e}", path.display())))?;
        if base {
            store.conn.query_row("SELECT count(*) FROM base.sqlite_master WHERE name = 'nodes'", [], |r| r.get::<_, i64>(0)).map_err(|e| IndexError::Corrupt(format!("{}: {e}", nodes.display())))?;
        }
        Ok(store)
    }

    pub fn meta(&self, key: &str) -> Result<Option<String>, IndexError> {
        self.conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional().map_err(db)
    }

    pub fn files(&self) -> Result<Vec<FileRow>, IndexError> {
        let mut st = self.conn.prepare_cached("SELECT id, path, hash, lang, lines FROM files ORDER BY id").map_err(db)?;
        let rows = st
            .query_map([], |r| Ok(FileRow { id: r.get(0)?, path: r.get(1)?, hash: r.get(2)?, lang: r.get(3)?, lines: r.get(4)? }))
            .map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    /// Each indexed file's content hash and the language it was read as, by path.
    pub fn file_hashes(&self) -> Result<std::collections::HashMap<String, (String, String)>, IndexError> {
        let mut st = self.conn.prepare_cached("SELECT path, hash, lang FROM files").map_err(db)?;
        let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?)))).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    /// Every function as (id, file, entry node), by id.
    pub fn function_files(&self) -> Result<Vec<(u32, u32, u32)>, IndexError> {
        let mut st = self.conn.prepare_cached("SELECT id, file, entry FROM functions ORDER BY id").map_err(db)?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    /// Files not indexed: path → (content hash, reason).
    /// Each file's stamp by path; none in an index written before stamps.
    pub fn stamps(&self) -> Result<std::collections::HashMap<String, Stamp>, IndexError> {
        let has: i64 = self.conn.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'stamps'", [], |r| r.get(0)).map_err(db)?;
        if has == 0 {
            return Ok(Default::default());
        }
        let mut st = self.conn.prepare_cached("SELECT path, size, mtime, ctime, ino, hash FROM stamps").map_err(db)?;
        let rows = st
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, Stamp { size: r.get::<_, i64>(1)? as u64, mtime_ns: r.get(2)?, ctime_ns: r.get(3)?, ino: r.get::<_, i64>(4)? as u64, hash: r.get(5)? }))
            })
            .map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    pub fn skipped(&self) -> Result<std::collections::HashMap<String, (String, String)>, IndexError> {
        let mut st = self.conn.prepare_cached("SELECT path, hash, reason FROM skipped").map_err(db)?;
        let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?)))).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    /// The indexed file recorded at exactly `path`, if any.
    pub fn file_by_path(&self, path: &str) -> Result<Option<FileRow>, IndexError> {
        self.conn
            .prepare_cached("SELECT id, path, hash, lang, lines FROM files WHERE path = ?1")
            .map_err(db)?
            .query_row([path], |r| Ok(FileRow { id: r.get(0)?, path: r.get(1)?, hash: r.get(2)?, lang: r.get(3)?, lines: r.get(4)? }))
            .optional()
            .map_err(db)
    }

    pub fn file(&self, id: u32) -> Result<FileRow, IndexError> {
        self.conn
            .prepare_cached("SELECT id, path, hash, lang, lines FROM files WHERE id = ?1")
            .map_err(db)?
            .query_row([id], |r| Ok(FileRow { id: r.get(0)?, path: r.get(1)?, hash: r.get(2)?, lang: r.get(3)?, lines: r.get(4)? }))
            .map_err(db)
    }

    pub fn function(&self, id: u32) -> Result<FunctionRow, IndexError> {
        self.conn
            .prepare_cached("SELECT id, file, name, qualified, start_line, end_line, entry FROM functions WHERE id = ?1")
            .map_err(db)?
            .query_row([id], |r| {
                Ok(FunctionRow {
                    id: r.get(0)?,
                    file: r.get(1)?,
                    name: r.get(2)?,
                    qualified: r.get(3)?,
                    lines: (r.get(4)?, r.get(5)?),
                    entry: r.get(6)?,
                })
            })
            .map_err(db)
    }

    pub fn node(&self, id: u32) -> Result<NodeRow, IndexError> {
        self.conn
            .prepare_cached(
                match self.base {
                    true => "SELECT n.id, f.file, n.function, n.kind, n.start_line, n.end_line, n.text \
                             FROM (SELECT * FROM main.nodes WHERE id = ?1 UNION ALL SELECT * FROM base.nodes WHERE id = ?1) n JOIN functions f ON f.id = n.function",
                    false => "SELECT n.id, f.file, n.function, n.kind, n.start_line, n.end_line, n.text FROM nodes n JOIN functions f ON f.id = n.function WHERE n.id = ?1",
                },
            )
            .map_err(db)?
            .query_row([id], |r| {
                Ok(NodeRow {
                    id: r.get(0)?,
                    file: r.get(1)?,
                    function: r.get(2)?,
                    kind: NodeKind::ALL.get(r.get::<_, i64>(3)? as usize).map_or("?", |k| k.name()).to_string(),
                    lines: (r.get(4)?, r.get(5)?),
                    text: r.get(6)?,
                })
            })
            .map_err(db)
    }
}
