/* Calls a model exported by `jetpde export RUN --library DIR` (default name: model) from C.
 * Reads the number of points, then the points (MODEL_COORDINATES numbers each), from stdin;
 * prints the values (MODEL_OUTPUTS per point) as CSV with a header, 17 significant digits. */
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

int main(void) {
  long n = 0;
  if (scanf("%ld", &n) != 1 || n < 0) {
    fprintf(stderr, "expected the number of points first\n");
    return 1;
  }
  double* points = malloc((size_t)(n > 0 ? n : 1) * MODEL_COORDINATES * sizeof(double));
  double* out = malloc((size_t)(n > 0 ? n : 1) * MODEL_OUTPUTS * sizeof(double));
  if (!points || !out) return 1;
  for (long i = 0; i < n * MODEL_COORDINATES; ++i)
    if (scanf("%lf", &points[i]) != 1) {
      fprintf(stderr, "expected %ld numbers, read %ld\n", n * MODEL_COORDINATES, i);
      return 1;
    }
  const int status = model_eval(points, n, out);
  if (status != 0) {
    fprintf(stderr, "model_eval: status %d\n", status);
    return 1;
  }
  printf("%s,%s\n", model_coordinates(), model_outputs());
  for (long i = 0; i < n; ++i) {
    for (int c = 0; c < MODEL_COORDINATES; ++c)
      printf("%s%.17g", c ? "," : "", points[i * MODEL_COORDINATES + c]);
    for (int k = 0; k < MODEL_OUTPUTS; ++k) printf(",%.17g", out[i * MODEL_OUTPUTS + k]);
    printf("\n");
  }
  free(points);
  free(out);
  return 0;
}
