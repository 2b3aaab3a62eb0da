/* reduce_scan: the sum, the minimum and the running sum of a few numbers.
 *
 * Runs on the GPU when there is one, else on the CPU (GPUPRIMS_BACKEND=cuda|host
 * chooses). Prints "sum 23, min 1, running sum 3 4 8 9 14 23".
 */
#include <gpuprims.h>
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
  float data[6] = {3, 1, 4, 1, 5, 9}, prefix[6], sum, min;
  gpuprims_context *ctx;
  gpuprims_buffer *in, *out;

  check(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &ctx), "context_create");
  /* A buffer holding a copy of data, and one for the scan to write. */
  check(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_F32, data, 6, &in), "buffer_from_host");
  check(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_F32, 6, &out), "buffer_create");

  /* gpuprims_reduce hands its value to host memory and waits for it. */
  check(gpuprims_reduce(ctx, in, GPUPRIMS_OP_SUM, &sum), "reduce sum");
  check(gpuprims_reduce(ctx, in, GPUPRIMS_OP_MIN, &min), "reduce min");
  /* The scan is queued on the device; buffer_read waits for it, then copies. */
  check(gpuprims_scan(ctx, in, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE), "scan");
  check(gpuprims_buffer_read(out, 0, prefix, 6), "buffer_read");

  printf("sum %g, min %g, running sum %g %g %g %g %g %g\n", sum, min, prefix[0], prefix[1],
         prefix[2], prefix[3], prefix[4], prefix[5]);
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(in);
  gpuprims_context_destroy(ctx);
  return 0;
}
