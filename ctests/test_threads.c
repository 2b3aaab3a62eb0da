/*
 * test_threads: 8 threads share one context; each creates its own buffers and runs reduce
 * and scan in a loop, checking every result. Then the last error: each thread fails in its
 * own way, waits until all have failed, and must still read its own message.
 */
#include "test_util.h"

#define NTHREADS 8
#define ITERS 64
#define MAX_LEN 40000

static const gpuprims_op OPS[3] = {GPUPRIMS_OP_SUM, GPUPRIMS_OP_MIN, GPUPRIMS_OP_MAX};

typedef struct {
  int id;
  gpuprims_context *ctx;
  uint64_t seed;
  pthread_barrier_t *barrier;
  unsigned long work;
} worker_t;

static void one_round(worker_t *w, tu_rng *r, unsigned char *data, unsigned char *got) {
  const tu_dtype_info *d = &tu_dtypes()[tu_below(r, TU_NUM_DTYPES)];
  size_t n = 1 + (size_t)tu_below(r, MAX_LEN);
  gpuprims_op op = OPS[tu_below(r, 3)];
  gpuprims_scan_mode mode = tu_below(r, 2) ? GPUPRIMS_SCAN_EXCLUSIVE : GPUPRIMS_SCAN_INCLUSIVE;
  gpuprims_buffer *in, *out;
  unsigned char res[16];
  char msg[512];
  size_t bad;
  int k;
  /* floats: small integers, so that SUM is exact whatever the order */
  tu_fill(r, d->id, data, n, d->is_float ? TU_FILL_SMALLINT : TU_FILL_BITS);
  in = tu_buffer_from_host(w->ctx, d->id, data, n);
  for (k = 0; k < 3; k++) {
    memset(res, 0xA5, sizeof res);
    if (!TU_EXPECT_OK(gpuprims_reduce(w->ctx, in, OPS[k], res))) continue;
    msg[0] = '\0';
    TU_CHECKF(tu_check_reduce(d->id, OPS[k], data, n, res, 0, msg, sizeof msg) == 0,
              "thread %d: reduce %s %s n=%zu: %s", w->id, d->name, tu_op_name(OPS[k]), n, msg);
  }
  out = tu_buffer_create(w->ctx, d->id, n);
  tu_poison(out, n, d->size);
  if (TU_EXPECT_OK(gpuprims_scan(w->ctx, in, out, op, mode))) {
    TU_REQUIRE_OK(gpuprims_buffer_read(out, 0, got, n));
    msg[0] = '\0';
    bad = tu_check_scan(d->id, op, mode, data, n, got, 0, msg, sizeof msg);
    TU_CHECKF(bad == 0, "thread %d: scan %s %s %s n=%zu: %zu wrong; first %s", w->id, d->name, tu_op_name(op),
              tu_mode_name(mode), n, bad, msg);
  }
  /* in place, too */
  if (TU_EXPECT_OK(gpuprims_scan(w->ctx, in, in, op, mode))) {
    TU_REQUIRE_OK(gpuprims_buffer_read(in, 0, got, n));
    msg[0] = '\0';
    bad = tu_check_scan(d->id, op, mode, data, n, got, 0, msg, sizeof msg);
    TU_CHECKF(bad == 0, "thread %d: in-place scan %s %s %s n=%zu: %zu wrong; first %s", w->id, d->name,
              tu_op_name(op), tu_mode_name(mode), n, bad, msg);
  }
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(in);
  w->work++;
}

static void *worker(void *arg) {
  worker_t *w = (worker_t *)arg;
  tu_rng r;
  unsigned char *data = (unsigned char *)tu_xmalloc((size_t)MAX_LEN * 8);
  unsigned char *got = (unsigned char *)tu_xmalloc((size_t)MAX_LEN * 8);
  char mine[512], later[512];
  size_t n_mine, n_later;
  gpuprims_buffer *b = NULL, *other = NULL, *out = TU_SENTINEL_PTR(gpuprims_buffer);
  int i;
  gpuprims_status s;

  tu_rng_seed(&r, w->seed);
  for (i = 0; i < ITERS; i++) {
    one_round(w, &r, data, got);
    if (i % 8 == 7) TU_EXPECT_OK(gpuprims_context_synchronize(w->ctx));
  }

  /* Last error isolation. Even threads: an invalid dtype; odd: a size mismatch. */
  pthread_barrier_wait(w->barrier);
  if (w->id % 2 == 0) {
    s = gpuprims_buffer_create(w->ctx, 0, 4, &out);
    TU_EXPECT_STATUS(s, GPUPRIMS_STATUS_INVALID_ARGUMENT);
  } else {
    b = tu_buffer_create(w->ctx, GPUPRIMS_DTYPE_U16, 3);
    other = tu_buffer_create(w->ctx, GPUPRIMS_DTYPE_U16, 4);
    s = gpuprims_buffer_copy(b, other);
    TU_EXPECT_STATUS(s, GPUPRIMS_STATUS_SIZE_MISMATCH);
  }
  mine[0] = '\0';
  n_mine = gpuprims_last_error(mine, sizeof mine);
  mine[sizeof mine - 1] = '\0';
  TU_CHECKF(n_mine > 0, "thread %d: no last error after its failure", w->id);
  /* wait until every thread has failed (no successful call here in between: whether
     success clears the last error is not specified) */
  pthread_barrier_wait(w->barrier);
  later[0] = '\0';
  n_later = gpuprims_last_error(later, sizeof later);
  later[sizeof later - 1] = '\0';
  TU_CHECKF(n_later == n_mine && strcmp(mine, later) == 0,
            "thread %d: its last error became \"%s\" (was \"%s\") after other threads failed", w->id, later, mine);
  gpuprims_buffer_destroy(b);
  gpuprims_buffer_destroy(other);
  free(data);
  free(got);
  return NULL;
}

int main(void) {
  pthread_t th[NTHREADS];
  worker_t w[NTHREADS];
  pthread_barrier_t barrier;
  gpuprims_context *ctx;
  unsigned long total = 0;
  int i;
  uint64_t seed = tu_init("test_threads");
  ctx = tu_open_context();
  TU_REQUIRE(pthread_barrier_init(&barrier, NULL, NTHREADS) == 0);
  for (i = 0; i < NTHREADS; i++) {
    w[i].id = i;
    w[i].ctx = ctx;
    w[i].seed = seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
    w[i].barrier = &barrier;
    w[i].work = 0;
    TU_REQUIRE(pthread_create(&th[i], NULL, worker, &w[i]) == 0);
  }
  for (i = 0; i < NTHREADS; i++) {
    TU_REQUIRE(pthread_join(th[i], NULL) == 0);
    total += w[i].work;
  }
  pthread_barrier_destroy(&barrier);
  TU_CHECK(total == (unsigned long)NTHREADS * ITERS);
  printf("test_threads: %d threads, %lu rounds of reduce + scan on one context\n", NTHREADS, total);
  gpuprims_context_destroy(ctx);
  return tu_finish();
}
