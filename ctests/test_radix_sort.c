/*
 * test_radix_sort: gpuprims_radix_sort (in place, stable, ascending and descending); the
 * tests themselves are sort_test_body.h's, shared with test_quicksort.
 */
#define SORT_NAME "radix_sort"
#define SORT_CALL gpuprims_radix_sort
#define SORT_STABLE 1
#include "sort_test_body.h"
