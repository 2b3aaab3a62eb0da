/*
 * test_wrap_host: gpuprims_buffer_wrap_host, caller-owned host memory used in place.
 *
 * Host backend (always opened, whatever GPUPRIMS_BACKEND says): primitives read and write
 * the caller's memory itself, destroying the buffer leaves it alone (and counts no bytes
 * held), every argument check (NULL, dtype, alignment, length overflow, len 0), the
 * out-parameter untouched on failure, and wrapped buffers that share memory recognised as
 * such. CUDA backend (when AUTO opens one): UNSUPPORTED.
 */
#include "test_util.h"

static gpuprims_buffer *wrap(gpuprims_context *ctx, gpuprims_dtype t, void *p, size_t n) {
  gpuprims_buffer *b = NULL;
  TU_REQUIRE_OK(gpuprims_buffer_wrap_host(ctx, t, p, n, &b));
  return b;
}

/* Work lands in the caller's memory, and the caller's memory is what the work reads. */
static void in_place(gpuprims_context *ctx) {
  float keys[8] = {5, -1, 3, 3, 0, 9, -7, 2};
  uint32_t vals[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const float want_keys[8] = {-7, -1, 0, 2, 3, 3, 5, 9};
  const uint32_t want_vals[8] = {6, 1, 4, 7, 2, 3, 0, 5};
  gpuprims_buffer *k = wrap(ctx, GPUPRIMS_DTYPE_F32, keys, 8), *v = wrap(ctx, GPUPRIMS_DTYPE_U32, vals, 8);
  float sum = 0, top[3];
  uint64_t idx[3];
  gpuprims_buffer *tv, *ti;
  size_t len = 0;
  gpuprims_fault_counts before, after;
  int i;

  TU_REQUIRE_OK(gpuprims_buffer_len(k, &len));
  TU_CHECK(len == 8);
  TU_EXPECT_OK(gpuprims_reduce(ctx, k, GPUPRIMS_OP_SUM, &sum));
  TU_CHECKF(sum == 14.0f, "sum %g", (double)sum);
  keys[0] = 105; /* no copy was taken: the next call sees the change */
  TU_EXPECT_OK(gpuprims_reduce(ctx, k, GPUPRIMS_OP_SUM, &sum));
  TU_CHECKF(sum == 114.0f, "sum after writing the caller's array %g", (double)sum);
  keys[0] = 5;

  tv = wrap(ctx, GPUPRIMS_DTYPE_F32, top, 3);
  ti = wrap(ctx, GPUPRIMS_DTYPE_U64, idx, 3);
  TU_EXPECT_OK(gpuprims_topk(ctx, k, 3, GPUPRIMS_ORDER_DESCENDING, tv, ti));
  TU_CHECKF(top[0] == 9 && top[1] == 5 && top[2] == 3, "topk %g %g %g", (double)top[0], (double)top[1], (double)top[2]);
  TU_CHECKF(idx[0] == 5 && idx[1] == 0 && idx[2] == 2, "topk indices %llu %llu %llu", (unsigned long long)idx[0],
            (unsigned long long)idx[1], (unsigned long long)idx[2]);

  TU_EXPECT_OK(gpuprims_radix_sort(ctx, k, v, GPUPRIMS_ORDER_ASCENDING));
  for (i = 0; i < 8; i++) {
    TU_CHECKF(keys[i] == want_keys[i] && vals[i] == want_vals[i], "sorted[%d] = (%g, %u)", i, (double)keys[i],
              (unsigned)vals[i]);
  }

  /* Wrapping holds no memory of gpuprims'; destroying frees nothing of the caller's. */
  TU_REQUIRE_OK(gpuprims_fault_get_counts(&before));
  gpuprims_buffer_destroy(wrap(ctx, GPUPRIMS_DTYPE_F64, keys, 4));
  TU_REQUIRE_OK(gpuprims_fault_get_counts(&after));
  TU_CHECKF(after.bytes_held == before.bytes_held, "bytes held %llu -> %llu", (unsigned long long)before.bytes_held,
            (unsigned long long)after.bytes_held);
  gpuprims_buffer_destroy(k);
  gpuprims_buffer_destroy(v);
  gpuprims_buffer_destroy(tv);
  gpuprims_buffer_destroy(ti);
  TU_CHECK(keys[0] == -7 && vals[7] == 5); /* still the caller's, still readable */
}

/* Two handles over one array: the checks that refuse shared memory see it. */
static void shared_memory(gpuprims_context *ctx) {
  int32_t a[16] = {0};
  gpuprims_buffer *whole = wrap(ctx, GPUPRIMS_DTYPE_I32, a, 16), *head = wrap(ctx, GPUPRIMS_DTYPE_I32, a, 4);
  gpuprims_buffer *tail = wrap(ctx, GPUPRIMS_DTYPE_I32, a + 2, 4), *apart = wrap(ctx, GPUPRIMS_DTYPE_I32, a + 8, 4);
  int i;
  for (i = 0; i < 16; i++) a[i] = 16 - i;
  TU_EXPECT_STATUS(gpuprims_topk(ctx, whole, 4, GPUPRIMS_ORDER_ASCENDING, head, NULL), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_radix_sort(ctx, head, tail, GPUPRIMS_ORDER_ASCENDING), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(a[0] == 16 && a[3] == 13); /* the refused calls changed nothing */
  TU_EXPECT_OK(gpuprims_topk(ctx, head, 4, GPUPRIMS_ORDER_ASCENDING, apart, NULL));
  TU_CHECKF(a[8] == 13 && a[11] == 16, "topk into a disjoint part: %d .. %d", a[8], a[11]);
  /* Overlapping copy: as memmove. */
  TU_EXPECT_OK(gpuprims_buffer_copy(tail, head));
  TU_CHECKF(a[2] == 16 && a[3] == 15 && a[4] == 14 && a[5] == 13, "overlapping copy: %d %d %d %d", a[2], a[3], a[4],
            a[5]);
  gpuprims_buffer_destroy(whole);
  gpuprims_buffer_destroy(head);
  gpuprims_buffer_destroy(tail);
  gpuprims_buffer_destroy(apart);
}

static void bad_arguments(gpuprims_context *ctx) {
  uint64_t storage[4] = {0};
  char *bytes = (char *)storage;
  gpuprims_buffer *out = TU_SENTINEL_PTR(gpuprims_buffer);
  uint64_t sum = 1;

  TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(NULL, GPUPRIMS_DTYPE_U8, bytes, 4, &out), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_U8, NULL, 4, &out), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_U8, bytes, 4, NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(ctx, 0, bytes, 4, &out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(ctx, 0xFFFFu, bytes, 4, &out), GPUPRIMS_STATUS_INVALID_ARGUMENT);
  /* Alignment to the element: 1 byte off for 2-, 4- and 8-byte types; any for 1-byte. */
  TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_U16, bytes + 1, 2, &out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_F32, bytes + 2, 2, &out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_F64, bytes + 4, 2, &out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  /* len * size overflows size_t, passes isize::MAX, or runs past the address space. */
  TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_U64, bytes, SIZE_MAX / 4, &out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_U8, bytes, SIZE_MAX / 2 + 1, &out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_U8, (void *)(SIZE_MAX - 15), SIZE_MAX / 2, &out),
                   GPUPRIMS_STATUS_INVALID_ARGUMENT);
  TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));

  /* len 0: NULL is fine, nothing is read, SUM is 0. */
  TU_REQUIRE_OK(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_U64, NULL, 0, &out));
  TU_EXPECT_OK(gpuprims_reduce(ctx, out, GPUPRIMS_OP_SUM, &sum));
  TU_CHECK(sum == 0);
  gpuprims_buffer_destroy(out);
  out = NULL;
  TU_REQUIRE_OK(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_U8, bytes + 3, 0, &out));
  gpuprims_buffer_destroy(out);
  /* 1-byte elements: any address. */
  TU_REQUIRE_OK(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_I8, bytes + 3, 5, &out));
  gpuprims_buffer_destroy(out);
}

static void cuda_refuses(void) {
  gpuprims_context *ctx = tu_open_context();
  float x[4] = {1, 2, 3, 4};
  gpuprims_buffer *out = TU_SENTINEL_PTR(gpuprims_buffer);
  if (tu_is_cuda(ctx)) {
    TU_EXPECT_STATUS(gpuprims_buffer_wrap_host(ctx, GPUPRIMS_DTYPE_F32, x, 4, &out), GPUPRIMS_STATUS_UNSUPPORTED);
    TU_CHECK(out == TU_SENTINEL_PTR(gpuprims_buffer));
  }
  gpuprims_context_destroy(ctx);
}

int main(void) {
  gpuprims_context *host = NULL;
  tu_init("test_wrap_host");
  TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &host));
  in_place(host);
  shared_memory(host);
  bad_arguments(host);
  gpuprims_context_destroy(host);
  cuda_refuses();
  return tu_finish();
}
