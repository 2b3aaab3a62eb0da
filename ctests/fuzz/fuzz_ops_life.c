/*
 * fuzz_ops_life.c: calls on Life grids. The model holds each grid's cells, rule and
 * generation count; a step is checked against a reference step written here (each of
 * the eight neighbour offsets taken modulo the size on a torus, so that a grid 1 or 2
 * wide counts a cell more than once; nothing outside a DEAD grid), RLE loads against the
 * pattern the text was written from, saves by loading the text back into a fresh grid.
 */
#include "fuzz.h"

#define POISON 0xC3

static fz_h grid_arg(int g, unsigned hostile_pct) { return fz_maybe_hostile(FZ_KGRID, fz_live_grid(g), hostile_pct); }

static size_t ncells(int g) { return (size_t)(fz.grid[g].w * fz.grid[g].hgt); }

/* ------------------------------------------------------------------------------------- */
/* Reference                                                                              */
/* ------------------------------------------------------------------------------------- */

static void ref_step(fz_grid *x) {
  uint64_t w = x->w, h = x->hgt, r, c;
  unsigned char *next = (unsigned char *)tu_xmalloc((size_t)(w * h));
  int dy, dx;
  for (r = 0; r < h; r++) {
    for (c = 0; c < w; c++) {
      unsigned n = 0, alive = x->cells[r * w + c];
      for (dy = -1; dy <= 1; dy++) {
        for (dx = -1; dx <= 1; dx++) {
          uint64_t rr = r + h + (uint64_t)(int64_t)dy, cc = c + w + (uint64_t)(int64_t)dx; /* r + h - 1 .. r + h + 1 */
          if (dx == 0 && dy == 0) continue;
          if (x->bnd == GPUPRIMS_LIFE_TORUS) {
            n += x->cells[(rr % h) * w + cc % w];
          } else if (rr >= h && rr < 2 * h && cc >= w && cc < 2 * w) {
            n += x->cells[(rr - h) * w + (cc - w)];
          }
        }
      }
      next[r * w + c] = (unsigned char)((alive ? x->survive : x->birth) >> n & 1);
    }
  }
  memcpy(x->cells, next, (size_t)(w * h));
  free(next);
}

static uint64_t population(const fz_grid *x) {
  size_t i, n = (size_t)(x->w * x->hgt);
  uint64_t p = 0;
  for (i = 0; i < n; i++) p += x->cells[i];
  return p;
}

/* The grid's rule as the library has it (harness call). */
static void read_rule(int g, uint16_t *birth, uint16_t *survive) {
  char text[64];
  size_t needed = 0;
  fz_call("gpuprims_life_get_rule(%s, buf, %zu, &needed) (check)", fz_live_grid(g).what, sizeof text);
  fz_done(gpuprims_life_get_rule(fz.grid[g].h, text, sizeof text, &needed), FZ_OK);
  if (needed >= sizeof text || !fz_rule_parse_canon(text, birth, survive))
    fz_fail("life_get_rule gave \"%s\" (needed %zu), not a canonical rule", text, needed);
}

static void read_cells(int g, unsigned char *cells) {
  fz_call("gpuprims_life_read_cells(%s, cells) (check)", fz_live_grid(g).what);
  fz_done(gpuprims_life_read_cells(fz.grid[g].h, cells), FZ_OK);
}

void fz_verify_grid(int g, const char *why) {
  fz_grid *x = &fz.grid[g];
  size_t n = ncells(g), i;
  unsigned char *got = (unsigned char *)tu_xmalloc(n);
  uint16_t b, s;
  uint64_t v = 0;
  read_cells(g, got);
  for (i = 0; i < n; i++)
    if (got[i] != x->cells[i])
      fz_fail("%s: grid#%d cell (%zu, %zu) is %u, expected %u", why, x->id, (size_t)(i % x->w), (size_t)(i / x->w),
              got[i], x->cells[i]);
  read_rule(g, &b, &s);
  if (b != x->birth || s != x->survive) {
    char w[64], gt[64];
    fz_rule_canon(x->birth, x->survive, w, sizeof w);
    fz_rule_canon(b, s, gt, sizeof gt);
    fz_fail("%s: grid#%d's rule is %s, expected %s", why, x->id, gt, w);
  }
  fz_call("gpuprims_life_generation(%s, &out) (check)", fz_live_grid(g).what);
  fz_done(gpuprims_life_generation(x->h, &v), FZ_OK);
  if (v != x->gen) fz_fail("%s: grid#%d's generation is %llu, expected %llu", why, x->id, (unsigned long long)v, (unsigned long long)x->gen);
  fz_call("gpuprims_life_population(%s, &out) (check)", fz_live_grid(g).what);
  fz_done(gpuprims_life_population(x->h, &v), FZ_OK);
  if (v != population(x)) fz_fail("%s: grid#%d's population is %llu, expected %llu", why, x->id, (unsigned long long)v, (unsigned long long)population(x));
  fz.checked_results++;
  free(got);
}

/* After an unknown text was taken: the model takes the grid's cells and rule. */
static void adopt(int g) {
  read_cells(g, fz.grid[g].cells);
  read_rule(g, &fz.grid[g].birth, &fz.grid[g].survive);
}

/* A live grid, or -1 (then the op makes one first, half the time). */
static int some_grid(void) {
  int g = fz_pick_live_grid();
  if (g < 0 && fz_pct(50)) fz_op_life_create();
  return fz_pick_live_grid();
}

/* ------------------------------------------------------------------------------------- */
/* create, destroy                                                                        */
/* ------------------------------------------------------------------------------------- */

static uint64_t small_side(void) {
  static const uint64_t edges[] = {1, 2, 3, 63, 64, 65, 127, 128};
  if (fz_pct(3)) return fz_range(129, 300); /* rows of several words */
  return fz_pct(30) ? edges[fz_below(TU_ARRAY_LEN(edges))] : fz_range(1, 80);
}

void fz_op_life_create(void) {
  /* the first 6 reach the allocator (OUT_OF_MEMORY), the others do not fit an isize of bytes */
  static const uint64_t huge[][2] = {{(uint64_t)1 << 26, (uint64_t)1 << 26}, {(uint64_t)1 << 52, 1}, {1, (uint64_t)1 << 46},
                                     {(uint64_t)1 << 20, (uint64_t)1 << 40}, {UINT64_MAX, 1}, {(uint64_t)1 << 33, (uint64_t)1 << 30},
                                     {UINT64_MAX, UINT64_MAX}, {1, UINT64_MAX}, {UINT64_MAX / 2, 1024}, {(uint64_t)1 << 40, (uint64_t)1 << 30}};
  int c = fz_pick_live_ctx(), bad_b = fz_pct(5), no_out = fz_pct(5), g = -1;
  unsigned r = (unsigned)fz_below(100), faults;
  uint64_t w, h;
  gpuprims_life_boundary bnd = bad_b ? fz_bad_enum() : (gpuprims_life_boundary)fz_below(2);
  fz_h ca = fz_maybe_hostile(FZ_KCTX, fz_live_ctx(c), 6);
  gpuprims_life_grid *out = TU_SENTINEL_PTR(gpuprims_life_grid);
  gpuprims_status s;
  faults = fz_handle_fault(&ca, 0) | (no_out ? FZ_S(NULL_ARGUMENT) : 0) | (bad_b ? FZ_S(INVALID_ARGUMENT) : 0);
  if (r < 88) {
    w = small_side();
    h = small_side();
  } else if (r < 94) {
    w = fz_pct(50) ? 0 : small_side();
    h = w ? 0 : fz_pct(50) ? 0 : small_side();
    faults |= FZ_S(INVALID_ARGUMENT);
  } else {
    int k = (int)fz_below(TU_ARRAY_LEN(huge));
    if (k < 6 && fz.oom_tries++ >= 24) k = 6 + k % 4; /* sizes that reach the allocator: the first 24 only */
    w = huge[k][0];
    h = huge[k][1];
    faults |= FZ_S(INVALID_ARGUMENT) | FZ_S(OUT_OF_MEMORY);
  }
  if (!faults) g = fz_grid_slot();
  fz_call("gpuprims_life_create(%s, %llu, %llu, %s, %s)", ca.what, (unsigned long long)w, (unsigned long long)h,
          bad_b ? "(unknown boundary)" : bnd == GPUPRIMS_LIFE_TORUS ? "TORUS" : "DEAD", no_out ? "NULL" : "&out");
  s = fz_done(gpuprims_life_create((gpuprims_context *)ca.p, w, h, bnd, no_out ? NULL : &out), faults ? faults : FZ_OK);
  if (!fz_created(s, no_out, out, "life_create")) return;
  memset(&fz.grid[g], 0, sizeof fz.grid[g]);
  fz.grid[g].h = out;
  fz.grid[g].live = 1;
  fz.grid[g].id = fz_new_id();
  fz.grid[g].ctx = c;
  fz.grid[g].w = w;
  fz.grid[g].hgt = h;
  fz.grid[g].bnd = bnd;
  fz.grid[g].birth = 1u << 3;
  fz.grid[g].survive = (1u << 2) | (1u << 3);
  fz.grid[g].cells = (unsigned char *)tu_xmalloc((size_t)(w * h));
  memset(fz.grid[g].cells, 0, (size_t)(w * h));
  if (fz_pct(30)) fz_verify_grid(g, "after life_create");
}

void fz_op_life_destroy(void) {
  int g = fz_pick_live_grid();
  if (g >= 0 && fz_pct(70)) {
    fz_grid_destroy(g);
    return;
  }
  fz_destroy_hostile(FZ_KGRID);
}

/* ------------------------------------------------------------------------------------- */
/* Rules                                                                                  */
/* ------------------------------------------------------------------------------------- */

static void op_set_rule(int g) {
  char text[96];
  uint16_t birth, survive;
  int kind, no_text = fz_pct(5);
  fz_h a = grid_arg(g, 8);
  unsigned faults = fz_handle_fault(&a, 0) | (no_text ? FZ_S(NULL_ARGUMENT) : 0);
  gpuprims_status s;
  fz_rule_text(text, sizeof text, &birth, &survive, &kind);
  if (!no_text && kind == 1) faults |= FZ_S(PARSE_ERROR);
  fz_call("gpuprims_life_set_rule(%s, %s%s%s)", a.what, no_text ? "NULL" : "\"", no_text ? "" : text, no_text ? "" : "\"");
  s = fz_done(gpuprims_life_set_rule((gpuprims_life_grid *)a.p, no_text ? NULL : text),
              faults ? faults : kind == 2 ? FZ_OK | FZ_S(PARSE_ERROR) : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK && kind == 0) {
    fz.grid[g].birth = birth;
    fz.grid[g].survive = survive;
  } else if (s == GPUPRIMS_STATUS_OK) {
    read_rule(g, &fz.grid[g].birth, &fz.grid[g].survive);
  }
  if (fz_pct(s == GPUPRIMS_STATUS_OK ? 40 : 100)) {
    uint16_t b2, s2;
    read_rule(g, &b2, &s2);
    if (b2 != fz.grid[g].birth || s2 != fz.grid[g].survive)
      fz_fail("after set_rule(\"%s\") (%s) the rule is not what it should be", no_text ? "NULL" : text, tu_status_name(s));
  }
}

static void op_get_rule(int g) {
  unsigned char buf[48];
  char want[32];
  size_t len = (size_t)fz_below(24), needed = FZ_UNSET, n, i;
  int buf_null = fz_pct(8), needed_null = fz_pct(15);
  fz_h a = grid_arg(g, 8);
  unsigned faults = fz_handle_fault(&a, 0);
  gpuprims_status s;
  if (buf_null && len && fz_pct(50)) len = 0;
  if (buf_null && len) faults |= FZ_S(NULL_ARGUMENT);
  fz_rule_canon(fz.grid[g].birth, fz.grid[g].survive, want, sizeof want);
  memset(buf, POISON, sizeof buf);
  fz_call("gpuprims_life_get_rule(%s, %s, %zu, %s)", a.what, buf_null ? "NULL" : "buf", len, needed_null ? "NULL" : "&needed");
  s = fz_done(gpuprims_life_get_rule((gpuprims_life_grid *)a.p, buf_null ? NULL : (char *)buf, len,
                                     needed_null ? NULL : &needed),
              faults ? faults : FZ_OK);
  if (s != GPUPRIMS_STATUS_OK) {
    for (i = 0; i < sizeof buf; i++)
      if (buf[i] != POISON) fz_fail("a failed life_get_rule wrote buf[%zu]", i);
    if (needed != FZ_UNSET) fz_fail("a failed life_get_rule wrote needed");
    return;
  }
  if (!needed_null && needed != strlen(want)) fz_fail("life_get_rule: needed %zu, the rule is %s", needed, want);
  n = buf_null || len == 0 ? 0 : (len - 1 < strlen(want) ? len - 1 : strlen(want));
  if (len && !buf_null && (memcmp(buf, want, n) != 0 || buf[n] != '\0'))
    fz_fail("life_get_rule(buf, %zu) wrote \"%.*s\", the rule is %s", len, (int)n, (char *)buf, want);
  for (i = buf_null ? 0 : len; i < sizeof buf; i++)
    if (buf[i] != POISON) fz_fail("life_get_rule(buf, %zu) wrote byte %zu", len, i);
  fz.checked_results++;
}

void fz_op_life_rule(void) {
  int g = some_grid();
  if (g < 0) return;
  if (fz_pct(55))
    op_set_rule(g);
  else
    op_get_rule(g);
}

/* ------------------------------------------------------------------------------------- */
/* Cells                                                                                  */
/* ------------------------------------------------------------------------------------- */

void fz_op_life_cells(void) {
  int g = some_grid(), no_cells = fz_pct(5);
  size_t n, i;
  unsigned char *cells;
  fz_h a;
  unsigned faults;
  gpuprims_status s;
  if (g < 0) return;
  n = ncells(g);
  a = grid_arg(g, 8);
  faults = fz_handle_fault(&a, 0) | (no_cells ? FZ_S(NULL_ARGUMENT) : 0);
  cells = (unsigned char *)tu_xmalloc(n + 32);
  if (fz_pct(50)) {
    unsigned density = (unsigned)fz_below(101), any_byte = fz_pct(20);
    for (i = 0; i < n; i++) cells[i] = fz_pct(density) ? (unsigned char)(any_byte ? fz_range(1, 255) : 1) : 0;
    fz_call("gpuprims_life_write_cells(%s, %s)", a.what, no_cells ? "NULL" : "cells");
    s = fz_done(gpuprims_life_write_cells((gpuprims_life_grid *)a.p, no_cells ? NULL : cells), faults ? faults : FZ_OK);
    if (s == GPUPRIMS_STATUS_OK)
      for (i = 0; i < n; i++) fz.grid[g].cells[i] = cells[i] != 0;
    if (fz_pct(s == GPUPRIMS_STATUS_OK ? 30 : 100)) fz_verify_grid(g, s == GPUPRIMS_STATUS_OK ? "after life_write_cells" : "after a failed life_write_cells");
  } else {
    memset(cells, POISON, n + 32);
    fz_call("gpuprims_life_read_cells(%s, %s)", a.what, no_cells ? "NULL" : "cells");
    s = fz_done(gpuprims_life_read_cells((gpuprims_life_grid *)a.p, no_cells ? NULL : cells), faults ? faults : FZ_OK);
    for (i = s == GPUPRIMS_STATUS_OK ? n : 0; i < n + 32; i++)
      if (cells[i] != POISON) fz_fail("life_read_cells (%s) wrote byte %zu of %zu", tu_status_name(s), i, n);
    if (s == GPUPRIMS_STATUS_OK) {
      for (i = 0; i < n; i++)
        if (cells[i] != fz.grid[g].cells[i])
          fz_fail("life_read_cells: cell (%zu, %zu) is %u, expected %u", (size_t)(i % fz.grid[g].w),
                  (size_t)(i / fz.grid[g].w), cells[i], fz.grid[g].cells[i]);
      fz.checked_results++;
    }
  }
  free(cells);
}

/* ------------------------------------------------------------------------------------- */
/* RLE                                                                                    */
/* ------------------------------------------------------------------------------------- */

/* A position for a box of `size` on a side of `limit`: inside (*fits), or not. */
static uint64_t place(uint64_t size, uint64_t limit, int inside, int *fits) {
  *fits = inside && size <= limit;
  if (*fits) return fz_below(limit - size + 1);
  if (fz_pct(30)) return UINT64_MAX - fz_below(4); /* x + width overflows */
  return (limit >= size ? limit - size : 0) + 1 + fz_below(4);
}

/* A load: the pattern (pw x ph cells), its header box (bw x bh), where it goes, its text. */
typedef struct {
  uint64_t pw, ph, bw, bh, x, y;
  int fits, has_rule, spoil, certain, has_runs;
  uint16_t birth, survive;
  unsigned char *pat;
  char *text, how[64];
} rle_load_t;

static void rle_load_make(int g, rle_load_t *l) {
  uint64_t r;
  unsigned density = (unsigned)fz_below(101);
  int fx, fy;
  memset(l, 0, sizeof *l);
  l->has_rule = fz_pct(40);
  l->spoil = fz_pct(35);
  l->birth = (uint16_t)fz_below(512);
  l->survive = (uint16_t)fz_below(512);
  l->pw = fz_below(fz.grid[g].w + (fz_pct(10) ? 3 : 1));
  l->ph = fz_below(fz.grid[g].hgt + (fz_pct(10) ? 3 : 1));
  l->bw = l->pw + (fz_pct(20) ? fz_below(3) : 0);
  l->bh = l->ph + (fz_pct(20) ? fz_below(3) : 0);
  if (fz_pct(3)) { /* a header box no grid holds (x + width overflows at any x) */
    if (fz_pct(50)) l->bw = UINT64_MAX - fz_below(2); else l->bh = UINT64_MAX - fz_below(2);
  }
  l->pat = (unsigned char *)tu_xmalloc((size_t)(l->pw * l->ph) + 1);
  for (r = 0; r < l->pw * l->ph; r++) l->has_runs |= l->pat[r] = (unsigned char)fz_pct(density);
  l->x = place(l->bw, fz.grid[g].w, fz_pct(85), &fx);
  l->y = place(l->bh, fz.grid[g].hgt, fz_pct(85), &fy);
  l->fits = fx && fy;
  l->text = fz_rle_text(l->bw, l->bh, l->pat, l->pw, l->ph, l->has_rule, l->birth, l->survive);
  if (l->spoil) {
    char *t = fz_rle_spoil(l->text, l->bw, l->bh, l->has_runs, &l->certain, l->how, sizeof l->how);
    free(l->text);
    l->text = t;
  }
}

/* The model after a load that succeeded. */
static void rle_load_apply(int g, const rle_load_t *l) {
  uint64_t r, c;
  if (l->spoil) { /* a mutated text that parsed: whatever it said */
    adopt(g);
    return;
  }
  for (r = 0; r < l->ph; r++)
    for (c = 0; c < l->pw; c++)
      if (l->pat[r * l->pw + c]) fz.grid[g].cells[(l->y + r) * fz.grid[g].w + l->x + c] = 1;
  if (l->has_rule) {
    fz.grid[g].birth = l->birth;
    fz.grid[g].survive = l->survive;
  }
}

void fz_op_life_rle_load(void) {
  int g = some_grid(), no_text = fz_pct(4);
  rle_load_t l;
  fz_h a;
  unsigned faults;
  gpuprims_status s;
  if (g < 0) return;
  rle_load_make(g, &l);
  a = grid_arg(g, 6);
  faults = fz_handle_fault(&a, 0) | (no_text ? FZ_S(NULL_ARGUMENT) : 0);
  if (!no_text && l.spoil && l.certain) faults |= FZ_S(PARSE_ERROR);
  if (!no_text && !l.spoil && !l.fits) faults |= FZ_S(INVALID_ARGUMENT);
  fz_call("gpuprims_life_load_rle(%s, %s [%llu x %llu box%s%s%s], %llu, %llu)", a.what, no_text ? "NULL" : "text",
          (unsigned long long)l.bw, (unsigned long long)l.bh, l.has_rule ? ", with a rule" : "", l.spoil ? ", " : "",
          l.how, (unsigned long long)l.x, (unsigned long long)l.y);
  s = fz_done(gpuprims_life_load_rle((gpuprims_life_grid *)a.p, no_text ? NULL : l.text, l.x, l.y),
              faults ? faults : l.spoil ? FZ_OK | FZ_S(PARSE_ERROR) | FZ_S(INVALID_ARGUMENT) : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK) rle_load_apply(g, &l);
  if (fz.trace && s != GPUPRIMS_STATUS_OK && !no_text) printf("    text: %s\n", l.text);
  if (fz_pct(s == GPUPRIMS_STATUS_OK ? 50 : 100))
    fz_verify_grid(g, s == GPUPRIMS_STATUS_OK ? "after life_load_rle" : "after a failed life_load_rle");
  free(l.pat);
  free(l.text);
}

/* The saved text: header line "x = W, y = H, rule = R", lines of at most 70, and the
 * grid back when it is loaded into a fresh dead grid of the same size. */
static void check_saved(int g, const char *text) {
  fz_grid *x = &fz.grid[g];
  char hdr[128], rule[32];
  const char *p = text, *nl;
  gpuprims_life_grid *t = NULL;
  unsigned char *cells;
  size_t i, n = ncells(g);
  int c = fz_main_ctx();
  fz_rule_canon(x->birth, x->survive, rule, sizeof rule);
  snprintf(hdr, sizeof hdr, "x = %llu, y = %llu, rule = %s\n", (unsigned long long)x->w, (unsigned long long)x->hgt, rule);
  if (strncmp(text, hdr, strlen(hdr)) != 0) fz_fail("life_save_rle's header is not \"%.*s\": \"%.80s\"", (int)strlen(hdr) - 1, hdr, text);
  for (; (nl = strchr(p, '\n')) != NULL || *p; p = nl ? nl + 1 : p + strlen(p)) {
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (len > 70) fz_fail("life_save_rle wrote a line of %zu characters", len);
    if (!nl) break;
  }
  fz_call("gpuprims_life_create(ctx#%d, %llu, %llu, DEAD, &out) (check)", fz.ctx[c].id, (unsigned long long)x->w, (unsigned long long)x->hgt);
  fz_done(gpuprims_life_create(fz.ctx[c].h, x->w, x->hgt, GPUPRIMS_LIFE_DEAD, &t), FZ_OK);
  fz_call("gpuprims_life_load_rle(the fresh grid, the saved text, 0, 0) (check)");
  fz_done(gpuprims_life_load_rle(t, text, 0, 0), FZ_OK);
  cells = (unsigned char *)tu_xmalloc(n + 1);
  fz_call("gpuprims_life_read_cells(the fresh grid, cells) (check)");
  fz_done(gpuprims_life_read_cells(t, cells), FZ_OK);
  for (i = 0; i < n; i++)
    if (cells[i] != x->cells[i]) fz_fail("life_save_rle's text loads back with cell %zu %u, expected %u", i, cells[i], x->cells[i]);
  {
    char got[64];
    size_t needed = 0;
    fz_call("gpuprims_life_get_rule(the fresh grid, buf, %zu, &needed) (check)", sizeof got);
    fz_done(gpuprims_life_get_rule(t, got, sizeof got, &needed), FZ_OK);
    if (strcmp(got, rule) != 0) fz_fail("life_save_rle's text loads back with rule %s, expected %s", got, rule);
  }
  fz_call("gpuprims_life_destroy(the fresh grid) (check)");
  gpuprims_life_destroy(t);
  fz_done_void("(void)");
  free(cells);
  fz.checked_results++;
}

void fz_op_life_rle_save(void) {
  int g = some_grid(), needed_null = fz_pct(15), buf_null;
  size_t cap, len, needed = FZ_UNSET, i, keep;
  unsigned r = (unsigned)fz_below(100);
  unsigned char *buf;
  fz_h a;
  unsigned faults;
  gpuprims_status s;
  if (g < 0) return;
  cap = 2 * ncells(g) + 4 * (size_t)fz.grid[g].hgt + 256; /* more than any RLE of the grid */
  len = r < 55 ? cap : r < 85 ? (size_t)fz_below(cap) : 0;
  buf_null = len == 0 && fz_pct(60);
  if (fz_pct(4)) buf_null = 1;
  a = grid_arg(g, 6);
  faults = fz_handle_fault(&a, 0) | (buf_null && len ? FZ_S(NULL_ARGUMENT) : 0);
  buf = (unsigned char *)tu_xmalloc(cap + 32);
  memset(buf, POISON, cap + 32);
  fz_call("gpuprims_life_save_rle(%s, %s, %zu, %s)", a.what, buf_null ? "NULL" : "buf", len, needed_null ? "NULL" : "&needed");
  s = fz_done(gpuprims_life_save_rle((gpuprims_life_grid *)a.p, buf_null ? NULL : (char *)buf, len,
                                     needed_null ? NULL : &needed),
              faults ? faults : FZ_OK);
  if (s != GPUPRIMS_STATUS_OK) {
    for (i = 0; i < cap + 32; i++)
      if (buf[i] != POISON) fz_fail("a failed life_save_rle wrote buf[%zu]", i);
    if (needed != FZ_UNSET) fz_fail("a failed life_save_rle wrote needed");
    free(buf);
    return;
  }
  if (!needed_null && (needed == FZ_UNSET || needed >= cap)) fz_fail("life_save_rle: needed %zu (room %zu)", needed, cap);
  for (i = buf_null ? 0 : len; i < cap + 32; i++)
    if (buf[i] != POISON) fz_fail("life_save_rle(buf, %zu) wrote byte %zu", len, i);
  if (!buf_null && len) {
    for (keep = 0; keep < len && buf[keep] != '\0'; keep++) {
    }
    if (keep == len) fz_fail("life_save_rle(buf, %zu) wrote no NUL", len);
    if (!needed_null && keep != (needed < len - 1 ? needed : len - 1))
      fz_fail("life_save_rle(buf, %zu) wrote %zu bytes of %zu", len, keep, needed);
    if (!needed_null && len > needed && fz_pct(60)) check_saved(g, (char *)buf);
  }
  free(buf);
}

/* ------------------------------------------------------------------------------------- */
/* step, population, generation                                                           */
/* ------------------------------------------------------------------------------------- */

void fz_op_life_step(void) {
  int g = some_grid();
  uint64_t gens = fz_pct(85) ? fz_below(5) : fz_range(5, 12), i;
  fz_h a;
  gpuprims_status s;
  if (g < 0) return;
  a = grid_arg(g, 6);
  fz_call("gpuprims_life_step(%s, %llu)", a.what, (unsigned long long)gens);
  s = fz_done(gpuprims_life_step((gpuprims_life_grid *)a.p, gens), a.cls == FZ_LIVE ? FZ_OK : fz_handle_fault(&a, 0));
  if (s == GPUPRIMS_STATUS_OK) {
    for (i = 0; i < gens; i++) ref_step(&fz.grid[g]);
    fz.grid[g].gen += gens;
  }
  if (fz_pct(40)) fz_verify_grid(g, "after life_step");
}

void fz_op_life_query(void) {
  int g = some_grid(), no_out = fz_pct(5), pop = fz_pct(50);
  uint64_t v = FZ_UNSET, want;
  fz_h a;
  unsigned faults;
  gpuprims_status s;
  if (g < 0) return;
  a = grid_arg(g, 8);
  faults = fz_handle_fault(&a, 0) | (no_out ? FZ_S(NULL_ARGUMENT) : 0);
  want = pop ? population(&fz.grid[g]) : fz.grid[g].gen;
  fz_call("gpuprims_life_%s(%s, %s)", pop ? "population" : "generation", a.what, no_out ? "NULL" : "&out");
  s = fz_done(pop ? gpuprims_life_population((gpuprims_life_grid *)a.p, no_out ? NULL : &v)
                  : gpuprims_life_generation((gpuprims_life_grid *)a.p, no_out ? NULL : &v),
              faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK && v != want)
    fz_fail("life_%s wrote %llu, expected %llu", pop ? "population" : "generation", (unsigned long long)v, (unsigned long long)want);
  if (s != GPUPRIMS_STATUS_OK && v != FZ_UNSET) fz_fail("a failed life_%s wrote its out-parameter", pop ? "population" : "generation");
}
