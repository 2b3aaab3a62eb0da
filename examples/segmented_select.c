/* segmented_select: one element of each row of a ragged table, without sorting.
 *
 * The rows lie one after another in `values`; row r is values[offsets[r] ..
 * offsets[r + 1]). With ks NULL each row gives its lower median; with ks, the
 * element of rank ks[r] (0-based, ascending) within row r. Prints
 * "medians: 3 7 20" and "max of each row: 5 9 20".
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
  /* Three rows: {5, 3, 1, 4}, {7, 9, 8, 6, 2} and {20}. */
  const uint16_t values[10] = {5, 3, 1, 4, 7, 9, 8, 6, 2, 20};
  const uint32_t offsets[4] = {0, 4, 9, 10};
  const uint32_t last[3] = {3, 4, 0}; /* each row's length - 1: its largest element */
  uint16_t picked[3];
  gpuprims_context *ctx;
  gpuprims_buffer *v, *off, *ks, *out;

  check(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &ctx), "context_create");
  check(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U16, values, 10, &v), "buffer_from_host values");
  check(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, offsets, 4, &off), "buffer_from_host offsets");
  check(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, last, 3, &ks), "buffer_from_host ks");
  check(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U16, 3, &out), "buffer_create");

  /* A bad row (say offsets decreasing) would be INVALID_ARGUMENT naming it. */
  check(gpuprims_segmented_select(ctx, v, off, NULL, out), "segmented_select medians");
  check(gpuprims_buffer_read(out, 0, picked, 3), "buffer_read");
  printf("medians: %u %u %u\n", picked[0], picked[1], picked[2]);

  check(gpuprims_segmented_select(ctx, v, off, ks, out), "segmented_select ranks");
  check(gpuprims_buffer_read(out, 0, picked, 3), "buffer_read");
  printf("max of each row: %u %u %u\n", picked[0], picked[1], picked[2]);

  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(ks);
  gpuprims_buffer_destroy(off);
  gpuprims_buffer_destroy(v);
  gpuprims_context_destroy(ctx);
  return 0;
}
