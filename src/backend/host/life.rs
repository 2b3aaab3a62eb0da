//! The host Life engine: the same bit-sliced logic as kernels/life.cu on u64 words
//! (64 cells per operation), bands of rows in parallel on rayon.
//!
//! Per word and generation: the two horizontal neighbours by shifts, a full adder of
//! (left, centre, right) per row giving a 2-bit sum, reused by the row above and the
//! row below; three such sums added into the 4-bit count of the 3x3 block (itself
//! included); the rule as AND/OR of that count's bit planes. No per-cell work.

use rayon::prelude::*;

use crate::error::Result;
use crate::life::rule::Rule;
use crate::life::{zeroed_words, Boundary, Geometry, LifeEngine};

pub struct HostLife {
    g: Geometry,
    cells: Vec<u64>,
    next: Vec<u64>,
}

impl HostLife {
    pub fn new(g: Geometry) -> Result<HostLife> {
        Ok(HostLife { g, cells: zeroed_words(g.words())?, next: Vec::new() })
    }
}

/// Rows per parallel task: enough to amortise the two extra rows of sums a band
/// computes at its edges.
const BAND_ROWS: usize = 16;

/// The rule as bit-plane logic: which block counts (0..=9) give a live cell, and how.
struct RuleLogic {
    /// (count, when): when 0 = always, 1 = only dead cells (birth), 2 = only live ones.
    terms: Vec<(u32, u8)>,
}

impl RuleLogic {
    fn new(rule: Rule) -> RuleLogic {
        let terms = rule
            .block_terms()
            .iter()
            .enumerate()
            .filter_map(|(n, &(born, survives))| match (born, survives) {
                (true, true) => Some((n as u32, 0)),
                (true, false) => Some((n as u32, 1)),
                (false, true) => Some((n as u32, 2)),
                _ => None,
            })
            .collect();
        RuleLogic { terms }
    }

    #[inline(always)]
    fn apply(&self, s: [u64; 4], alive: u64) -> u64 {
        let mut out = 0;
        for &(n, when) in &self.terms {
            let mut eq = !0u64;
            for (b, plane) in s.iter().enumerate() {
                eq &= if n >> b & 1 == 1 { *plane } else { !*plane };
            }
            out |= match when {
                0 => eq,
                1 => eq & !alive,
                _ => eq & alive,
            };
        }
        out
    }
}

/// The 2-bit horizontal sum (left + centre + right) of every cell of a row, as two
/// bit planes; `torus` wraps the row's ends onto each other.
fn row_sums(row: &[u64], width: u64, torus: bool, lo: &mut [u64], hi: &mut [u64]) {
    let n = row.len();
    let last_bits = (width - 64 * (n as u64 - 1)) as u32; // valid bits of the last word, 1..=64
    for j in 0..n {
        let w = row[j];
        let carry_in = if j > 0 {
            row[j - 1] >> 63
        } else if torus {
            row[n - 1] >> (last_bits - 1) & 1
        } else {
            0
        };
        let left = (w << 1) | carry_in; // cell x-1 at bit x
        let right = if j + 1 < n {
            (w >> 1) | (row[j + 1] << 63)
        } else if torus {
            (w >> 1) | ((row[0] & 1) << (last_bits - 1))
        } else {
            w >> 1
        };
        lo[j] = left ^ w ^ right;
        hi[j] = (left & w) | (right & (left | w));
    }
}

impl HostLife {
    fn generation(&mut self, logic: &RuleLogic) -> Result<()> {
        let g = self.g;
        let wpr = g.words_per_row;
        let height = g.height as usize;
        let torus = g.boundary == Boundary::Torus;
        let last_mask = g.last_word_mask();
        if self.next.len() != self.cells.len() {
            self.next = zeroed_words(self.cells.len())?;
        }
        let cells = &self.cells;
        let zero = vec![0u64; wpr];
        // The neighbour row of y at offset d (-1 or +1), or None (dead) outside.
        let row_at = |y: usize, d: isize| -> Option<&[u64]> {
            let yy = y as isize + d;
            let yy = if (0..height as isize).contains(&yy) {
                yy as usize
            } else if torus {
                yy.rem_euclid(height as isize) as usize
            } else {
                return None;
            };
            Some(&cells[yy * wpr..(yy + 1) * wpr])
        };
        self.next.par_chunks_mut(wpr * BAND_ROWS).enumerate().for_each(|(band, out)| {
            let y0 = band * BAND_ROWS;
            // Rolling sums of three rows: above, centre, below.
            let mut sums: [(Vec<u64>, Vec<u64>); 3] =
                std::array::from_fn(|_| (vec![0u64; wpr], vec![0u64; wpr]));
            let fill = |slot: &mut (Vec<u64>, Vec<u64>), row: Option<&[u64]>| match row {
                Some(r) => row_sums(r, g.width, torus, &mut slot.0, &mut slot.1),
                None => row_sums(&zero, g.width, torus, &mut slot.0, &mut slot.1),
            };
            fill(&mut sums[0], row_at(y0, -1));
            fill(&mut sums[1], row_at(y0, 0));
            for (i, dst) in out.chunks_mut(wpr).enumerate() {
                let y = y0 + i;
                let (done, rest) = sums.split_at_mut(2);
                fill(&mut rest[0], row_at(y, 1));
                let (up, mid, down) = (&done[0], &done[1], &rest[0]);
                let centre = &cells[y * wpr..(y + 1) * wpr];
                for j in 0..wpr {
                    let (a0, b0, c0) = (up.0[j], mid.0[j], down.0[j]);
                    let (a1, b1, c1) = (up.1[j], mid.1[j], down.1[j]);
                    let s0 = a0 ^ b0 ^ c0;
                    let k0 = (a0 & b0) | (c0 & (a0 | b0));
                    let t1 = a1 ^ b1 ^ c1;
                    let k1 = (a1 & b1) | (c1 & (a1 | b1));
                    let s1 = t1 ^ k0;
                    let d = t1 & k0;
                    let s2 = k1 ^ d;
                    let s3 = k1 & d;
                    dst[j] = logic.apply([s0, s1, s2, s3], centre[j]);
                }
                dst[wpr - 1] &= last_mask;
                sums.rotate_left(1);
            }
        });
        std::mem::swap(&mut self.cells, &mut self.next);
        Ok(())
    }
}

impl LifeEngine for HostLife {
    fn upload(&mut self, words: &[u64]) -> Result<()> {
        self.cells.copy_from_slice(words);
        Ok(())
    }

    fn download(&mut self, words: &mut [u64]) -> Result<()> {
        words.copy_from_slice(&self.cells);
        Ok(())
    }

    fn step(&mut self, rule: Rule, generations: u64) -> Result<()> {
        let logic = RuleLogic::new(rule);
        for _ in 0..generations {
            self.generation(&logic)?;
        }
        Ok(())
    }

    fn population(&mut self) -> Result<u64> {
        Ok(self.cells.par_iter().map(|w| u64::from(w.count_ones())).sum())
    }
}
