/* The segmented-select rows of the tour (segmented_select_bench.c). */
#ifndef GPUPRIMS_BENCH_SEGMENTED_SELECT_H
#define GPUPRIMS_BENCH_SEGMENTED_SELECT_H

#include "gpuprims.h"
#include "timer.h"

/* Runs the segmented-select rows (all, or none when `only` is set and names neither
 * "segsel" nor "segmented") on `ctx`, timed with `timer`, with CUB beside each when
 * `cub_stream` is not NULL; prints each row. Returns the number of rows that failed. */
int segmented_select_tour(gpuprims_context *ctx, bench_timer *timer, void *cub_stream, const char *only, int reps);

/* Prints the rows again, for the tour's summary. */
void segmented_select_summary(void);

#endif
