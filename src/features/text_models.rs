//! Which text encoder serves which level of an index: statement nodes (millions of short
//! texts) and functions (one text each, for natural-language and dense pseudocode search).
//! [`TextEncoders`] loads each model on first use, so a query that needs only one level
//! never pays for loading the other.

use super::encoder::code_adapter;
use super::{Encoder, EncoderOptions, FeatureError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextModel {
    /// Static token vectors distilled from MiniLM (`models/static`): ~10^5 texts/s a core.
    Static,
    /// all-MiniLM-L6-v2 as shipped.
    Minilm,
    /// MiniLM with the code-search adapters of `models/code-encoder`.
    Code,
}

/// Where transformer encoders keep their vectors between runs.
#[derive(Clone, Debug)]
pub enum CacheAt {
    None,
    /// `Encoder::default_cache_path`.
    Default,
    /// A folder; the file inside is named as in the default place.
    Dir(PathBuf),
}

/// The static table shipped in `models/static`, or `$BERYL_STATIC_TABLE`.
pub fn static_table() -> PathBuf {
    std::env::var_os("BERYL_STATIC_TABLE")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::repo_path("models/static/table.bin"))
}

impl TextModel {
    pub const ALL: [TextModel; 3] = [TextModel::Static, TextModel::Minilm, TextModel::Code];

    pub fn name(self) -> &'static str {
        match self {
            TextModel::Static => "static",
            TextModel::Minilm => "minilm",
            TextModel::Code => "code",
        }
    }

    /// Loads this model from the installed encoder files (`Encoder::default_dir`).
    pub fn load(self, threads: Option<usize>, cache: &CacheAt) -> Result<Encoder, FeatureError> {
        self.load_from(&Encoder::default_dir(), threads, cache)
    }

    pub fn load_from(self, dir: &Path, threads: Option<usize>, cache: &CacheAt) -> Result<Encoder, FeatureError> {
        let adapter = match self {
            TextModel::Static => return Encoder::load_static(dir, &static_table()),
            TextModel::Minilm => None,
            TextModel::Code => Some(code_adapter()),
        };
        let mut enc = Encoder::load_with(dir, EncoderOptions { threads, adapter, ..Default::default() })?;
        match cache {
            CacheAt::None => {}
            CacheAt::Default => {
                let p = enc.default_cache_path();
                enc.attach_cache(&p)?;
            }
            CacheAt::Dir(d) => {
                let p = d.join(enc.default_cache_path().file_name().unwrap_or_default());
                enc.attach_cache(&p)?;
            }
        }
        Ok(enc)
    }
}

/// The statement and function encoders of one index, each loaded when first asked for
/// (one model serving both levels is loaded once).
pub struct TextEncoders {
    pub statements: TextModel,
    pub functions: TextModel,
    threads: Option<usize>,
    cache: CacheAt,
    slots: [OnceLock<Encoder>; 3],
    /// Held while a slot loads, so that a second thread asking waits for that load
    /// instead of making its own.
    loading: [Mutex<()>; 3],
}

impl TextEncoders {
    pub fn new(statements: TextModel, functions: TextModel, threads: Option<usize>, cache: CacheAt) -> TextEncoders {
        TextEncoders { statements, functions, threads, cache, slots: Default::default(), loading: Default::default() }
    }

    /// The defaults of `beryl index`: static statements, code-search functions.
    pub fn defaults(threads: Option<usize>, cache: CacheAt) -> TextEncoders {
        TextEncoders::new(TextModel::Static, TextModel::Code, threads, cache)
    }

    /// Both levels from one encoder already loaded (tests, benchmarks, `beryl train`).
    pub fn single(model: TextModel, enc: Encoder) -> TextEncoders {
        let t = TextEncoders::new(model, model, None, CacheAt::None);
        let _ = t.slots[model as usize].set(enc);
        t
    }

    pub fn get(&self, m: TextModel) -> Result<&Encoder, FeatureError> {
        let slot = &self.slots[m as usize];
        if let Some(e) = slot.get() {
            return Ok(e);
        }
        let _loading = self.loading[m as usize].lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = slot.get() {
            return Ok(e);
        }
        let e = m.load(self.threads, &self.cache)?;
        Ok(slot.get_or_init(|| e))
    }

    /// Starts loading the function encoder on a thread of `scope` (it takes the longest to
    /// load, about a third of a second): the search goes on with what needs no model and
    /// waits for it only where it asks. A failed load is reported by that later ask.
    pub fn preload_functions<'s>(&'s self, scope: &'s std::thread::Scope<'s, '_>) {
        if self.slots[self.functions as usize].get().is_none() {
            scope.spawn(|| {
                let _ = self.functions();
            });
        }
    }

    pub fn statements(&self) -> Result<&Encoder, FeatureError> {
        self.get(self.statements)
    }

    pub fn functions(&self) -> Result<&Encoder, FeatureError> {
        self.get(self.functions)
    }
}
