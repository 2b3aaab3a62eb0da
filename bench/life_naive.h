/* The anchor of the Life rows: a naive byte-per-cell CUDA kernel (one thread per
 * cell, eight neighbour loads, a branch per cell), B3/S23 on a torus, timed with CUDA
 * events on `stream`. Built with the CUB reference (nvcc); life_naive_stub.c stands in
 * without CUDA. */
#ifndef GPUPRIMS_BENCH_LIFE_NAIVE_H
#define GPUPRIMS_BENCH_LIFE_NAIVE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Median ms of one generation of a random width x height soup over `reps` launches;
 * < 0 when CUDA is missing or fails. */
double lifenaive_generation_ms(int width, int height, int reps, void *stream);

#ifdef __cplusplus
}
#endif

#endif
