//! `beryl mcp`: a Model Context Protocol server over stdio. It opens the indexes and loads
//! the models once, then answers tool calls from an agent or editor. Every failure of a
//! call is a tool error the client can show; the server itself keeps running. Logs go to
//! stderr, as stdout carries the protocol.

pub mod frame;
mod state;
mod stdio;

use anyhow::{Context, Result};
use beryl::search::hybrid::Method;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, RequestMetaObject, ServerCapabilities, ServerConfig};
use rmcp::service::{Peer, RoleServer};
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use crate::args::QueryLimitArgs;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::json;
use beryl::search::scope::Scope;
use state::{Answer, SearchArgs, State, ToolError};
use std::path::PathBuf;
use tokio::sync::oneshot;

#[derive(clap::Args)]
pub struct McpArgs {
    /// Index directories to open (repeat for several); more can be built with the
    /// `index` tool.
    #[arg(long = "index")]
    indexes: Vec<PathBuf>,
    /// Folders under which the `index` tool may index and write (repeat for several;
    /// default: the roots of the indexes opened with --index). The file system's root,
    /// home folders and system folders are refused unless named here themselves.
    #[arg(long = "allow-index", value_name = "PATH")]
    allow_index: Vec<PathBuf>,
    /// libtorch threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    limits: QueryLimitArgs,
}

/// A tool's arguments as the client sent them: the typed request, or why they do not
/// read as one. A call with wrong arguments is then answered as a tool error of kind
/// `arguments`, with structured content like every other failure, rather than by the
/// library's own error. The schema the client sees is the request's.
pub struct Args<T>(Result<T, String>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Args<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Ok(Args(serde_json::from_value(v).map_err(|e| e.to_string())))
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Args<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(g)
    }
}

impl<T> Args<T> {
    fn get(self) -> Result<T, CallToolResult> {
        self.0.map_err(|e| result(Err(ToolError::new("arguments", format!("the arguments do not fit the tool: {e}")))))
    }
}

type Job = Box<dyn FnOnce(&mut State) + Send>;

/// The server: tool calls become jobs for the one thread that owns the [`State`].
#[derive(Clone)]
pub struct Beryl {
    jobs: std::sync::mpsc::Sender<Job>,
    tool_router: ToolRouter<Self>,
}

#[derive(Clone, Copy, Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum MethodParam {
    Hybrid,
    Beryllium,
    Bm25,
    Name,
    Dense,
}

impl From<MethodParam> for Method {
    fn from(m: MethodParam) -> Method {
        match m {
            MethodParam::Hybrid => Method::Hybrid,
            MethodParam::Beryllium => Method::Beryllium,
            MethodParam::Bm25 => Method::Bm25,
            MethodParam::Name => Method::Name,
            MethodParam::Dense => Method::Dense,
        }
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct PseudocodeRequest {
    /// The algorithm as pseudocode: p-code, or plain CLRS-style, wiki-style or Python-like
    /// text (converted automatically).
    query: String,
    /// Results to return, 1 to 100 (default 10).
    top: Option<usize>,
    /// `hybrid` (default: every retriever, alignment and the learned scorer), `beryllium`
    /// (the paper's node matching), `bm25`, `name` or `dense`.
    method: Option<MethodParam>,
    /// Which open index to search (its folder or an indexed root), when several are open.
    index: Option<String>,
    /// Only files matching these globs, relative to the indexed root (gitignore syntax:
    /// `src/**`, `*.h`, a folder name; `!GLOB` leaves files out; the last match decides).
    /// Applied before ranking: `top` counts inside.
    path: Option<Vec<String>>,
    /// Only files of these languages: `c`, `cpp`, `java`.
    lang: Option<Vec<String>>,
    /// Leave out tests, examples, demos and benchmarks.
    no_tests: Option<bool>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct TextRequest {
    /// What the code does, in English.
    query: String,
    /// Results to return, 1 to 100 (default 10).
    top: Option<usize>,
    /// Which open index to search, when several are open.
    index: Option<String>,
    /// Only files matching these globs, relative to the indexed root (gitignore syntax:
    /// `src/**`, `*.h`, a folder name; `!GLOB` leaves files out; the last match decides).
    /// Applied before ranking: `top` counts inside.
    path: Option<Vec<String>>,
    /// Only files of these languages: `c`, `cpp`, `java`.
    lang: Option<Vec<String>>,
    /// Leave out tests, examples, demos and benchmarks.
    no_tests: Option<bool>,
}

/// The scope of a search request: paths, languages, tests.
fn scope_of(path: &Option<Vec<String>>, lang: &Option<Vec<String>>, no_tests: Option<bool>) -> Result<Scope, CallToolResult> {
    let mut langs = Vec::new();
    for l in lang.iter().flatten() {
        match beryl::search::scope::lang_named(l) {
            Some(x) => langs.push(x),
            None => return Err(result(Err(ToolError::new("arguments", format!("unknown language {l:?} (expected c, cpp or java)"))))),
        }
    }
    Ok(Scope { paths: path.clone().unwrap_or_default(), langs, no_tests: no_tests.unwrap_or(false), cwd: None })
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ShowRequest {
    /// A source file inside an indexed root (as a result's `path` gives it).
    path: String,
    /// `FIRST-LAST` or `LINE` (default: the file's first 400 lines).
    lines: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct IndexRequest {
    /// A source folder (or file) to index.
    path: String,
    /// Index folder (default `<path>/.beryl`); an existing index there is updated.
    index: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct StatusRequest {}

fn result(r: Result<Answer, ToolError>) -> CallToolResult {
    match r {
        Ok(a) => {
            let mut c = CallToolResult::structured(a.value);
            c.content = vec![ContentBlock::text(a.text)];
            c
        }
        Err(e) => {
            let mut c = CallToolResult::structured_error(json!({"error": e.kind, "message": e.message}));
            c.content = vec![ContentBlock::text(format!("error ({}): {}", e.kind, e.message))];
            c
        }
    }
}

impl Beryl {
    /// Runs `f` on the state's thread and waits for its answer.
    async fn call(&self, f: impl FnOnce(&mut State) -> Result<Answer, ToolError> + Send + 'static) -> Result<CallToolResult, ErrorData> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |s| {
            // A panic in one call must not take the server with it.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(s)))
                .unwrap_or_else(|_| Err(ToolError::new("internal", "the call failed unexpectedly; the server goes on")));
            let _ = tx.send(r);
        });
        self.jobs.send(job).map_err(|_| ErrorData::internal_error("the search thread has stopped", None))?;
        let r = rx.await.map_err(|_| ErrorData::internal_error("the search thread has stopped", None))?;
        Ok(result(r))
    }
}

#[tool_router]
impl Beryl {
    fn new(jobs: std::sync::mpsc::Sender<Job>) -> Beryl {
        Beryl { jobs, tool_router: Self::tool_router() }
    }

    #[tool(description = "Find where an algorithm is implemented, from pseudocode. Returns ranked code fragments (path, lines, function, score, the reasons it matched, and each query line beside the code line it matched).")]
    async fn search_pseudocode(&self, Parameters(r): Parameters<Args<PseudocodeRequest>>) -> Result<CallToolResult, ErrorData> {
        let r = match r.get() {
            Ok(r) => r,
            Err(e) => return Ok(e),
        };
        let method = r.method.map_or(Method::Hybrid, Method::from);
        let scope = match scope_of(&r.path, &r.lang, r.no_tests) {
            Ok(s) => s,
            Err(e) => return Ok(e),
        };
        self.call(move |s| s.search_pseudocode(&SearchArgs { query: &r.query, top: r.top, index: r.index.as_deref(), scope }, method)).await
    }

    #[tool(description = "Find functions from an English description of what they do. Returns ranked functions (path, lines, function, score, reasons).")]
    async fn search_text(&self, Parameters(r): Parameters<Args<TextRequest>>) -> Result<CallToolResult, ErrorData> {
        let r = match r.get() {
            Ok(r) => r,
            Err(e) => return Ok(e),
        };
        let scope = match scope_of(&r.path, &r.lang, r.no_tests) {
            Ok(s) => s,
            Err(e) => return Ok(e),
        };
        self.call(move |s| s.search_text(&SearchArgs { query: &r.query, top: r.top, index: r.index.as_deref(), scope })).await
    }

    #[tool(description = "Show the code of an indexed file (a path a result gave) at the given lines, each line marked with the query lines the last search matched to it. Only files recorded in an open index are served.")]
    async fn show(&self, Parameters(r): Parameters<Args<ShowRequest>>) -> Result<CallToolResult, ErrorData> {
        let r = match r.get() {
            Ok(r) => r,
            Err(e) => return Ok(e),
        };
        self.call(move |s| s.show(&r.path, r.lines.as_deref())).await
    }

    #[tool(description = "The open indexes: roots, files, functions, when built, and how many files changed, were added or removed since.")]
    async fn status(&self, Parameters(r): Parameters<Args<StatusRequest>>) -> Result<CallToolResult, ErrorData> {
        if let Err(e) = r.get() {
            return Ok(e);
        }
        self.call(|s| s.status()).await
    }

    #[tool(description = "Build or update the index of a source folder and keep it open for searches. Only folders under the roots the user allowed when starting the server. Reports progress when the client asks for it.")]
    async fn index(&self, Parameters(r): Parameters<Args<IndexRequest>>, meta: RequestMetaObject, peer: Peer<RoleServer>) -> Result<CallToolResult, ErrorData> {
        let r = match r.get() {
            Ok(r) => r,
            Err(e) => return Ok(e),
        };
        let token = meta.get_progress_token();
        let handle = tokio::runtime::Handle::current();
        self.call(move |s| {
            let mut last = (String::new(), 0usize);
            let mut progress = |stage: &str, done: usize, total: usize| {
                let Some(token) = &token else { return };
                // One notification per stage and per tenth of it: enough to follow, few messages.
                let step = (total / 10).max(1);
                if stage == last.0 && done / step == last.1 && done != total {
                    return;
                }
                last = (stage.to_string(), done / step);
                let p = ProgressNotificationParam::new(token.clone(), done as f64).with_total(total.max(1) as f64).with_message(stage);
                let peer = peer.clone();
                handle.spawn(async move {
                    let _ = peer.notify_progress(p).await;
                });
            };
            s.index(&r.path, r.index.as_deref(), &mut progress)
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Beryl {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "beryl finds where algorithms are implemented in C, C++ and Java code. Use search_pseudocode with the algorithm as pseudocode, \
             search_text with an English description, show to read a result's code, status to see the open indexes, index to build one.",
        )
    }
}

pub fn run(a: McpArgs) -> Result<()> {
    let limits = a.limits.limits();
    let mut state = State::open(&a.indexes, &a.allow_index, a.threads, limits).context("starting the MCP server")?;
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    // The state's thread: loads the models before the first call, then serves calls in order.
    std::thread::spawn(move || {
        state.warm();
        log::info!("beryl mcp: ready");
        while let Ok(job) = rx.recv() {
            job(&mut state);
        }
    });
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().context("starting the async runtime")?;
    // A request carries its query as JSON text: escapes make it at most about six times
    // longer than the query itself.
    let max_line = (limits.bytes.saturating_mul(8)).max(1 << 20);
    rt.block_on(async move {
        let (lib_in, lib_out, writer) = stdio::start(max_line);
        let service = Beryl::new(tx).serve((lib_in, lib_out)).await.context("starting the MCP session")?;
        service.waiting().await.context("serving")?;
        // Every answer out before the process ends.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), writer).await;
        anyhow::Ok(())
    })?;
    Ok(())
}
