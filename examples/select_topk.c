/* select_topk: the median, and the three largest values with their positions,
 * without sorting the input.
 *
 * gpuprims_select_kth returns the element of rank k (0-based, ascending) to host
 * memory; gpuprims_topk writes the k largest (or smallest) elements, in order, and
 * their indices into two buffers. Prints "median 4" and "top 3: 9 at [5], 6 at [7],
 * 5 at [4]".
 */
#include <gpuprims.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Every call returns a status: on a failure, print the library's message and stop. */
static void check(gpuprims_status s, const char *call) {
  char msg[256] = "";
  if (s == GPUPRIMS_STATUS_OK) return;
  gpuprims_last_error(msg, sizeof msg);
  fprintf(stderr, "%s: %s: %s\n", call, gpuprims_status_name(s), msg);
  exit(1);
}

int main(void) {
  const float data[9] = {3, 1, 4, 1, 5, 9, 2, 6, 5};
  float median, top[3];
  uint64_t where[3];
  gpuprims_context *ctx;
  gpuprims_buffer *in, *values, *indices;

  check(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &ctx), "context_create");
  check(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_F32, data, 9, &in), "buffer_from_host");

  /* The lower median: rank (n - 1) / 2 of the sorted order. */
  check(gpuprims_select_kth(ctx, in, (9 - 1) / 2, &median), "select_kth");
  printf("median %g\n", median);

  /* Top 3, largest first; the indices buffer is U64 (pass NULL to skip it). */
  check(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_F32, 3, &values), "buffer_create values");
  check(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U64, 3, &indices), "buffer_create indices");
  check(gpuprims_topk(ctx, in, 3, GPUPRIMS_ORDER_DESCENDING, values, indices), "topk");
  check(gpuprims_buffer_read(values, 0, top, 3), "buffer_read values");
  check(gpuprims_buffer_read(indices, 0, where, 3), "buffer_read indices");
  printf("top 3: %g at [%u], %g at [%u], %g at [%u]\n", top[0], (unsigned)where[0], top[1], (unsigned)where[1],
         top[2], (unsigned)where[2]);

  gpuprims_buffer_destroy(indices);
  gpuprims_buffer_destroy(values);
  gpuprims_buffer_destroy(in);
  gpuprims_context_destroy(ctx);
  return 0;
}
