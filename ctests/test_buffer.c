/*
 * test_buffer: gpuprims_buffer_* for all ten dtypes: create, from_host, read, write, copy,
 * len, dtype, device_ptr, wrap_device; ranges, overflow, NULLs, mismatches, handle type
 * confusion, zero-length buffers, a context destroyed while its buffers live. Failed calls
 * leave their outputs (and the buffers) as they were.
 */
#include "test_util.h"

#define POISON 0x5A

typedef struct {
  gpuprims_context *ctx;   /* the test's context (AUTO) */
  gpuprims_context *other; /* a second context of the same backend */
  int cuda;
  tu_rng rng;
} env_t;

static int bytes_all(const void *p, size_t n, unsigned char v) {
  const unsigned char *b = (const unsigned char *)p;
  size_t i;
  for (i = 0; i < n; i++)
    if (b[i] != v) return 0;
  return 1;
}

/* The buffer holds exactly `mirror` (n elements of es bytes). */
static int holds(const gpuprims_buffer *b, const void *mirror, size_t n, size_t es) {
  void *tmp = tu_xmalloc(n * es + 1);
  int ok = gpuprims_buffer_read(b, 0, tmp, n) == GPUPRIMS_STATUS_OK && memcmp(tmp, mirror, n * es) == 0;
  free(tmp);
  return ok;
}

static void range_errors(gpuprims_buffer *b, const void *mirror, size_t n, size_t es, const char *dn) {
  /* offset, count pairs that reach past the end */
  size_t cases[][2] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {1, SIZE_MAX}, {SIZE_MAX, 2}, {SIZE_MAX, 0},
                       {0, SIZE_MAX}, {0, SIZE_MAX / 2 + 1}, {0, 0}, {2, SIZE_MAX - 1}};
  size_t i, scratch_len = (n + 8) * es;
  unsigned char *dst = (unsigned char *)tu_xmalloc(scratch_len);
  unsigned char *src = (unsigned char *)tu_xmalloc(scratch_len);
  memset(src, 0x33, scratch_len);
  cases[0][0] = 0;     cases[0][1] = n + 1;
  cases[1][0] = n;     cases[1][1] = 1;
  cases[2][0] = n + 1; cases[2][1] = 0;
  cases[3][0] = n > 2 ? n - 2 : 0; cases[3][1] = 3;
  cases[9][0] = 0;     cases[9][1] = es > 1 ? SIZE_MAX / es + 1 : SIZE_MAX - 1; /* count * size wraps */
  for (i = 0; i < TU_ARRAY_LEN(cases); i++) {
    size_t off = cases[i][0], cnt = cases[i][1];
    memset(dst, POISON, scratch_len);
    TU_CHECKF(gpuprims_buffer_read(b, off, dst, cnt) == GPUPRIMS_STATUS_INVALID_ARGUMENT,
              "%s: read(offset %zu, count %zu) of %zu elements: %s, expected INVALID_ARGUMENT", dn, off, cnt, n,
              tu_status_name(gpuprims_buffer_read(b, off, dst, cnt)));
    TU_CHECKF(bytes_all(dst, scratch_len, POISON), "%s: failed read(offset %zu, count %zu) wrote dst", dn, off, cnt);
    /* for huge counts src is too short: the range check must come before any copy */
    TU_CHECKF(gpuprims_buffer_write(b, off, src, cnt) == GPUPRIMS_STATUS_INVALID_ARGUMENT,
              "%s: write(offset %zu, count %zu) of %zu elements: %s, expected INVALID_ARGUMENT", dn, off, cnt, n,
              tu_status_name(gpuprims_buffer_write(b, off, src, cnt)));
    TU_CHECKF(holds(b, mirror, n, es), "%s: failed write(offset %zu, count %zu) changed the buffer", dn, off, cnt);
  }
  /* The empty range at the end is inside. */
  memset(dst, POISON, scratch_len);
  TU_EXPECT_OK(gpuprims_buffer_read(b, n, dst, 0));
  TU_EXPECT_OK(gpuprims_buffer_write(b, n, src, 0));
  TU_EXPECT_OK(gpuprims_buffer_read(b, 0, dst, 0));
  TU_CHECKF(bytes_all(dst, scratch_len, POISON), "%s: read of 0 elements wrote dst", dn);
  TU_CHECKF(holds(b, mirror, n, es), "%s: write of 0 elements changed the buffer", dn);
  /* NULL host pointers with elements to move. */
  TU_EXPECT_STATUS(gpuprims_buffer_read(b, 0, NULL, 1), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_write(b, 0, NULL, 1), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_CHECKF(holds(b, mirror, n, es), "%s: failed write(NULL) changed the buffer", dn);
  free(dst);
  free(src);
}

static void test_dtype(env_t *e, const tu_dtype_info *d, const tu_dtype_info *other_dtype) {
  const char *dn = d->name;
  size_t es = d->size, n = 1 + (size_t)tu_below(&e->rng, 3000), i;
  size_t bytes = n * es;
  unsigned char *data = (unsigned char *)tu_xmalloc(bytes + 16);
  unsigned char *mirror = (unsigned char *)tu_xmalloc(bytes + 16);
  unsigned char *tmp = (unsigned char *)tu_xmalloc(bytes + 16);
  gpuprims_buffer *b, *b2, *bo, *bs, *z, *z2, *out;
  size_t len;
  gpuprims_dtype t;
  void *ptr;

  /* from_host / len / dtype / read (raw bytes: float NaN payloads included) */
  tu_fill_bytes(&e->rng, data, bytes);
  memcpy(mirror, data, bytes);
  b = tu_buffer_from_host(e->ctx, d->id, data, n);
  len = 0;
  t = 0;
  TU_EXPECT_OK(gpuprims_buffer_len(b, &len));
  TU_CHECKF(len == n, "%s: len %zu, expected %zu", dn, len, n);
  TU_EXPECT_OK(gpuprims_buffer_dtype(b, &t));
  TU_CHECKF(t == d->id, "%s: dtype %lu, expected %lu", dn, (unsigned long)t, (unsigned long)d->id);
  TU_CHECKF(holds(b, mirror, n, es), "%s: from_host then read: the bytes differ", dn);

  /* partial reads */
  for (i = 0; i < 8; i++) {
    size_t off = (size_t)tu_below(&e->rng, n + 1);
    size_t cnt = (size_t)tu_below(&e->rng, n - off + 1);
    memset(tmp, POISON, bytes + 16);
    TU_EXPECT_OK(gpuprims_buffer_read(b, off, tmp, cnt));
    TU_CHECKF(memcmp(tmp, mirror + off * es, cnt * es) == 0, "%s: read(offset %zu, count %zu) wrong", dn, off, cnt);
    TU_CHECKF(bytes_all(tmp + cnt * es, 16, POISON), "%s: read(offset %zu, count %zu) wrote past count", dn, off,
              cnt);
  }
  /* partial writes */
  for (i = 0; i < 8; i++) {
    size_t off = (size_t)tu_below(&e->rng, n + 1);
    size_t cnt = (size_t)tu_below(&e->rng, n - off + 1);
    tu_fill_bytes(&e->rng, tmp, cnt * es);
    TU_EXPECT_OK(gpuprims_buffer_write(b, off, tmp, cnt));
    memcpy(mirror + off * es, tmp, cnt * es);
  }
  TU_CHECKF(holds(b, mirror, n, es), "%s: after partial writes the buffer differs", dn);
  /* unaligned host pointers (a packed byte stream) */
  tu_fill_bytes(&e->rng, tmp + 1, bytes);
  TU_EXPECT_OK(gpuprims_buffer_write(b, 0, tmp + 1, n));
  memcpy(mirror, tmp + 1, bytes);
  memset(tmp, POISON, bytes + 16);
  TU_EXPECT_OK(gpuprims_buffer_read(b, 0, tmp + 1, n));
  TU_CHECKF(memcmp(tmp + 1, mirror, bytes) == 0, "%s: unaligned read/write differ", dn);
  bs = tu_buffer_from_host(e->ctx, d->id, tmp + 1, n);
  TU_CHECKF(holds(bs, mirror, n, es), "%s: from_host from an unaligned pointer differs", dn);
  gpuprims_buffer_destroy(bs);

  /* create + copy, and copy onto itself */
  b2 = tu_buffer_create(e->ctx, d->id, n);
  len = 0;
  TU_EXPECT_OK(gpuprims_buffer_len(b2, &len));
  TU_CHECK(len == n);
  TU_EXPECT_OK(gpuprims_buffer_copy(b2, b));
  TU_CHECKF(holds(b2, mirror, n, es), "%s: copy differs", dn);
  TU_EXPECT_OK(gpuprims_buffer_copy(b2, b2));
  TU_CHECKF(holds(b2, mirror, n, es), "%s: copy onto itself changed the buffer", dn);
  TU_CHECKF(holds(b, mirror, n, es), "%s: copy changed its source", dn);

  range_errors(b, mirror, n, es, dn);

  /* len / dtype / device_ptr argument errors */
  len = 4242;
  TU_EXPECT_STATUS(gpuprims_buffer_len(NULL, &len), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_CHECK(len == 4242);
  TU_EXPECT_STATUS(gpuprims_buffer_len(b, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  t = 4242;
  TU_EXPECT_STATUS(gpuprims_buffer_dtype(NULL, &t), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_CHECK(t == 4242);
  TU_EXPECT_STATUS(gpuprims_buffer_dtype(b, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  ptr = TU_SENTINEL_PTR(void);
  TU_EXPECT_STATUS(gpuprims_buffer_device_ptr(NULL, &ptr), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_CHECK(ptr == TU_SENTINEL_PTR(void));
  TU_EXPECT_STATUS(gpuprims_buffer_device_ptr(b, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_read(NULL, 0, tmp, 1), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_write(NULL, 0, tmp, 1), GPUPRIMS_STATUS_NULL_ARGUMENT);

  /* device_ptr, wrap_device */
  ptr = TU_SENTINEL_PTR(void);
  if (!e->cuda) {
    TU_EXPECT_STATUS(gpuprims_buffer_device_ptr(b, &ptr), GPUPRIMS_STATUS_UNSUPPORTED);
    TU_CHECKF(ptr == TU_SENTINEL_PTR(void), "%s: failed device_ptr wrote its out-parameter", dn);
    out = TU_SENTINEL_PTR(gpuprims_buffer);
    TU_EXPECT_STATUS(gpuprims_buffer_wrap_device(e->ctx, d->id, (void *)(uintptr_t)0x10000, n, &out),
                     GPUPRIMS_STATUS_UNSUPPORTED);
    TU_CHECKF(out == TU_SENTINEL_PTR(gpuprims_buffer), "%s: failed wrap_device wrote its out-parameter", dn);
  } else if (TU_EXPECT_OK(gpuprims_buffer_device_ptr(b, &ptr))) {
    gpuprims_buffer *w = NULL, *wb = NULL, *ws = NULL;
    size_t k = n / 3;
    TU_CHECKF(ptr != NULL && ptr != TU_SENTINEL_PTR(void), "%s: device_ptr gave %p", dn, ptr);
    /* the same memory, same dtype */
    TU_REQUIRE_OK(gpuprims_buffer_wrap_device(e->ctx, d->id, ptr, n, &w));
    len = 0;
    TU_EXPECT_OK(gpuprims_buffer_len(w, &len));
    TU_CHECK(len == n);
    TU_CHECKF(holds(w, mirror, n, es), "%s: a wrapped device pointer reads differently", dn);
    /* writes through the wrapper show in the owner */
    tu_fill_bytes(&e->rng, tmp, es);
    TU_EXPECT_OK(gpuprims_buffer_write(w, n - 1, tmp, 1));
    memcpy(mirror + (n - 1) * es, tmp, es);
    TU_CHECKF(holds(b, mirror, n, es), "%s: a write through the wrapper does not show in the owner", dn);
    /* a tail, as raw bytes */
    TU_REQUIRE_OK(gpuprims_buffer_wrap_device(e->ctx, GPUPRIMS_DTYPE_U8, (unsigned char *)ptr + k * es,
                                              (n - k) * es, &wb));
    TU_CHECKF(holds(wb, mirror + k * es, (n - k) * es, 1), "%s: a wrapped tail (as u8) reads differently", dn);
    /* a wrapper can be a copy destination and source, and the input of a primitive */
    ws = tu_buffer_create(e->ctx, d->id, n);
    TU_EXPECT_OK(gpuprims_buffer_copy(ws, w));
    TU_CHECKF(holds(ws, mirror, n, es), "%s: copy from a wrapper differs", dn);
    {
      unsigned char red[16];
      char msg[256];
      msg[0] = '\0';
      if (TU_EXPECT_OK(gpuprims_reduce(e->ctx, wb, GPUPRIMS_OP_MAX, red)))
        TU_CHECKF(tu_check_reduce(GPUPRIMS_DTYPE_U8, GPUPRIMS_OP_MAX, mirror + k * es, (n - k) * es, red, -1, msg,
                                  sizeof msg) == 0,
                  "%s: MAX over a wrapped tail (as u8): %s", dn, msg);
    }
    gpuprims_buffer_destroy(ws);
    gpuprims_buffer_destroy(wb);
    gpuprims_buffer_destroy(w);
    /* borrowed memory is not freed: the owner still reads */
    TU_CHECKF(holds(b, mirror, n, es), "%s: the owner differs after its wrapper was destroyed", dn);
    /* errors */
    out = TU_SENTINEL_PTR(gpuprims_buffer);
    TU_EXPECT_STATUS(gpuprims_buffer_wrap_device(e->ctx, d->id, NULL, n, &out), GPUPRIMS_STATUS_NULL_ARGUMENT);
    TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
    TU_EXPECT_STATUS(gpuprims_buffer_wrap_device(e->ctx, d->id, ptr, n, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
    TU_EXPECT_STATUS(gpuprims_buffer_wrap_device(NULL, d->id, ptr, n, &out), GPUPRIMS_STATUS_NULL_ARGUMENT);
    TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
  }

  /* copy errors: dtype, length, NULLs, another context; the destination stays */
  bo = tu_buffer_create(e->ctx, other_dtype->id, n);
  tu_poison(bo, n, other_dtype->size);
  TU_EXPECT_STATUS(gpuprims_buffer_copy(bo, b), GPUPRIMS_STATUS_TYPE_MISMATCH);
  TU_EXPECT_STATUS(gpuprims_buffer_copy(b, bo), GPUPRIMS_STATUS_TYPE_MISMATCH);
  TU_CHECKF(holds(b, mirror, n, es), "%s: failed copy (TYPE_MISMATCH) changed the destination", dn);
  gpuprims_buffer_destroy(bo);
  bo = tu_buffer_create(e->ctx, d->id, n + 1);
  TU_EXPECT_STATUS(gpuprims_buffer_copy(bo, b), GPUPRIMS_STATUS_SIZE_MISMATCH);
  TU_EXPECT_STATUS(gpuprims_buffer_copy(b, bo), GPUPRIMS_STATUS_SIZE_MISMATCH);
  TU_CHECKF(holds(b, mirror, n, es), "%s: failed copy (SIZE_MISMATCH) changed the destination", dn);
  gpuprims_buffer_destroy(bo);
  TU_EXPECT_STATUS(gpuprims_buffer_copy(NULL, b), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_copy(b, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  tu_fill_bytes(&e->rng, data, bytes);
  bo = tu_buffer_from_host(e->other, d->id, data, n);
  TU_EXPECT_STATUS(gpuprims_buffer_copy(b, bo), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  TU_CHECKF(holds(b, mirror, n, es), "%s: failed copy (CONTEXT_MISMATCH) changed the destination", dn);
  TU_EXPECT_STATUS(gpuprims_buffer_copy(bo, b), GPUPRIMS_STATUS_CONTEXT_MISMATCH);
  TU_CHECKF(holds(bo, data, n, es), "%s: failed copy (CONTEXT_MISMATCH) changed the destination", dn);
  gpuprims_buffer_destroy(bo);

  /* zero-length buffers */
  z = tu_buffer_create(e->ctx, d->id, 0);
  len = 99;
  TU_EXPECT_OK(gpuprims_buffer_len(z, &len));
  TU_CHECK(len == 0);
  z2 = tu_buffer_from_host(e->ctx, d->id, data, 0);
  len = 99;
  TU_EXPECT_OK(gpuprims_buffer_len(z2, &len));
  TU_CHECK(len == 0);
  t = 0;
  TU_EXPECT_OK(gpuprims_buffer_dtype(z2, &t));
  TU_CHECK(t == d->id);
  memset(tmp, POISON, 16);
  TU_EXPECT_OK(gpuprims_buffer_read(z, 0, tmp, 0));
  TU_EXPECT_OK(gpuprims_buffer_write(z, 0, data, 0));
  TU_CHECK(bytes_all(tmp, 16, POISON));
  TU_EXPECT_STATUS(gpuprims_buffer_read(z, 0, tmp, 1), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_write(z, 0, data, 1), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_read(z, 1, tmp, 0), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(bytes_all(tmp, 16, POISON));
  TU_EXPECT_OK(gpuprims_buffer_copy(z, z2));
  TU_EXPECT_STATUS(gpuprims_buffer_copy(z, b), GPUPRIMS_STATUS_SIZE_MISMATCH);
  TU_EXPECT_STATUS(gpuprims_buffer_copy(b, z), GPUPRIMS_STATUS_SIZE_MISMATCH);
  TU_CHECKF(holds(b, mirror, n, es), "%s: failed copy from an empty buffer changed the destination", dn);
  gpuprims_buffer_destroy(z);
  gpuprims_buffer_destroy(z2);

  gpuprims_buffer_destroy(b2);
  gpuprims_buffer_destroy(b);
  free(data);
  free(mirror);
  free(tmp);
}

static void bad_dtypes(env_t *e) {
  static const gpuprims_dtype bad[] = {0, 13, 14, 255, 0x7FFFFFFFu, 0xFFFFFFFFu};
  unsigned char data[64];
  size_t i;
  memset(data, 1, sizeof data);
  for (i = 0; i < TU_ARRAY_LEN(bad); i++) {
    gpuprims_buffer *out = TU_SENTINEL_PTR(gpuprims_buffer);
    TU_CHECKF(gpuprims_buffer_create(e->ctx, bad[i], 4, &out) == GPUPRIMS_STATUS_INVALID_ARGUMENT,
              "buffer_create(dtype %lu): %s, expected INVALID_ARGUMENT", (unsigned long)bad[i],
              tu_status_name(gpuprims_buffer_create(e->ctx, bad[i], 4, &out)));
    TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
    TU_CHECKF(gpuprims_buffer_create(e->ctx, bad[i], 0, &out) == GPUPRIMS_STATUS_INVALID_ARGUMENT,
              "buffer_create(dtype %lu, len 0): expected INVALID_ARGUMENT", (unsigned long)bad[i]);
    TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
    TU_CHECKF(gpuprims_buffer_from_host(e->ctx, bad[i], data, 4, &out) == GPUPRIMS_STATUS_INVALID_ARGUMENT,
              "buffer_from_host(dtype %lu): expected INVALID_ARGUMENT", (unsigned long)bad[i]);
    TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
    if (e->cuda) {
      gpuprims_buffer *real = tu_buffer_create(e->ctx, GPUPRIMS_DTYPE_U8, 64);
      void *ptr = NULL;
      TU_REQUIRE_OK(gpuprims_buffer_device_ptr(real, &ptr));
      TU_EXPECT_STATUS(gpuprims_buffer_wrap_device(e->ctx, bad[i], ptr, 4, &out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
      gpuprims_buffer_destroy(real);
    } else {
      TU_EXPECT_STATUS2(gpuprims_buffer_wrap_device(e->ctx, bad[i], (void *)(uintptr_t)0x10000, 4, &out),
                        GPUPRIMS_STATUS_INVALID_ARGUMENT, GPUPRIMS_STATUS_UNSUPPORTED);
    }
    TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
  }
}

static void null_args(env_t *e) {
  unsigned char data[16];
  gpuprims_buffer *out = TU_SENTINEL_PTR(gpuprims_buffer);
  memset(data, 2, sizeof data);
  TU_EXPECT_STATUS(gpuprims_buffer_create(NULL, GPUPRIMS_DTYPE_I32, 4, &out), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_create(e->ctx, GPUPRIMS_DTYPE_I32, 4, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_from_host(NULL, GPUPRIMS_DTYPE_I32, data, 4, &out), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_I32, NULL, 4, &out),
                   GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_I32, data, 4, NULL),
                   GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
  gpuprims_buffer_destroy(NULL); /* a no-op */
}

/* Handles of the wrong type: INVALID_ARGUMENT, not a crash. */
static void handle_confusion(env_t *e) {
  gpuprims_buffer *fake = (gpuprims_buffer *)(void *)e->ctx;
  gpuprims_buffer *real;
  gpuprims_buffer *out = TU_SENTINEL_PTR(gpuprims_buffer);
  size_t len = 4242;
  gpuprims_dtype t = 4242;
  unsigned char tmp[16];
  int32_t vals[4] = {1, 2, 3, 4};
  TU_EXPECT_STATUS(gpuprims_buffer_len(fake, &len), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(len == 4242);
  TU_EXPECT_STATUS(gpuprims_buffer_dtype(fake, &t), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(t == 4242);
  memset(tmp, POISON, sizeof tmp);
  TU_EXPECT_STATUS(gpuprims_buffer_read(fake, 0, tmp, 1), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(bytes_all(tmp, sizeof tmp, POISON));
  TU_EXPECT_STATUS(gpuprims_buffer_write(fake, 0, tmp, 1), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  real = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_I32, vals, 4);
  TU_EXPECT_STATUS(gpuprims_buffer_copy(real, fake), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_copy(fake, real), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(holds(real, vals, 4, 4));
  /* a buffer where a context is expected */
  TU_EXPECT_STATUS(gpuprims_buffer_create((gpuprims_context *)(void *)real, GPUPRIMS_DTYPE_I32, 4, &out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
  TU_EXPECT_STATUS(gpuprims_buffer_from_host((gpuprims_context *)(void *)real, GPUPRIMS_DTYPE_I32, vals, 4, &out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
  gpuprims_buffer_destroy(real);
  /* the context still works */
  real = tu_buffer_from_host(e->ctx, GPUPRIMS_DTYPE_I32, vals, 4);
  TU_CHECK(holds(real, vals, 4, 4));
  gpuprims_buffer_destroy(real);
}

/* A context destroyed while its buffers live: they stay usable. */
static void context_outlived(env_t *e) {
  gpuprims_context *c = NULL;
  gpuprims_buffer *a, *b;
  int64_t va[1000], vb[1000];
  size_t len = 0, i;
  TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &c));
  for (i = 0; i < 1000; i++) va[i] = (int64_t)tu_next(&e->rng);
  a = tu_buffer_from_host(c, GPUPRIMS_DTYPE_I64, va, 1000);
  b = tu_buffer_create(c, GPUPRIMS_DTYPE_I64, 1000);
  gpuprims_context_destroy(c);
  TU_EXPECT_OK(gpuprims_buffer_len(a, &len));
  TU_CHECK(len == 1000);
  TU_CHECKF(holds(a, va, 1000, 8), "a buffer reads differently after its context was destroyed");
  for (i = 0; i < 1000; i++) vb[i] = (int64_t)tu_next(&e->rng);
  TU_EXPECT_OK(gpuprims_buffer_write(a, 0, vb, 1000));
  TU_EXPECT_OK(gpuprims_buffer_copy(b, a));
  TU_CHECKF(holds(b, vb, 1000, 8), "write + copy after the context was destroyed differ");
  gpuprims_buffer_destroy(a);
  TU_CHECKF(holds(b, vb, 1000, 8), "the last buffer of a destroyed context reads differently");
  gpuprims_buffer_destroy(b);
}

/* Sizes no memory can hold: an error status (OUT_OF_MEMORY, or INVALID_ARGUMENT when the byte
   count overflows), never an abort. Last, so that an abort does not hide the other checks. */
static void impossible_sizes(env_t *e) {
  gpuprims_buffer *out = TU_SENTINEL_PTR(gpuprims_buffer);
  fflush(stdout);
  TU_EXPECT_STATUS(gpuprims_buffer_create(e->ctx, GPUPRIMS_DTYPE_U8, (size_t)1 << 60, &out),
                   GPUPRIMS_STATUS_OUT_OF_MEMORY);
  TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
  TU_EXPECT_STATUS2(gpuprims_buffer_create(e->ctx, GPUPRIMS_DTYPE_U64, SIZE_MAX, &out),
                    GPUPRIMS_STATUS_OUT_OF_MEMORY, GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
  TU_EXPECT_STATUS2(gpuprims_buffer_create(e->ctx, GPUPRIMS_DTYPE_F64, SIZE_MAX / 4, &out),
                    GPUPRIMS_STATUS_OUT_OF_MEMORY, GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
}

int main(void) {
  env_t e;
  const tu_dtype_info *d = tu_dtypes();
  int i;
  uint64_t seed = tu_init("test_buffer");
  tu_rng_seed(&e.rng, seed);
  e.ctx = tu_open_context();
  e.cuda = tu_is_cuda(e.ctx);
  e.other = NULL;
  TU_REQUIRE_OK(gpuprims_context_create(e.cuda ? GPUPRIMS_BACKEND_CUDA : GPUPRIMS_BACKEND_HOST, 0, &e.other));

  for (i = 0; i < TU_NUM_DTYPES; i++) test_dtype(&e, &d[i], &d[(i + 3) % TU_NUM_DTYPES]);
  bad_dtypes(&e);
  null_args(&e);
  handle_confusion(&e);
  context_outlived(&e);
  impossible_sizes(&e);

  gpuprims_context_destroy(e.other);
  gpuprims_context_destroy(e.ctx);
  return tu_finish();
}
