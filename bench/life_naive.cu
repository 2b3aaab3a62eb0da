// The naive byte-per-cell Life kernel the Life rows are compared with (life_naive.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "life_naive.h"

namespace {

__global__ void naive_generation(const unsigned char *in, unsigned char *out, int w, int h) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int n = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            if (dx || dy) n += in[(size_t)((y + dy + h) % h) * w + (x + dx + w) % w];
    const unsigned char alive = in[(size_t)y * w + x];
    out[(size_t)y * w + x] = (n == 3 || (alive && n == 2)) ? 1 : 0;
}

__global__ void random_soup(unsigned char *c, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = i * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
        c[i] = (z >> 40) & 1;
    }
}

}  // namespace

extern "C" double lifenaive_generation_ms(int w, int h, int reps, void *stream_ptr) {
    cudaStream_t stream = (cudaStream_t)stream_ptr;
    const size_t n = (size_t)w * h;
    unsigned char *a = nullptr, *b = nullptr;
    cudaEvent_t start, stop;
    if (cudaMalloc(&a, n) != cudaSuccess || cudaMalloc(&b, n) != cudaSuccess) {
        cudaFree(a);
        return -1.0;
    }
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    random_soup<<<1024, 256, 0, stream>>>(a, n);
    const dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
    std::vector<double> times;
    for (int r = 0; r < reps + 2; ++r) {
        cudaEventRecord(start, stream);
        naive_generation<<<grid, block, 0, stream>>>(a, b, w, h);
        cudaEventRecord(stop, stream);
        cudaEventSynchronize(stop);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        if (r >= 2) times.push_back(ms);
        std::swap(a, b);
    }
    const bool ok = cudaGetLastError() == cudaSuccess;
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaFree(a);
    cudaFree(b);
    if (!ok || times.empty()) return -1.0;
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}
