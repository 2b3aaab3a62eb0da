//! Life-like cellular automata on bounded grids, backend-neutral: the grid a
//! `gpuprims_life_grid` holds, its rule and generation count, cells packed one bit
//! each, and what every backend's engine must do (LifeEngine).
//!
//! Packing, shared by both backends: row y is `words_per_row` u64 words; cell x is
//! bit x % 64 of word x / 64. Bits past the width in a row's last word are always 0,
//! so a population is the popcount of every word.
//!
//! B0 rules (a dead cell with no live neighbour is born) are applied literally to
//! each cell of the bounded grid: on DEAD, cells outside stay dead for ever; on a
//! TORUS there is no outside. There is no background flipping as Golly emulates on
//! an unbounded plane: a bounded grid has no infinite background to flip.

pub mod rle;
pub mod rule;

use std::sync::{Arc, Mutex, MutexGuard};

use rayon::prelude::*;

use crate::backend::ContextShared;
use crate::error::{invalid, Error, Result};
use rule::Rule;

/// What lies beyond the grid's edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// Each neighbour offset is taken modulo the width and height.
    Torus,
    /// Every cell outside the grid is dead, always.
    Dead,
}

/// The shape of a grid and its packing.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub width: u64,
    pub height: u64,
    pub boundary: Boundary,
    /// u64 words per row: ceil(width / 64).
    pub words_per_row: usize,
}

impl Geometry {
    /// Fails when the packed grid could not be addressed (width or height 0 are
    /// refused earlier, by the ABI).
    pub fn new(width: u64, height: u64, boundary: Boundary) -> Result<Geometry> {
        let words_per_row = width.div_ceil(64);
        let bytes = words_per_row.checked_mul(height).and_then(|w| w.checked_mul(8)).filter(|&b| b <= isize::MAX as u64);
        if bytes.is_none() {
            return Err(invalid(format!("a {width} x {height} grid is too large to address")));
        }
        Ok(Geometry { width, height, boundary, words_per_row: words_per_row as usize })
    }

    /// Words of the whole grid.
    pub fn words(&self) -> usize {
        self.words_per_row * self.height as usize
    }

    /// The valid bits of a row's last word.
    pub fn last_word_mask(&self) -> u64 {
        match self.width % 64 {
            0 => !0,
            r => (1u64 << r) - 1,
        }
    }

    /// Cells of the whole grid, when that fits a usize.
    pub fn cells(&self) -> Result<usize> {
        self.width
            .checked_mul(self.height)
            .and_then(|c| usize::try_from(c).ok())
            .ok_or_else(|| invalid(format!("a {} x {} grid has more cells than a host array can hold", self.width, self.height)))
    }
}

/// The cells of a grid on one backend. Words follow the packing above; `step` keeps
/// the bits past the width at 0.
pub trait LifeEngine: Send {
    /// Replaces every cell: `words.len()` is the grid's word count.
    fn upload(&mut self, words: &[u64]) -> Result<()>;
    /// Copies every cell out, after the work issued before.
    fn download(&mut self, words: &mut [u64]) -> Result<()>;
    /// Advances `generations` generations under `rule`.
    fn step(&mut self, rule: Rule, generations: u64) -> Result<()>;
    /// The number of live cells.
    fn population(&mut self) -> Result<u64>;
}

/// What changes as a grid is used; behind one lock, so calls on one grid from
/// several threads are serialised rather than torn.
struct State {
    rule: Rule,
    generation: u64,
    engine: Box<dyn LifeEngine>,
}

/// What a `gpuprims_life_grid` holds: its context (kept alive), shape and state.
pub struct Grid {
    pub context: Arc<ContextShared>,
    pub geometry: Geometry,
    state: Mutex<State>,
}

/// A zeroed host vector of `n` words, or OUT_OF_MEMORY.
pub fn zeroed_words(n: usize) -> Result<Vec<u64>> {
    let mut v = crate::backend::host::scratch_vec(n, "Life cells")?;
    v.resize(n, 0);
    Ok(v)
}

impl Grid {
    /// A grid of dead cells under B3/S23.
    pub fn new(context: Arc<ContextShared>, geometry: Geometry) -> Result<Grid> {
        let engine = context.backend.life_engine(geometry)?;
        Ok(Grid { context, geometry, state: Mutex::new(State { rule: Rule::LIFE, generation: 0, engine }) })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_rule(&self, text: &str) -> Result<()> {
        let rule = rule::parse(text)
            .map_err(|e| Error::Parse(format!("rule {text:?}, at byte {}: {}", e.offset + 1, e.message)))?;
        self.lock().rule = rule;
        Ok(())
    }

    pub fn rule(&self) -> Rule {
        self.lock().rule
    }

    /// Replaces every cell from bytes, row-major, nonzero alive.
    pub fn write_cells(&self, cells: &[u8]) -> Result<()> {
        let g = self.geometry;
        let mut words = zeroed_words(g.words())?;
        words.par_chunks_mut(g.words_per_row).zip(cells.par_chunks(g.width as usize)).for_each(|(row, src)| {
            for (w, chunk) in row.iter_mut().zip(src.chunks(64)) {
                *w = chunk.iter().enumerate().fold(0u64, |acc, (i, &c)| acc | (u64::from(c != 0) << i));
            }
        });
        self.lock().engine.upload(&words)
    }

    /// Every cell as a byte, 1 alive, 0 dead.
    pub fn read_cells(&self, cells: &mut [u8]) -> Result<()> {
        let g = self.geometry;
        let words = self.download()?;
        cells.par_chunks_mut(g.width as usize).zip(words.par_chunks(g.words_per_row)).for_each(|(dst, row)| {
            for (chunk, &w) in dst.chunks_mut(64).zip(row) {
                for (i, c) in chunk.iter_mut().enumerate() {
                    *c = (w >> i & 1) as u8;
                }
            }
        });
        Ok(())
    }

    fn download(&self) -> Result<Vec<u64>> {
        let mut words = zeroed_words(self.geometry.words())?;
        self.lock().engine.download(&mut words)?;
        Ok(words)
    }

    /// Stamps an RLE pattern's live cells with its top-left at (x, y); a rule in its
    /// header becomes the grid's. Nothing changes unless the whole call succeeds.
    pub fn load_rle(&self, text: &[u8], x: u64, y: u64) -> Result<()> {
        let g = self.geometry;
        let p = rle::parse(text).map_err(|e| Error::Parse(format!("RLE {e}")))?;
        let fits = |at: u64, size: u64, limit: u64| at.checked_add(size).is_some_and(|end| end <= limit);
        if !fits(x, p.width, g.width) || !fits(y, p.height, g.height) {
            return Err(invalid(format!(
                "the pattern's {} x {} box at ({x}, {y}) does not fit the {} x {} grid",
                p.width, p.height, g.width, g.height
            )));
        }
        let mut state = self.lock();
        let mut words = zeroed_words(g.words())?;
        state.engine.download(&mut words)?;
        for &(row, col, len) in &p.runs {
            let base = (y + row) as usize * g.words_per_row;
            set_bits(&mut words[base..base + g.words_per_row], x + col, len);
        }
        state.engine.upload(&words)?;
        if let Some(rule) = p.rule {
            state.rule = rule;
        }
        Ok(())
    }

    /// The whole grid as RLE, with its rule.
    pub fn save_rle(&self) -> Result<String> {
        let g = self.geometry;
        let rule = self.rule();
        let words = self.download()?;
        Ok(rle::write(g.width, g.height, rule, |y| {
            let start = y as usize * g.words_per_row;
            row_runs(&words[start..start + g.words_per_row])
        }))
    }

    pub fn step(&self, generations: u64) -> Result<()> {
        if generations == 0 {
            return Ok(());
        }
        let mut state = self.lock();
        let rule = state.rule;
        state.engine.step(rule, generations)?;
        state.generation = state.generation.wrapping_add(generations);
        Ok(())
    }

    pub fn population(&self) -> Result<u64> {
        self.lock().engine.population()
    }

    pub fn generation(&self) -> u64 {
        self.lock().generation
    }
}

/// Sets `len` bits of a packed row starting at bit `from`.
fn set_bits(row: &mut [u64], from: u64, len: u64) {
    let (mut at, end) = (from, from + len);
    while at < end {
        let (word, bit) = ((at / 64) as usize, at % 64);
        let n = (64 - bit).min(end - at);
        let mask = if n == 64 { !0 } else { ((1u64 << n) - 1) << bit };
        row[word] |= mask;
        at += n;
    }
}

/// The live runs (first column, length) of a packed row, left to right.
fn row_runs(row: &[u64]) -> Vec<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for (j, &w) in row.iter().enumerate() {
        let mut w = w;
        let mut base = j as u64 * 64;
        while w != 0 {
            let skip = w.trailing_zeros() as u64;
            w = if skip == 64 { 0 } else { w >> skip };
            base += skip;
            let len = (!w).trailing_zeros() as u64;
            match runs.last_mut() {
                Some((s, l)) if *s + *l == base => *l += len,
                _ => runs.push((base, len)),
            }
            w = if len == 64 { 0 } else { w >> len };
            base += len;
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_a_row() {
        let mut row = vec![0u64; 3];
        set_bits(&mut row, 3, 2);
        set_bits(&mut row, 60, 70);
        set_bits(&mut row, 191, 1);
        assert_eq!(row_runs(&row), vec![(3, 2), (60, 70), (191, 1)]);
        set_bits(&mut row, 0, 192);
        assert_eq!(row_runs(&row), vec![(0, 192)]);
    }
}
