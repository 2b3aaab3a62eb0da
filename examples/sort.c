/* sort: the two sorts, each moving a value with every key.
 *
 * gpuprims_radix_sort is stable (equal keys keep their input order);
 * gpuprims_quicksort gives the same keys in the same order but may reorder equal
 * keys' values. Both sort in place. Prints the keys with their values (here the
 * input index of each key) after each sort.
 */
#include <gpuprims.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 8

/* Every call returns a status: on a failure, print the library's message and stop. */
static void check(gpuprims_status s, const char *call) {
  char msg[256] = "";
  if (s == GPUPRIMS_STATUS_OK) return;
  gpuprims_last_error(msg, sizeof msg);
  fprintf(stderr, "%s: %s: %s\n", call, gpuprims_status_name(s), msg);
  exit(1);
}

/* Sorts a fresh copy of keys (with their indices as values) by radix sort or
 * quicksort, then prints "key:index" pairs. */
static void sort_and_print(gpuprims_context *ctx, const char *name, const int32_t *keys, gpuprims_order order,
                           int quick) {
  uint32_t index[N];
  int32_t sorted[N];
  gpuprims_buffer *k, *v;
  int i;
  for (i = 0; i < N; i++) index[i] = (uint32_t)i;
  check(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, keys, N, &k), "buffer_from_host keys");
  check(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, index, N, &v), "buffer_from_host values");
  if (quick) check(gpuprims_quicksort(ctx, k, v, order), "quicksort");
  else check(gpuprims_radix_sort(ctx, k, v, order), "radix_sort");
  check(gpuprims_buffer_read(k, 0, sorted, N), "buffer_read keys");
  check(gpuprims_buffer_read(v, 0, index, N), "buffer_read values");
  printf("%-16s", name);
  for (i = 0; i < N; i++) printf(" %d:%u", sorted[i], index[i]);
  printf("\n");
  gpuprims_buffer_destroy(v);
  gpuprims_buffer_destroy(k);
}

int main(void) {
  const int32_t keys[N] = {42, -7, 13, 42, 0, -7, 99, 5};
  gpuprims_context *ctx;
  check(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &ctx), "context_create");
  sort_and_print(ctx, "radix ascending", keys, GPUPRIMS_ORDER_ASCENDING, 0);   /* -7:1 -7:5 0:4 ... */
  sort_and_print(ctx, "radix descending", keys, GPUPRIMS_ORDER_DESCENDING, 0); /* 99:6 42:0 42:3 ... */
  sort_and_print(ctx, "quicksort", keys, GPUPRIMS_ORDER_ASCENDING, 1);        /* the same keys */
  gpuprims_context_destroy(ctx);
  return 0;
}
