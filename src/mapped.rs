//! File bytes held in memory, or mapped from a file and read in place: an index opens by
//! mapping its large files, so a query pays for the pages it reads, not for the corpus.

use std::path::Path;

pub enum Bytes {
    Owned(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl Bytes {
    /// `path` mapped read-only. Index files are never written once their generation is in
    /// place (a build writes a new generation), so the map keeps the bytes it was given.
    pub fn map(path: &Path) -> std::io::Result<Bytes> {
        let file = std::fs::File::open(path)?;
        // SAFETY: see above; a file truncated under a reader by hand is outside what a
        // generation promises.
        Ok(Bytes::Mapped(unsafe { memmap2::Mmap::map(&file)? }))
    }

    /// [`Bytes::map`] for a reader of a few scattered records: the kernel maps only the
    /// pages read, where it would otherwise map the pages around each (a large folio's
    /// worth, on file systems that cache in large folios), which a resident-size budget
    /// pays for.
    pub fn map_sparse(path: &Path) -> std::io::Result<Bytes> {
        let b = Bytes::map(path)?;
        if let Bytes::Mapped(m) = &b {
            // Advice only: a kernel that ignores it maps as it would.
            let _ = m.advise(memmap2::Advice::Random);
        }
        Ok(b)
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m,
        }
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Bytes {
        Bytes::Owned(v)
    }
}
