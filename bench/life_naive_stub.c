/* Without CUDA there is no naive Life kernel to time (life_naive.h). */
#include "life_naive.h"

double lifenaive_generation_ms(int width, int height, int reps, void *stream) {
  (void)width;
  (void)height;
  (void)reps;
  (void)stream;
  return -1.0;
}
