/*
 * test_handles: handles that are destroyed, and pointers that are no handle of the kind a
 * parameter wants, passed to every function that takes a handle. Each must be
 * GPUPRIMS_STATUS_INVALID_ARGUMENT, with a last error that names the function and the
 * argument ("gpuprims_reduce: in is ..."), and leave its outputs and every live handle
 * alone; destroying one must be a no-op. The library recognises them from the handle's
 * value alone, never reading memory a handle might point at, so CTest also runs this
 * program under valgrind (test_handles_valgrind) where valgrind is found: a read of freed
 * memory is an error there even when the status is right.
 *
 * The bad values, for each kind of parameter (context, buffer, Life grid):
 *   a destroyed handle of that kind, and one whose slot a newer handle has taken since;
 *   live and destroyed handles of the other kinds; the address of a local int; a 1-byte
 *   heap block; a freed heap block; (void *)1; a large odd integer; all bits set.
 * Then threads use handles while another thread destroys them (OK or INVALID_ARGUMENT,
 * never a use of freed memory).
 *
 * The contexts: the host backend, and AUTO as well when AUTO gives another backend. Sizes
 * are tiny: valgrind runs this in seconds.
 *
 * `test_handles --bench [calls]` instead times small calls (ns a call; see main).
 */
#include "test_util.h"

#define MAX_BAD 16

typedef struct {
  const char *what;
  void *p;
} bad_t;

typedef struct {
  bad_t v[MAX_BAD];
  int n;
} bad_set;

/* Live handles whose positions the bad values take in turn, the others staying valid. */
typedef struct {
  gpuprims_context *ctx;
  gpuprims_buffer *in;      /* I32 x 8, IN_VALUES */
  gpuprims_buffer *out;     /* I32 x 8 */
  gpuprims_buffer *one;     /* I32 x 1 */
  gpuprims_buffer *top_v;   /* I32 x 2 */
  gpuprims_buffer *top_i;   /* U64 x 2 */
  gpuprims_buffer *offsets; /* U64 {0, 8}: one row, all of `in` */
  gpuprims_buffer *ks;      /* U64 {3} */
  gpuprims_buffer *keys;    /* I32 x 8 */
  gpuprims_buffer *vals;    /* U32 x 8 */
  gpuprims_life_grid *grid; /* 8 x 8, a blinker */
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

static void env_open(env_t *e, gpuprims_context *ctx) {
  int32_t zeros[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  uint64_t offsets[2] = {0, 8}, ks[1] = {3};
  e->ctx = ctx;
  e->in = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, IN_VALUES, 8);
  e->out = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, zeros, 8);
  e->one = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, zeros, 1);
  e->top_v = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, zeros, 2);
  e->top_i = tu_buffer_create(ctx, GPUPRIMS_DTYPE_U64, 2);
  e->offsets = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_U64, offsets, 2);
  e->ks = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_U64, ks, 1);
  e->keys = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, IN_VALUES, 8);
  e->vals = tu_buffer_create(ctx, GPUPRIMS_DTYPE_U32, 8);
  e->grid = NULL;
  TU_REQUIRE_OK(gpuprims_life_create(ctx, 8, 8, GPUPRIMS_LIFE_DEAD, &e->grid));
  TU_REQUIRE_OK(gpuprims_life_load_rle(e->grid, BLINKER, 2, 3));
}

static void env_close(env_t *e) {
  gpuprims_buffer_destroy(e->in);
  gpuprims_buffer_destroy(e->out);
  gpuprims_buffer_destroy(e->one);
  gpuprims_buffer_destroy(e->top_v);
  gpuprims_buffer_destroy(e->top_i);
  gpuprims_buffer_destroy(e->offsets);
  gpuprims_buffer_destroy(e->ks);
  gpuprims_buffer_destroy(e->keys);
  gpuprims_buffer_destroy(e->vals);
  gpuprims_life_destroy(e->grid);
}

/* The live handles still hold what they held, and calls on them still work. */
static void env_check(env_t *e, const char *when) {
  int32_t got[8];
  uint64_t v = 0;
  size_t n = 0;
  gpuprims_backend b = 0;
  memset(got, 0, sizeof got);
  TU_CHECKF(gpuprims_context_backend(e->ctx, &b) == GPUPRIMS_STATUS_OK, "%s: the context fails", when);
  TU_CHECKF(gpuprims_buffer_len(e->in, &n) == GPUPRIMS_STATUS_OK && n == 8, "%s: in's length is %zu", when, n);
  TU_CHECKF(gpuprims_buffer_read(e->in, 0, got, 8) == GPUPRIMS_STATUS_OK &&
                memcmp(got, IN_VALUES, sizeof got) == 0,
            "%s: in changed", when);
  TU_CHECKF(gpuprims_buffer_read(e->keys, 0, got, 8) == GPUPRIMS_STATUS_OK &&
                memcmp(got, IN_VALUES, sizeof got) == 0,
            "%s: keys changed (sorted?)", when);
  TU_CHECKF(gpuprims_buffer_read(e->one, 0, got, 1) == GPUPRIMS_STATUS_OK && got[0] == 0, "%s: one changed", when);
  TU_CHECKF(gpuprims_life_population(e->grid, &v) == GPUPRIMS_STATUS_OK && v == 3, "%s: the grid's population is %llu",
            when, (unsigned long long)v);
  TU_CHECKF(gpuprims_life_generation(e->grid, &v) == GPUPRIMS_STATUS_OK && v == 0, "%s: the grid stepped", when);
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
    int32_t value = 4242, host_cells[4] = {0, 0, 0, 0};
    strcpy(name, "untouched");
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
    EXPECT_BAD(w, "ctx", gpuprims_reduce(x, e->in, GPUPRIMS_OP_SUM, &value));
    EXPECT_BAD(w, "ctx", gpuprims_reduce_to_buffer(x, e->in, GPUPRIMS_OP_SUM, e->one));
    EXPECT_BAD(w, "ctx", gpuprims_scan(x, e->in, e->out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
    EXPECT_BAD(w, "ctx", gpuprims_select_kth(x, e->in, 0, &value));
    EXPECT_BAD(w, "ctx", gpuprims_select_kth_to_buffer(x, e->in, 0, e->one));
    EXPECT_BAD(w, "ctx", gpuprims_topk(x, e->in, 2, GPUPRIMS_ORDER_ASCENDING, e->top_v, e->top_i));
    EXPECT_BAD(w, "ctx", gpuprims_segmented_select(x, e->in, e->offsets, e->ks, e->one));
    EXPECT_BAD(w, "ctx", gpuprims_segmented_topk(x, e->in, e->offsets, 0, 0, e->ks,
                                                 GPUPRIMS_ORDER_ASCENDING, e->top_v, e->top_i));
    EXPECT_BAD(w, "ctx", gpuprims_radix_sort(x, e->keys, e->vals, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "ctx", gpuprims_quicksort(x, e->keys, e->vals, GPUPRIMS_ORDER_ASCENDING));
    gpuprims_context_destroy(x); /* a no-op */
    TU_CHECKF(backend == 4242 && needed == 4242 && strcmp(name, "untouched") == 0 && value == 4242 &&
                  bo == TU_SENTINEL_PTR(gpuprims_buffer) && go == TU_SENTINEL_PTR(gpuprims_life_grid),
              "with %s as ctx: an output was written", w);
  }
}

static void bad_buffers(env_t *e, const bad_set *s) {
  int i;
  for (i = 0; i < s->n; i++) {
    gpuprims_buffer *x = (gpuprims_buffer *)s->v[i].p;
    const char *w = s->v[i].what;
    gpuprims_context *c = e->ctx;
    size_t len = 4242;
    gpuprims_dtype dtype = 4242;
    void *dptr = TU_SENTINEL_PTR(void);
    int32_t value = 4242, host[2] = {4242, 4242};
    EXPECT_BAD(w, "buf", gpuprims_buffer_len(x, &len));
    EXPECT_BAD(w, "buf", gpuprims_buffer_dtype(x, &dtype));
    EXPECT_BAD(w, "buf", gpuprims_buffer_device_ptr(x, &dptr));
    EXPECT_BAD(w, "buf", gpuprims_buffer_write(x, 0, IN_VALUES, 1));
    EXPECT_BAD(w, "buf", gpuprims_buffer_read(x, 0, host, 1));
    EXPECT_BAD(w, "dst", gpuprims_buffer_copy(x, e->in));
    EXPECT_BAD(w, "src", gpuprims_buffer_copy(e->out, x));
    EXPECT_BAD(w, "in", gpuprims_reduce(c, x, GPUPRIMS_OP_SUM, &value));
    EXPECT_BAD(w, "in", gpuprims_reduce_to_buffer(c, x, GPUPRIMS_OP_SUM, e->one));
    EXPECT_BAD(w, "out", gpuprims_reduce_to_buffer(c, e->in, GPUPRIMS_OP_SUM, x));
    EXPECT_BAD(w, "in", gpuprims_scan(c, x, e->out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
    EXPECT_BAD(w, "out", gpuprims_scan(c, e->in, x, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
    EXPECT_BAD(w, "in", gpuprims_select_kth(c, x, 0, &value));
    EXPECT_BAD(w, "in", gpuprims_select_kth_to_buffer(c, x, 0, e->one));
    EXPECT_BAD(w, "out", gpuprims_select_kth_to_buffer(c, e->in, 0, x));
    EXPECT_BAD(w, "in", gpuprims_topk(c, x, 2, GPUPRIMS_ORDER_ASCENDING, e->top_v, e->top_i));
    EXPECT_BAD(w, "out_values", gpuprims_topk(c, e->in, 2, GPUPRIMS_ORDER_ASCENDING, x, e->top_i));
    EXPECT_BAD(w, "out_indices", gpuprims_topk(c, e->in, 2, GPUPRIMS_ORDER_ASCENDING, e->top_v, x));
    EXPECT_BAD(w, "values", gpuprims_segmented_select(c, x, e->offsets, e->ks, e->one));
    EXPECT_BAD(w, "offsets", gpuprims_segmented_select(c, e->in, x, e->ks, e->one));
    EXPECT_BAD(w, "ks", gpuprims_segmented_select(c, e->in, e->offsets, x, e->one));
    EXPECT_BAD(w, "out", gpuprims_segmented_select(c, e->in, e->offsets, e->ks, x));
    EXPECT_BAD(w, "values", gpuprims_segmented_topk(c, x, e->offsets, 0, 0, e->ks,
                                                    GPUPRIMS_ORDER_ASCENDING, e->top_v, e->top_i));
    EXPECT_BAD(w, "offsets", gpuprims_segmented_topk(c, e->in, x, 0, 0, e->ks,
                                                     GPUPRIMS_ORDER_ASCENDING, e->top_v, e->top_i));
    EXPECT_BAD(w, "ks", gpuprims_segmented_topk(c, e->in, e->offsets, 0, 0, x,
                                                GPUPRIMS_ORDER_ASCENDING, e->top_v, e->top_i));
    EXPECT_BAD(w, "out_values", gpuprims_segmented_topk(c, e->in, NULL, 4, 2, NULL,
                                                        GPUPRIMS_ORDER_ASCENDING, x, e->top_i));
    EXPECT_BAD(w, "out_indices", gpuprims_segmented_topk(c, e->in, NULL, 4, 2, NULL,
                                                         GPUPRIMS_ORDER_ASCENDING, e->top_v, x));
    EXPECT_BAD(w, "keys", gpuprims_radix_sort(c, x, e->vals, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "values", gpuprims_radix_sort(c, e->keys, x, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "keys", gpuprims_quicksort(c, x, e->vals, GPUPRIMS_ORDER_ASCENDING));
    EXPECT_BAD(w, "values", gpuprims_quicksort(c, e->keys, x, GPUPRIMS_ORDER_ASCENDING));
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

/* The address of a heap block already freed (kept in a volatile, so that the compiler
   does not take passing the address on for a use after free: it is never read). */
static void *freed_block(void) {
  void *p = tu_xmalloc(16);
  volatile uintptr_t addr = (uintptr_t)p;
  free(p);
  return (void *)addr;
}

/*
 * Destroyed and foreign values of every kind against every function, with `ctx` (its
 * backend) for the live handles.
 */
static void run_all(gpuprims_context *ctx, const char *label) {
  env_t e;
  gpuprims_context *dead_ctx = NULL, *stale_ctx = NULL, *newer_ctx = NULL;
  gpuprims_buffer *dead_buf, *stale_buf, *newer_buf;
  gpuprims_life_grid *dead_grid = NULL, *stale_grid = NULL, *newer_grid = NULL;
  gpuprims_backend backend = tu_backend_of(ctx);
  bad_set common, sc, sb, sg;
  int local = 42;
  unsigned char *tiny = (unsigned char *)tu_xmalloc(1);
  void *freed = freed_block();
  char before[256], after[256];
  int i;

  printf("test_handles: %s\n", label);
  fflush(stdout);
  env_open(&e, ctx);

  /* Destroyed handles of each kind; and stale ones: destroyed, then a newer handle of the
     same kind made (which may reuse what the stale one named). */
  TU_REQUIRE_OK(gpuprims_context_create(backend, 0, &dead_ctx));
  gpuprims_context_destroy(dead_ctx);
  TU_REQUIRE_OK(gpuprims_context_create(backend, 0, &stale_ctx));
  gpuprims_context_destroy(stale_ctx);
  TU_REQUIRE_OK(gpuprims_context_create(backend, 0, &newer_ctx));
  TU_CHECK(newer_ctx != stale_ctx && newer_ctx != dead_ctx);
  dead_buf = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, IN_VALUES, 8);
  gpuprims_buffer_destroy(dead_buf);
  stale_buf = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, IN_VALUES, 8);
  gpuprims_buffer_destroy(stale_buf);
  newer_buf = tu_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, IN_VALUES, 8);
  TU_CHECK(newer_buf != stale_buf && newer_buf != dead_buf);
  TU_REQUIRE_OK(gpuprims_life_create(ctx, 4, 4, GPUPRIMS_LIFE_TORUS, &dead_grid));
  gpuprims_life_destroy(dead_grid);
  TU_REQUIRE_OK(gpuprims_life_create(ctx, 4, 4, GPUPRIMS_LIFE_TORUS, &stale_grid));
  gpuprims_life_destroy(stale_grid);
  TU_REQUIRE_OK(gpuprims_life_create(ctx, 4, 4, GPUPRIMS_LIFE_TORUS, &newer_grid));
  TU_CHECK(newer_grid != stale_grid && newer_grid != dead_grid);

  common.n = 0;
  add_bad(&common, "the address of a local int", (void *)&local);
  add_bad(&common, "a 1-byte heap block", (void *)tiny);
  add_bad(&common, "a freed heap block", freed);
  add_bad(&common, "(void *)1", (void *)(uintptr_t)1);
  add_bad(&common, "a large odd integer", (void *)(uintptr_t)UINT64_C(0x9E3779B97F4A7C15));
  add_bad(&common, "all bits set", (void *)(uintptr_t)UINTPTR_MAX);

  sc = common;
  add_bad(&sc, "a destroyed context", (void *)dead_ctx);
  add_bad(&sc, "a destroyed context whose successor lives", (void *)stale_ctx);
  add_bad(&sc, "a live buffer", (void *)e.in);
  add_bad(&sc, "a destroyed buffer", (void *)dead_buf);
  add_bad(&sc, "a live grid", (void *)e.grid);
  add_bad(&sc, "a destroyed grid", (void *)dead_grid);

  sb = common;
  add_bad(&sb, "a destroyed buffer", (void *)dead_buf);
  add_bad(&sb, "a destroyed buffer whose successor lives", (void *)stale_buf);
  add_bad(&sb, "a live context", (void *)ctx);
  add_bad(&sb, "a destroyed context", (void *)dead_ctx);
  add_bad(&sb, "a live grid", (void *)e.grid);
  add_bad(&sb, "a destroyed grid", (void *)dead_grid);

  sg = common;
  add_bad(&sg, "a destroyed grid", (void *)dead_grid);
  add_bad(&sg, "a destroyed grid whose successor lives", (void *)stale_grid);
  add_bad(&sg, "a live context", (void *)ctx);
  add_bad(&sg, "a destroyed context", (void *)dead_ctx);
  add_bad(&sg, "a live buffer", (void *)e.in);
  add_bad(&sg, "a destroyed buffer", (void *)dead_buf);

  bad_contexts(&e, &sc);
  env_check(&e, "after bad contexts");
  bad_buffers(&e, &sb);
  env_check(&e, "after bad buffers");
  bad_grids(&e, &sg);
  env_check(&e, "after bad grids");

  /* Destroying them again (each as the kind it is bad for: live handles of other kinds
     among them) is a no-op: it neither fails (the last error stays what it was) nor
     takes a live handle with it. */
  TU_EXPECT_STATUS(gpuprims_buffer_len(dead_buf, NULL), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  tu_last_error_text(before, sizeof before);
  for (i = 0; i < sc.n; i++) gpuprims_context_destroy((gpuprims_context *)sc.v[i].p);
  for (i = 0; i < sb.n; i++) gpuprims_buffer_destroy((gpuprims_buffer *)sb.v[i].p);
  for (i = 0; i < sg.n; i++) gpuprims_life_destroy((gpuprims_life_grid *)sg.v[i].p);
  gpuprims_context_destroy(NULL);
  gpuprims_buffer_destroy(NULL);
  gpuprims_life_destroy(NULL);
  tu_last_error_text(after, sizeof after);
  TU_CHECKF(strcmp(before, after) == 0, "a no-op destroy changed the last error from \"%s\" to \"%s\"", before, after);
  env_check(&e, "after destroying bad handles");

  /* The successors of the stale handles were never touched. */
  {
    size_t n = 0;
    uint64_t pop = 1;
    gpuprims_backend b = 0;
    TU_EXPECT_OK(gpuprims_context_backend(newer_ctx, &b));
    TU_CHECK(b == backend);
    TU_EXPECT_OK(gpuprims_buffer_len(newer_buf, &n));
    TU_CHECK(n == 8);
    TU_EXPECT_OK(gpuprims_life_population(newer_grid, &pop));
    TU_CHECK(pop == 0);
  }

  /* NULL stays NULL_ARGUMENT. */
  TU_EXPECT_STATUS(gpuprims_buffer_len(NULL, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_reduce(ctx, NULL, GPUPRIMS_OP_SUM, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_life_step(NULL, 1), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_context_synchronize(NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);

  gpuprims_context_destroy(newer_ctx);
  gpuprims_buffer_destroy(newer_buf);
  gpuprims_life_destroy(newer_grid);
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
  }
  TU_REQUIRE(pthread_barrier_init(&r.start, NULL, RACE_WORKERS + 1) == 0);
  for (i = 0; i < RACE_WORKERS; i++) TU_REQUIRE(pthread_create(&th[i], NULL, race_worker, &r) == 0);
  pthread_barrier_wait(&r.start);
  for (i = 0; i < RACE_HANDLES; i++) {
    gpuprims_buffer_destroy(r.bufs[i]);
    gpuprims_context_destroy(r.ctxs[i]);
  }
  for (i = 0; i < RACE_WORKERS; i++) TU_REQUIRE(pthread_join(th[i], NULL) == 0);
  pthread_barrier_destroy(&r.start);
  /* All destroyed now, whatever the threads saw. */
  for (i = 0; i < RACE_HANDLES; i++) {
    size_t n = 0;
    TU_EXPECT_STATUS(gpuprims_buffer_len(r.bufs[i], &n), GPUPRIMS_STATUS_INVALID_ARGUMENT);
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
