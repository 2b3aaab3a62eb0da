/*
 * fuzz_ops_prim.c: the primitives (reduce, reduce_to_buffer, scan, select_kth,
 * select_kth_to_buffer, topk, segmented_select, segmented_topk, radix_sort, quicksort).
 * Each op picks buffers (mostly ones that fit: same context, dtype and length; sometimes
 * any buffer of the pool, the same buffer twice, or a hostile handle), enum values and
 * ranks, works out
 * which statuses the call may return, and checks: on OK every output against a reference
 * computed here from the inputs as the model has them; on failure every output buffer
 * and host output unchanged.
 */
#include "fuzz.h"

#define POISON 0xC3

/* ------------------------------------------------------------------------------------- */
/* Arguments                                                                              */
/* ------------------------------------------------------------------------------------- */

/* A live input buffer, pinned; -1 when the pool has none. Mostly one whose context
 * handle lives (a buffer outlives its context's handle: only CONTEXT_MISMATCH then). */
static int pick_in(void) {
  int b = fz_pick_live_buf(), n = 0, pick[FZ_MAX_BUF], i;
  if (b >= 0 && !fz.ctx[fz.buf[b].ctx].live && fz_pct(85)) {
    for (i = 0; i < FZ_MAX_BUF; i++)
      if (fz.buf[i].live && fz.ctx[fz.buf[i].ctx].live) pick[n++] = i;
    if (n) b = pick[fz_below((uint64_t)n)];
  }
  return fz_pin(b);
}

/* The context argument for a call on buffer b: b's context when its handle lives (most
 * of the time), else another live one; now and then a hostile value. *c: the record. */
static fz_h ctx_for(int b, int *c) {
  *c = (b >= 0 && fz.ctx[fz.buf[b].ctx].live && fz_pct(90)) ? fz.buf[b].ctx : fz_pick_live_ctx();
  return fz_maybe_hostile(FZ_KCTX, fz_live_ctx(*c), 5);
}

/* An output buffer of context c, dtype t, length n that shares no memory with the
 * `avoid` buffers (most of the time), else any live buffer; pinned. -1 when none. */
int fz_pick_out(int c, gpuprims_dtype t, size_t n, const int *avoid, int n_avoid) {
  int b = -1;
  if (n < 100000 && fz_pct(85)) b = fz_find_or_make(c, t, n, avoid, n_avoid);
  if (b < 0) b = fz_pick_live_buf();
  return fz_pin(b);
}

static fz_h buf_arg(int b, unsigned hostile_pct) { return fz_maybe_hostile(FZ_KBUF, fz_live_buf(b), hostile_pct); }

/* An optional buffer argument: NULL when b < 0. */
fz_h fz_opt_buf_arg(int b, unsigned hostile_pct) {
  fz_h a;
  if (b >= 0) return buf_arg(b, hostile_pct);
  a.p = NULL;
  a.cls = FZ_NULL;
  a.idx = -1;
  snprintf(a.what, sizeof a.what, "NULL");
  return a;
}

/* CONTEXT_MISMATCH when both are live and b is not of context c. */
unsigned fz_ctx_fault(const fz_h *ca, int c, const fz_h *ba, int b) {
  return (ca->cls == FZ_LIVE && ba->cls == FZ_LIVE && fz.buf[b].ctx != c) ? FZ_S(CONTEXT_MISMATCH) : 0;
}

static int live2(const fz_h *a, const fz_h *b) { return a->cls == FZ_LIVE && b->cls == FZ_LIVE; }

uint32_t fz_pick_enum(uint32_t n_valid, unsigned bad_pct, int *bad) {
  *bad = fz_pct(bad_pct);
  return *bad ? fz_bad_enum() : (uint32_t)fz_below(n_valid);
}

/* A rank for a buffer of n elements: valid mostly, else n, a little past, or huge. */
uint64_t fz_pick_rank(size_t n, int inclusive_end) {
  static const uint64_t huge[] = {UINT64_MAX, UINT64_MAX - 1, (uint64_t)1 << 32, (uint64_t)1 << 63};
  if (fz_pct(80) && (n > 0 || inclusive_end)) return fz_below((uint64_t)n + (inclusive_end ? 1 : 0));
  if (fz_pct(60)) return (uint64_t)n + (inclusive_end ? 1 : 0) + fz_below(3);
  return huge[fz_below(TU_ARRAY_LEN(huge))];
}

/* A copy of what buffer b holds (the model's). */
static unsigned char *snapshot(int b) {
  size_t bytes = fz.buf[b].len * fz.buf[b].es;
  unsigned char *p = (unsigned char *)tu_xmalloc(bytes + 1);
  if (bytes) memcpy(p, fz_shadow(b), bytes);
  return p;
}

/* After a call: on failure, an output buffer must be as it was. */
static void verify_unchanged(gpuprims_status s, int b) {
  if (s != GPUPRIMS_STATUS_OK && b >= 0 && fz.buf[b].live) fz_verify_buf(b, "after a failed call");
}

/* ------------------------------------------------------------------------------------- */
/* References                                                                             */
/* ------------------------------------------------------------------------------------- */

/* Float SUM tolerance factor (of eps times the sum of |x|): the tests' (16 + 2 log2 n),
 * or n where that is larger. The tests' factor holds for their random data; here the
 * data are also all equal, sorted or a few values repeated, where a sequential sum (the
 * host backend's, in chunks of 2^16, and any scan's prefix) rounds the same way every
 * time and its error grows like n: n eps sum|x| bounds the error of every order.
 * Over several ranks (the multi-rank calls) the ranks' partials, in the accumulator type
 * (f32 for the 16-bit floats), combine in rank order (the header: "it may differ from one
 * context's reduce in rounding"): test_multi's (4 ranks + 8) roundings of the
 * accumulator more, counted twice (it scales them by sum|x| + |result|, this by sum|x|
 * alone). eps is the accumulator's (the 16-bit floats' tolerance is in f32's eps). */
static double sum_tol(size_t n, int ranks) {
  double d = tu_default_tol_factor(n);
  if (d < (double)n) d = (double)n;
  if (ranks > 1) d += 2.0 * (4.0 * ranks + 8.0);
  return d;
}

/* Checks a reduction's result against the sequential reference (over `ranks` ranks). */
void fz_check_reduce(gpuprims_dtype t, gpuprims_op op, const void *in, size_t n, int ranks, const void *got,
                     const char *fn) {
  char msg[256];
  if (tu_dtype(t)->is_float && op == GPUPRIMS_OP_SUM && !fz_fsum_checkable(t, in, n)) {
    fz.unchecked_sums++;
    if (fz_has_nan(t, in, n) && !fz_has_nan(t, got, 1)) fz_fail("%s: SUM of input with a NaN is not NaN", fn);
    return;
  }
  if (tu_check_reduce(t, op, in, n, got, sum_tol(n, ranks), msg, sizeof msg)) {
    char data[512];
    fz_fmt_elems(t, in, n, data, sizeof data);
    fz_fail("%s %s of %zu x %s: %s (input: %s)", fn, fz_op_name(op), n, tu_dtype_name(t), msg, data);
  }
  fz.checked_results++;
}

/* The rank-k element of x[0..n), compared with got (any NaN matches any NaN). */
void fz_check_rank(gpuprims_dtype t, const void *x, size_t n, size_t k, const void *got, const char *what) {
  unsigned char want[8];
  fz_rank_ref(t, x, n, k, want);
  if (!fz_same_elem(t, want, got, 1)) {
    char w[64], g[64], data[512];
    tu_fmt_elem(t, want, w, sizeof w);
    tu_fmt_elem(t, got, g, sizeof g);
    fz_fmt_elems(t, x, n, data, sizeof data);
    fz_fail("%s: rank %zu of %zu x %s: expected %s, got %s (input: %s)", what, k, n, tu_dtype_name(t), w, g, data);
  }
  fz.checked_results++;
}

/* ------------------------------------------------------------------------------------- */
/* reduce, reduce_to_buffer                                                               */
/* ------------------------------------------------------------------------------------- */

static unsigned reduce_faults(const fz_h *ca, int c, const fz_h *ia, int in, gpuprims_op op, int bad_op) {
  unsigned f = fz_handle_fault(ca, 0) | fz_handle_fault(ia, 0) | fz_ctx_fault(ca, c, ia, in);
  if (bad_op) f |= FZ_S(INVALID_ARGUMENT);
  if (ia->cls == FZ_LIVE && !bad_op && op != GPUPRIMS_OP_SUM && fz.buf[in].len == 0) f |= FZ_S(INVALID_ARGUMENT);
  return f;
}

void fz_op_reduce(void) {
  int in = pick_in(), c, bad_op, no_out = fz_pct(5);
  gpuprims_op op = fz_pick_enum(3, 5, &bad_op);
  unsigned char out[16];
  size_t es, i;
  fz_h ca, ia;
  unsigned faults;
  gpuprims_status s;
  if (in < 0) return;
  ca = ctx_for(in, &c);
  ia = buf_arg(in, 6);
  faults = reduce_faults(&ca, c, &ia, in, op, bad_op) | (no_out ? FZ_S(NULL_ARGUMENT) : 0);
  es = fz.buf[in].es;
  memset(out, POISON, sizeof out);
  fz_call("gpuprims_reduce(%s, %s, %s, %s)", ca.what, ia.what, fz_op_name(op), no_out ? "NULL" : "&out");
  s = fz_done(gpuprims_reduce((gpuprims_context *)ca.p, (gpuprims_buffer *)ia.p, op, no_out ? NULL : out),
              faults ? faults : FZ_OK);
  if (s != GPUPRIMS_STATUS_OK) {
    for (i = 0; i < sizeof out; i++)
      if (out[i] != POISON) fz_fail("a failed reduce wrote out[%zu]", i);
    return;
  }
  for (i = es; i < sizeof out; i++)
    if (out[i] != POISON) fz_fail("reduce wrote %zu bytes, one %s is %zu", i + 1, tu_dtype_name(fz.buf[in].dt), es);
  fz_check_reduce(fz.buf[in].dt, op, fz_shadow(in), fz.buf[in].len, 1, out, "reduce");
  if (fz_pct(15)) { /* "bitwise reproducible run to run on the same device and size" */
    unsigned char again[16];
    memset(again, POISON, sizeof again);
    fz_call("gpuprims_reduce(%s, %s, %s, &out) (again: the same bits)", ca.what, ia.what, fz_op_name(op));
    fz_done(gpuprims_reduce((gpuprims_context *)ca.p, (gpuprims_buffer *)ia.p, op, again), FZ_OK);
    if (memcmp(out, again, es) != 0) {
      char a[64], b[64];
      tu_fmt_elem(fz.buf[in].dt, out, a, sizeof a);
      tu_fmt_elem(fz.buf[in].dt, again, b, sizeof b);
      fz_fail("reduce %s of %zu x %s gave %s, then %s", fz_op_name(op), fz.buf[in].len, tu_dtype_name(fz.buf[in].dt), a, b);
    }
  }
}

/* The one-element `out` of a reduction into a buffer (in's dtype, in ca's context). */
unsigned fz_one_out_faults(const fz_h *ca, int c, const fz_h *ia, int in, const fz_h *oa, int out) {
  unsigned f = fz_handle_fault(oa, 0) | fz_ctx_fault(ca, c, oa, out);
  if (live2(ia, oa) && fz.buf[out].dt != fz.buf[in].dt) f |= FZ_S(TYPE_MISMATCH);
  if (oa->cls == FZ_LIVE && fz.buf[out].len != 1) f |= FZ_S(SIZE_MISMATCH);
  return f;
}

void fz_op_reduce_to_buffer(void) {
  int in = pick_in(), c, bad_op, out;
  gpuprims_op op = fz_pick_enum(3, 5, &bad_op);
  fz_h ca, ia, oa;
  unsigned faults;
  unsigned char *x;
  gpuprims_status s;
  if (in < 0) return;
  ca = ctx_for(in, &c);
  out = fz_pct(10) ? fz_pin(fz_pick_live_buf()) : fz_pick_out(c, fz.buf[in].dt, 1, NULL, 0);
  if (out < 0 || (fz_overlap(in, out) && !fz_same_range(in, out))) return; /* the header says nothing of partial overlap */
  ia = buf_arg(in, 5);
  oa = buf_arg(out, 5);
  faults = reduce_faults(&ca, c, &ia, in, op, bad_op) | fz_one_out_faults(&ca, c, &ia, in, &oa, out);
  x = snapshot(in);
  fz_call("gpuprims_reduce_to_buffer(%s, %s, %s, %s)", ca.what, ia.what, fz_op_name(op), oa.what);
  s = fz_done(gpuprims_reduce_to_buffer((gpuprims_context *)ca.p, (gpuprims_buffer *)ia.p, op, (gpuprims_buffer *)oa.p),
              faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK) {
    fz_read_into(out, fz_shadow(out));
    fz_check_reduce(fz.buf[in].dt, op, x, fz.buf[in].len, 1, fz_shadow(out), "reduce_to_buffer");
  }
  verify_unchanged(s, out);
  free(x);
}

/* ------------------------------------------------------------------------------------- */
/* scan                                                                                   */
/* ------------------------------------------------------------------------------------- */

/* Scan's buffers: in and out of ca's context, out of in's dtype and length. */
unsigned fz_scan_faults(const fz_h *ca, int c, const fz_h *ia, int in, const fz_h *oa, int out) {
  unsigned f = fz_handle_fault(ca, 0) | fz_handle_fault(ia, 0) | fz_handle_fault(oa, 0) | fz_ctx_fault(ca, c, ia, in) |
               fz_ctx_fault(ca, c, oa, out);
  if (live2(ia, oa) && fz.buf[out].dt != fz.buf[in].dt) f |= FZ_S(TYPE_MISMATCH);
  if (live2(ia, oa) && fz.buf[out].len != fz.buf[in].len) f |= FZ_S(SIZE_MISMATCH);
  return f;
}

/* A scan's result `got` against the reference scan of x[0..n) (float sums within
 * tolerance, over `ranks` ranks; not compared where a partial sum could overflow). */
void fz_check_scan(gpuprims_dtype t, gpuprims_op op, gpuprims_scan_mode mode, const void *x, size_t n, int ranks,
                   const void *got, const char *fn) {
  char msg[256];
  if (tu_dtype(t)->is_float && op == GPUPRIMS_OP_SUM && !fz_fsum_checkable(t, x, n)) {
    fz.unchecked_sums++;
  } else if (tu_check_scan(t, op, mode, x, n, got, sum_tol(n, ranks), msg, sizeof msg)) {
    char data[512];
    fz_fmt_elems(t, x, n, data, sizeof data);
    fz_fail("%s %s %s of %zu x %s: %s (input: %s)", fn, fz_op_name(op), tu_mode_name(mode), n, tu_dtype_name(t), msg,
            data);
  } else {
    fz.checked_results++;
  }
}

void fz_op_scan(void) {
  int in = pick_in(), c, bad_op, bad_mode, out;
  gpuprims_op op = fz_pick_enum(3, 4, &bad_op);
  gpuprims_scan_mode mode = fz_pick_enum(2, 4, &bad_mode);
  fz_h ca, ia, oa;
  unsigned faults;
  unsigned char *x;
  gpuprims_status s;
  if (in < 0) return;
  ca = ctx_for(in, &c);
  out = fz_pct(20) ? in : fz_pct(8) ? fz_pin(fz_pick_live_buf()) : fz_pick_out(c, fz.buf[in].dt, fz.buf[in].len, &in, 1);
  if (out < 0 || (fz_overlap(in, out) && !fz_same_range(in, out))) return;
  ia = buf_arg(in, 5);
  oa = buf_arg(out, 5);
  faults = fz_scan_faults(&ca, c, &ia, in, &oa, out);
  if (bad_op || bad_mode) faults |= FZ_S(INVALID_ARGUMENT);
  x = snapshot(in);
  fz_call("gpuprims_scan(%s, %s, %s, %s, %s)", ca.what, ia.what, oa.what, fz_op_name(op),
          bad_mode ? "(unknown mode)" : tu_mode_name(mode));
  s = fz_done(gpuprims_scan((gpuprims_context *)ca.p, (gpuprims_buffer *)ia.p, (gpuprims_buffer *)oa.p, op, mode),
              faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK) {
    fz_read_into(out, fz_shadow(out));
    fz_check_scan(fz.buf[in].dt, op, mode, x, fz.buf[in].len, 1, fz_shadow(out), "scan");
  }
  verify_unchanged(s, out);
  free(x);
}

/* ------------------------------------------------------------------------------------- */
/* select_kth, select_kth_to_buffer                                                       */
/* ------------------------------------------------------------------------------------- */

void fz_op_select_kth(void) {
  int in = pick_in(), c, no_out = fz_pct(5);
  unsigned char out[16];
  uint64_t k;
  size_t i, es;
  fz_h ca, ia;
  unsigned faults;
  gpuprims_status s;
  if (in < 0) return;
  ca = ctx_for(in, &c);
  ia = buf_arg(in, 5);
  k = fz_pick_rank(fz.buf[in].len, 0);
  faults = fz_handle_fault(&ca, 0) | fz_handle_fault(&ia, 0) | fz_ctx_fault(&ca, c, &ia, in) | (no_out ? FZ_S(NULL_ARGUMENT) : 0);
  if (ia.cls == FZ_LIVE && k >= fz.buf[in].len) faults |= FZ_S(INVALID_ARGUMENT);
  es = fz.buf[in].es;
  memset(out, POISON, sizeof out);
  fz_call("gpuprims_select_kth(%s, %s, %llu, %s)", ca.what, ia.what, (unsigned long long)k, no_out ? "NULL" : "&out");
  s = fz_done(gpuprims_select_kth((gpuprims_context *)ca.p, (gpuprims_buffer *)ia.p, k, no_out ? NULL : out),
              faults ? faults : FZ_OK);
  for (i = s == GPUPRIMS_STATUS_OK ? es : 0; i < sizeof out; i++)
    if (out[i] != POISON) fz_fail("select_kth (%s) wrote out[%zu]", tu_status_name(s), i);
  if (s == GPUPRIMS_STATUS_OK) fz_check_rank(fz.buf[in].dt, fz_shadow(in), fz.buf[in].len, (size_t)k, out, "select_kth");
}

void fz_op_select_kth_to_buffer(void) {
  int in = pick_in(), c, out;
  uint64_t k;
  fz_h ca, ia, oa;
  unsigned faults;
  gpuprims_status s;
  if (in < 0) return;
  ca = ctx_for(in, &c);
  out = fz_pct(8) ? in : fz_pct(8) ? fz_pin(fz_pick_live_buf()) : fz_pick_out(c, fz.buf[in].dt, 1, &in, 1);
  if (out < 0) return;
  ia = buf_arg(in, 5);
  oa = buf_arg(out, 5);
  k = fz_pick_rank(fz.buf[in].len, 0);
  faults = fz_handle_fault(&ca, 0) | fz_handle_fault(&ia, 0) | fz_handle_fault(&oa, 0) | fz_ctx_fault(&ca, c, &ia, in) |
           fz_ctx_fault(&ca, c, &oa, out);
  if (ia.cls == FZ_LIVE && k >= fz.buf[in].len) faults |= FZ_S(INVALID_ARGUMENT);
  if (live2(&ia, &oa) && fz.buf[out].dt != fz.buf[in].dt) faults |= FZ_S(TYPE_MISMATCH);
  if (oa.cls == FZ_LIVE && fz.buf[out].len != 1) faults |= FZ_S(SIZE_MISMATCH);
  if (live2(&ia, &oa) && fz_overlap(in, out)) faults |= FZ_S(INVALID_ARGUMENT);
  fz_call("gpuprims_select_kth_to_buffer(%s, %s, %llu, %s)", ca.what, ia.what, (unsigned long long)k, oa.what);
  s = fz_done(gpuprims_select_kth_to_buffer((gpuprims_context *)ca.p, (gpuprims_buffer *)ia.p, k, (gpuprims_buffer *)oa.p),
              faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK) {
    fz_read_into(out, fz_shadow(out));
    fz_check_rank(fz.buf[in].dt, fz_shadow(in), fz.buf[in].len, (size_t)k, fz_shadow(out), "select_kth_to_buffer");
  }
  verify_unchanged(s, out);
}

/* ------------------------------------------------------------------------------------- */
/* topk                                                                                   */
/* ------------------------------------------------------------------------------------- */

/* What a top-k of x[0..n) wrote to the buffers vals and idx (-1: none), read back into
 * their shadows, against the stable order (ties by index); fn names the call. */
void fz_check_topk(gpuprims_dtype t, const unsigned char *x, size_t n, uint64_t k, gpuprims_order order, int vals, int idx,
                   const char *fn) {
  size_t es = tu_dtype_size(t), *perm = (size_t *)tu_xmalloc((n + 1) * sizeof(size_t)), j;
  unsigned char *want = (unsigned char *)tu_xmalloc(n * es + 1);
  const unsigned char *got = fz_shadow(vals);
  tu_sort_ref(t, x, n, order, perm, NULL);
  tu_gather(x, es, perm, (size_t)k, want);
  fz_read_into(vals, fz_shadow(vals));
  if ((j = tu_first_diff(got, want, es, (size_t)k)) < k) {
    char w[64], g[64];
    tu_fmt_elem(t, want + j * es, w, sizeof w);
    tu_fmt_elem(t, got + j * es, g, sizeof g);
    fz_fail("%s k=%llu %s of %zu x %s: value %zu is %s, expected %s", fn, (unsigned long long)k, tu_order_name(order), n,
            tu_dtype_name(t), j, g, w);
  }
  if (idx >= 0) {
    fz_read_into(idx, fz_shadow(idx));
    got = fz_shadow(idx);
    for (j = 0; j < k; j++)
      if (tu_get_bits(8, got, j) != (uint64_t)perm[j])
        fz_fail("%s k=%llu %s of %zu x %s: index %zu is %llu, expected %zu", fn, (unsigned long long)k,
                tu_order_name(order), n, tu_dtype_name(t), j, (unsigned long long)tu_get_bits(8, got, j), perm[j]);
  }
  fz.checked_results++;
  free(perm);
  free(want);
}

/* Top-k's buffers (k past `limit` is INVALID_ARGUMENT: in's length, for one context). */
unsigned fz_topk_faults(const fz_h *ca, int c, const fz_h *ia, int in, uint64_t k, uint64_t limit, const fz_h *va,
                        int vals, const fz_h *xa, int idx) {
  unsigned f = fz_handle_fault(ca, 0) | fz_handle_fault(ia, 0) | fz_handle_fault(va, 0) | fz_handle_fault(xa, 1) |
               fz_ctx_fault(ca, c, ia, in) | fz_ctx_fault(ca, c, va, vals);
  if (ia->cls == FZ_LIVE && k > limit) f |= FZ_S(INVALID_ARGUMENT);
  if (live2(ia, va) && fz.buf[vals].dt != fz.buf[in].dt) f |= FZ_S(TYPE_MISMATCH);
  if (va->cls == FZ_LIVE && fz.buf[vals].len != k) f |= FZ_S(SIZE_MISMATCH);
  if (live2(ia, va) && fz_overlap(vals, in)) f |= FZ_S(INVALID_ARGUMENT);
  if (xa->cls == FZ_LIVE) {
    f |= fz_ctx_fault(ca, c, xa, idx);
    if (fz.buf[idx].dt != GPUPRIMS_DTYPE_U64) f |= FZ_S(TYPE_MISMATCH);
    if (fz.buf[idx].len != k) f |= FZ_S(SIZE_MISMATCH);
    if ((ia->cls == FZ_LIVE && fz_overlap(idx, in)) || (va->cls == FZ_LIVE && fz_overlap(idx, vals)))
      f |= FZ_S(INVALID_ARGUMENT);
  }
  return f;
}

void fz_op_topk(void) {
  int in = pick_in(), c, bad_order, vals, idx = -1, avoid[2];
  gpuprims_order order = fz_pick_enum(2, 4, &bad_order);
  uint64_t k;
  fz_h ca, ia, va, xa;
  unsigned faults;
  unsigned char *x;
  gpuprims_status s;
  if (in < 0) return;
  ca = ctx_for(in, &c);
  k = fz_pick_rank(fz.buf[in].len, 1);
  avoid[0] = in;
  vals = fz_pct(6) ? in : fz_pct(6) ? fz_pin(fz_pick_live_buf()) : fz_pick_out(c, fz.buf[in].dt, (size_t)k, avoid, 1);
  if (vals < 0) return;
  avoid[1] = vals;
  if (fz_pct(65)) idx = fz_pct(8) ? fz_pin(fz_pick_live_buf()) : fz_pick_out(c, GPUPRIMS_DTYPE_U64, (size_t)k, avoid, 2);
  ia = buf_arg(in, 4);
  va = buf_arg(vals, 4);
  xa = fz_opt_buf_arg(idx, 4);
  faults = fz_topk_faults(&ca, c, &ia, in, k, fz.buf[in].len, &va, vals, &xa, idx) | (bad_order ? FZ_S(INVALID_ARGUMENT) : 0);
  x = snapshot(in);
  fz_call("gpuprims_topk(%s, %s, %llu, %s, %s, %s)", ca.what, ia.what, (unsigned long long)k,
          bad_order ? "(unknown order)" : tu_order_name(order), va.what, xa.what);
  s = fz_done(gpuprims_topk((gpuprims_context *)ca.p, (gpuprims_buffer *)ia.p, k, order, (gpuprims_buffer *)va.p,
                            (gpuprims_buffer *)xa.p),
              faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK && k > 0) {
    fz_check_topk(fz.buf[in].dt, x, fz.buf[in].len, k, order, vals, xa.cls == FZ_LIVE ? idx : -1, "topk");
  } else { /* a failure, or k = 0: nothing written */
    if (fz.buf[vals].live) fz_verify_buf(vals, "after topk that writes nothing");
    if (idx >= 0 && fz.buf[idx].live) fz_verify_buf(idx, "after topk that writes nothing");
  }
  free(x);
}

/* ------------------------------------------------------------------------------------- */
/* segmented_select                                                                       */
/* ------------------------------------------------------------------------------------- */

/* Offsets of nrows rows over n values (an index dtype t), and ranks, made to fit; then
 * now and then one thing spoiled: a decreasing pair, a row past the end, an empty row,
 * a rank past its row. */
static void make_rows(size_t n, size_t nrows, uint64_t *off, uint64_t *ks, int with_ks) {
  size_t r;
  uint64_t at = n >= nrows ? fz_below(n - nrows + 1) : 0;
  for (r = 0; r <= nrows; r++) {
    size_t left = nrows - r;
    off[r] = at;
    if (r < nrows) {
      uint64_t room = n > at + left ? n - at - left : 0; /* extra length this row may take */
      at += 1 + (room ? fz_below(fz_pct(70) ? (room < 8 ? room + 1 : 8) : room + 1) : 0);
    }
  }
  for (r = 0; r < nrows; r++) ks[r] = off[r + 1] > off[r] ? fz_below(off[r + 1] - off[r]) : 0;
  ks[nrows] = fz_below(4); /* one past the rows: for a ks buffer one too long */
  if (nrows && fz_pct(15)) {
    size_t row = (size_t)fz_below(nrows);
    switch (fz_below(5)) {
      case 0: off[row + 1] = off[row] ? off[row] - 1 : 0; break;               /* decreasing or empty */
      case 1: off[nrows] = n + 1 + fz_below(3); break;                         /* past the end */
      case 2: off[row + 1] = off[row]; break;                                  /* empty */
      case 3: if (with_ks) ks[row] = off[row + 1] - off[row] + fz_below(3); break; /* rank past the row */
      default: off[0] = (uint64_t)1 << 40; break;                               /* huge (U64 offsets) */
    }
  }
}

/* A buffer of index dtype t (or another dtype, now and then) holding v[0..n). */
static int index_buf(int c, uint64_t *v, size_t n, int bad_dtype) {
  gpuprims_dtype t = bad_dtype ? fz_rand_dtype()->id : fz_pct(50) ? GPUPRIMS_DTYPE_U32 : GPUPRIMS_DTYPE_U64;
  size_t es = tu_dtype_size(t), i;
  unsigned char *p = (unsigned char *)tu_xmalloc(n * es + 1);
  for (i = 0; i < n; i++) tu_put_bits(t, p, i, v[i]);
  i = (size_t)fz_make_buf(c, t, n, p);
  free(p);
  return (int)i;
}

static int is_index(gpuprims_dtype t) { return t == GPUPRIMS_DTYPE_U32 || t == GPUPRIMS_DTYPE_U64; }

/* INVALID_ARGUMENT when some row is bad (offsets and ks as the model has them). */
static unsigned row_faults(int vals, int offs, int ks) {
  size_t nrows = fz.buf[offs].len - 1, r;
  for (r = 0; r < nrows; r++) {
    uint64_t b = fz_get_index(fz.buf[offs].dt, fz_shadow(offs), r), e = fz_get_index(fz.buf[offs].dt, fz_shadow(offs), r + 1);
    uint64_t k = ks >= 0 ? fz_get_index(fz.buf[ks].dt, fz_shadow(ks), r) : (e - b - 1) / 2;
    if (e < b || e > fz.buf[vals].len || e == b || k >= e - b) return FZ_S(INVALID_ARGUMENT);
  }
  return 0;
}

static void check_rows(int vals, int offs, int ks, int out) {
  size_t nrows = fz.buf[offs].len - 1, r, es = fz.buf[vals].es;
  fz_read_into(out, fz_shadow(out));
  for (r = 0; r < nrows; r++) {
    uint64_t b = fz_get_index(fz.buf[offs].dt, fz_shadow(offs), r), e = fz_get_index(fz.buf[offs].dt, fz_shadow(offs), r + 1);
    uint64_t k = ks >= 0 ? fz_get_index(fz.buf[ks].dt, fz_shadow(ks), r) : (e - b - 1) / 2;
    char what[96];
    snprintf(what, sizeof what, "segmented_select row %zu of %zu", r, nrows);
    fz_check_rank(fz.buf[vals].dt, fz_shadow(vals) + b * es, (size_t)(e - b), (size_t)k, fz_shadow(out) + r * es, what);
  }
}

typedef struct {
  int c, vals, offs, ks, out;
  fz_h ca, va, oa, ka, xa;
} segsel_t;

/* The arguments: values from the pool, offsets and ranks made for them (now and then
 * spoiled, or any buffer of the pool), an output that fits (now and then one of the
 * inputs, or any buffer). 0 when there is nothing to call with. */
static int segsel_pick(segsel_t *a) {
  int with_ks = fz_pct(60), avoid[3];
  size_t n, nrows;
  uint64_t *off, *kv;
  a->vals = pick_in();
  a->ks = -1;
  if (a->vals < 0) return 0;
  a->ca = ctx_for(a->vals, &a->c);
  if (!fz.ctx[a->c].live) return 0;
  n = fz.buf[a->vals].len;
  nrows = fz_pct(10) ? 0 : (size_t)fz_below((n < 24 ? n : 24) + 1);
  off = (uint64_t *)tu_xmalloc((nrows + 1) * sizeof(uint64_t));
  kv = (uint64_t *)tu_xmalloc((nrows + 1) * sizeof(uint64_t));
  make_rows(n, nrows, off, kv, with_ks);
  a->offs = fz_pin(fz_pct(5) ? fz_pick_live_buf() : index_buf(a->c, off, fz_pct(4) ? 0 : nrows + 1, fz_pct(4)));
  if (with_ks) a->ks = fz_pin(fz_pct(5) ? fz_pick_live_buf() : index_buf(a->c, kv, nrows + (fz_pct(4) ? 1 : 0), fz_pct(4)));
  free(off);
  free(kv);
  avoid[0] = a->vals;
  avoid[1] = a->offs;
  avoid[2] = a->ks;
  a->out = fz_pct(6) ? avoid[fz_below(with_ks ? 3 : 2)]
         : fz_pct(6) ? fz_pin(fz_pick_live_buf()) : fz_pick_out(a->c, fz.buf[a->vals].dt, nrows, avoid, 3);
  if (a->out < 0 || a->offs < 0) return 0;
  a->va = buf_arg(a->vals, 4);
  a->oa = buf_arg(a->offs, 4);
  a->xa = buf_arg(a->out, 4);
  a->ka = fz_opt_buf_arg(a->ks, 4);
  return 1;
}

/* Offsets, ranks and out against each other; then the rows, when those are consistent. */
static unsigned segsel_shape_faults(const segsel_t *a) {
  size_t rows = fz.buf[a->offs].len ? fz.buf[a->offs].len - 1 : 0;
  unsigned f = 0;
  int consistent = 1;
  if (!is_index(fz.buf[a->offs].dt)) f |= FZ_S(TYPE_MISMATCH), consistent = 0;
  if (fz.buf[a->offs].len == 0) f |= FZ_S(SIZE_MISMATCH), consistent = 0;
  if (a->ka.cls == FZ_LIVE) {
    if (!is_index(fz.buf[a->ks].dt)) f |= FZ_S(TYPE_MISMATCH), consistent = 0;
    if (fz.buf[a->ks].len != rows) f |= FZ_S(SIZE_MISMATCH), consistent = 0;
  }
  if (a->xa.cls == FZ_LIVE && fz.buf[a->out].len != rows) f |= FZ_S(SIZE_MISMATCH);
  if (consistent && a->va.cls == FZ_LIVE && (a->ka.cls == FZ_LIVE || a->ka.cls == FZ_NULL)) /* NULL ks: medians */
    f |= row_faults(a->vals, a->offs, a->ka.cls == FZ_LIVE ? a->ks : -1);
  return f;
}

static unsigned segsel_faults(const segsel_t *a) {
  unsigned f = fz_handle_fault(&a->ca, 0) | fz_handle_fault(&a->va, 0) | fz_handle_fault(&a->oa, 0) |
               fz_handle_fault(&a->ka, 1) | fz_handle_fault(&a->xa, 0) | fz_ctx_fault(&a->ca, a->c, &a->va, a->vals) |
               fz_ctx_fault(&a->ca, a->c, &a->oa, a->offs) | fz_ctx_fault(&a->ca, a->c, &a->xa, a->out);
  if (a->ka.cls == FZ_LIVE) f |= fz_ctx_fault(&a->ca, a->c, &a->ka, a->ks);
  if (a->oa.cls == FZ_LIVE) f |= segsel_shape_faults(a);
  if (live2(&a->va, &a->xa) && fz.buf[a->out].dt != fz.buf[a->vals].dt) f |= FZ_S(TYPE_MISMATCH);
  if (a->xa.cls == FZ_LIVE &&
      ((a->va.cls == FZ_LIVE && fz_overlap(a->out, a->vals)) || (a->oa.cls == FZ_LIVE && fz_overlap(a->out, a->offs)) ||
       (a->ka.cls == FZ_LIVE && fz_overlap(a->out, a->ks))))
    f |= FZ_S(INVALID_ARGUMENT);
  return f;
}

void fz_op_segmented_select(void) {
  segsel_t a;
  unsigned faults;
  gpuprims_status s;
  if (!segsel_pick(&a)) return;
  faults = segsel_faults(&a);
  fz_call("gpuprims_segmented_select(%s, %s, %s, %s, %s)", a.ca.what, a.va.what, a.oa.what, a.ka.what, a.xa.what);
  s = fz_done(gpuprims_segmented_select((gpuprims_context *)a.ca.p, (gpuprims_buffer *)a.va.p, (gpuprims_buffer *)a.oa.p,
                                        (gpuprims_buffer *)a.ka.p, (gpuprims_buffer *)a.xa.p),
              faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK)
    check_rows(a.vals, a.offs, a.ka.cls == FZ_LIVE ? a.ks : -1, a.out);
  else
    verify_unchanged(s, a.out);
}

/* ------------------------------------------------------------------------------------- */
/* segmented_topk                                                                         */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  int c, vals, offs, ks, out, idx, bad_order;
  uint64_t row_len, k;
  gpuprims_order order;
  fz_h ca, va, oa, ka, xa, ia;
} segtopk_t;

/* Row r's bounds as the call sees them: offsets from the model, or row_len at a time. */
static void topk_row(const segtopk_t *a, size_t r, uint64_t *b, uint64_t *e) {
  if (a->oa.cls == FZ_LIVE) {
    *b = fz_get_index(fz.buf[a->offs].dt, fz_shadow(a->offs), r);
    *e = fz_get_index(fz.buf[a->offs].dt, fz_shadow(a->offs), r + 1);
  } else {
    *b = r * a->row_len;
    *e = *b + a->row_len;
  }
}

static uint64_t topk_k(const segtopk_t *a, size_t r) {
  return a->ka.cls == FZ_LIVE ? fz_get_index(fz.buf[a->ks].dt, fz_shadow(a->ks), r) : a->k;
}

/* The rows (ragged, now and then spoiled, or uniform: row_len dividing the values, now
 * and then not, or 0), ks or one k, outputs of the length that fits (now and then off by
 * one, of another dtype, or one of the inputs). 0 when there is nothing to call with. */
static int segtopk_pick(segtopk_t *a) {
  int ragged = fz_pct(65), with_ks = fz_pct(50), avoid[4];
  size_t n, nrows, r, total = 0;
  uint64_t *off, *kv;
  memset(a, 0, sizeof *a);
  a->offs = a->ks = a->idx = -1;
  a->vals = pick_in();
  if (a->vals < 0) return 0;
  a->ca = ctx_for(a->vals, &a->c);
  if (!fz.ctx[a->c].live) return 0;
  n = fz.buf[a->vals].len;
  a->order = fz_pick_enum(2, 4, &a->bad_order);
  if (ragged) {
    nrows = fz_pct(10) ? 0 : (size_t)fz_below((n < 24 ? n : 24) + 1);
    off = (uint64_t *)tu_xmalloc((nrows + 1) * sizeof(uint64_t));
    kv = (uint64_t *)tu_xmalloc((nrows + 1) * sizeof(uint64_t));
    make_rows(n, nrows, off, kv, 0);
    if (nrows && fz_pct(20)) off[1 + fz_below(nrows)] = off[0]; /* an empty row: allowed here */
    a->offs = fz_pin(fz_pct(5) ? fz_pick_live_buf() : index_buf(a->c, off, fz_pct(4) ? 0 : nrows + 1, fz_pct(4)));
    a->row_len = fz_pct(5) ? 1 + fz_below(4) : 0;
  } else {
    size_t d = n ? 1 + (size_t)fz_below(n) : 1 + (size_t)fz_below(5);
    while (n % d) d--;
    a->row_len = fz_pct(5) ? 0 : fz_pct(5) && n > 1 ? n - 1 + fz_below(3) : d;
    nrows = a->row_len ? n / (size_t)a->row_len : 0;
    off = (uint64_t *)tu_xmalloc(sizeof(uint64_t));
    kv = (uint64_t *)tu_xmalloc((nrows + 1) * sizeof(uint64_t));
  }
  for (r = 0; r < nrows; r++) {
    uint64_t len = ragged ? (off[r + 1] > off[r] ? off[r + 1] - off[r] : 0) : a->row_len;
    kv[r] = fz_pct(80) ? fz_below(len + 3) : fz_pct(50) ? 0 : len + 1 + fz_below(4);
    total += (size_t)kv[r];
  }
  if (with_ks) {
    a->ks = fz_pin(fz_pct(5) ? fz_pick_live_buf() : index_buf(a->c, kv, nrows + (fz_pct(4) ? 1 : 0), fz_pct(4)));
    a->k = fz_pct(5) ? 1 + fz_below(3) : 0;
    if (fz_pct(8)) total = total + 1 - 2 * (size_t)fz_below(total ? 2 : 1); /* ks that do not add up */
  } else {
    a->k = fz_pct(4) ? UINT64_MAX - fz_below(2) : fz_below(9);
    total = a->k > 64 ? 0 : nrows * (size_t)a->k;
  }
  free(off);
  free(kv);
  avoid[0] = a->vals, avoid[1] = a->offs, avoid[2] = a->ks, avoid[3] = -1;
  a->out = fz_pct(5) ? avoid[fz_below(3)] : fz_pct(5) ? fz_pin(fz_pick_live_buf())
         : fz_pick_out(a->c, fz.buf[a->vals].dt, total, avoid, 3);
  if (a->out < 0) a->out = a->vals;
  avoid[3] = a->out;
  if (fz_pct(60)) a->idx = fz_pct(6) ? fz_pin(fz_pick_live_buf()) : fz_pick_out(a->c, GPUPRIMS_DTYPE_U64, total, avoid, 4);
  a->va = buf_arg(a->vals, 4);
  a->oa = fz_opt_buf_arg(a->offs, 4);
  a->ka = fz_opt_buf_arg(a->ks, 4);
  a->xa = buf_arg(a->out, 4);
  a->ia = fz_opt_buf_arg(a->idx, 4);
  return 1;
}

/* Rows and ks as the backend checks them (only asked when offsets and ks are well formed). */
static unsigned segtopk_row_faults(const segtopk_t *a, size_t nrows) {
  size_t r;
  uint64_t sum = 0, b, e;
  int over = 0;
  for (r = 0; r < nrows; r++) {
    topk_row(a, r, &b, &e);
    if (e < b || e > fz.buf[a->vals].len) return FZ_S(INVALID_ARGUMENT);
  }
  if (a->ka.cls != FZ_LIVE) return 0;
  for (r = 0; r < nrows; r++) {
    uint64_t k = topk_k(a, r);
    over |= sum + k < sum;
    sum += k;
  }
  return (over || a->xa.cls != FZ_LIVE || sum != fz.buf[a->out].len) ? FZ_S(SIZE_MISMATCH) : 0;
}

/* Every fault the call has (a mask of the statuses it may return). */
static unsigned segtopk_faults(const segtopk_t *a) {
  const fz_h *bufs[5] = {&a->va, &a->oa, &a->ka, &a->xa, &a->ia};
  const int idx[5] = {a->vals, a->offs, a->ks, a->out, a->idx};
  unsigned f = fz_handle_fault(&a->ca, 0) | fz_handle_fault(&a->va, 0) | fz_handle_fault(&a->oa, 1) |
               fz_handle_fault(&a->ka, 1) | fz_handle_fault(&a->xa, 0) | fz_handle_fault(&a->ia, 1) |
               (a->bad_order ? FZ_S(INVALID_ARGUMENT) : 0);
  int i, j, shaped = a->va.cls == FZ_LIVE;
  size_t nrows = 0;
  for (i = 0; i < 5; i++) f |= fz_ctx_fault(&a->ca, a->c, bufs[i], idx[i]);
  if ((a->oa.cls == FZ_LIVE) != (a->row_len == 0) || (a->ka.cls == FZ_LIVE && a->k != 0)) f |= FZ_S(INVALID_ARGUMENT);
  if (a->oa.cls == FZ_LIVE) {
    if (!is_index(fz.buf[a->offs].dt)) f |= FZ_S(TYPE_MISMATCH), shaped = 0;
    if (fz.buf[a->offs].len == 0) f |= FZ_S(SIZE_MISMATCH), shaped = 0;
    else nrows = fz.buf[a->offs].len - 1;
  } else if (a->oa.cls == FZ_NULL && a->va.cls == FZ_LIVE && a->row_len) {
    if (fz.buf[a->vals].len % a->row_len) f |= FZ_S(SIZE_MISMATCH), shaped = 0;
    nrows = fz.buf[a->vals].len / (size_t)a->row_len;
  } else {
    shaped = 0;
  }
  if (a->ka.cls == FZ_LIVE) {
    if (!is_index(fz.buf[a->ks].dt)) f |= FZ_S(TYPE_MISMATCH), shaped = 0;
    if (fz.buf[a->ks].len != nrows) f |= FZ_S(SIZE_MISMATCH), shaped = 0;
  } else if (shaped && a->xa.cls == FZ_LIVE) {
    uint64_t total = nrows * a->k;
    if ((a->k && total / a->k != nrows) || total != fz.buf[a->out].len) f |= FZ_S(SIZE_MISMATCH);
  }
  if (live2(&a->va, &a->xa) && fz.buf[a->out].dt != fz.buf[a->vals].dt) f |= FZ_S(TYPE_MISMATCH);
  if (a->ia.cls == FZ_LIVE) {
    if (fz.buf[a->idx].dt != GPUPRIMS_DTYPE_U64) f |= FZ_S(TYPE_MISMATCH);
    if (a->xa.cls == FZ_LIVE && fz.buf[a->idx].len != fz.buf[a->out].len) f |= FZ_S(SIZE_MISMATCH);
  }
  for (i = 3; i < 5; i++) /* an output sharing memory with any other buffer of the call */
    for (j = 0; j < i; j++)
      if (bufs[i]->cls == FZ_LIVE && bufs[j]->cls == FZ_LIVE && fz_overlap(idx[i], idx[j])) f |= FZ_S(INVALID_ARGUMENT);
  if (shaped && (a->ka.cls == FZ_LIVE || a->ka.cls == FZ_NULL) && (a->oa.cls == FZ_LIVE || a->oa.cls == FZ_NULL))
    f |= segtopk_row_faults(a, nrows);
  return f;
}

/* The results against each row's stable order (ties by index), pads 0 / UINT64_MAX. */
static void check_segtopk(const segtopk_t *a) {
  const fz_buf *vb = &fz.buf[a->vals];
  size_t nrows = a->oa.cls == FZ_LIVE ? fz.buf[a->offs].len - 1 : vb->len / (size_t)a->row_len, r, j, pos = 0;
  size_t *perm = (size_t *)tu_xmalloc((vb->len + 1) * sizeof(size_t));
  const unsigned char *got, *at = NULL;
  fz_read_into(a->out, fz_shadow(a->out));
  if (a->ia.cls == FZ_LIVE) fz_read_into(a->idx, fz_shadow(a->idx)), at = fz_shadow(a->idx);
  got = fz_shadow(a->out);
  for (r = 0; r < nrows; r++) {
    uint64_t b, e, k = topk_k(a, r);
    topk_row(a, r, &b, &e);
    tu_sort_ref(vb->dt, fz_shadow(a->vals) + b * vb->es, (size_t)(e - b), a->order, perm, NULL);
    for (j = 0; j < k; j++, pos++) {
      uint64_t want_ix = j < e - b ? (uint64_t)perm[j] : UINT64_MAX;
      uint64_t want = j < e - b ? tu_get_bits(vb->es, fz_shadow(a->vals), (size_t)(b + want_ix)) : 0;
      if (tu_get_bits(vb->es, got, pos) != want || (at && tu_get_bits(8, at, pos) != want_ix))
        fz_fail("segmented_topk %s row %zu of %zu ([%llu, %llu), k %llu) slot %zu: 0x%llx index %llu, expected 0x%llx index %llu",
                tu_order_name(a->order), r, nrows, (unsigned long long)b, (unsigned long long)e, (unsigned long long)k, j,
                (unsigned long long)tu_get_bits(vb->es, got, pos), (unsigned long long)(at ? tu_get_bits(8, at, pos) : want_ix),
                (unsigned long long)want, (unsigned long long)want_ix);
    }
  }
  fz.checked_results++;
  free(perm);
}

void fz_op_segmented_topk(void) {
  segtopk_t a;
  unsigned faults;
  gpuprims_status s;
  if (!segtopk_pick(&a)) return;
  faults = segtopk_faults(&a);
  fz_call("gpuprims_segmented_topk(%s, %s, %s, %llu, %llu, %s, %s, %s, %s)", a.ca.what, a.va.what, a.oa.what,
          (unsigned long long)a.row_len, (unsigned long long)a.k, a.ka.what,
          a.bad_order ? "(unknown order)" : tu_order_name(a.order), a.xa.what, a.ia.what);
  s = fz_done(gpuprims_segmented_topk((gpuprims_context *)a.ca.p, (gpuprims_buffer *)a.va.p, (gpuprims_buffer *)a.oa.p,
                                      a.row_len, a.k, (gpuprims_buffer *)a.ka.p, a.order, (gpuprims_buffer *)a.xa.p,
                                      (gpuprims_buffer *)a.ia.p),
              faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK) {
    check_segtopk(&a);
  } else {
    verify_unchanged(s, a.out);
    verify_unchanged(s, a.idx);
  }
}

/* ------------------------------------------------------------------------------------- */
/* radix_sort, quicksort                                                                  */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  uint64_t key, kbits, vbits;
} kv_t;

static int kv_cmp(const void *a_, const void *b_) {
  const kv_t *a = (const kv_t *)a_, *b = (const kv_t *)b_;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  if (a->kbits != b->kbits) return a->kbits < b->kbits ? -1 : 1;
  return a->vbits < b->vbits ? -1 : a->vbits > b->vbits;
}

/* The sort's result against the stable reference: bitwise for the radix sort; for the
 * quicksort the same order keys and the same (key bits, value bits) pairs as a multiset. */
static void check_sort(int keys, const unsigned char *k0, int vals, const unsigned char *v0, gpuprims_order order, int quick) {
  const fz_buf *kb = &fz.buf[keys];
  const tu_dtype_info *d = tu_dtype(kb->dt);
  size_t n = kb->len, vs = vals >= 0 ? fz.buf[vals].es : 0, j;
  size_t *perm = (size_t *)tu_xmalloc((n + 1) * sizeof(size_t));
  unsigned char *wk = (unsigned char *)tu_xmalloc(n * kb->es + 1), *wv = (unsigned char *)tu_xmalloc(n * 8 + 1);
  const char *name = quick ? "quicksort" : "radix_sort";
  tu_sort_ref(kb->dt, k0, n, order, perm, NULL);
  tu_gather(k0, kb->es, perm, n, wk);
  if (vals >= 0) tu_gather(v0, vs, perm, n, wv);
  fz_read_into(keys, fz_shadow(keys));
  if (vals >= 0) fz_read_into(vals, fz_shadow(vals));
  if (!quick) {
    if ((j = tu_first_diff(fz_shadow(keys), wk, kb->es, n)) < n) fz_fail("%s %s of %zu x %s: key %zu differs", name, tu_order_name(order), n, d->name, j);
    if (vals >= 0 && (j = tu_first_diff(fz_shadow(vals), wv, vs, n)) < n) fz_fail("%s: value %zu differs (not stable?)", name, j);
  } else {
    kv_t *a = (kv_t *)tu_xmalloc((n + 1) * sizeof(kv_t)), *b = (kv_t *)tu_xmalloc((n + 1) * sizeof(kv_t));
    for (j = 0; j < n; j++) {
      a[j].key = tu_sort_key_at(d, order, fz_shadow(keys), j);
      b[j].key = tu_sort_key_at(d, order, wk, j);
      if (a[j].key != b[j].key) fz_fail("%s %s of %zu x %s: key %zu is out of order", name, tu_order_name(order), n, d->name, j);
      a[j].kbits = tu_get_bits(kb->es, fz_shadow(keys), j);
      b[j].kbits = tu_get_bits(kb->es, wk, j);
      a[j].vbits = vals >= 0 ? tu_get_bits(vs, fz_shadow(vals), j) : 0;
      b[j].vbits = vals >= 0 ? tu_get_bits(vs, wv, j) : 0;
    }
    qsort(a, n, sizeof(kv_t), kv_cmp);
    qsort(b, n, sizeof(kv_t), kv_cmp);
    for (j = 0; j < n; j++)
      if (kv_cmp(&a[j], &b[j]) != 0) fz_fail("%s: the (key, value) pairs are not the input's", name);
    free(a);
    free(b);
  }
  fz.checked_results++;
  free(perm);
  free(wk);
  free(wv);
}

/* A sort's keys and values (NULL allowed) of ca's context: values apart from keys, of their length. */
unsigned fz_sort_faults(const fz_h *ca, int c, const fz_h *ka, int keys, const fz_h *va, int vals) {
  unsigned f = fz_handle_fault(ca, 0) | fz_handle_fault(ka, 0) | fz_handle_fault(va, 1) | fz_ctx_fault(ca, c, ka, keys);
  if (va->cls == FZ_LIVE) {
    f |= fz_ctx_fault(ca, c, va, vals);
    if (ka->cls == FZ_LIVE && fz_overlap(keys, vals)) f |= FZ_S(INVALID_ARGUMENT);
    if (ka->cls == FZ_LIVE && fz.buf[vals].len != fz.buf[keys].len) f |= FZ_S(SIZE_MISMATCH);
  }
  return f;
}

void fz_op_sort(void) {
  int keys = pick_in(), c, bad_order, vals = -1, quick = fz_pct(50);
  gpuprims_order order = fz_pick_enum(2, 4, &bad_order);
  fz_h ca, ka, va;
  unsigned faults;
  unsigned char *k0, *v0 = NULL;
  gpuprims_status s;
  if (keys < 0) return;
  ca = ctx_for(keys, &c);
  if (fz_pct(60)) {
    vals = fz_pct(6) ? keys : fz_pct(8) ? fz_pin(fz_pick_live_buf()) : fz_pick_out(c, fz_rand_dtype()->id, fz.buf[keys].len, &keys, 1);
    if (vals < 0) return;
  }
  ka = buf_arg(keys, 4);
  va = fz_opt_buf_arg(vals, 4);
  faults = fz_sort_faults(&ca, c, &ka, keys, &va, vals) | (bad_order ? FZ_S(INVALID_ARGUMENT) : 0);
  k0 = snapshot(keys);
  if (vals >= 0) v0 = snapshot(vals);
  fz_call("gpuprims_%s(%s, %s, %s, %s)", quick ? "quicksort" : "radix_sort", ca.what, ka.what, va.what,
          bad_order ? "(unknown order)" : tu_order_name(order));
  s = fz_done(quick ? gpuprims_quicksort((gpuprims_context *)ca.p, (gpuprims_buffer *)ka.p, (gpuprims_buffer *)va.p, order)
                    : gpuprims_radix_sort((gpuprims_context *)ca.p, (gpuprims_buffer *)ka.p, (gpuprims_buffer *)va.p, order),
              faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK) {
    check_sort(keys, k0, va.cls == FZ_LIVE ? vals : -1, v0, order, quick);
  } else {
    verify_unchanged(s, keys);
    verify_unchanged(s, vals);
  }
  free(k0);
  free(v0);
}
