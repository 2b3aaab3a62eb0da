/* The multi-GPU rows of the tour (multi_bench.c). */
#ifndef GPUPRIMS_BENCH_MULTI_H
#define GPUPRIMS_BENCH_MULTI_H

#include "gpuprims.h"

/* Runs the multi-GPU rows when two or more CUDA devices are visible (all, or none when
 * `only` is set and does not name "multi"), each against one GPU's time in the same run.
 * Returns the number of rows that failed. */
int multi_tour(const char *only, int reps);

#endif
