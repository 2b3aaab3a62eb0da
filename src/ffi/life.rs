//! gpuprims_life_*: Life-like cellular automata on bit-packed grids (src/life).
#![allow(non_camel_case_types)]

use std::ffi::{c_char, CStr};
use std::sync::Arc;

use super::types::*;
use super::{destroy_handle, guard, into_handle, require, try_ref, write_out, write_text, Castable, Kind, Registry};
use crate::error::{invalid, Error, Result};
use crate::life::{Boundary, Geometry, Grid};

/// A Life grid: width x height cells, one bit each, in its context's memory, with a
/// boundary, a rule (B3/S23 until set) and a generation count. It keeps its context
/// alive after gpuprims_context_destroy until it is destroyed itself.
pub struct gpuprims_life_grid {
    _private: [u8; 0],
}

/// What lies beyond a Life grid's edges.
pub type gpuprims_life_boundary = u32;
/// Each of the eight neighbour offsets is taken modulo the width and height (on a grid
/// 1 or 2 wide or high a cell can count the same cell, itself included, more than once).
pub const GPUPRIMS_LIFE_TORUS: gpuprims_life_boundary = 0;
/// Every cell outside the grid is dead, always (B0 rules included).
pub const GPUPRIMS_LIFE_DEAD: gpuprims_life_boundary = 1;

impl Castable for gpuprims_life_grid {
    type Inner = Grid;
    const KIND: Kind = Kind::LifeGrid;
    fn registry() -> &'static Registry<Grid> {
        static GRIDS: Registry<Grid> = Registry::new();
        &GRIDS
    }
}

/// A NUL-terminated string argument.
fn c_text<'a>(p: *const c_char, arg: &str) -> Result<&'a CStr> {
    require(p, arg)?;
    // SAFETY: the caller passes a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(p) })
}

/// Creates a width x height grid of dead cells with boundary `b` (GPUPRIMS_LIFE_TORUS
/// or GPUPRIMS_LIFE_DEAD) under B3/S23. Width or height 0: INVALID_ARGUMENT.
#[no_mangle]
pub extern "C" fn gpuprims_life_create(
    ctx: *mut gpuprims_context,
    width: u64,
    height: u64,
    b: gpuprims_life_boundary,
    out: *mut *mut gpuprims_life_grid,
) -> gpuprims_status {
    guard("gpuprims_life_create", || {
        let c = try_ref(ctx, "ctx")?;
        require(out, "out")?;
        let boundary = match b {
            GPUPRIMS_LIFE_TORUS => Boundary::Torus,
            GPUPRIMS_LIFE_DEAD => Boundary::Dead,
            other => return Err(invalid(format!("b: unknown boundary value {other}"))),
        };
        if width == 0 || height == 0 {
            return Err(invalid(format!("a grid needs at least one cell, not {width} x {height}")));
        }
        let grid = Grid::new(Arc::clone(&c), Geometry::new(width, height, boundary)?)?;
        write_out(out, into_handle::<gpuprims_life_grid>(grid)?);
        Ok(())
    })
}

/// Destroys a grid. NULL is a no-op.
#[no_mangle]
pub extern "C" fn gpuprims_life_destroy(g: *mut gpuprims_life_grid) {
    guard("gpuprims_life_destroy", || {
        destroy_handle(g);
        Ok(())
    });
}

/// Sets the rule, a Life-like rule in B/S notation: "B3/S23" (the default), "B36/S23",
/// "B2/S", lower case "b3/s23", without the slash "B3S23", or Golly's S/B form "23/3".
/// Bad text: PARSE_ERROR, and the rule is unchanged.
#[no_mangle]
pub extern "C" fn gpuprims_life_set_rule(g: *mut gpuprims_life_grid, rule: *const c_char) -> gpuprims_status {
    guard("gpuprims_life_set_rule", || {
        let grid = try_ref(g, "g")?;
        let text = c_text(rule, "rule")?.to_str().map_err(|_| Error::Parse("rule is not UTF-8 text".into()))?;
        grid.set_rule(text)
    })
}

/// Copies the grid's rule in canonical form ("B3/S23") into `buf`: at most `len` bytes
/// with the NUL, truncating; `*needed` (when not NULL) receives the full length
/// without the NUL. `buf` may be NULL when `len` is 0.
#[no_mangle]
pub extern "C" fn gpuprims_life_get_rule(
    g: *const gpuprims_life_grid,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> gpuprims_status {
    guard("gpuprims_life_get_rule", || {
        let grid = try_ref(g, "g")?;
        if buf.is_null() && len > 0 {
            return Err(Error::NullArgument(format!("buf is NULL but len is {len}")));
        }
        let n = write_text(&grid.rule().to_string(), buf, len);
        if !needed.is_null() {
            write_out(needed, n);
        }
        Ok(())
    })
}

/// Replaces every cell from width x height bytes at `cells`, row-major, nonzero alive.
#[no_mangle]
pub extern "C" fn gpuprims_life_write_cells(g: *mut gpuprims_life_grid, cells: *const u8) -> gpuprims_status {
    guard("gpuprims_life_write_cells", || {
        let grid = try_ref(g, "g")?;
        require(cells, "cells")?;
        let n = grid.geometry.cells()?;
        // SAFETY: the caller provides width x height bytes.
        grid.write_cells(unsafe { std::slice::from_raw_parts(cells, n) })
    })
}

/// Writes every cell as one byte, row-major, 1 alive, 0 dead, into width x height
/// bytes at `cells`, after the work issued before.
#[no_mangle]
pub extern "C" fn gpuprims_life_read_cells(g: *const gpuprims_life_grid, cells: *mut u8) -> gpuprims_status {
    guard("gpuprims_life_read_cells", || {
        let grid = try_ref(g, "g")?;
        require(cells, "cells")?;
        let n = grid.geometry.cells()?;
        // SAFETY: the caller provides room for width x height bytes.
        grid.read_cells(unsafe { std::slice::from_raw_parts_mut(cells, n) })
    })
}

/// Stamps an RLE pattern (comment lines '#', the header "x = W, y = H[, rule = R]",
/// runs of b/o/$ with counts across lines, ending at '!') with its top-left at
/// (x, y): its live cells are set, every other cell keeps its state. A rule in the
/// header becomes the grid's (a Golly topology suffix such as ":T64,64" is ignored:
/// the grid keeps its own); the generation count is unchanged. Bad text: PARSE_ERROR,
/// with the line and column in the message; a header box that does not fit inside the
/// grid at (x, y): INVALID_ARGUMENT. Either way nothing changes, rule included.
#[no_mangle]
pub extern "C" fn gpuprims_life_load_rle(
    g: *mut gpuprims_life_grid,
    rle: *const c_char,
    x: u64,
    y: u64,
) -> gpuprims_status {
    guard("gpuprims_life_load_rle", || {
        let grid = try_ref(g, "g")?;
        grid.load_rle(c_text(rle, "rle")?.to_bytes(), x, y)
    })
}

/// Writes the whole grid as RLE (header "x = width, y = height, rule = <rule>", lines
/// of at most 70 characters) into `buf`: at most `len` bytes with the NUL, truncating;
/// `*needed` (when not NULL) receives the full length without the NUL. `buf` may be
/// NULL when `len` is 0. Loading the text at (0, 0) into a dead grid of the same size
/// reproduces the grid and its rule.
#[no_mangle]
pub extern "C" fn gpuprims_life_save_rle(
    g: *const gpuprims_life_grid,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> gpuprims_status {
    guard("gpuprims_life_save_rle", || {
        let grid = try_ref(g, "g")?;
        if buf.is_null() && len > 0 {
            return Err(Error::NullArgument(format!("buf is NULL but len is {len}")));
        }
        let n = write_text(&grid.save_rle()?, buf, len);
        if !needed.is_null() {
            write_out(needed, n);
        }
        Ok(())
    })
}

/// Advances the grid `generations` generations under its rule (0: nothing). On CUDA
/// the work is issued in stream order without waiting.
#[no_mangle]
pub extern "C" fn gpuprims_life_step(g: *mut gpuprims_life_grid, generations: u64) -> gpuprims_status {
    guard("gpuprims_life_step", || try_ref(g, "g")?.step(generations))
}

/// Writes the number of live cells, after the work issued before.
#[no_mangle]
pub extern "C" fn gpuprims_life_population(g: *const gpuprims_life_grid, out: *mut u64) -> gpuprims_status {
    guard("gpuprims_life_population", || {
        let grid = try_ref(g, "g")?;
        require(out, "out")?;
        let n = grid.population()?;
        write_out(out, n);
        Ok(())
    })
}

/// Writes the number of generations stepped since the grid was created (modulo 2^64).
#[no_mangle]
pub extern "C" fn gpuprims_life_generation(g: *const gpuprims_life_grid, out: *mut u64) -> gpuprims_status {
    guard("gpuprims_life_generation", || {
        let grid = try_ref(g, "g")?;
        require(out, "out")?;
        write_out(out, grid.generation());
        Ok(())
    })
}
