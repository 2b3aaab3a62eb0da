/*
 * fuzz_ops_multi.c: communicators (gpuprims_comm_*: rank 0 of 1, on a context of the
 * pool) and groups (gpuprims_group_*: one to three host "devices", each with a context
 * record of its own in the pool, from gpuprims_group_context), made and destroyed now and
 * then and kept in the pool like the other handles; and their operations (reduce,
 * reduce_to_buffer, scan, radix_sort, select_kth, topk) with a buffer a rank: mostly
 * shards of one dtype on the rank's context, now and then of another context or dtype, a
 * hostile handle, a NULL entry or a NULL array, an unknown enum value, k past the total.
 * A comm's call and a group's are picked, faulted and checked alike: they differ only in
 * the call (a buffer, or an array of one a device).
 *
 * The model: the ranks' shards one after another are the global sequence. On OK, reduce,
 * select_kth and radix_sort are compared with the one-context call on that sequence (a
 * harness buffer of the main context; float sums, which combine the ranks' partials in
 * rank order, within tolerance of the reference instead), scan and top-k with the
 * references of fuzz_ops_prim.c. On failure nothing is written: host outputs stay
 * poisoned, every rank's output buffers (and keys and values) hold what they held.
 *
 * Where AUTO opens CUDA, a comm's id or a group may be refused (UNSUPPORTED: no NCCL;
 * NO_DEVICE): then none is made and the operations have nothing to run on. Never made:
 * a comm of more than one rank (its lone rank would wait for the others until
 * GPUPRIMS_COMM_TIMEOUT_S), and a host id given to a CUDA context (NCCL would wait for
 * a peer that is not there).
 */
#include "fuzz.h"

#define POISON 0xC3

/* ------------------------------------------------------------------------------------- */
/* Making, querying and destroying comms and groups                                        */
/* ------------------------------------------------------------------------------------- */

void fz_op_comm_create(void) {
  static const uint32_t bad_ranks[][2] = {{1, 1}, {0, 0}, {5, 3}, {UINT32_MAX, UINT32_MAX}, {2, 0}};
  static uint8_t last_id[GPUPRIMS_COMM_ID_BYTES];
  static int have_last;
  uint8_t id[GPUPRIMS_COMM_ID_BYTES + 16];
  unsigned r = (unsigned)fz_below(100), faults, allowed, i;
  int c = fz_pick_live_ctx(), no_id = fz_pct(4), no_out = fz_pct(5), m = -1, bad_rank = fz_pct(8);
  gpuprims_backend be = r < 80 ? fz.ctx[c].backend : r < 88 ? GPUPRIMS_BACKEND_HOST : r < 93 ? GPUPRIMS_BACKEND_CUDA
                      : r < 96 ? GPUPRIMS_BACKEND_AUTO : fz_bad_enum();
  const uint32_t *br = bad_ranks[fz_below(TU_ARRAY_LEN(bad_ranks))];
  uint32_t rank = bad_rank ? br[0] : 0, nranks = bad_rank ? br[1] : 1;
  gpuprims_comm *out = TU_SENTINEL_PTR(gpuprims_comm);
  gpuprims_status s;
  fz_h ca;

  /* the id */
  memset(id, POISON, sizeof id);
  allowed = be == GPUPRIMS_BACKEND_HOST ? FZ_OK
          : be == GPUPRIMS_BACKEND_CUDA ? FZ_OK | FZ_S(UNSUPPORTED) | FZ_S(NO_DEVICE) : FZ_S(INVALID_ARGUMENT);
  fz_call("gpuprims_comm_id_create(%s, %s)", fz_backend_words(be), no_id ? "NULL" : "id");
  s = fz_done(gpuprims_comm_id_create(be, no_id ? NULL : id), no_id ? FZ_S(NULL_ARGUMENT) : allowed);
  for (i = s == GPUPRIMS_STATUS_OK ? GPUPRIMS_COMM_ID_BYTES : 0; i < sizeof id; i++)
    if (id[i] != POISON) fz_fail("comm_id_create (%s) wrote id[%u]", tu_status_name(s), i);
  if (s != GPUPRIMS_STATUS_OK || (fz_ctx_is_cuda(c) && be != GPUPRIMS_BACKEND_CUDA)) return;
  if (!fz_ctx_is_cuda(c)) { /* an id used before (its rendezvous starts afresh once its ranks are in), or any bytes */
    if (have_last && fz_pct(10)) memcpy(id, last_id, sizeof last_id);
    if (fz_pct(5)) tu_fill_bytes(&fz.rng, id, GPUPRIMS_COMM_ID_BYTES);
    memcpy(last_id, id, sizeof last_id);
    have_last = 1;
  }

  /* the comm */
  no_id = fz_pct(4);
  ca = fz_maybe_hostile(FZ_KCTX, fz_live_ctx(c), 6);
  faults = fz_handle_fault(&ca, 0) | (no_id || no_out ? FZ_S(NULL_ARGUMENT) : 0) | (bad_rank ? FZ_S(INVALID_ARGUMENT) : 0);
  allowed = faults ? faults : fz_ctx_is_cuda(c) ? FZ_OK | FZ_S(UNSUPPORTED) | FZ_S(DRIVER_ERROR) : FZ_OK;
  if (allowed & FZ_OK) m = fz_free_slot(FZ_KCOMM);
  fz_call("gpuprims_comm_create(%s, %s, %lu, %lu, %s)", ca.what, no_id ? "NULL" : "id", (unsigned long)rank,
          (unsigned long)nranks, no_out ? "NULL" : "&out");
  s = fz_done(gpuprims_comm_create((gpuprims_context *)ca.p, no_id ? NULL : id, rank, nranks, no_out ? NULL : &out),
              allowed);
  if (!fz_created(s, no_out, out, "comm_create")) return;
  fz.comm[m].h = out;
  fz.comm[m].live = 1;
  fz.comm[m].id = fz_new_id();
  fz.comm[m].ctx = c;
  rank = nranks = FZ_UNSET32;
  fz_call("gpuprims_comm_rank(%s, &rank, &nranks) (check)", fz_live_comm(m).what);
  fz_done(gpuprims_comm_rank(out, &rank, &nranks), FZ_OK);
  if (rank != 0 || nranks != 1) fz_fail("a new comm is rank %lu of %lu", (unsigned long)rank, (unsigned long)nranks);
}

/* Destroys a live comm or group (kind), or a hostile value of the kind (a no-op). */
static void destroy_some(int kind) {
  int i = fz_pick_live(kind);
  if (i < 0 || fz_pct(40))
    fz_destroy_hostile(kind);
  else if (kind == FZ_KCOMM)
    fz_comm_destroy(i);
  else
    fz_group_destroy(i);
}

void fz_op_comm_destroy(void) { destroy_some(FZ_KCOMM); }

void fz_op_comm_query(void) {
  int m = fz_pick_live(FZ_KCOMM), no_rank = fz_pct(6), no_n = fz_pct(6);
  fz_h a = m >= 0 ? fz_maybe_hostile(FZ_KCOMM, fz_live_comm(m), 12) : fz_hostile(FZ_KCOMM);
  uint32_t rank = FZ_UNSET32, nranks = FZ_UNSET32;
  unsigned faults = fz_handle_fault(&a, 0) | (no_rank || no_n ? FZ_S(NULL_ARGUMENT) : 0);
  gpuprims_status s;
  fz_call("gpuprims_comm_rank(%s, %s, %s)", a.what, no_rank ? "NULL" : "&rank", no_n ? "NULL" : "&nranks");
  s = fz_done(gpuprims_comm_rank((const gpuprims_comm *)a.p, no_rank ? NULL : &rank, no_n ? NULL : &nranks),
              faults ? faults : FZ_OK);
  if (s == GPUPRIMS_STATUS_OK ? rank != 0 || nranks != 1 : rank != FZ_UNSET32 || nranks != FZ_UNSET32)
    fz_fail("comm_rank (%s) wrote rank %#lx of %#lx", tu_status_name(s), (unsigned long)rank, (unsigned long)nranks);
}

void fz_op_group_create(void) {
  static const int32_t odd[] = {-1, INT32_MIN, INT32_MAX, 7};
  static const size_t bad_n[] = {0, 1025, SIZE_MAX};
  unsigned r = (unsigned)fz_below(100), faults = 0, allowed;
  gpuprims_backend be = r < 78 ? GPUPRIMS_BACKEND_HOST : r < 88 ? GPUPRIMS_BACKEND_AUTO
                      : r < 94 ? GPUPRIMS_BACKEND_CUDA : fz_bad_enum();
  int32_t dev[FZ_MAX_RANKS];
  size_t nd = 1 + (size_t)fz_below(FZ_MAX_RANKS), i;
  int no_dev = fz_pct(3), no_out = fz_pct(4), g = -1;
  gpuprims_group *out = TU_SENTINEL_PTR(gpuprims_group);
  gpuprims_status s;
  for (i = 0; i < FZ_MAX_RANKS; i++) dev[i] = fz_pct(92) ? (int32_t)i : odd[fz_below(TU_ARRAY_LEN(odd))];
  if (fz_pct(4)) nd = bad_n[fz_below(TU_ARRAY_LEN(bad_n))]; /* refused before the array is read */
  if (no_dev || no_out) faults |= FZ_S(NULL_ARGUMENT);
  if (nd == 0 || nd > 1024 || be > GPUPRIMS_BACKEND_HOST) faults |= FZ_S(INVALID_ARGUMENT);
  for (i = 0; i < nd && i < FZ_MAX_RANKS; i++)
    if (dev[i] < 0) faults |= FZ_S(INVALID_ARGUMENT);
  if (faults)
    allowed = faults;
  else if (be == GPUPRIMS_BACKEND_HOST || (be == GPUPRIMS_BACKEND_AUTO && !fz.auto_cuda))
    allowed = FZ_OK;
  else /* CUDA: no NCCL, no such device, one device twice */
    allowed = FZ_OK | FZ_S(UNSUPPORTED) | FZ_S(NO_DEVICE) | FZ_S(INVALID_ARGUMENT) | FZ_S(DRIVER_ERROR);
  if (allowed & FZ_OK) {
    g = fz_free_slot(FZ_KGROUP);
    fz_ctx_room((int)nd, 0);
  }
  fz_call("gpuprims_group_create(%s, {%ld, %ld, %ld}, %zu, %s)", fz_backend_words(be), (long)dev[0], (long)dev[1],
          (long)dev[2], nd, no_out ? "NULL" : "&out");
  s = fz_done(gpuprims_group_create(be, no_dev ? NULL : dev, nd, no_out ? NULL : &out), allowed);
  if (!fz_created(s, no_out, out, "group_create")) return;
  fz.group[g].h = out;
  fz.group[g].live = 1;
  fz.group[g].id = fz_new_id();
  fz.group[g].n = (int)nd;
  for (i = 0; i < nd; i++) {
    gpuprims_context *c = NULL;
    fz_call("gpuprims_group_context(group#%d, %zu, &out) (check)", fz.group[g].id, i);
    fz_done(gpuprims_group_context(out, i, &c), FZ_OK);
    fz.group[g].ctx[i] = fz_ctx_add(c, dev[i]);
    fz.ctx[fz.group[g].ctx[i]].group = g + 1;
  }
}

void fz_op_group_destroy(void) { destroy_some(FZ_KGROUP); }

/* gpuprims_group_context's handle names device i's context: a buffer of that context's
 * record is of its context (a reduce on it is no CONTEXT_MISMATCH). */
static void check_group_context(int g, size_t i, gpuprims_context *h) {
  int c = fz.group[g].ctx[i], b, n = 0, pick[FZ_MAX_BUF];
  gpuprims_backend be = 0xBADu;
  uint64_t sum[2];
  fz_call("gpuprims_context_backend(ctx %p, &out) (check)", (void *)h);
  fz_done(gpuprims_context_backend(h, &be), FZ_OK);
  if (be != fz.ctx[c].backend) fz_fail("group_context gave a %s context, device %zu's is %s", tu_backend_name(be), i,
                                       tu_backend_name(fz.ctx[c].backend));
  for (b = 0; b < FZ_MAX_BUF; b++)
    if (fz.buf[b].live && fz.buf[b].ctx == c) pick[n++] = b;
  if (n) {
    b = pick[fz_below((uint64_t)n)];
    fz_call("gpuprims_reduce(ctx %p, %s, SUM, &out) (check: the device's context)", (void *)h, fz_live_buf(b).what);
    fz_done(gpuprims_reduce(h, fz.buf[b].h, GPUPRIMS_OP_SUM, sum), FZ_OK);
  }
  fz_destroy_as(FZ_KCTX, h, "the new handle");
  fz_done_void("(void)");
  fz_remember_stale(FZ_KCTX, h);
}

void fz_op_group_query(void) {
  int g = fz_pick_live(FZ_KGROUP), no_out = fz_pct(6);
  fz_h a = g >= 0 ? fz_maybe_hostile(FZ_KGROUP, fz_live_group(g), 12) : fz_hostile(FZ_KGROUP);
  size_t n = g >= 0 ? (size_t)fz.group[g].n : 1;
  unsigned faults = fz_handle_fault(&a, 0) | (no_out ? FZ_S(NULL_ARGUMENT) : 0);
  gpuprims_status s;
  if (fz_pct(40)) {
    size_t out = FZ_UNSET;
    fz_call("gpuprims_group_size(%s, %s)", a.what, no_out ? "NULL" : "&out");
    s = fz_done(gpuprims_group_size((const gpuprims_group *)a.p, no_out ? NULL : &out), faults ? faults : FZ_OK);
    if (s == GPUPRIMS_STATUS_OK ? out != n : out != FZ_UNSET) fz_fail("group_size (%s) wrote %zu", tu_status_name(s), out);
  } else {
    size_t i = fz_pct(85) ? (size_t)fz_below(n) : fz_pct(50) ? n : SIZE_MAX - (size_t)fz_below(2);
    gpuprims_context *out = TU_SENTINEL_PTR(gpuprims_context);
    if (a.cls == FZ_LIVE && i >= n) faults |= FZ_S(INVALID_ARGUMENT);
    fz_call("gpuprims_group_context(%s, %zu, %s)", a.what, i, no_out ? "NULL" : "&out");
    s = fz_done(gpuprims_group_context((const gpuprims_group *)a.p, i, no_out ? NULL : &out), faults ? faults : FZ_OK);
    if (s == GPUPRIMS_STATUS_OK) {
      if (out == NULL || out == TU_SENTINEL_PTR(gpuprims_context)) fz_fail("group_context said OK but wrote %p", (void *)out);
      check_group_context(g, i, out);
    } else if (out != TU_SENTINEL_PTR(gpuprims_context)) {
      fz_fail("a failed group_context wrote its out-parameter");
    }
  }
}

/* ------------------------------------------------------------------------------------- */
/* The calls' arguments                                                                  */
/* ------------------------------------------------------------------------------------- */

/* What a call runs on: a comm (one rank) or a group (n devices), and each rank's context. */
typedef struct {
  int group;
  int n;
  int ctx[FZ_MAX_RANKS];
  fz_h h;          /* the comm or group argument: live mostly */
  const char *fam; /* the functions' family: "comm" or "group" */
} mt_t;

/* One buffer argument of every rank: a comm's call takes p[0], a group's the array p
 * (NULL when null_array). a[r] is rank r's argument, b[r] its buffer record (-1: none). */
typedef struct {
  int b[FZ_MAX_RANKS];
  fz_h a[FZ_MAX_RANKS];
  gpuprims_buffer *p[FZ_MAX_RANKS];
  int null_array;
  char what[FZ_MAX_RANKS * 76 + 8];
} mt_arg;

#define COMM(t) ((gpuprims_comm *)(t)->h.p)
#define GROUP(t) ((gpuprims_group *)(t)->h.p)
#define ONE(x) ((x)->p[0])
#define ARR(x) ((x)->null_array ? NULL : (x)->p)
#define CARR(x) ((const gpuprims_buffer *const *)ARR(x))

/* Whether every context of comm or group i (a record of `kind`) has a live handle, so
 * that buffers can be made on it. */
static int usable(int kind, int i) {
  int r;
  if (kind == FZ_KCOMM) return fz.ctx[fz.comm[i].ctx].live;
  for (r = 0; r < fz.group[i].n; r++)
    if (!fz.ctx[fz.group[i].ctx[r]].live) return 0;
  return 1;
}

/* A live comm or group (mostly one whose contexts live), now and then a hostile value
 * in its place; 0 when none lives. */
static int pick_target(mt_t *t) {
  int cand[FZ_MAX_COMM + FZ_MAX_GROUP], n = 0, prefer = fz_pct(85), pass, i, r;
  for (pass = 0; pass < 2 && n == 0; pass++) {
    for (i = 0; i < FZ_MAX_COMM; i++)
      if (fz.comm[i].live && (pass || !prefer || usable(FZ_KCOMM, i))) cand[n++] = i;
    for (i = 0; i < FZ_MAX_GROUP; i++)
      if (fz.group[i].live && (pass || !prefer || usable(FZ_KGROUP, i))) cand[n++] = FZ_MAX_COMM + i;
  }
  if (n == 0) return 0;
  i = cand[fz_below((uint64_t)n)];
  t->group = i >= FZ_MAX_COMM;
  if (t->group) {
    i -= FZ_MAX_COMM;
    t->n = fz.group[i].n;
    for (r = 0; r < t->n; r++) t->ctx[r] = fz.group[i].ctx[r];
    t->h = fz_maybe_hostile(FZ_KGROUP, fz_live_group(i), 4);
    t->fam = "group";
  } else {
    t->n = 1;
    t->ctx[0] = fz.comm[i].ctx;
    t->h = fz_maybe_hostile(FZ_KCOMM, fz_live_comm(i), 4);
    t->fam = "comm";
  }
  return 1;
}

/* The argument for buffers b[] (b[r] < 0: a NULL entry), each entry hostile now and then;
 * a group's whole array NULL now and then. */
static void make_arg(const mt_t *t, mt_arg *x, const int *b, unsigned hostile_pct) {
  int r;
  size_t at;
  x->null_array = t->group && fz_pct(2);
  for (r = 0; r < t->n; r++) {
    x->b[r] = b[r];
    x->a[r] = fz_opt_buf_arg(x->null_array ? -1 : b[r], hostile_pct);
    x->p[r] = (gpuprims_buffer *)x->a[r].p;
  }
  if (!t->group || x->null_array) {
    snprintf(x->what, sizeof x->what, "%s", x->a[0].what);
    return;
  }
  at = (size_t)snprintf(x->what, sizeof x->what, "{");
  for (r = 0; r < t->n; r++) at += (size_t)snprintf(x->what + at, sizeof x->what - at, "%s%s", r ? ", " : "", x->a[r].what);
  snprintf(x->what + at, sizeof x->what - at, "}");
}

/* Rank r's shard of dtype dt: a buffer of the rank's context from the pool (any length),
 * or a new one (random length and contents); now and then any buffer of the pool. */
static int shard_of(const mt_t *t, int r, gpuprims_dtype dt) {
  int c = t->ctx[r], b, n = 0, pick[FZ_MAX_BUF];
  for (b = 0; b < FZ_MAX_BUF; b++)
    if (fz.buf[b].live && fz.buf[b].ctx == c && fz.buf[b].dt == dt) pick[n++] = b;
  if (fz_pct(5) || (!n && !fz.ctx[c].live)) return fz_pin(fz_pick_live_buf());
  if (n && (!fz.ctx[c].live || fz_pct(70))) return fz_pin(pick[fz_below((uint64_t)n)]);
  return fz_find_or_make(c, dt, fz_rand_len(), NULL, 0);
}

/* Every rank's input: shards of one dtype (rank 0's context's buffers suggest it), now
 * and then one of another dtype. 0 when there is none to be had. */
static int pick_shards(const mt_t *t, int *b) {
  int r, any = fz_pick_live_buf();
  gpuprims_dtype dt = any >= 0 && fz.buf[any].ctx == t->ctx[0] && fz_pct(70) ? fz.buf[any].dt : fz_rand_dtype()->id;
  for (r = 0; r < t->n; r++)
    if ((b[r] = shard_of(t, r, fz_pct(94) ? dt : fz_rand_dtype()->id)) < 0) return 0;
  return 1;
}

/* INVALID_ARGUMENT where the agreement finds the ranks asked different things: their
 * live buffers of x in different dtypes, or (presence) some ranks with one, some without. */
static unsigned agree_fault(const mt_t *t, const mt_arg *x, int presence) {
  int r, dt = -1, have = -1;
  for (r = 0; r < t->n; r++) {
    int here = x->a[r].cls != FZ_NULL;
    if (x->a[r].cls == FZ_LIVE) {
      if (dt >= 0 && (int)fz.buf[x->b[r]].dt != dt) return FZ_S(INVALID_ARGUMENT);
      dt = (int)fz.buf[x->b[r]].dt;
    }
    if (presence && have >= 0 && here != have) return FZ_S(INVALID_ARGUMENT);
    have = here;
  }
  return 0;
}

/* The handle and context faults of every rank's entry of x. */
static unsigned entry_faults(const mt_t *t, const mt_arg *x, int optional) {
  unsigned f = fz_handle_fault(&t->h, 0);
  int r;
  for (r = 0; r < t->n; r++) f |= fz_handle_fault(&x->a[r], optional) | fz_ctx_fault(&t->h, t->ctx[r], &x->a[r], x->b[r]);
  return f;
}

static int all_live(const mt_t *t, const mt_arg *x) {
  int r;
  for (r = 0; r < t->n; r++)
    if (x->a[r].cls != FZ_LIVE) return 0;
  return 1;
}

/* The elements of the ranks' buffers b[0..n). */
static size_t total_of(const int *b, int n) {
  size_t total = 0;
  int r;
  for (r = 0; r < n; r++) total += fz.buf[b[r]].len;
  return total;
}

/* The ranks' buffers b[0..n) one after another, as the model has them (malloc'd);
 * *total: their elements. */
static unsigned char *joined(const int *b, int n, size_t *total) {
  size_t bytes = 0, at = 0;
  unsigned char *p;
  int r;
  *total = total_of(b, n);
  for (r = 0; r < n; r++) bytes += fz.buf[b[r]].len * fz.buf[b[r]].es;
  p = (unsigned char *)tu_xmalloc(bytes + 1);
  for (r = 0; r < n; r++) {
    size_t nb = fz.buf[b[r]].len * fz.buf[b[r]].es;
    if (nb) memcpy(p + at, fz_shadow(b[r]), nb);
    at += nb;
  }
  return p;
}

/* After a call that may write x's buffers: on OK the model takes what the library wrote
 * to those it was given (read back); the others, and all of them after a failure, hold
 * what they held. */
static void after_call(gpuprims_status s, const mt_t *t, const mt_arg *x) {
  int r;
  for (r = 0; r < t->n; r++) {
    if (x->b[r] < 0 || !fz.buf[x->b[r]].live) continue;
    if (s == GPUPRIMS_STATUS_OK && x->a[r].cls == FZ_LIVE)
      fz_read_into(x->b[r], fz_shadow(x->b[r]));
    else
      fz_verify_buf(x->b[r], s == GPUPRIMS_STATUS_OK ? "after a call that was not given it" : "after a failed call");
  }
}

/* The one-context call a result is compared with runs on a buffer of the main context
 * holding x[0..n) (the harness's, not the pool's). */
static gpuprims_buffer *ref_upload(gpuprims_dtype t, const void *x, size_t n) {
  gpuprims_buffer *h = NULL;
  int c = fz_main_ctx();
  fz_call("gpuprims_buffer_from_host(ctx#%d, %s, src, %zu, &out) (check: for one context's call)", fz.ctx[c].id,
          tu_dtype_name(t), n);
  fz_done(gpuprims_buffer_from_host(fz.ctx[c].h, t, x, n, &h), FZ_OK);
  return h;
}

static void ref_free(gpuprims_buffer *h) {
  fz_call("gpuprims_buffer_destroy(ref) (check)");
  gpuprims_buffer_destroy(h);
  fz_done_void("(void)");
}

/* ------------------------------------------------------------------------------------- */
/* The operations                                                                         */
/* ------------------------------------------------------------------------------------- */

/* A reduction of the ranks' shards x[0..n) against the reference, and (float sums aside:
 * the ranks' partials combine in another order) against one context's reduce. */
static void check_reduce_all(gpuprims_dtype t, gpuprims_op op, const unsigned char *x, size_t n, int ranks,
                             const void *got, const char *fn) {
  unsigned char want[16];
  char g[64], w[64];
  gpuprims_buffer *h;
  fz_check_reduce(t, op, x, n, ranks, got, fn);
  if (tu_dtype(t)->is_float && op == GPUPRIMS_OP_SUM) return;
  h = ref_upload(t, x, n);
  fz_call("gpuprims_reduce(ctx#%d, ref, %s, &out) (check: one context)", fz.ctx[fz_main_ctx()].id, fz_op_name(op));
  fz_done(gpuprims_reduce(fz.ctx[fz_main_ctx()].h, h, op, want), FZ_OK);
  ref_free(h);
  if (!fz_same_elem(t, want, got, 1)) {
    tu_fmt_elem(t, got, g, sizeof g);
    tu_fmt_elem(t, want, w, sizeof w);
    fz_fail("%s %s of %zu x %s gave %s, one context's reduce %s", fn, fz_op_name(op), n, tu_dtype_name(t), g, w);
  }
}

void fz_op_multi_reduce(void) {
  mt_t t;
  mt_arg in, out;
  int b[FZ_MAX_RANKS], o[FZ_MAX_RANKS], r, bad_op, to_buf = fz_pct(40), no_out = !to_buf && fz_pct(5);
  gpuprims_op op = fz_pick_enum(3, 5, &bad_op);
  unsigned char value[16], *x;
  unsigned faults;
  size_t n, i, es;
  char fn[48];
  gpuprims_status s;
  if (!pick_target(&t) || !pick_shards(&t, b)) return;
  for (r = 0; to_buf && r < t.n; r++) {
    o[r] = fz_pct(4) ? b[r] : fz_pct(6) ? fz_pin(fz_pick_live_buf()) : fz_pick_out(t.ctx[r], fz.buf[b[r]].dt, 1, NULL, 0);
    if (o[r] < 0 || (fz_overlap(b[r], o[r]) && !fz_same_range(b[r], o[r]))) return;
  }
  make_arg(&t, &in, b, 5);
  if (to_buf) make_arg(&t, &out, o, 5);
  faults = entry_faults(&t, &in, 0) | agree_fault(&t, &in, 0) | (bad_op ? FZ_S(INVALID_ARGUMENT) : 0) |
           (no_out ? FZ_S(NULL_ARGUMENT) : 0);
  for (r = 0; to_buf && r < t.n; r++) faults |= fz_one_out_faults(&t.h, t.ctx[r], &in.a[r], b[r], &out.a[r], o[r]);
  x = joined(b, t.n, &n);
  if (all_live(&t, &in) && !bad_op && op != GPUPRIMS_OP_SUM && n == 0) faults |= FZ_S(INVALID_ARGUMENT); /* of nothing */
  snprintf(fn, sizeof fn, "%s_%s", t.fam, to_buf ? "reduce_to_buffer" : "reduce");
  memset(value, POISON, sizeof value);
  fz_call("gpuprims_%s(%s, %s, %s, %s)", fn, t.h.what, in.what, fz_op_name(op), to_buf ? out.what : no_out ? "NULL" : "&out");
  if (t.group)
    s = to_buf ? gpuprims_group_reduce_to_buffer(GROUP(&t), CARR(&in), op, ARR(&out))
               : gpuprims_group_reduce(GROUP(&t), CARR(&in), op, no_out ? NULL : value);
  else
    s = to_buf ? gpuprims_comm_reduce_to_buffer(COMM(&t), ONE(&in), op, ONE(&out))
               : gpuprims_comm_reduce(COMM(&t), ONE(&in), op, no_out ? NULL : value);
  s = fz_done(s, faults ? faults : FZ_OK);
  es = fz.buf[b[0]].es;
  if (to_buf) {
    after_call(s, &t, &out);
    if (s == GPUPRIMS_STATUS_OK) {
      for (r = 1; r < t.n; r++)
        if (memcmp(fz_shadow(o[r]), fz_shadow(o[0]), es) != 0) fz_fail("%s: device %d's out differs from device 0's", fn, r);
      memcpy(value, fz_shadow(o[0]), es);
    }
  } else {
    for (i = s == GPUPRIMS_STATUS_OK ? es : 0; i < sizeof value; i++)
      if (value[i] != POISON) fz_fail("%s (%s) wrote out[%zu]", fn, tu_status_name(s), i);
  }
  if (s == GPUPRIMS_STATUS_OK) check_reduce_all(fz.buf[b[0]].dt, op, x, n, t.n, value, fn);
  free(x);
}

void fz_op_multi_scan(void) {
  mt_t t;
  mt_arg in, out;
  int b[FZ_MAX_RANKS], o[FZ_MAX_RANKS], r, bad_op, bad_mode;
  gpuprims_op op = fz_pick_enum(3, 4, &bad_op);
  gpuprims_scan_mode mode = fz_pick_enum(2, 4, &bad_mode);
  unsigned faults;
  unsigned char *x;
  size_t n;
  char fn[32];
  gpuprims_status s;
  if (!pick_target(&t) || !pick_shards(&t, b)) return;
  for (r = 0; r < t.n; r++) {
    o[r] = fz_pct(20) ? b[r] : fz_pct(6) ? fz_pin(fz_pick_live_buf())
         : fz_pick_out(t.ctx[r], fz.buf[b[r]].dt, fz.buf[b[r]].len, &b[r], 1);
    if (o[r] < 0 || (fz_overlap(b[r], o[r]) && !fz_same_range(b[r], o[r]))) return;
  }
  make_arg(&t, &in, b, 4);
  make_arg(&t, &out, o, 4);
  faults = agree_fault(&t, &in, 0) | (bad_op || bad_mode ? FZ_S(INVALID_ARGUMENT) : 0);
  for (r = 0; r < t.n; r++) faults |= fz_scan_faults(&t.h, t.ctx[r], &in.a[r], b[r], &out.a[r], o[r]);
  x = joined(b, t.n, &n);
  snprintf(fn, sizeof fn, "%s_scan", t.fam);
  fz_call("gpuprims_%s(%s, %s, %s, %s, %s)", fn, t.h.what, in.what, out.what, fz_op_name(op),
          bad_mode ? "(unknown mode)" : tu_mode_name(mode));
  s = fz_done(t.group ? gpuprims_group_scan(GROUP(&t), CARR(&in), ARR(&out), op, mode)
                      : gpuprims_comm_scan(COMM(&t), ONE(&in), ONE(&out), op, mode),
              faults ? faults : FZ_OK);
  after_call(s, &t, &out);
  if (s == GPUPRIMS_STATUS_OK) {
    size_t m;
    unsigned char *got = joined(o, t.n, &m);
    fz_check_scan(fz.buf[b[0]].dt, op, mode, x, n, t.n, got, fn);
    free(got);
  }
  free(x);
}

/* The sorted shards (read back) against one context's radix sort of them all. */
static void check_sort_all(const mt_t *t, const int *k, const unsigned char *k0, const int *v, const unsigned char *v0,
                           size_t n, gpuprims_order order, const char *fn) {
  gpuprims_dtype kt = fz.buf[k[0]].dt, vt = v ? fz.buf[v[0]].dt : kt;
  gpuprims_buffer *kh = ref_upload(kt, k0, n), *vh = v ? ref_upload(vt, v0, n) : NULL;
  unsigned char *want_k = (unsigned char *)tu_xmalloc(n * tu_dtype_size(kt) + 1);
  unsigned char *want_v = (unsigned char *)tu_xmalloc(n * tu_dtype_size(vt) + 1), *got;
  size_t m, j;
  fz_call("gpuprims_radix_sort(ctx#%d, ref keys, %s, %s) (check: one context)", fz.ctx[fz_main_ctx()].id,
          vh ? "ref values" : "NULL", tu_order_name(order));
  fz_done(gpuprims_radix_sort(fz.ctx[fz_main_ctx()].h, kh, vh, order), FZ_OK);
  fz_call("gpuprims_buffer_read(ref keys, 0, dst, %zu) (check)", n);
  fz_done(gpuprims_buffer_read(kh, 0, want_k, n), FZ_OK);
  got = joined(k, t->n, &m);
  if ((j = tu_first_diff(got, want_k, tu_dtype_size(kt), n)) < n)
    fz_fail("%s %s of %zu x %s over %d ranks: key %zu differs from one context's radix sort", fn, tu_order_name(order), n,
            tu_dtype_name(kt), t->n, j);
  free(got);
  if (vh) {
    fz_call("gpuprims_buffer_read(ref values, 0, dst, %zu) (check)", n);
    fz_done(gpuprims_buffer_read(vh, 0, want_v, n), FZ_OK);
    got = joined(v, t->n, &m);
    if ((j = tu_first_diff(got, want_v, tu_dtype_size(vt), n)) < n)
      fz_fail("%s %s of %zu x %s over %d ranks: value %zu differs from one context's radix sort (not stable?)", fn,
              tu_order_name(order), n, tu_dtype_name(kt), t->n, j);
    free(got);
    ref_free(vh);
  }
  ref_free(kh);
  fz.checked_results++;
  free(want_k);
  free(want_v);
}

void fz_op_multi_sort(void) {
  mt_t t;
  mt_arg ka, va;
  int k[FZ_MAX_RANKS], v[FZ_MAX_RANKS], r, bad_order, with_v = fz_pct(60);
  gpuprims_order order = fz_pick_enum(2, 4, &bad_order);
  gpuprims_dtype vt = fz_rand_dtype()->id;
  unsigned faults;
  unsigned char *k0, *v0;
  size_t n;
  char fn[32];
  gpuprims_status s;
  if (!pick_target(&t) || !pick_shards(&t, k)) return;
  for (r = 0; r < t.n; r++) {
    v[r] = -1;
    if (!with_v || fz_pct(3)) continue;
    v[r] = fz_pct(5) ? k[r] : fz_pct(6) ? fz_pin(fz_pick_live_buf())
         : fz_pick_out(t.ctx[r], fz_pct(94) ? vt : fz_rand_dtype()->id, fz.buf[k[r]].len, &k[r], 1);
    if (v[r] < 0) return;
  }
  make_arg(&t, &ka, k, 4);
  make_arg(&t, &va, v, 4);
  faults = agree_fault(&t, &ka, 0) | agree_fault(&t, &va, 1) | (bad_order ? FZ_S(INVALID_ARGUMENT) : 0);
  for (r = 0; r < t.n; r++) faults |= fz_sort_faults(&t.h, t.ctx[r], &ka.a[r], k[r], &va.a[r], v[r]);
  k0 = joined(k, t.n, &n);
  v0 = all_live(&t, &va) ? joined(v, t.n, &n) : NULL;
  snprintf(fn, sizeof fn, "%s_radix_sort", t.fam);
  fz_call("gpuprims_%s(%s, %s, %s, %s)", fn, t.h.what, ka.what, va.what, bad_order ? "(unknown order)" : tu_order_name(order));
  s = fz_done(t.group ? gpuprims_group_radix_sort(GROUP(&t), ARR(&ka), ARR(&va), order)
                      : gpuprims_comm_radix_sort(COMM(&t), ONE(&ka), ONE(&va), order),
              faults ? faults : FZ_OK);
  after_call(s, &t, &ka);
  after_call(s, &t, &va);
  if (s == GPUPRIMS_STATUS_OK) check_sort_all(&t, k, k0, v0 ? v : NULL, v0, n, order, fn);
  free(k0);
  free(v0);
}

void fz_op_multi_select(void) {
  mt_t t;
  mt_arg in;
  int b[FZ_MAX_RANKS], no_out = fz_pct(5);
  unsigned char out[16], want[16], *x;
  unsigned faults;
  uint64_t k;
  size_t n, i, es;
  char fn[32];
  gpuprims_buffer *h;
  gpuprims_status s;
  if (!pick_target(&t) || !pick_shards(&t, b)) return;
  make_arg(&t, &in, b, 5);
  x = joined(b, t.n, &n);
  k = fz_pick_rank(n, 0);
  faults = entry_faults(&t, &in, 0) | agree_fault(&t, &in, 0) | (no_out ? FZ_S(NULL_ARGUMENT) : 0);
  if (all_live(&t, &in) && k >= n) faults |= FZ_S(INVALID_ARGUMENT);
  snprintf(fn, sizeof fn, "%s_select_kth", t.fam);
  memset(out, POISON, sizeof out);
  fz_call("gpuprims_%s(%s, %s, %llu, %s)", fn, t.h.what, in.what, (unsigned long long)k, no_out ? "NULL" : "&out");
  s = fz_done(t.group ? gpuprims_group_select_kth(GROUP(&t), CARR(&in), k, no_out ? NULL : out)
                      : gpuprims_comm_select_kth(COMM(&t), ONE(&in), k, no_out ? NULL : out),
              faults ? faults : FZ_OK);
  es = fz.buf[b[0]].es;
  for (i = s == GPUPRIMS_STATUS_OK ? es : 0; i < sizeof out; i++)
    if (out[i] != POISON) fz_fail("%s (%s) wrote out[%zu]", fn, tu_status_name(s), i);
  if (s == GPUPRIMS_STATUS_OK) {
    gpuprims_dtype dt = fz.buf[b[0]].dt;
    fz_check_rank(dt, x, n, (size_t)k, out, fn);
    h = ref_upload(dt, x, n);
    fz_call("gpuprims_select_kth(ctx#%d, ref, %llu, &out) (check: one context)", fz.ctx[fz_main_ctx()].id,
            (unsigned long long)k);
    fz_done(gpuprims_select_kth(fz.ctx[fz_main_ctx()].h, h, k, want), FZ_OK);
    ref_free(h);
    if (!fz_same_elem(dt, want, out, 1)) fz_fail("%s k=%llu of %zu: not one context's select_kth", fn, (unsigned long long)k, n);
  }
  free(x);
}

void fz_op_multi_topk(void) {
  mt_t t;
  mt_arg in, va, xa;
  int b[FZ_MAX_RANKS], v[FZ_MAX_RANKS], ix[FZ_MAX_RANKS], r, bad_order, with_ix = fz_pct(65), avoid[2];
  gpuprims_order order = fz_pick_enum(2, 4, &bad_order);
  unsigned faults;
  unsigned char *x;
  uint64_t k;
  size_t n;
  char fn[32];
  gpuprims_status s;
  if (!pick_target(&t) || !pick_shards(&t, b)) return;
  k = fz_pick_rank(total_of(b, t.n), 1);
  for (r = 0; r < t.n; r++) {
    avoid[0] = b[r];
    v[r] = fz_pct(5) ? b[r] : fz_pct(5) ? fz_pin(fz_pick_live_buf()) : fz_pick_out(t.ctx[r], fz.buf[b[r]].dt, (size_t)k, avoid, 1);
    if (v[r] < 0) return;
    avoid[1] = v[r];
    ix[r] = !with_ix || fz_pct(3) ? -1 : fz_pct(6) ? fz_pin(fz_pick_live_buf()) : fz_pick_out(t.ctx[r], GPUPRIMS_DTYPE_U64, (size_t)k, avoid, 2);
  }
  make_arg(&t, &in, b, 4);
  make_arg(&t, &va, v, 4);
  make_arg(&t, &xa, ix, 4);
  faults = agree_fault(&t, &in, 0) | (bad_order ? FZ_S(INVALID_ARGUMENT) : 0);
  for (r = 0; r < t.n; r++)
    faults |= fz_topk_faults(&t.h, t.ctx[r], &in.a[r], b[r], k, UINT64_MAX, &va.a[r], v[r], &xa.a[r], ix[r]);
  x = joined(b, t.n, &n);
  if (all_live(&t, &in) && k > n) faults |= FZ_S(INVALID_ARGUMENT); /* past the total */
  snprintf(fn, sizeof fn, "%s_topk", t.fam);
  fz_call("gpuprims_%s(%s, %s, %llu, %s, %s, %s)", fn, t.h.what, in.what, (unsigned long long)k,
          bad_order ? "(unknown order)" : tu_order_name(order), va.what, xa.what);
  s = fz_done(t.group ? gpuprims_group_topk(GROUP(&t), CARR(&in), k, order, ARR(&va), ARR(&xa))
                      : gpuprims_comm_topk(COMM(&t), ONE(&in), k, order, ONE(&va), ONE(&xa)),
              faults ? faults : FZ_OK);
  for (r = 0; r < t.n; r++) {
    if (s == GPUPRIMS_STATUS_OK && k > 0) {
      fz_check_topk(fz.buf[b[0]].dt, x, n, k, order, v[r], xa.a[r].cls == FZ_LIVE ? ix[r] : -1, fn);
    } else { /* a failure, or k = 0: nothing written */
      if (fz.buf[v[r]].live) fz_verify_buf(v[r], "after a top-k that writes nothing");
      if (ix[r] >= 0 && fz.buf[ix[r]].live) fz_verify_buf(ix[r], "after a top-k that writes nothing");
    }
  }
  free(x);
}
