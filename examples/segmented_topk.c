/* segmented_topk: the k best of every row, as a language model's sampler or a
 * nearest-neighbour search takes them.
 *
 * Uniform rows are a 2-D array given by its row length (no offsets): here 3 rows of 6
 * scores, the 2 largest of each with their indices within the row. Ragged rows come
 * with offsets, and each row may want its own k (ks): a row shorter than its k gives
 * what it has, then pads (index UINT64_MAX). Prints
 *   row 0: 0.9@4 0.7@1
 *   row 1: 0.8@0 0.8@5
 *   row 2: 0.6@3 0.5@2
 *   ragged: {1 2} {4 7 9} {3 -}
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
  const float scores[18] = {0.1f, 0.7f, 0.2f, 0.3f, 0.9f, 0.4f,   /* row 0 */
                            0.8f, 0.1f, 0.2f, 0.3f, 0.4f, 0.8f,   /* row 1: a tie, lower index first */
                            0.1f, 0.2f, 0.5f, 0.6f, 0.3f, 0.4f};  /* row 2 */
  const uint32_t values[8] = {2, 1, 9, 4, 7, 3, 6, 8};
  const uint32_t offsets[4] = {0, 2, 5, 6}; /* rows {2, 1}, {9, 4, 7}, {3} */
  const uint32_t ks[3] = {2, 3, 2};         /* 7 results; row 2 has one element for two slots */
  float best[6];
  uint32_t small[7];
  uint64_t at[7];
  gpuprims_context *ctx;
  gpuprims_buffer *s, *v, *off, *k, *out, *idx;
  int r, j;

  check(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &ctx), "context_create");
  check(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_F32, scores, 18, &s), "buffer_from_host scores");
  check(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_F32, 6, &out), "buffer_create");
  check(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U64, 6, &idx), "buffer_create");

  /* Rows of 6 (offsets NULL), k = 2 for each, largest first, with their indices. */
  check(gpuprims_segmented_topk(ctx, s, NULL, 6, 2, NULL, GPUPRIMS_ORDER_DESCENDING, out, idx), "segmented_topk");
  check(gpuprims_buffer_read(out, 0, best, 6), "buffer_read");
  check(gpuprims_buffer_read(idx, 0, at, 6), "buffer_read");
  for (r = 0; r < 3; r++) printf("row %d: %.1f@%llu %.1f@%llu\n", r, best[2 * r], (unsigned long long)at[2 * r],
                                 best[2 * r + 1], (unsigned long long)at[2 * r + 1]);
  gpuprims_buffer_destroy(idx);
  gpuprims_buffer_destroy(out);

  /* Ragged rows with one k each, smallest first. */
  check(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, values, 8, &v), "buffer_from_host values");
  check(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, offsets, 4, &off), "buffer_from_host offsets");
  check(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, ks, 3, &k), "buffer_from_host ks");
  check(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U32, 7, &out), "buffer_create");
  check(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U64, 7, &idx), "buffer_create");
  check(gpuprims_segmented_topk(ctx, v, off, 0, 0, k, GPUPRIMS_ORDER_ASCENDING, out, idx), "segmented_topk ragged");
  check(gpuprims_buffer_read(out, 0, small, 7), "buffer_read");
  check(gpuprims_buffer_read(idx, 0, at, 7), "buffer_read");
  printf("ragged:");
  for (r = 0, j = 0; r < 3; r++) {
    uint32_t i;
    printf(" {");
    for (i = 0; i < ks[r]; i++, j++) {
      if (at[j] == UINT64_MAX) printf("%s-", i ? " " : "");
      else printf("%s%u", i ? " " : "", small[j]);
    }
    printf("}");
  }
  printf("\n");

  gpuprims_buffer_destroy(idx);
  gpuprims_buffer_destroy(out);
  gpuprims_buffer_destroy(k);
  gpuprims_buffer_destroy(off);
  gpuprims_buffer_destroy(v);
  gpuprims_buffer_destroy(s);
  gpuprims_context_destroy(ctx);
  return 0;
}
