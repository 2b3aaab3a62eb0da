/* cuda_check.h: CK(call), for the probes: print the failing CUDA runtime call and exit. */
#pragma once
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                             \
    do {                                                                                  \
        cudaError_t e_ = (x);                                                             \
        if (e_ != cudaSuccess) {                                                          \
            printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));      \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)
