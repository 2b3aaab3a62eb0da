/*
 * test_radix_sort: gpuprims_radix_sort (in place, stable, ascending and descending); the
 * tests themselves are sort_test_body.h's, shared with test_quicksort.
 */
#define SORT_NAME "radix_sort"
#define SORT_CALL gpuprims_radix_sort
#define SORT_STABLE 1
/* Around the CUDA passes' tiles as of 2026-11-24 (src/backend/cuda/radix_sort.rs: 256 x 20
 * for pairs of more than 8 bytes, 512 x 24 for 4-byte keys, 384 x 20 for 8-byte keys and
 * for 4-byte keys with 4-byte values (packed), 384 x 24 for 1-byte keys, 384 x 30 for the
 * other pairs up to 8 bytes), and past two tiles of the pairs' shapes; the fixed sizes
 * cover the 2-byte keys' 384 x 18. */
#define SORT_TILE_EDGES                                                                                          \
  5119, 5120, 5121, 7679, 7680, 7681, 9215, 9216, 9217, 10241, 11519, 11520, 11521, 12287, 12288, 15361, 23041
#include "sort_test_body.h"
