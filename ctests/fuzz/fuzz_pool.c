/*
 * fuzz_pool.c: the live handles the fuzzer holds and what it knows of them (a shadow
 * of every buffer's contents and of every grid's cells and rule; the context records
 * of communicators and of a group's devices), and the hostile
 * values handed out in their place: NULL, destroyed handles, handles of another kind,
 * forged values of the right kind byte (src/ffi/handles.rs: kind | generation | slot)
 * and plain garbage (small integers, a local's and a heap block's address, a freed
 * block's, all bits set). The library recognises all of them from the value alone, as
 * test_handles relies on; none is ever read through by the fuzzer either.
 */
#include "fuzz.h"

static int garbage_int;
static void *garbage_heap, *garbage_freed;

int fz_new_id(void) { return ++fz.next_id; }

static const char *const DESTROY_FN[FZ_KINDS] = {"gpuprims_context_destroy", "gpuprims_buffer_destroy",
                                                 "gpuprims_life_destroy", "gpuprims_comm_destroy",
                                                 "gpuprims_group_destroy"};

void fz_destroy_as(int kind, void *h, const char *what) {
  fz_call("%s(%s)", DESTROY_FN[kind], what);
  tu_destroy_as(kind, h);
}

/* Destroys live handle h of `kind` (logged) and remembers it among the destroyed. */
static void destroy_live(int kind, void *h, const char *what) {
  fz_destroy_as(kind, h, what);
  fz_done_void("(void)");
  fz_remember_stale(kind, h);
}

/* ------------------------------------------------------------------------------------- */
/* Contexts                                                                               */
/* ------------------------------------------------------------------------------------- */

int fz_ctx_add(gpuprims_context *h, int32_t device) {
  int c;
  gpuprims_backend b = 0xDEAD;
  for (c = 0; c < FZ_MAX_CTX && fz.ctx[c].used; c++) {
  }
  if (c == FZ_MAX_CTX) fz_fail("internal: no free context record");
  fz.ctx[c].h = h;
  fz.ctx[c].used = fz.ctx[c].live = 1;
  fz.ctx[c].id = fz_new_id();
  fz.ctx[c].device = device;
  fz_call("gpuprims_context_backend(ctx#%d, &out) (check)", fz.ctx[c].id);
  fz_done(gpuprims_context_backend(h, &b), FZ_OK);
  if (b != GPUPRIMS_BACKEND_HOST && b != GPUPRIMS_BACKEND_CUDA) fz_fail("context_backend wrote %u", (unsigned)b);
  fz.ctx[c].backend = b;
  return c;
}

/* Whether group g has record c as a device's context. */
static int group_uses(int g, int c) {
  int i;
  for (i = 0; fz.group[g].live && i < fz.group[g].n; i++)
    if (fz.group[g].ctx[i] == c) return 1;
  return 0;
}

void fz_ctx_release_if_unused(int c) {
  int i;
  if (c < 0 || !fz.ctx[c].used || fz.ctx[c].live) return;
  for (i = 0; i < FZ_MAX_BUF; i++)
    if (fz.buf[i].live && fz.buf[i].ctx == c) return;
  for (i = 0; i < FZ_MAX_GRID; i++)
    if (fz.grid[i].live && fz.grid[i].ctx == c) return;
  for (i = 0; i < FZ_MAX_COMM; i++)
    if (fz.comm[i].live && fz.comm[i].ctx == c) return;
  for (i = 0; i < FZ_MAX_GROUP; i++)
    if (group_uses(i, c)) return;
  fz.ctx[c].used = 0;
}

void fz_ctx_destroy(int c) {
  destroy_live(FZ_KCTX, fz.ctx[c].h, fz_live_ctx(c).what);
  fz.ctx[c].live = 0;
  fz_ctx_release_if_unused(c);
}

/* Frees record c (whose handle is destroyed): destroys the buffers (views first), grids,
 * comms and groups that keep it. */
static void ctx_evict(int c) {
  int i;
  for (i = 0; i < FZ_MAX_BUF; i++)
    if (fz.buf[i].live && fz.buf[i].ctx == c && fz.buf[i].owner != i) fz_buf_destroy(i);
  for (i = 0; i < FZ_MAX_BUF; i++)
    if (fz.buf[i].live && fz.buf[i].ctx == c) fz_buf_destroy(i);
  for (i = 0; i < FZ_MAX_GRID; i++)
    if (fz.grid[i].live && fz.grid[i].ctx == c) fz_grid_destroy(i);
  for (i = 0; i < FZ_MAX_COMM; i++)
    if (fz.comm[i].live && fz.comm[i].ctx == c) fz_comm_destroy(i);
  for (i = 0; i < FZ_MAX_GROUP; i++)
    if (group_uses(i, c)) fz_group_destroy(i);
}

/* A live context other than the main one, to destroy: outside groups when `ordinary`. */
static int ctx_victim(int ordinary) {
  int c, n = 0, pick[FZ_MAX_CTX];
  for (c = 0; c < FZ_MAX_CTX; c++)
    if (fz.ctx[c].live && c != fz_main_ctx() && (!ordinary || !fz.ctx[c].group)) pick[n++] = c;
  if (n == 0) fz_fail("internal: no context to make room with");
  return pick[fz_below((uint64_t)n)];
}

void fz_ctx_room(int records, int ordinary) {
  int c, live = 0, free_rec = 0;
  for (c = 0; c < FZ_MAX_CTX; c++) live += fz.ctx[c].live && !fz.ctx[c].group;
  for (; ordinary && live >= FZ_LIVE_CTX; live--) fz_ctx_destroy(ctx_victim(1));
  for (;;) {
    for (free_rec = 0, c = 0; c < FZ_MAX_CTX; c++) free_rec += !fz.ctx[c].used;
    if (free_rec >= records) return;
    /* every record is taken: let a destroyed context's go (destroy a live one first if none is) */
    for (c = 0; c < FZ_MAX_CTX && (!fz.ctx[c].used || fz.ctx[c].live); c++) {
    }
    if (c == FZ_MAX_CTX) fz_ctx_destroy(c = ctx_victim(0));
    ctx_evict(c);
  }
}

int fz_ctx_is_cuda(int c) { return fz.ctx[c].backend == GPUPRIMS_BACKEND_CUDA; }

int fz_main_ctx(void) {
  int c;
  for (c = 0; c < FZ_MAX_CTX; c++)
    if (fz.ctx[c].live) return c;
  fz_fail("internal: no live context");
}

int fz_pick_live_ctx(void) {
  int c, n = 0, pick[FZ_MAX_CTX];
  for (c = 0; c < FZ_MAX_CTX; c++)
    if (fz.ctx[c].live) pick[n++] = c;
  if (n == 0) fz_fail("internal: no live context");
  return pick[fz_below((uint64_t)n)];
}

fz_h fz_live_ctx(int c) {
  fz_h a;
  a.p = fz.ctx[c].h;
  a.cls = FZ_LIVE;
  a.idx = c;
  snprintf(a.what, sizeof a.what, "ctx#%d", fz.ctx[c].id);
  return a;
}

/* ------------------------------------------------------------------------------------- */
/* Buffers                                                                                */
/* ------------------------------------------------------------------------------------- */

unsigned char *fz_shadow(int b) { return fz.buf[fz.buf[b].owner].mem + fz.buf[b].off; }

int fz_buf_add(gpuprims_buffer *h, int ctx, gpuprims_dtype dt, size_t len, int owner, size_t off) {
  int b;
  fz_buf *x;
  for (b = 0; b < FZ_MAX_BUF && fz.buf[b].live; b++) {
  }
  if (b == FZ_MAX_BUF) fz_fail("internal: no free buffer slot");
  x = &fz.buf[b];
  memset(x, 0, sizeof *x);
  x->h = h;
  x->live = 1;
  x->id = fz_new_id();
  x->ctx = ctx;
  x->dt = dt;
  x->len = len;
  x->es = tu_dtype_size(dt);
  x->pinned = 1;
  x->owner = owner < 0 ? b : owner;
  x->off = owner < 0 ? 0 : off;
  if (owner < 0) {
    x->nbytes = len * x->es;
    x->mem = (unsigned char *)tu_xmalloc(x->nbytes + 16);
    memset(x->mem, 0, x->nbytes + 16);
  }
  return b;
}

void fz_buf_forget(int b) {
  int c = fz.buf[b].ctx;
  if (fz.buf[b].owner == b) free(fz.buf[b].mem);
  free(fz.buf[b].wrapped); /* after the buffer: the library no longer refers to it */
  memset(&fz.buf[b], 0, sizeof fz.buf[b]);
  fz_ctx_release_if_unused(c);
}

fz_h fz_live_buf(int b) {
  fz_h a;
  const fz_buf *x = &fz.buf[b];
  a.p = x->h;
  a.cls = FZ_LIVE;
  a.idx = b;
  if (x->owner != b)
    snprintf(a.what, sizeof a.what, "buf#%d[%s x %zu, view of buf#%d +%zu B, ctx#%d]", x->id, tu_dtype_name(x->dt),
             x->len, fz.buf[x->owner].id, x->off, fz.ctx[x->ctx].id);
  else
    snprintf(a.what, sizeof a.what, "buf#%d[%s x %zu, ctx#%d]", x->id, tu_dtype_name(x->dt), x->len,
             fz.ctx[x->ctx].id);
  return a;
}

void fz_buf_destroy(int b) {
  int v;
  char before[256], after[256];
  for (v = 0; v < FZ_MAX_BUF; v++)
    if (v != b && fz.buf[v].live && fz.buf[v].owner == b) fz_buf_destroy(v); /* views first */
  tu_last_error_text(before, sizeof before);
  destroy_live(FZ_KBUF, fz.buf[b].h, fz_live_buf(b).what);
  tu_last_error_text(after, sizeof after);
  if (strcmp(before, after) != 0) fz_fail("buffer_destroy changed the last error to \"%s\"", after);
  fz_buf_forget(b);
}

int fz_pin(int b) {
  if (b >= 0) fz.buf[b].pinned = 1;
  return b;
}

void fz_unpin_all(void) {
  int b;
  for (b = 0; b < FZ_MAX_BUF; b++) fz.buf[b].pinned = 0;
}

int fz_pick_live_buf(void) {
  int b, n = 0, pick[FZ_MAX_BUF];
  for (b = 0; b < FZ_MAX_BUF; b++)
    if (fz.buf[b].live) pick[n++] = b;
  return n ? pick[fz_below((uint64_t)n)] : -1;
}

/* A slot for a new buffer: destroys a random one (not one the current call uses, nor
 * the owner of such a view) when the pool is full. */
int fz_buf_room(void) {
  int b, n = 0, pick[FZ_MAX_BUF];
  for (b = 0; b < FZ_MAX_BUF; b++)
    if (!fz.buf[b].live) return b;
  for (b = 0; b < FZ_MAX_BUF; b++) {
    int v, busy = 0;
    for (v = 0; v < FZ_MAX_BUF; v++)
      if (fz.buf[v].live && fz.buf[v].owner == b && fz.buf[v].pinned) busy = 1;
    if (!busy) pick[n++] = b;
  }
  if (n == 0) fz_fail("internal: every buffer is in use by the current call");
  b = pick[fz_below((uint64_t)n)];
  fz_buf_destroy(b);
  return b;
}

int fz_same_ctx(int a, int b) { return fz.buf[a].ctx == fz.buf[b].ctx; }

int fz_overlap(int a, int b) {
  const fz_buf *x = &fz.buf[a], *y = &fz.buf[b];
  size_t xb = x->len * x->es, yb = y->len * y->es;
  if (a == b) return 1;
  if (x->owner != y->owner || xb == 0 || yb == 0) return 0;
  return x->off < y->off + yb && y->off < x->off + xb;
}

int fz_same_range(int a, int b) {
  const fz_buf *x = &fz.buf[a], *y = &fz.buf[b];
  return a == b || (x->owner == y->owner && x->off == y->off && x->len * x->es == y->len * y->es);
}

void fz_read_into(int b, void *dst) {
  const fz_buf *x = &fz.buf[b];
  fz_call("gpuprims_buffer_read(%s, 0, dst, %zu) (check)", fz_live_buf(b).what, x->len);
  fz_done(gpuprims_buffer_read(x->h, 0, dst, x->len), FZ_OK);
}

void fz_verify_buf(int b, const char *why) {
  const fz_buf *x = &fz.buf[b];
  unsigned char *got = (unsigned char *)tu_xmalloc(x->len * x->es + 1);
  size_t i;
  fz_read_into(b, got);
  i = tu_first_diff(got, fz_shadow(b), x->es, x->len);
  if (i < x->len) {
    char w[64], g[64];
    tu_fmt_elem(x->dt, fz_shadow(b) + i * x->es, w, sizeof w);
    tu_fmt_elem(x->dt, got + i * x->es, g, sizeof g);
    fz_fail("%s: buf#%d (%s x %zu) differs from what it should hold at element %zu (%zu elements differ): "
            "expected %s, got %s", why, x->id, tu_dtype_name(x->dt), x->len, i,
            tu_count_diff(got, fz_shadow(b), x->es, x->len), w, g);
  }
  fz.checked_results++;
  free(got);
}

void fz_verify_all(const char *why) {
  int b, g;
  for (b = 0; b < FZ_MAX_BUF; b++)
    if (fz.buf[b].live) fz_verify_buf(b, why);
  for (g = 0; g < FZ_MAX_GRID; g++)
    if (fz.grid[g].live) fz_verify_grid(g, why);
}

int fz_make_buf(int c, gpuprims_dtype t, size_t n, const void *src) {
  gpuprims_buffer *h = NULL;
  int b = fz_buf_room();
  fz_call("gpuprims_buffer_from_host(ctx#%d, %s, src, %zu, &out) (check)", fz.ctx[c].id, tu_dtype_name(t), n);
  fz_done(gpuprims_buffer_from_host(fz.ctx[c].h, t, src, n, &h), FZ_OK);
  b = fz_buf_add(h, c, t, n, -1, 0);
  if (n) memcpy(fz.buf[b].mem, src, n * fz.buf[b].es);
  return b;
}

int fz_find_or_make(int c, gpuprims_dtype t, size_t n, const int *avoid, int n_avoid) {
  int b, k, n_pick = 0, pick[FZ_MAX_BUF];
  for (b = 0; b < FZ_MAX_BUF; b++) {
    int ok = fz.buf[b].live && fz.buf[b].ctx == c && fz.buf[b].dt == t && fz.buf[b].len == n;
    for (k = 0; ok && k < n_avoid; k++) ok = avoid[k] < 0 || !fz_overlap(b, avoid[k]);
    if (ok) pick[n_pick++] = b;
  }
  if (n_pick && (!fz.ctx[c].live || fz_pct(80))) return fz_pin(pick[fz_below((uint64_t)n_pick)]);
  if (!fz.ctx[c].live) return -1;
  {
    size_t es = tu_dtype_size(t);
    unsigned char *data = (unsigned char *)tu_xmalloc(n * es + 1);
    fz_fill(t, data, n);
    b = fz_make_buf(c, t, n, data);
    free(data);
  }
  return b;
}

/* ------------------------------------------------------------------------------------- */
/* Grids                                                                                  */
/* ------------------------------------------------------------------------------------- */

int fz_pick_live_grid(void) {
  int g, n = 0, pick[FZ_MAX_GRID];
  for (g = 0; g < FZ_MAX_GRID; g++)
    if (fz.grid[g].live) pick[n++] = g;
  return n ? pick[fz_below((uint64_t)n)] : -1;
}

fz_h fz_live_grid(int g) {
  fz_h a;
  const fz_grid *x = &fz.grid[g];
  a.p = x->h;
  a.cls = FZ_LIVE;
  a.idx = g;
  snprintf(a.what, sizeof a.what, "grid#%d[%llu x %llu %s, ctx#%d]", x->id, (unsigned long long)x->w,
           (unsigned long long)x->hgt, x->bnd == GPUPRIMS_LIFE_TORUS ? "torus" : "dead", fz.ctx[x->ctx].id);
  return a;
}

void fz_grid_destroy(int g) {
  int c = fz.grid[g].ctx;
  destroy_live(FZ_KGRID, fz.grid[g].h, fz_live_grid(g).what);
  free(fz.grid[g].cells);
  memset(&fz.grid[g], 0, sizeof fz.grid[g]);
  fz_ctx_release_if_unused(c);
}

int fz_grid_slot(void) {
  int g;
  for (g = 0; g < FZ_MAX_GRID; g++)
    if (!fz.grid[g].live) return g;
  g = (int)fz_below(FZ_MAX_GRID);
  fz_grid_destroy(g);
  return g;
}

int fz_created(gpuprims_status s, int no_out, const void *out, const char *fn) {
  if (s != GPUPRIMS_STATUS_OK) {
    if (!no_out && out != TU_SENTINEL_PTR(void)) fz_fail("a failed %s wrote its out-parameter (%p)", fn, out);
    return 0;
  }
  if (out == NULL || out == TU_SENTINEL_PTR(void)) fz_fail("%s said OK but wrote %p", fn, out);
  return 1;
}

/* ------------------------------------------------------------------------------------- */
/* Communicators and groups                                                              */
/* ------------------------------------------------------------------------------------- */

fz_h fz_live_comm(int m) {
  fz_h a;
  a.p = fz.comm[m].h;
  a.cls = FZ_LIVE;
  a.idx = m;
  snprintf(a.what, sizeof a.what, "comm#%d[rank 0 of 1, ctx#%d]", fz.comm[m].id, fz.ctx[fz.comm[m].ctx].id);
  return a;
}

fz_h fz_live_group(int g) {
  fz_h a;
  int i, at;
  a.p = fz.group[g].h;
  a.cls = FZ_LIVE;
  a.idx = g;
  at = snprintf(a.what, sizeof a.what, "group#%d[ctx", fz.group[g].id);
  for (i = 0; i < fz.group[g].n; i++)
    at += snprintf(a.what + at, sizeof a.what - (size_t)at, "%s#%d", i ? ", ctx" : "", fz.ctx[fz.group[g].ctx[i]].id);
  snprintf(a.what + at, sizeof a.what - (size_t)at, "]");
  return a;
}

void fz_comm_destroy(int m) {
  int c = fz.comm[m].ctx;
  destroy_live(FZ_KCOMM, fz.comm[m].h, fz_live_comm(m).what);
  memset(&fz.comm[m], 0, sizeof fz.comm[m]);
  fz_ctx_release_if_unused(c);
}

void fz_group_destroy(int g) {
  fz_group x = fz.group[g];
  int i;
  destroy_live(FZ_KGROUP, x.h, fz_live_group(g).what);
  memset(&fz.group[g], 0, sizeof fz.group[g]);
  for (i = 0; i < x.n; i++) { /* the handles from gpuprims_group_context stay usable */
    fz.ctx[x.ctx[i]].group = 0;
    fz_ctx_release_if_unused(x.ctx[i]);
  }
}

/* ------------------------------------------------------------------------------------- */
/* Hostile handles                                                                        */
/* ------------------------------------------------------------------------------------- */

void fz_remember_stale(int kind, void *p) {
  if (fz.nstale[kind] < FZ_MAX_STALE)
    fz.stale[kind][fz.nstale[kind]++] = p;
  else
    fz.stale[kind][fz_below(FZ_MAX_STALE)] = p;
}

static const char *kind_name(int kind) {
  static const char *names[FZ_KINDS] = {"context", "buffer", "grid", "comm", "group"};
  return names[kind];
}

/* The handle of record i of `kind`, NULL unless it is live. */
static void *live_handle(int kind, int i) {
  switch (kind) {
    case FZ_KCTX: return fz.ctx[i].live ? (void *)fz.ctx[i].h : NULL;
    case FZ_KBUF: return fz.buf[i].live ? (void *)fz.buf[i].h : NULL;
    case FZ_KGRID: return fz.grid[i].live ? (void *)fz.grid[i].h : NULL;
    case FZ_KCOMM: return fz.comm[i].live ? (void *)fz.comm[i].h : NULL;
    default: return fz.group[i].live ? (void *)fz.group[i].h : NULL;
  }
}

static int records_of(int kind) {
  static const int n[FZ_KINDS] = {FZ_MAX_CTX, FZ_MAX_BUF, FZ_MAX_GRID, FZ_MAX_COMM, FZ_MAX_GROUP};
  return n[kind];
}

int fz_pick_live(int kind) {
  int i, n = 0, pick[FZ_MAX_BUF]; /* no kind has more records than buffers */
  for (i = 0; i < records_of(kind); i++)
    if (live_handle(kind, i)) pick[n++] = i;
  return n ? pick[fz_below((uint64_t)n)] : -1;
}

int fz_free_slot(int kind) {
  int i;
  for (i = 0; i < records_of(kind); i++)
    if (!live_handle(kind, i)) return i;
  i = (int)fz_below((uint64_t)records_of(kind));
  if (kind == FZ_KCOMM)
    fz_comm_destroy(i);
  else
    fz_group_destroy(i);
  return i;
}

/* Is v the value of a live handle of any kind? */
static int is_live_value(uintptr_t v) {
  int k, i;
  for (k = 0; k < FZ_KINDS; k++)
    for (i = 0; i < records_of(k); i++)
      if (live_handle(k, i) && (uintptr_t)live_handle(k, i) == v) return 1;
  return 0;
}

/* A live handle of `kind` (NULL when there is none). */
static void *some_live(int kind) {
  int i = fz_pick_live(kind);
  return i < 0 ? NULL : live_handle(kind, i);
}

static fz_h wrong_kind(int kind, fz_h a) {
  int other = (kind + 1 + (int)fz_below(FZ_KINDS - 1)) % FZ_KINDS;
  void *p = NULL;
  if (fz_pct(70)) p = some_live(other);
  if (p) {
    a.p = p;
    snprintf(a.what, sizeof a.what, "a live %s %p as a %s", kind_name(other), p, kind_name(kind));
  } else if (fz.nstale[other]) {
    a.p = fz.stale[other][fz_below((uint64_t)fz.nstale[other])];
    snprintf(a.what, sizeof a.what, "a destroyed %s %p as a %s", kind_name(other), a.p, kind_name(kind));
  } else {
    a.p = NULL;
  }
  return a;
}

static fz_h forged(int kind, fz_h a) {
  static const uintptr_t kind_byte[FZ_KINDS] = {0xC1, 0xB1, 0xA1, 0xD1, 0xE1};
  uintptr_t v;
  void *live = some_live(kind);
  int tries = 0;
  do {
    if (live && fz_pct(50)) {
      /* a live handle's slot with another generation, or its generation with another slot */
      v = (uintptr_t)live;
      if (fz_pct(50))
        v ^= (uintptr_t)fz_range(1, 0xFFFFFF) << 32;
      else
        v ^= (uintptr_t)fz_range(1, 1000);
    } else {
      v = (kind_byte[kind] << 56) | ((uintptr_t)fz_below(1u << 24) << 32) | (uintptr_t)fz_below(fz_pct(50) ? 64 : 1ull << 32);
    }
  } while (is_live_value(v) && ++tries < 8);
  if (is_live_value(v)) v = kind_byte[kind] << 56; /* generation 0 is never given out */
  a.p = (void *)v;
  snprintf(a.what, sizeof a.what, "a forged %s 0x%016llx", kind_name(kind), (unsigned long long)v);
  return a;
}

static fz_h garbage(fz_h a) {
  static const char *names[] = {"(void *)1", "(void *)0x10", "the address of a static int", "a 16-byte heap block",
                                "a freed heap block", "(void *)0xDEADBEEF", "all bits set", "a large odd integer"};
  int which = (int)fz_below(8);
  uintptr_t vals[8];
  vals[0] = 1;
  vals[1] = 0x10;
  vals[2] = (uintptr_t)&garbage_int;
  vals[3] = (uintptr_t)garbage_heap;
  vals[4] = (uintptr_t)garbage_freed;
  vals[5] = 0xDEADBEEFu;
  vals[6] = UINTPTR_MAX;
  vals[7] = (uintptr_t)UINT64_C(0x9E3779B97F4A7C15);
  a.p = (void *)vals[which];
  snprintf(a.what, sizeof a.what, "%s", names[which]);
  return a;
}

fz_h fz_hostile(int kind) {
  fz_h a;
  unsigned r = (unsigned)fz_below(100);
  a.idx = -1;
  a.p = NULL;
  if (r < 20) {
    a.cls = FZ_NULL;
    snprintf(a.what, sizeof a.what, "NULL");
    return a;
  }
  if (r < 45 && fz.nstale[kind]) {
    a.cls = FZ_STALE;
    a.p = fz.stale[kind][fz_below((uint64_t)fz.nstale[kind])];
    snprintf(a.what, sizeof a.what, "a destroyed %s %p", kind_name(kind), a.p);
    return a;
  }
  if (r < 65) {
    a.cls = FZ_WRONG_KIND;
    a = wrong_kind(kind, a);
    if (a.p) return a;
  }
  if (r < 80) {
    a.cls = FZ_FORGED;
    return forged(kind, a);
  }
  a.cls = FZ_GARBAGE;
  return garbage(a);
}

fz_h fz_maybe_hostile(int kind, fz_h live, unsigned pct) { return fz_pct(pct) ? fz_hostile(kind) : live; }

unsigned fz_handle_fault(const fz_h *a, int optional) {
  if (a->cls == FZ_LIVE) return 0;
  if (a->cls == FZ_NULL) return optional ? 0 : FZ_S(NULL_ARGUMENT);
  return FZ_S(INVALID_ARGUMENT);
}

/* ------------------------------------------------------------------------------------- */
/* Start and end                                                                          */
/* ------------------------------------------------------------------------------------- */

void fz_pool_init(void) {
  gpuprims_context *h = NULL;
  gpuprims_status s;
  void *p;
  garbage_heap = tu_xmalloc(16);
  p = tu_xmalloc(16);
  garbage_freed = (void *)(uintptr_t)p; /* only ever passed on as a value, never read */
  free(p);
  fz_call("gpuprims_context_create(AUTO, 0, &out)");
  s = gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &h);
  if (s == GPUPRIMS_STATUS_NO_DEVICE && tu_env_backend_is("cuda")) {
    char err[512];
    tu_last_error_text(err, sizeof err);
    printf("fuzz_abi: SKIP: GPUPRIMS_BACKEND=cuda but no usable CUDA device (%s)\n", err);
    exit(TU_SKIP_CODE);
  }
  fz_done(s, FZ_OK);
  fz.auto_cuda = fz_ctx_is_cuda(fz_ctx_add(h, 0));
}

void fz_pool_teardown(void) {
  int i;
  for (i = 0; i < FZ_MAX_COMM; i++)
    if (fz.comm[i].live) fz_comm_destroy(i);
  for (i = 0; i < FZ_MAX_GROUP; i++)
    if (fz.group[i].live) fz_group_destroy(i);
  for (i = 0; i < FZ_MAX_BUF; i++)
    if (fz.buf[i].live && fz.buf[i].owner != i) fz_buf_destroy(i);
  for (i = 0; i < FZ_MAX_BUF; i++)
    if (fz.buf[i].live) fz_buf_destroy(i);
  for (i = 0; i < FZ_MAX_GRID; i++)
    if (fz.grid[i].live) fz_grid_destroy(i);
  for (i = 0; i < FZ_MAX_CTX; i++) {
    if (fz.ctx[i].live) destroy_live(FZ_KCTX, fz.ctx[i].h, fz_live_ctx(i).what);
    fz.ctx[i].used = fz.ctx[i].live = 0;
  }
  free(garbage_heap);
}
