/* Calls a model exported by `jetpde export RUN --library DIR --device cuda` (default name: model)
 * from C, with the points and values in GPU memory. Reads the number of points, then the points
 * (MODEL_COORDINATES numbers each), from stdin; copies them to the GPU, evaluates on a stream of
 * its own, copies the values back and prints them as CSV with a header, 17 significant digits.
 * Exit status 3, with the library's message, when there is no GPU or CUDA fails. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

static int cuda_failed(const char* what, cudaError_t e) {
  fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return 3;
}

int main(void) {
  long n = 0;
  if (scanf("%ld", &n) != 1 || n < 1) {
    fprintf(stderr, "expected the number of points (at least 1) first\n");
    return 1;
  }
  const size_t in_bytes = (size_t)n * MODEL_COORDINATES * sizeof(double);
  const size_t out_bytes = (size_t)n * MODEL_OUTPUTS * sizeof(double);
  double* points = malloc(in_bytes);
  double* out = malloc(out_bytes);
  if (!points || !out) return 1;
  for (long i = 0; i < n * MODEL_COORDINATES; ++i)
    if (scanf("%lf", &points[i]) != 1) {
      fprintf(stderr, "expected %ld numbers, read %ld\n", n * MODEL_COORDINATES, i);
      return 1;
    }
  model_cuda* model = NULL;
  if (model_cuda_create(&model) != 0) {
    fprintf(stderr, "model_cuda_create: %s\n", model_cuda_error());
    return 3;
  }
  double *device_points = NULL, *device_out = NULL;
  cudaStream_t stream = NULL;
  cudaError_t e = cudaMalloc((void**)&device_points, in_bytes);
  if (e == cudaSuccess) e = cudaMalloc((void**)&device_out, out_bytes);
  if (e == cudaSuccess) e = cudaStreamCreate(&stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(device_points, points, in_bytes, cudaMemcpyHostToDevice, stream);
  if (e != cudaSuccess) return cuda_failed("copying the points to the GPU", e);
  if (model_cuda_eval(model, device_points, n, device_out, stream) != 0) {
    fprintf(stderr, "model_cuda_eval: %s\n", model_cuda_error());
    return 3;
  }
  e = cudaMemcpyAsync(out, device_out, out_bytes, cudaMemcpyDeviceToHost, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) return cuda_failed("copying the values back", e);
  printf("%s,%s\n", model_coordinates(), model_outputs());
  for (long i = 0; i < n; ++i) {
    for (int c = 0; c < MODEL_COORDINATES; ++c)
      printf("%s%.17g", c ? "," : "", points[i * MODEL_COORDINATES + c]);
    for (int k = 0; k < MODEL_OUTPUTS; ++k) printf(",%.17g", out[i * MODEL_OUTPUTS + k]);
    printf("\n");
  }
  model_cuda_destroy(model);
  cudaStreamDestroy(stream);
  cudaFree(device_points);
  cudaFree(device_out);
  free(points);
  free(out);
  return 0;
}
