/*
 * test_handles: handles that are destroyed, and pointers that are no handle of the kind a
 * parameter wants, passed to every function that takes a handle. Each must be
 * GPUPRIMS_STATUS_INVALID_ARGUMENT, with a last error that names the function and the
 * argument ("gpuprims_reduce: in is ...", "gpuprims_group_reduce: in[0] is ..." for an
 * entry of a group's array of buffers), and leave its outputs and every live handle
 * alone; destroying one must be a no-op. The library recognises them from the handle's
 * value alone, never reading memory a handle might point at, so CTest also runs this
 * program under valgrind (test_handles_valgrind) where valgrind is found: a read of freed
 * memory is an error there even when the status is right.
 *
 * The bad values, for each kind of parameter (context, buffer, Life grid, communicator,
 * group):
 *   a destroyed handle of that kind, and one whose slot a newer handle has taken since;
 *   live and destroyed handles of the other kinds; the address of a local int; a 1-byte
 *   heap block; a freed heap block; (void *)1; a large odd integer; all bits set.
 * Then threads use handles while another thread destroys them (OK or INVALID_ARGUMENT,
 * never a use of freed memory).
 *
 * The contexts: the host backend, and AUTO as well when AUTO gives another backend. The
 * live handles on each: buffers, a Life grid, a communicator of one rank on the context
 * (its id of the context's backend; left out, with a note, where CUDA has no NCCL), and
 * a group of one host "device" with buffers of its own context (gpuprims_group_context)
 * for its calls. Sizes are tiny: valgrind runs this in seconds.
 *
 * `test_handles --bench [calls]` instead times small calls (ns a call; see main).
 */
#include "test_util.h"

#define MAX_BAD 20

typedef struct {
  const char *what;
  void *p;
} bad_t;

typedef struct {
  bad_t v[MAX_BAD];
  int n;
} bad_set;

/* The buffers the calls take, all of one context. */
typedef struct {
  gpuprims_buffer *in;    /* I32 x 8, IN_VALUES */
  gpuprims_buffer *out;   /* I32 x 8, zeros */
  gpuprims_buffer *one;   /* I32 x 1, zero */
  gpuprims_buffer *top_v; /* I32 x 2 */
  gpuprims_buffer *top_i; /* U64 x 2 */
  gpuprims_buffer *keys;  /* I32 x 8, IN_VALUES */
  gpuprims_buffer *vals;  /* U32 x 8 */
} bufs_t;

/* The same buffers as the one-entry arrays (one buffer a device) a group's calls take. */
typedef struct {
  const gpuprims_buffer *in[1];
  gpuprims_buffer *out[1], *one[1], *top_v[1], *top_i[1], *keys[1], *vals[1];
} arrays_t;

/* Live handles whose positions the bad values take in turn, the others staying valid. */
typedef struct {
  gpuprims_context *ctx;
  bufs_t b;                 /* on ctx */
  gpuprims_buffer *offsets; /* U64 {0, 8}: one row, all of `in` */
  gpuprims_buffer *ks;      /* U64 {3} */
  gpuprims_life_grid *grid; /* 8 x 8, a blinker */
  gpuprims_comm *comm;      /* rank 0 of 1, on ctx; NULL where ctx's backend has no communicator */
  gpuprims_group *group;    /* one host device */
  gpuprims_context *gctx;   /* the group's context */
  bufs_t g;                 /* on gctx, for the group's calls */
  arrays_t ga;              /* g as arrays */
} env_t;

static const int32_t IN_VALUES[8] = {5, -3, 9, 0, 7, -8, 2, 4};
static const char *BLINKER = "x = 3, y = 1\n3o!\n";

static void add_bad(bad_set *s, const char *what, void *p) {
  TU_REQUIRE(s->n < MAX_BAD);
  s->v[s->n].what = what;
  s->v[s->n].p = p;
  s->n++;
}

/* The function's name: the call's text up to its '('. */
static void function_of(const char *call, char *name, size_t len) {
  size_t i = 0;
  while (call[i] && call[i] != '(' && call[i] != ' ' && i + 1 < len) {
    name[i] = call[i];
    i++;
  }
  name[i] = '\0';
}

/* Expects INVALID_ARGUMENT and a last error "<function>: <arg> ..." naming neither NULL. */
static void expect_bad_(gpuprims_status s, const char *what, const char *arg, const char *file, int line,
                        const char *call) {
  char fn[96], want[160], err[512];
  function_of(call, fn, sizeof fn);
  snprintf(want, sizeof want, "%s: %s ", fn, arg);
  tu_last_error_text(err, sizeof err);
  if (tu_check_(s == GPUPRIMS_STATUS_INVALID_ARGUMENT, file, line, "%s with %s as %s returned %s, expected %s",
                call, what, arg, tu_status_name(s), tu_status_name(GPUPRIMS_STATUS_INVALID_ARGUMENT))) {
    tu_check_(strncmp(err, want, strlen(want)) == 0 && strstr(err, "NULL") == NULL, file, line,
              "%s with %s as %s: the last error \"%s\" does not start with \"%s\"", call, what, arg, err, want);
  }
}
#define EXPECT_BAD(what, arg, call) expect_bad_((call), (what), (arg), __FILE__, __LINE__, #call)

/* ------------------------------------------------------------------------------------- */
/* The live handles                                                                        */
/* ------------------------------------------------------------------------------------- */

/* Rank 0 of a communicator of one, on ctx, with an id of ctx's backend. */
static gpuprims_status open_comm(gpuprims_context *ctx, gpuprims_comm **out) {
  uint8_t id[GPUPRIMS_COMM_ID_BYTES];
  gpuprims_status s = gpuprims_comm_id_create(tu_backend_of(ctx), id);
  return s != GPUPRIMS_STATUS_OK ? s : gpuprims_comm_create(ctx, id, 0, 1, out);
}

/* A group of one host device. */
static gpuprims_group *open_group(void) {
  const int32_t dev0 = 0;
  gpuprims_group *g = NULL;
  TU_REQUIRE_OK(gpuprims_group_create(GPUPRIMS_BACKEND_HOST, &dev0, 1, &g));
  return g;
}

static void bufs_open(bufs_t *b, gpuprims_context *ctx) {
  int32_t zeros[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  b->in = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, IN_VALUES, 8);
  b->out = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, zeros, 8);
  b->one = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, zeros, 1);
  b->top_v = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, zeros, 2);
  b->top_i = tu_buffer_create(ctx, GPUPRIMS_DTYPE_U64, 2);
  b->keys = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, IN_VALUES, 8);
  b->vals = tu_buffer_create(ctx, GPUPRIMS_DTYPE_U32, 8);
}

static arrays_t arrays_of(const bufs_t *b) {
  arrays_t a;
  a.in[0] = b->in;
  a.out[0] = b->out;
  a.one[0] = b->one;
  a.top_v[0] = b->top_v;
  a.top_i[0] = b->top_i;
  a.keys[0] = b->keys;
  a.vals[0] = b->vals;
  return a;
}

static void bufs_close(bufs_t *b) {
  gpuprims_buffer_destroy(b->in);
  gpuprims_buffer_destroy(b->out);
  gpuprims_buffer_destroy(b->one);
  gpuprims_buffer_destroy(b->top_v);
  gpuprims_buffer_destroy(b->top_i);
  gpuprims_buffer_destroy(b->keys);
  gpuprims_buffer_destroy(b->vals);
}

static void env_open(env_t *e, gpuprims_context *ctx) {
  uint64_t offsets[2] = {0, 8}, ks[1] = {3};
  gpuprims_status s;
  e->ctx = ctx;
  bufs_open(&e->b, ctx);
  e->offsets = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_U64, offsets, 2);
  e->ks = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_U64, ks, 1);
  e->grid = NULL;
  TU_REQUIRE_OK(gpuprims_life_create(ctx, 8, 8, GPUPRIMS_LIFE_DEAD, &e->grid));
  TU_REQUIRE_OK(gpuprims_life_load_rle(e->grid, BLINKER, 2, 3));
  e->comm = NULL;
  s = open_comm(ctx, &e->comm);
  if (s == GPUPRIMS_STATUS_UNSUPPORTED && tu_backend_of(ctx) == GPUPRIMS_BACKEND_CUDA) {
    char err[512];
    tu_last_error_text(err, sizeof err);
    printf("test_handles: no communicator on CUDA (%s): its calls are left out for this context\n", err);
    e->comm = NULL;
  } else {
    TU_REQUIRE_OK(s);
  }
  e->group = open_group();
  e->gctx = NULL;
  TU_REQUIRE_OK(gpuprims_group_context(e->group, 0, &e->gctx));
  bufs_open(&e->g, e->gctx);
  e->ga = arrays_of(&e->g);
}

static void env_close(env_t *e) {
  bufs_close(&e->b);
  bufs_close(&e->g);
  gpuprims_buffer_destroy(e->offsets);
  gpuprims_buffer_destroy(e->ks);
  gpuprims_life_destroy(e->grid);
  gpuprims_comm_destroy(e->comm);
  gpuprims_group_destroy(e->group);
  gpuprims_context_destroy(e->gctx);
}

/* The buffers still hold what they held (in and keys IN_VALUES, out and one zeros). */
static void bufs_check(const bufs_t *b, const char *which, const char *when) {
  int32_t got[8], zeros[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t n = 0;
  memset(got, 0x5A, sizeof got);
  TU_CHECKF(gpuprims_buffer_len(b->in, &n) == GPUPRIMS_STATUS_OK && n == 8, "%s: %s in's length is %zu", when, which, n);
  TU_CHECKF(gpuprims_buffer_read(b->in, 0, got, 8) == GPUPRIMS_STATUS_OK && memcmp(got, IN_VALUES, sizeof got) == 0,
            "%s: %s in changed", when, which);
  TU_CHECKF(gpuprims_buffer_read(b->keys, 0, got, 8) == GPUPRIMS_STATUS_OK && memcmp(got, IN_VALUES, sizeof got) == 0,
            "%s: %s keys changed (sorted?)", when, which);
  TU_CHECKF(gpuprims_buffer_read(b->out, 0, got, 8) == GPUPRIMS_STATUS_OK && memcmp(got, zeros, sizeof got) == 0,
            "%s: %s out changed (scanned into?)", when, which);
  TU_CHECKF(gpuprims_buffer_read(b->one, 0, got, 1) == GPUPRIMS_STATUS_OK && got[0] == 0, "%s: %s one changed", when,
            which);
}

/* The live handles still hold what they held, and calls on them still work. */
static void env_check(env_t *e, const char *when) {
  uint64_t v = 0;
  size_t n = 0;
  uint32_t rank = 7, nranks = 7;
  gpuprims_backend b = 0;
  TU_CHECKF(gpuprims_context_backend(e->ctx, &b) == GPUPRIMS_STATUS_OK, "%s: the context fails", when);
  bufs_check(&e->b, "the context's", when);
  bufs_check(&e->g, "the group's", when);
  TU_CHECKF(gpuprims_life_population(e->grid, &v) == GPUPRIMS_STATUS_OK && v == 3, "%s: the grid's population is %llu",
            when, (unsigned long long)v);
  TU_CHECKF(gpuprims_life_generation(e->grid, &v) == GPUPRIMS_STATUS_OK && v == 0, "%s: the grid stepped", when);
  if (e->comm)
    TU_CHECKF(gpuprims_comm_rank(e->comm, &rank, &nranks) == GPUPRIMS_STATUS_OK && rank == 0 && nranks == 1,
              "%s: the comm fails, or is rank %u of %u", when, (unsigned)rank, (unsigned)nranks);
  TU_CHECKF(gpuprims_group_size(e->group, &n) == GPUPRIMS_STATUS_OK && n == 1, "%s: the group fails, or has %zu devices",
            when, n);
  TU_CHECKF(gpuprims_context_backend(e->gctx, &b) == GPUPRIMS_STATUS_OK && b == GPUPRIMS_BACKEND_HOST,
            "%s: the group's context fails", when);
}

/* ------------------------------------------------------------------------------------- */
/* Every function, every handle parameter, every bad value                                */
/* ------------------------------------------------------------------------------------- */

static void bad_contexts(env_t *e, const bad_set *s) {
  int i;
  for (i = 0; i < s->n; i++) {
    gpuprims_context *x = (gpuprims_context *)s->v[i].p;
    const char *w = s->v[i].what;
    gpuprims_backend backend = 4242;
    char name[64];
    size_t needed = 4242;
    gpuprims_buffer *bo = TU_SENTINEL_PTR(gpuprims_buffer);
    gpuprims_life_grid *go = TU_SENTINEL_PTR(gpuprims_life_grid);
    gpuprims_comm *co = TU_SENTINEL_PTR(gpuprims_comm);
    int32_t value = 4242, host_cells[4] = {0, 0, 0, 0};
    uint8_t id[GPUPRIMS_COMM_ID_BYTES];
    strcpy(name, "untouched");
    TU_REQUIRE_OK(gpuprims_comm_id_create(GPUPRIMS_BACKEND_HOST, id));
    EXPECT_BAD(w, "ctx", gpuprims_context_backend(x, &backend));
    EXPECT_BAD(w, "ctx", gpuprims_context_device_name(x, name, sizeof name, &needed));
    EXPECT_BAD(w, "ctx", gpuprims_context_set_stream(x, NULL));
    EXPECT_BAD(w, "ctx", gpuprims_context_synchronize(x));
    EXPECT_BAD(w, "ctx", gpuprims_context_precompile(x));
    EXPECT_BAD(w, "ctx", gpuprims_buffer_create(x, GPUPRIMS_DTYPE_I32, 4, &bo));
    EXPECT_BAD(w, "ctx", gpuprims_buffer_from_host(x, GPUPRIMS_DTYPE_I32, IN_VALUES, 4, &bo));
    EXPECT_BAD(w, "ctx", gpuprims_buffer_wrap_device(x, GPUPRIMS_DTYPE_I32, (void *)(uintptr_t)0x10000, 4, &bo));
    EXPECT_BAD(w, "ctx", gpuprims_buffer_wrap_host(x, GPUPRIMS_DTYPE_I32, host_cells, 4, &bo));
    EXPECT_BAD(w, "ctx", gpuprims_life_create(x, 4, 4, GPUPRIMS_LIFE_TORUS, &go));
    EXPECT_BAD(w, "ctx", gpuprims_reduce(x, e->b.in, GPUPRIMS_OP_SUM, &value));
    EXPECT_BAD(w, "ctx", gpuprims_reduce_to_buffer(x, e->b.in, GPUPRIMS_OP_SUM, e->b.one));
    EXPECT_BAD(w, "ctx", gpuprims_scan(x, e->b.in, e->b.out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
    EXPECT_BAD(w, "ctx", gpuprims_select_kth(x, e->b.in, 0, &value));
    EXPECT_BAD(w, "ctx", gpuprims_select_kth_to_buffer(x, e->b.in, 0, e->b.one));
    EXPECT_BAD(w, "ctx", gpuprims_topk(x, e->b.in, 2, GPUPRIMS_ORDER_ASCENDING, e->b.top_v, e->b.top_i));
    EXPECT_BAD(w, "ctx", gpuprims_segmented_select(x, e->b.in, e->offsets, e->ks, e->b.one));
    EXPECT_BAD(w, "ctx", gpuprims_segmented_topk(x, e->b.in, e->offsets, 0, 0, e->ks,
                                                 GPUPRIMS_ORDER_ASCENDING, e->b.top_v, e->b.top_i));
    EXPECT_BAD(w, "ctx", gpuprims_radix_sort(x, e->b.keys, e->b.vals, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "ctx", gpuprims_quicksort(x, e->b.keys, e->b.vals, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "ctx", gpuprims_comm_create(x, id, 0, 1, &co));
    gpuprims_context_destroy(x); /* a no-op */
    TU_CHECKF(backend == 4242 && needed == 4242 && strcmp(name, "untouched") == 0 && value == 4242 &&
                  bo == TU_SENTINEL_PTR(gpuprims_buffer) && go == TU_SENTINEL_PTR(gpuprims_life_grid) &&
                  co == TU_SENTINEL_PTR(gpuprims_comm),
              "with %s as ctx: an output was written", w);
  }
}

static void bad_buffers(env_t *e, const bad_set *s) {
  int i;
  for (i = 0; i < s->n; i++) {
    gpuprims_buffer *x = (gpuprims_buffer *)s->v[i].p;
    const char *w = s->v[i].what;
    gpuprims_context *c = e->ctx;
    gpuprims_comm *m = e->comm;
    gpuprims_group *g = e->group;
    const arrays_t *ga = &e->ga;
    const gpuprims_buffer *xc[1];
    gpuprims_buffer *xm[1];
    size_t len = 4242;
    gpuprims_dtype dtype = 4242;
    void *dptr = TU_SENTINEL_PTR(void);
    int32_t value = 4242, host[2] = {4242, 4242};
    EXPECT_BAD(w, "buf", gpuprims_buffer_len(x, &len));
    EXPECT_BAD(w, "buf", gpuprims_buffer_dtype(x, &dtype));
    EXPECT_BAD(w, "buf", gpuprims_buffer_device_ptr(x, &dptr));
    EXPECT_BAD(w, "buf", gpuprims_buffer_write(x, 0, IN_VALUES, 1));
    EXPECT_BAD(w, "buf", gpuprims_buffer_read(x, 0, host, 1));
    EXPECT_BAD(w, "dst", gpuprims_buffer_copy(x, e->b.in));
    EXPECT_BAD(w, "src", gpuprims_buffer_copy(e->b.out, x));
    EXPECT_BAD(w, "in", gpuprims_reduce(c, x, GPUPRIMS_OP_SUM, &value));
    EXPECT_BAD(w, "in", gpuprims_reduce_to_buffer(c, x, GPUPRIMS_OP_SUM, e->b.one));
    EXPECT_BAD(w, "out", gpuprims_reduce_to_buffer(c, e->b.in, GPUPRIMS_OP_SUM, x));
    EXPECT_BAD(w, "in", gpuprims_scan(c, x, e->b.out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
    EXPECT_BAD(w, "out", gpuprims_scan(c, e->b.in, x, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
    EXPECT_BAD(w, "in", gpuprims_select_kth(c, x, 0, &value));
    EXPECT_BAD(w, "in", gpuprims_select_kth_to_buffer(c, x, 0, e->b.one));
    EXPECT_BAD(w, "out", gpuprims_select_kth_to_buffer(c, e->b.in, 0, x));
    EXPECT_BAD(w, "in", gpuprims_topk(c, x, 2, GPUPRIMS_ORDER_ASCENDING, e->b.top_v, e->b.top_i));
    EXPECT_BAD(w, "out_values", gpuprims_topk(c, e->b.in, 2, GPUPRIMS_ORDER_ASCENDING, x, e->b.top_i));
    EXPECT_BAD(w, "out_indices", gpuprims_topk(c, e->b.in, 2, GPUPRIMS_ORDER_ASCENDING, e->b.top_v, x));
    EXPECT_BAD(w, "values", gpuprims_segmented_select(c, x, e->offsets, e->ks, e->b.one));
    EXPECT_BAD(w, "offsets", gpuprims_segmented_select(c, e->b.in, x, e->ks, e->b.one));
    EXPECT_BAD(w, "ks", gpuprims_segmented_select(c, e->b.in, e->offsets, x, e->b.one));
    EXPECT_BAD(w, "out", gpuprims_segmented_select(c, e->b.in, e->offsets, e->ks, x));
    EXPECT_BAD(w, "values", gpuprims_segmented_topk(c, x, e->offsets, 0, 0, e->ks,
                                                    GPUPRIMS_ORDER_ASCENDING, e->b.top_v, e->b.top_i));
    EXPECT_BAD(w, "offsets", gpuprims_segmented_topk(c, e->b.in, x, 0, 0, e->ks,
                                                     GPUPRIMS_ORDER_ASCENDING, e->b.top_v, e->b.top_i));
    EXPECT_BAD(w, "ks", gpuprims_segmented_topk(c, e->b.in, e->offsets, 0, 0, x,
                                                GPUPRIMS_ORDER_ASCENDING, e->b.top_v, e->b.top_i));
    EXPECT_BAD(w, "out_values", gpuprims_segmented_topk(c, e->b.in, NULL, 4, 2, NULL,
                                                        GPUPRIMS_ORDER_ASCENDING, x, e->b.top_i));
    EXPECT_BAD(w, "out_indices", gpuprims_segmented_topk(c, e->b.in, NULL, 4, 2, NULL,
                                                         GPUPRIMS_ORDER_ASCENDING, e->b.top_v, x));
    EXPECT_BAD(w, "keys", gpuprims_radix_sort(c, x, e->b.vals, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "values", gpuprims_radix_sort(c, e->b.keys, x, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "keys", gpuprims_quicksort(c, x, e->b.vals, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "values", gpuprims_quicksort(c, e->b.keys, x, GPUPRIMS_ORDER_ASCENDING));
    if (m) {
      EXPECT_BAD(w, "in", gpuprims_comm_reduce(m, x, GPUPRIMS_OP_SUM, &value));
      EXPECT_BAD(w, "in", gpuprims_comm_reduce_to_buffer(m, x, GPUPRIMS_OP_SUM, e->b.one));
      EXPECT_BAD(w, "out", gpuprims_comm_reduce_to_buffer(m, e->b.in, GPUPRIMS_OP_SUM, x));
      EXPECT_BAD(w, "in", gpuprims_comm_scan(m, x, e->b.out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
      EXPECT_BAD(w, "out", gpuprims_comm_scan(m, e->b.in, x, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
      EXPECT_BAD(w, "keys", gpuprims_comm_radix_sort(m, x, e->b.vals, GPUPRIMS_ORDER_ASCENDING));
      EXPECT_BAD(w, "values", gpuprims_comm_radix_sort(m, e->b.keys, x, GPUPRIMS_ORDER_ASCENDING));
      EXPECT_BAD(w, "in", gpuprims_comm_select_kth(m, x, 0, &value));
      EXPECT_BAD(w, "in", gpuprims_comm_topk(m, x, 2, GPUPRIMS_ORDER_ASCENDING, e->b.top_v, e->b.top_i));
      EXPECT_BAD(w, "out_values", gpuprims_comm_topk(m, e->b.in, 2, GPUPRIMS_ORDER_ASCENDING, x, e->b.top_i));
      EXPECT_BAD(w, "out_indices", gpuprims_comm_topk(m, e->b.in, 2, GPUPRIMS_ORDER_ASCENDING, e->b.top_v, x));
    }
    /* the group's calls, with x as the one device's entry of each array in turn */
    xc[0] = x;
    xm[0] = x;
    EXPECT_BAD(w, "in[0]", gpuprims_group_reduce(g, xc, GPUPRIMS_OP_SUM, &value));
    EXPECT_BAD(w, "in[0]", gpuprims_group_reduce_to_buffer(g, xc, GPUPRIMS_OP_SUM, ga->one));
    EXPECT_BAD(w, "out[0]", gpuprims_group_reduce_to_buffer(g, ga->in, GPUPRIMS_OP_SUM, xm));
    EXPECT_BAD(w, "in[0]", gpuprims_group_scan(g, xc, ga->out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
    EXPECT_BAD(w, "out[0]", gpuprims_group_scan(g, ga->in, xm, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
    EXPECT_BAD(w, "keys[0]", gpuprims_group_radix_sort(g, xm, ga->vals, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "values[0]", gpuprims_group_radix_sort(g, ga->keys, xm, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "in[0]", gpuprims_group_select_kth(g, xc, 0, &value));
    EXPECT_BAD(w, "in[0]", gpuprims_group_topk(g, xc, 2, GPUPRIMS_ORDER_ASCENDING, ga->top_v, ga->top_i));
    EXPECT_BAD(w, "out_values[0]", gpuprims_group_topk(g, ga->in, 2, GPUPRIMS_ORDER_ASCENDING, xm, ga->top_i));
    EXPECT_BAD(w, "out_indices[0]", gpuprims_group_topk(g, ga->in, 2, GPUPRIMS_ORDER_ASCENDING, ga->top_v, xm));
    gpuprims_buffer_destroy(x); /* a no-op */
    TU_CHECKF(len == 4242 && dtype == 4242 && dptr == TU_SENTINEL_PTR(void) && value == 4242 && host[0] == 4242 &&
                  host[1] == 4242,
              "with %s as a buffer: an output was written", w);
  }
}

static void bad_grids(env_t *e, const bad_set *s) {
  int i;
  (void)e;
  for (i = 0; i < s->n; i++) {
    gpuprims_life_grid *x = (gpuprims_life_grid *)s->v[i].p;
    const char *w = s->v[i].what;
    unsigned char cells[64];
    char text[64];
    size_t needed = 4242;
    uint64_t v = 4242;
    memset(cells, 0xA5, sizeof cells);
    strcpy(text, "untouched");
    EXPECT_BAD(w, "g", gpuprims_life_set_rule(x, "B36/S23"));
    EXPECT_BAD(w, "g", gpuprims_life_get_rule(x, text, sizeof text, &needed));
    EXPECT_BAD(w, "g", gpuprims_life_write_cells(x, cells));
    EXPECT_BAD(w, "g", gpuprims_life_read_cells(x, cells));
    EXPECT_BAD(w, "g", gpuprims_life_load_rle(x, BLINKER, 0, 0));
    EXPECT_BAD(w, "g", gpuprims_life_save_rle(x, text, sizeof text, &needed));
    EXPECT_BAD(w, "g", gpuprims_life_step(x, 1));
    EXPECT_BAD(w, "g", gpuprims_life_population(x, &v));
    EXPECT_BAD(w, "g", gpuprims_life_generation(x, &v));
    gpuprims_life_destroy(x); /* a no-op */
    TU_CHECKF(needed == 4242 && v == 4242 && strcmp(text, "untouched") == 0 && cells[0] == 0xA5 && cells[63] == 0xA5,
              "with %s as a grid: an output was written", w);
  }
}

static void bad_comms(env_t *e, const bad_set *s) {
  int i;
  for (i = 0; i < s->n; i++) {
    gpuprims_comm *x = (gpuprims_comm *)s->v[i].p;
    const char *w = s->v[i].what;
    const bufs_t *b = &e->b;
    uint32_t rank = 4242, nranks = 4242;
    int32_t value = 4242;
    EXPECT_BAD(w, "comm", gpuprims_comm_rank(x, &rank, &nranks));
    EXPECT_BAD(w, "comm", gpuprims_comm_reduce(x, b->in, GPUPRIMS_OP_SUM, &value));
    EXPECT_BAD(w, "comm", gpuprims_comm_reduce_to_buffer(x, b->in, GPUPRIMS_OP_SUM, b->one));
    EXPECT_BAD(w, "comm", gpuprims_comm_scan(x, b->in, b->out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
    EXPECT_BAD(w, "comm", gpuprims_comm_radix_sort(x, b->keys, b->vals, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "comm", gpuprims_comm_select_kth(x, b->in, 0, &value));
    EXPECT_BAD(w, "comm", gpuprims_comm_topk(x, b->in, 2, GPUPRIMS_ORDER_ASCENDING, b->top_v, b->top_i));
    gpuprims_comm_destroy(x); /* a no-op */
    TU_CHECKF(rank == 4242 && nranks == 4242 && value == 4242, "with %s as a comm: an output was written", w);
  }
}

static void bad_groups(env_t *e, const bad_set *s) {
  int i;
  for (i = 0; i < s->n; i++) {
    gpuprims_group *x = (gpuprims_group *)s->v[i].p;
    const char *w = s->v[i].what;
    const arrays_t *a = &e->ga;
    size_t size = 4242;
    gpuprims_context *co = TU_SENTINEL_PTR(gpuprims_context);
    int32_t value = 4242;
    EXPECT_BAD(w, "group", gpuprims_group_size(x, &size));
    EXPECT_BAD(w, "group", gpuprims_group_context(x, 0, &co));
    EXPECT_BAD(w, "group", gpuprims_group_reduce(x, a->in, GPUPRIMS_OP_SUM, &value));
    EXPECT_BAD(w, "group", gpuprims_group_reduce_to_buffer(x, a->in, GPUPRIMS_OP_SUM, a->one));
    EXPECT_BAD(w, "group", gpuprims_group_scan(x, a->in, a->out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
    EXPECT_BAD(w, "group", gpuprims_group_radix_sort(x, a->keys, a->vals, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "group", gpuprims_group_select_kth(x, a->in, 0, &value));
    EXPECT_BAD(w, "group", gpuprims_group_topk(x, a->in, 2, GPUPRIMS_ORDER_ASCENDING, a->top_v, a->top_i));
    gpuprims_group_destroy(x); /* a no-op */
    TU_CHECKF(size == 4242 && co == TU_SENTINEL_PTR(gpuprims_context) && value == 4242,
              "with %s as a group: an output was written", w);
  }
}

/* The address of a heap block already freed (kept in a volatile, so that the compiler
   does not take passing the address on for a use after free: it is never read). */
static void *freed_block(void) {
  void *p = tu_xmalloc(16);
  volatile uintptr_t addr = (uintptr_t)p;
  free(p);
  return (void *)addr;
}

typedef void (*bad_fn)(env_t *, const bad_set *);

static const bad_fn BAD_FNS[TU_KINDS] = {bad_contexts, bad_buffers, bad_grids, bad_comms, bad_groups};
static const char *const KIND_NAME[TU_KINDS] = {"context", "buffer", "grid", "comm", "group"};
static const char *const LIVE_WHAT[TU_KINDS] = {"a live context", "a live buffer", "a live grid", "a live comm",
                                               "a live group"};
static const char *const DEAD_WHAT[TU_KINDS] = {"a destroyed context", "a destroyed buffer", "a destroyed grid",
                                               "a destroyed comm", "a destroyed group"};
static const char *const STALE_WHAT[TU_KINDS] = {
    "a destroyed context whose successor lives", "a destroyed buffer whose successor lives",
    "a destroyed grid whose successor lives", "a destroyed comm whose successor lives",
    "a destroyed group whose successor lives"};

/* A fresh handle of kind k, on ctx (a context, a comm: of ctx's backend). */
static void *make_handle(int k, gpuprims_context *ctx) {
  gpuprims_context *c = NULL;
  gpuprims_life_grid *g = NULL;
  gpuprims_comm *m = NULL;
  switch (k) {
    case TU_KCTX:
      TU_REQUIRE_OK(gpuprims_context_create(tu_backend_of(ctx), 0, &c));
      return c;
    case TU_KBUF:
      return tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, IN_VALUES, 8);
    case TU_KGRID:
      TU_REQUIRE_OK(gpuprims_life_create(ctx, 4, 4, GPUPRIMS_LIFE_TORUS, &g));
      return g;
    case TU_KCOMM:
      TU_REQUIRE_OK(open_comm(ctx, &m));
      return m;
    default:
      return open_group();
  }
}

/* A handle that make_handle made is as it was made. */
static void check_fresh(int k, void *h, gpuprims_backend backend) {
  size_t n = 0;
  uint64_t pop = 1;
  gpuprims_backend b = 0;
  uint32_t rank = 7, nranks = 7;
  switch (k) {
    case TU_KCTX:
      if (TU_EXPECT_OK(gpuprims_context_backend((gpuprims_context *)h, &b))) TU_CHECK(b == backend);
      break;
    case TU_KBUF:
      if (TU_EXPECT_OK(gpuprims_buffer_len((gpuprims_buffer *)h, &n))) TU_CHECK(n == 8);
      break;
    case TU_KGRID:
      if (TU_EXPECT_OK(gpuprims_life_population((gpuprims_life_grid *)h, &pop))) TU_CHECK(pop == 0);
      break;
    case TU_KCOMM:
      if (TU_EXPECT_OK(gpuprims_comm_rank((gpuprims_comm *)h, &rank, &nranks))) TU_CHECK(rank == 0 && nranks == 1);
      break;
    default:
      if (TU_EXPECT_OK(gpuprims_group_size((gpuprims_group *)h, &n))) TU_CHECK(n == 1);
      break;
  }
}

/*
 * Destroyed and foreign values of every kind against every function, with `ctx` (its
 * backend) for the live handles.
 */
static void run_all(gpuprims_context *ctx, const char *label) {
  env_t e;
  void *live[TU_KINDS], *dead[TU_KINDS], *stale[TU_KINDS], *newer[TU_KINDS];
  gpuprims_backend backend = tu_backend_of(ctx);
  bad_set common, sets[TU_KINDS];
  int local = 42;
  unsigned char *tiny = (unsigned char *)tu_xmalloc(1);
  void *freed = freed_block();
  char before[256], after[256], when[64];
  int i, k, o;

  printf("test_handles: %s\n", label);
  fflush(stdout);
  env_open(&e, ctx);
  live[TU_KCTX] = ctx;
  live[TU_KBUF] = e.b.in;
  live[TU_KGRID] = e.grid;
  live[TU_KCOMM] = e.comm;
  live[TU_KGROUP] = e.group;

  /* Destroyed handles of each kind; and stale ones: destroyed, then a newer handle of the
     same kind made (which may reuse what the stale one named). None of a kind that ctx
     has no live handle of (a comm on CUDA without NCCL). */
  for (k = 0; k < TU_KINDS; k++) {
    dead[k] = stale[k] = newer[k] = NULL;
    if (!live[k]) continue;
    dead[k] = make_handle(k, ctx);
    tu_destroy_as(k, dead[k]);
    stale[k] = make_handle(k, ctx);
    tu_destroy_as(k, stale[k]);
    newer[k] = make_handle(k, ctx);
    TU_CHECK(newer[k] != stale[k] && newer[k] != dead[k]);
  }

  common.n = 0;
  add_bad(&common, "the address of a local int", (void *)&local);
  add_bad(&common, "a 1-byte heap block", (void *)tiny);
  add_bad(&common, "a freed heap block", freed);
  add_bad(&common, "(void *)1", (void *)(uintptr_t)1);
  add_bad(&common, "a large odd integer", (void *)(uintptr_t)UINT64_C(0x9E3779B97F4A7C15));
  add_bad(&common, "all bits set", (void *)(uintptr_t)UINTPTR_MAX);

  /* Each kind's set: the common values, its own destroyed and stale handles, and live and
     destroyed handles of every other kind. */
  for (k = 0; k < TU_KINDS; k++) {
    sets[k] = common;
    if (live[k]) {
      add_bad(&sets[k], DEAD_WHAT[k], dead[k]);
      add_bad(&sets[k], STALE_WHAT[k], stale[k]);
    }
    for (o = 0; o < TU_KINDS; o++) {
      if (o == k || !live[o]) continue;
      add_bad(&sets[k], LIVE_WHAT[o], live[o]);
      add_bad(&sets[k], DEAD_WHAT[o], dead[o]);
    }
  }

  for (k = 0; k < TU_KINDS; k++) {
    BAD_FNS[k](&e, &sets[k]);
    snprintf(when, sizeof when, "after bad %ss", KIND_NAME[k]);
    env_check(&e, when);
  }

  /* Destroying them again (each as the kind it is bad for: live handles of other kinds
     among them) is a no-op: it neither fails (the last error stays what it was) nor
     takes a live handle with it. */
  TU_EXPECT_STATUS(gpuprims_buffer_len((gpuprims_buffer *)dead[TU_KBUF], NULL), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  tu_last_error_text(before, sizeof before);
  for (k = 0; k < TU_KINDS; k++) {
    for (i = 0; i < sets[k].n; i++) tu_destroy_as(k, sets[k].v[i].p);
    tu_destroy_as(k, NULL);
  }
  tu_last_error_text(after, sizeof after);
  TU_CHECKF(strcmp(before, after) == 0, "a no-op destroy changed the last error from \"%s\" to \"%s\"", before, after);
  env_check(&e, "after destroying bad handles");

  /* The successors of the stale handles were never touched. */
  for (k = 0; k < TU_KINDS; k++)
    if (newer[k]) check_fresh(k, newer[k], backend);

  /* NULL stays NULL_ARGUMENT. */
  TU_EXPECT_STATUS(gpuprims_buffer_len(NULL, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_reduce(ctx, NULL, GPUPRIMS_OP_SUM, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_step(NULL, 1), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_context_synchronize(NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_comm_rank(NULL, NULL, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_group_size(NULL, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);

  for (k = 0; k < TU_KINDS; k++)
    if (newer[k]) tu_destroy_as(k, newer[k]);
  env_close(&e);
  free(tiny);
}

/* ------------------------------------------------------------------------------------- */
/* Threads using handles that another thread destroys                                      */
/* ------------------------------------------------------------------------------------- */

#define RACE_HANDLES 48
#define RACE_WORKERS 2
#define RACE_PASSES 4

typedef struct {
  gpuprims_context *ctx;
  gpuprims_buffer *bufs[RACE_HANDLES];
  gpuprims_context *ctxs[RACE_HANDLES];
  gpuprims_comm *comms[RACE_HANDLES]; /* on ctx (NULL unless it is the host's) */
  gpuprims_group *groups[RACE_HANDLES];
  pthread_barrier_t start;
} race_t;

static void *race_worker(void *arg) {
  race_t *r = (race_t *)arg;
  int pass, i;
  pthread_barrier_wait(&r->start);
  for (pass = 0; pass < RACE_PASSES; pass++) {
    for (i = 0; i < RACE_HANDLES; i++) {
      size_t n = 0;
      int32_t sum = 0;
      gpuprims_backend b = 0;
      gpuprims_buffer *made = NULL;
      gpuprims_status s = gpuprims_buffer_len(r->bufs[i], &n);
      TU_CHECKF(s == GPUPRIMS_STATUS_INVALID_ARGUMENT || (s == GPUPRIMS_STATUS_OK && n == 4),
                "race: buffer_len gave %s, n = %zu", tu_status_name(s), n);
      s = gpuprims_reduce(r->ctx, r->bufs[i], GPUPRIMS_OP_SUM, &sum);
      TU_CHECKF(s == GPUPRIMS_STATUS_INVALID_ARGUMENT || (s == GPUPRIMS_STATUS_OK && sum == 4 * i),
                "race: reduce gave %s, sum = %d", tu_status_name(s), (int)sum);
      s = gpuprims_context_backend(r->ctxs[i], &b);
      TU_CHECKF(s == GPUPRIMS_STATUS_INVALID_ARGUMENT || s == GPUPRIMS_STATUS_OK, "race: context_backend gave %s",
                tu_status_name(s));
      s = gpuprims_buffer_create(r->ctxs[i], GPUPRIMS_DTYPE_U8, 3, &made);
      TU_CHECKF(s == GPUPRIMS_STATUS_INVALID_ARGUMENT || s == GPUPRIMS_STATUS_OK, "race: buffer_create gave %s",
                tu_status_name(s));
      if (s == GPUPRIMS_STATUS_OK) gpuprims_buffer_destroy(made);
      if (r->comms[i]) {
        uint32_t rank = 7, nranks = 7;
        s = gpuprims_comm_rank(r->comms[i], &rank, &nranks);
        TU_CHECKF(s == GPUPRIMS_STATUS_INVALID_ARGUMENT || (s == GPUPRIMS_STATUS_OK && rank == 0 && nranks == 1),
                  "race: comm_rank gave %s, rank %u of %u", tu_status_name(s), (unsigned)rank, (unsigned)nranks);
        s = gpuprims_comm_reduce(r->comms[i], r->bufs[i], GPUPRIMS_OP_SUM, &sum);
        TU_CHECKF(s == GPUPRIMS_STATUS_INVALID_ARGUMENT || (s == GPUPRIMS_STATUS_OK && sum == 4 * i),
                  "race: comm_reduce gave %s, sum = %d", tu_status_name(s), (int)sum);
      }
      s = gpuprims_group_size(r->groups[i], &n);
      TU_CHECKF(s == GPUPRIMS_STATUS_INVALID_ARGUMENT || (s == GPUPRIMS_STATUS_OK && n == 1),
                "race: group_size gave %s, n = %zu", tu_status_name(s), n);
    }
  }
  return NULL;
}

static void race(gpuprims_context *ctx) {
  race_t r;
  pthread_t th[RACE_WORKERS];
  int i;
  r.ctx = ctx;
  for (i = 0; i < RACE_HANDLES; i++) {
    int32_t v[4] = {i, i, i, i};
    r.bufs[i] = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, v, 4);
    r.ctxs[i] = NULL;
    /* host contexts: what is raced here is the handle, not the backend */
    TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &r.ctxs[i]));
    r.comms[i] = NULL;
    if (tu_backend_of(ctx) == GPUPRIMS_BACKEND_HOST) TU_REQUIRE_OK(open_comm(ctx, &r.comms[i]));
    r.groups[i] = open_group();
  }
  TU_REQUIRE(pthread_barrier_init(&r.start, NULL, RACE_WORKERS + 1) == 0);
  for (i = 0; i < RACE_WORKERS; i++) TU_REQUIRE(pthread_create(&th[i], NULL, race_worker, &r) == 0);
  pthread_barrier_wait(&r.start);
  for (i = 0; i < RACE_HANDLES; i++) {
    gpuprims_buffer_destroy(r.bufs[i]);
    gpuprims_context_destroy(r.ctxs[i]);
    gpuprims_comm_destroy(r.comms[i]);
    gpuprims_group_destroy(r.groups[i]);
  }
  for (i = 0; i < RACE_WORKERS; i++) TU_REQUIRE(pthread_join(th[i], NULL) == 0);
  pthread_barrier_destroy(&r.start);
  /* All destroyed now, whatever the threads saw. */
  for (i = 0; i < RACE_HANDLES; i++) {
    size_t n = 0;
    uint32_t rank = 0, nranks = 0;
    TU_EXPECT_STATUS(gpuprims_buffer_len(r.bufs[i], &n), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    if (r.comms[i]) TU_EXPECT_STATUS(gpuprims_comm_rank(r.comms[i], &rank, &nranks), GPUPRIMS_STATUS_INVALID_ARGUMENT);
    TU_EXPECT_STATUS(gpuprims_group_size(r.groups[i], &n), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  }
}

/* ------------------------------------------------------------------------------------- */
/* --bench: what a small call costs                                                        */
/* ------------------------------------------------------------------------------------- */

#define BENCH_TRIALS 7
#define BENCH_THREADS 2

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct {
  int what; /* 0: buffer_len, 1: reduce of 16 elements */
  gpuprims_context *ctx;
  gpuprims_buffer *buf;
  long calls;
  pthread_barrier_t *barrier;
  double ns;
  int failed;
} bench_job;

static void *bench_run(void *arg) {
  bench_job *j = (bench_job *)arg;
  long i;
  double t0;
  size_t n = 0;
  int32_t sum = 0;
  if (j->barrier) pthread_barrier_wait(j->barrier);
  t0 = now_ns();
  if (j->what == 0) {
    for (i = 0; i < j->calls; i++) j->failed |= gpuprims_buffer_len(j->buf, &n) != GPUPRIMS_STATUS_OK;
  } else {
    for (i = 0; i < j->calls; i++) j->failed |= gpuprims_reduce(j->ctx, j->buf, GPUPRIMS_OP_SUM, &sum) != 0;
  }
  j->ns = (now_ns() - t0) / (double)j->calls;
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* ns a call, the median and the least of BENCH_TRIALS runs of `calls` calls on each of
   `threads` threads (thread k on bufs[k]; the slowest thread counts). */
static void bench_one(const char *label, int what, gpuprims_context *ctx, gpuprims_buffer *const *bufs, long calls,
                      int threads) {
  double trial[BENCH_TRIALS];
  int t, k;
  for (t = 0; t < BENCH_TRIALS; t++) {
    bench_job jobs[BENCH_THREADS];
    pthread_t th[BENCH_THREADS];
    pthread_barrier_t barrier;
    double worst = 0;
    if (threads > 1) TU_REQUIRE(pthread_barrier_init(&barrier, NULL, (unsigned)threads) == 0);
    for (k = 0; k < threads; k++) {
      jobs[k].what = what;
      jobs[k].ctx = ctx;
      jobs[k].buf = bufs[k];
      jobs[k].calls = calls;
      jobs[k].barrier = threads > 1 ? &barrier : NULL;
      jobs[k].failed = 0;
      if (threads > 1)
        TU_REQUIRE(pthread_create(&th[k], NULL, bench_run, &jobs[k]) == 0);
      else
        bench_run(&jobs[k]);
    }
    for (k = 0; k < threads; k++) {
      if (threads > 1) TU_REQUIRE(pthread_join(th[k], NULL) == 0);
      TU_CHECK(!jobs[k].failed);
      if (jobs[k].ns > worst) worst = jobs[k].ns;
    }
    if (threads > 1) pthread_barrier_destroy(&barrier);
    trial[t] = worst;
  }
  qsort(trial, BENCH_TRIALS, sizeof trial[0], cmp_double);
  printf("bench: %-48s %d thread%s  %8.1f ns/call median  %8.1f min  (%d x %ld calls)\n", label, threads,
         threads > 1 ? "s" : " ", trial[BENCH_TRIALS / 2], trial[0], BENCH_TRIALS, calls);
  fflush(stdout);
}

static int bench(long calls) {
  gpuprims_context *ctx = NULL;
  gpuprims_buffer *one[BENCH_THREADS], *sixteen[BENCH_THREADS], *same[BENCH_THREADS];
  int32_t v[16];
  int i;
  for (i = 0; i < 16; i++) v[i] = i;
  TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &ctx));
  for (i = 0; i < BENCH_THREADS; i++) {
    one[i] = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, v, 1);
    sixteen[i] = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, v, 16);
  }
  for (i = 0; i < BENCH_THREADS; i++) same[i] = one[0];
  bench_one("gpuprims_buffer_len", 0, ctx, one, calls, 1);
  bench_one("gpuprims_buffer_len (a buffer each)", 0, ctx, one, calls, BENCH_THREADS);
  bench_one("gpuprims_buffer_len (one buffer)", 0, ctx, same, calls, BENCH_THREADS);
  bench_one("gpuprims_reduce, host, 16 x i32", 1, ctx, sixteen, calls / 10, 1);
  bench_one("gpuprims_reduce, host, 16 x i32 (a buffer each)", 1, ctx, sixteen, calls / 10, BENCH_THREADS);
  for (i = 0; i < BENCH_THREADS; i++) {
    gpuprims_buffer_destroy(one[i]);
    gpuprims_buffer_destroy(sixteen[i]);
  }
  gpuprims_context_destroy(ctx);
  return tu_finish();
}

int main(int argc, char **argv) {
  gpuprims_context *host = NULL, *autoctx;
  if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
    tu_state.name = "test_handles --bench";
    return bench(argc > 2 ? strtol(argv[2], NULL, 0) : 1000000L);
  }
  tu_init("test_handles");
  TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &host));
  run_all(host, "host backend");
  race(host);
  autoctx = tu_open_context();
  if (tu_backend_of(autoctx) != GPUPRIMS_BACKEND_HOST) {
    run_all(autoctx, "AUTO's backend");
    race(autoctx);
  }
  gpuprims_context_destroy(autoctx);
  gpuprims_context_destroy(host);
  return tu_finish();
}
