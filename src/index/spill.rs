//! Rows of a full build on disk: written as they are made, and read back twice: an evenly
//! spaced sample to fit what needs fitting (a projection, FAISS quantizers), then in
//! blocks. The sample is read back too, when it is wanted, so it is not held meanwhile
//! (a node sample is 185 MB, a function sample 154 MB). Search rows (924 floats a node),
//! their projection and function vectors all grow with the corpus; a build holds none of them whole.
//!
//! The file has no name while it is used (made beside the index, then unlinked), so a
//! killed build leaves nothing behind.

use super::{io, IndexError};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Which rows of a stream are kept: `0, step, 2·step, …`, the first `take` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Every {
    pub step: usize,
    pub take: usize,
}

impl Every {
    /// Every `step`-th row, however many.
    pub fn nth(step: usize) -> Every {
        Every { step: step.max(1), take: usize::MAX }
    }

    /// No row: nothing will be fitted on the sample.
    pub const NONE: Every = Every { step: 1, take: 0 };

}

pub struct Spill {
    out: BufWriter<File>,
    /// Where the file was made, for error messages.
    at: PathBuf,
    width: usize,
    rows: usize,
    every: Every,
}

/// Spills made by this process so far: each file gets a name of its own while it is made.
static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Spill {
    /// A spill of rows `width` wide in the folder `dir`, keeping the rows `every` names as
    /// the sample.
    pub fn new(dir: &Path, width: usize, every: Every) -> Result<Spill, IndexError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let at = dir.join(format!(".rows-{}-{n}.tmp", std::process::id()));
        let file = File::options().read(true).write(true).create(true).truncate(true).open(&at).map_err(io(&at))?;
        // Unnamed from here on: the space goes when the file is closed, however the run ends.
        std::fs::remove_file(&at).map_err(io(&at))?;
        Ok(Spill { out: BufWriter::with_capacity(1 << 20, file), at, width, rows: 0, every })
    }

    /// Appends row-major `rows`.
    pub fn push(&mut self, rows: &[f32]) -> Result<(), IndexError> {
        self.rows += rows.len() / self.width.max(1);
        self.out.write_all(as_bytes(rows)).map_err(io(&self.at))
    }

    #[cfg(test)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The rows `every` names, read back from the file.
    pub fn sample(&mut self) -> Result<Vec<f32>, IndexError> {
        let at = self.at.clone();
        self.out.flush().map_err(io(&at))?;
        let file = self.out.get_mut();
        let picked: Vec<usize> = (0..self.rows).step_by(self.every.step).take(self.every.take).collect();
        let mut rows = vec![0f32; picked.len() * self.width];
        for (row, &i) in rows.chunks_exact_mut(self.width.max(1)).zip(&picked) {
            file.seek(SeekFrom::Start((i * self.width * 4) as u64)).map_err(io(&at))?;
            // SAFETY: any bytes are a valid f32; the slice covers exactly the row.
            let bytes = unsafe { std::slice::from_raw_parts_mut(row.as_mut_ptr() as *mut u8, row.len() * 4) };
            file.read_exact(bytes).map_err(io(&at))?;
        }
        // Rows pushed later go after the last.
        file.seek(SeekFrom::End(0)).map_err(io(&at))?;
        Ok(rows)
    }

    /// Calls `f` on consecutive blocks of up to `block` rows, from the first row.
    pub fn blocks(&mut self, block: usize, f: &mut dyn FnMut(&[f32]) -> Result<(), IndexError>) -> Result<(), IndexError> {
        let at = self.at.clone();
        self.out.flush().map_err(io(&at))?;
        let file = self.out.get_mut();
        file.seek(SeekFrom::Start(0)).map_err(io(&at))?;
        let mut left = self.rows;
        let mut rows: Vec<f32> = Vec::new();
        while left > 0 {
            let n = left.min(block.max(1));
            rows.resize(n * self.width, 0.0);
            // SAFETY: any bytes are a valid f32; the slice covers exactly the buffer.
            let bytes = unsafe { std::slice::from_raw_parts_mut(rows.as_mut_ptr() as *mut u8, rows.len() * 4) };
            file.read_exact(bytes).map_err(io(&at))?;
            f(&rows)?;
            left -= n;
        }
        Ok(())
    }
}

/// The floats' own bytes: the file is read back by this process only, so in the machine's
/// byte order, without a conversion.
fn as_bytes(v: &[f32]) -> &[u8] {
    // SAFETY: f32 has no padding; the slice covers exactly `v`.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_back_in_blocks_with_every_step_th_sampled() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spill::new(dir.path(), 3, Every::nth(4)).unwrap();
        // Nothing named stays in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let rows: Vec<f32> = (0..30).map(|i| i as f32 * 0.5).collect();
        s.push(&rows[..12]).unwrap();
        s.push(&rows[12..]).unwrap();
        assert_eq!(s.rows(), 10);
        assert_eq!(s.sample().unwrap(), [0.0, 0.5, 1.0, 6.0, 6.5, 7.0, 12.0, 12.5, 13.0]);
        let mut sizes = Vec::new();
        let mut back = Vec::new();
        s.blocks(4, &mut |b| {
            sizes.push(b.len() / 3);
            back.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        assert_eq!((sizes, back), (vec![4, 4, 2], rows.clone()));
    }

    #[test]
    fn a_sample_stops_at_its_count() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spill::new(dir.path(), 1, Every { step: 3, take: 2 }).unwrap();
        s.push(&(0..10).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
        assert_eq!(s.sample().unwrap(), [0.0, 3.0]);
        let mut none = Spill::new(dir.path(), 1, Every::NONE).unwrap();
        none.push(&[1.0, 2.0]).unwrap();
        assert!(none.sample().unwrap().is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_unwritable_folder_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let err = Spill::new(&file.join("under"), 3, Every::nth(1)).err().expect("a file is no folder");
        assert!(err.to_string().contains("plain"), "{err}");
    }
}
