/*
 * consumer.c: the smallest real program against an installed (or added) gpuprims, built
 * by the packaging tests through find_package, pkg-config and add_subdirectory, shared
 * and static. It reduces 1..1000 on the default backend and checks the sum; it also
 * checks that the library loaded is the version of the header it was compiled with.
 */
#include <gpuprims.h>
#include <stdio.h>

static int fail(const char *what, gpuprims_status s) {
  char msg[256] = "";
  gpuprims_last_error(msg, sizeof msg);
  fprintf(stderr, "consumer: %s: %s: %s\n", what, gpuprims_status_name(s), msg);
  return 1;
}

int main(void) {
  enum { N = 1000 };
  int32_t data[N];
  int32_t sum = -1;
  gpuprims_context *ctx = NULL;
  gpuprims_buffer *buf = NULL;
  gpuprims_status s;
  char device[256] = "";
  int i, rc = 0;

  if (gpuprims_version() != GPUPRIMS_VERSION) {
    fprintf(stderr, "consumer: library version 0x%x, header version 0x%x\n", (unsigned)gpuprims_version(),
            (unsigned)GPUPRIMS_VERSION);
    return 1;
  }
  for (i = 0; i < N; i++) data[i] = i + 1;
  s = gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &ctx);
  if (s != GPUPRIMS_STATUS_OK) return fail("gpuprims_context_create", s);
  gpuprims_context_device_name(ctx, device, sizeof device, NULL);
  s = gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, data, N, &buf);
  if (s == GPUPRIMS_STATUS_OK) s = gpuprims_reduce(ctx, buf, GPUPRIMS_OP_SUM, &sum);
  if (s != GPUPRIMS_STATUS_OK) {
    rc = fail("gpuprims_reduce", s);
  } else if (sum != N * (N + 1) / 2) {
    fprintf(stderr, "consumer: sum of 1..%d is %ld, expected %d\n", N, (long)sum, N * (N + 1) / 2);
    rc = 1;
  } else {
    printf("consumer: gpuprims %d.%d.%d on %s: sum of 1..%d = %ld\n", GPUPRIMS_VERSION_MAJOR,
           GPUPRIMS_VERSION_MINOR, GPUPRIMS_VERSION_PATCH, device, N, (long)sum);
  }
  gpuprims_buffer_destroy(buf);
  gpuprims_context_destroy(ctx);
  return rc;
}
