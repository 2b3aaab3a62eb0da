/* topk-ties: gpuprims_topk on CUDA against the host backend where ties are many: sorted,
 * reversed and random 1- and 2-byte keys, k up to the whole length, both orders, with
 * indices (found by test_multi: the multi-rank top-k's final pick, a top-k of sorted
 * candidates with k = len, gave other tie indices than expected on i8/u8).
 * Build: cc -O2 -Iinclude scripts/probes/topk-ties.c -Ltarget/release -lgpuprims -o topk-ties */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprims.h"

static int run(gpuprims_context *gpu, gpuprims_context *host, gpuprims_dtype t, size_t width, const void *data, size_t n,
               size_t k, gpuprims_order order, const char *what) {
  gpuprims_context *ctx[2] = {gpu, host};
  uint64_t *idx[2];
  unsigned char *val[2];
  int c, bad = 0;
  for (c = 0; c < 2; c++) {
    gpuprims_buffer *in = NULL, *ov = NULL, *oi = NULL;
    idx[c] = (uint64_t *)malloc(8 * k + 8), val[c] = (unsigned char *)malloc(width * k + 8);
    if (gpuprims_buffer_from_host(ctx[c], t, data, n, &in) || gpuprims_buffer_create(ctx[c], t, k, &ov) ||
        gpuprims_buffer_create(ctx[c], GPUPRIMS_DTYPE_U64, k, &oi) || gpuprims_topk(ctx[c], in, k, order, ov, oi) ||
        gpuprims_buffer_read(ov, 0, val[c], k) || gpuprims_buffer_read(oi, 0, idx[c], k)) {
      char msg[512];
      gpuprims_last_error(msg, sizeof msg);
      printf("%s: error %s\n", what, msg);
      return 1;
    }
    gpuprims_buffer_destroy(in), gpuprims_buffer_destroy(ov), gpuprims_buffer_destroy(oi);
  }
  if (memcmp(val[0], val[1], width * k)) bad |= 1;
  if (memcmp(idx[0], idx[1], 8 * k)) bad |= 2;
  if (bad) {
    size_t i = 0;
    while (i < k && idx[0][i] == idx[1][i]) i++;
    printf("%s n=%zu k=%zu %s: %s%s differ (first index difference at %zu: cuda %llu host %llu)\n", what, n, k,
           order ? "desc" : "asc", bad & 1 ? "values " : "", bad & 2 ? "indices" : "", i,
           i < k ? (unsigned long long)idx[0][i] : 0ull, i < k ? (unsigned long long)idx[1][i] : 0ull);
  }
  free(idx[0]), free(idx[1]), free(val[0]), free(val[1]);
  return bad != 0;
}

int main(void) {
  gpuprims_context *gpu = NULL, *host = NULL;
  static const size_t sizes[] = {3000, 5000, 20000, 51934, 70001, 300000};
  static const gpuprims_dtype types[] = {GPUPRIMS_DTYPE_U8, GPUPRIMS_DTYPE_I8, GPUPRIMS_DTYPE_U16, GPUPRIMS_DTYPE_F32};
  static const size_t widths[] = {1, 1, 2, 4};
  uint64_t s = 12345;
  size_t si, ti, i;
  int fails = 0, runs = 0;
  if (gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 0, &gpu) || gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &host))
    return 2;
  for (ti = 0; ti < 4; ti++)
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      size_t n = sizes[si], w = widths[ti];
      unsigned char *d = (unsigned char *)malloc(n * w);
      int pattern;
      for (pattern = 0; pattern < 3; pattern++) {
        for (i = 0; i < n * w; i++) s = s * 6364136223846793005ull + 1442695040888963407ull, d[i] = (unsigned char)(s >> 56);
        if (w == 4) /* keep f32 finite: small integers */
          for (i = 0; i < n; i++) { float f = (float)(d[4 * i] % 50); memcpy(d + 4 * i, &f, 4); }

        if (pattern > 0 && w == 1) { /* sorted ascending (1) or descending (2), as bytes */
          size_t cnt[256] = {0}, at = 0; int v;
          for (i = 0; i < n; i++) cnt[d[i]]++;
          for (v = 0; v < 256; v++) { int b = pattern == 1 ? v : 255 - v; size_t c; for (c = 0; c < cnt[b]; c++) d[at++] = (unsigned char)b; }
        }
        {
          size_t ks[4] = {n, n - 1, n / 2 + 7, 2049};
          int kk, o;
          for (kk = 0; kk < 4; kk++)
            for (o = 0; o < 2; o++) {
              char what[64];
              snprintf(what, sizeof what, "type %u pattern %d", (unsigned)types[ti], pattern);
              fails += run(gpu, host, types[ti], w, d, n, ks[kk], (gpuprims_order)o, what);
              runs++;
            }
        }
      }
      free(d);
    }
  printf("topk-ties: %d of %d runs differ\n", fails, runs);
  gpuprims_context_destroy(gpu), gpuprims_context_destroy(host);
  return fails != 0;
}
