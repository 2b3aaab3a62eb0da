/* multi_gpu: one sort, sum and top-k over several devices' shards, from one process.
 *
 * A group joins one context per device with a communicator (NCCL on CUDA; on the host
 * backend, as here, each "device" is a rank run by a thread, so this runs anywhere).
 * Each device holds a shard; the global sequence is the shards in device order. After
 * the sort each device keeps as many keys as it gave, and the shards in order are
 * sorted. On a machine with two GPUs, make the group with GPUPRIMS_BACKEND_CUDA and
 * devices {0, 1}; across processes or machines, see gpuprims_comm_create. Prints
 *   shard 0: 1 2 3 4
 *   shard 1: 5 6 7 8 9
 *   sum 45
 *   top 3: 9@2 8@8 7@6
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
  const int32_t devices[2] = {0, 1};
  const uint32_t shard0[4] = {4, 2, 9, 1}, shard1[5] = {3, 5, 7, 6, 8}; /* global indices 0-3, 4-8 */
  const uint32_t *data[2] = {shard0, shard1};
  const size_t lens[2] = {4, 5};
  gpuprims_group *group;
  gpuprims_context *ctx[2];
  gpuprims_buffer *in[2], *keys[2], *top[2], *at[2];
  uint32_t sorted[5], best[3];
  uint64_t where[3], sum = 0;
  int d;
  size_t i;

  check(gpuprims_group_create(GPUPRIMS_BACKEND_HOST, devices, 2, &group), "group_create");
  for (d = 0; d < 2; d++) {
    /* Each device's buffers live in its own context. */
    check(gpuprims_group_context(group, (size_t)d, &ctx[d]), "group_context");
    check(gpuprims_buffer_from_host(ctx[d], GPUPRIMS_DTYPE_U32, data[d], lens[d], &in[d]), "buffer_from_host");
    check(gpuprims_buffer_from_host(ctx[d], GPUPRIMS_DTYPE_U32, data[d], lens[d], &keys[d]), "buffer_from_host");
    check(gpuprims_buffer_create(ctx[d], GPUPRIMS_DTYPE_U32, 3, &top[d]), "buffer_create");
    check(gpuprims_buffer_create(ctx[d], GPUPRIMS_DTYPE_U64, 3, &at[d]), "buffer_create");
  }

  /* Sorted across devices, in place; values (NULL here) would travel along. */
  check(gpuprims_group_radix_sort(group, keys, NULL, GPUPRIMS_ORDER_ASCENDING), "group_radix_sort");
  for (d = 0; d < 2; d++) {
    check(gpuprims_buffer_read(keys[d], 0, sorted, lens[d]), "buffer_read");
    printf("shard %d:", d);
    for (i = 0; i < lens[d]; i++) printf(" %u", sorted[i]);
    printf("\n");
  }

  /* Every device gets the sum of all shards, and the 3 largest with global indices. */
  check(gpuprims_group_reduce(group, (const gpuprims_buffer *const *)in, GPUPRIMS_OP_SUM, &sum), "group_reduce");
  printf("sum %u\n", (unsigned)sum);
  check(gpuprims_group_topk(group, (const gpuprims_buffer *const *)in, 3, GPUPRIMS_ORDER_DESCENDING, top, at),
        "group_topk");
  check(gpuprims_buffer_read(top[1], 0, best, 3), "buffer_read");
  check(gpuprims_buffer_read(at[1], 0, where, 3), "buffer_read");
  printf("top 3: %u@%llu %u@%llu %u@%llu\n", best[0], (unsigned long long)where[0], best[1],
         (unsigned long long)where[1], best[2], (unsigned long long)where[2]);

  for (d = 0; d < 2; d++) {
    gpuprims_buffer_destroy(in[d]), gpuprims_buffer_destroy(keys[d]);
    gpuprims_buffer_destroy(top[d]), gpuprims_buffer_destroy(at[d]);
    gpuprims_context_destroy(ctx[d]);
  }
  gpuprims_group_destroy(group);
  return 0;
}
