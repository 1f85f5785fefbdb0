/* Embedding sharc from C: parse a matrix product sharded over 2 devices,
 * compile it, run it on host arrays, check the numbers against a plain C
 * loop, print the per-device cost report, and show what an error looks like.
 *
 *   cmake -S examples/c_api -B build-example -DCMAKE_PREFIX_PATH=<sharc prefix>
 *   cmake --build build-example && build-example/sharc_c_api_example
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sharc/sharc_c.h>

/* y = x @ w with the contracting dimension split over the devices: each
 * device multiplies its half of x's columns by its half of w's rows, and an
 * all-reduce adds the two partial products. */
static const char kMatmul[] =
    "HloModule c_api_matmul, num_partitions=2\n"
    "\n"
    "ENTRY %main {\n"
    "  %x = f32[4,6] parameter(0), sharding={devices=[1,2]0,1}\n"
    "  %w = f32[6,3] parameter(1), sharding={devices=[2,1]0,1}\n"
    "  ROOT %y = f32[4,3] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0},"
    " sharding={replicated}\n"
    "}\n";

/* Uses %q, which is never defined. */
static const char kBroken[] =
    "HloModule broken\n"
    "\n"
    "ENTRY %main {\n"
    "  %x = f32[4] parameter(0)\n"
    "  ROOT %y = f32[4] add(%x, %q)\n"
    "}\n";

/* Prints and releases `error`; returns 1 if there was one. */
static int Failed(sharc_error* error, const char* what) {
  if (error == NULL) return 0;
  fprintf(stderr, "%s failed (%s): %s\n", what,
          sharc_error_code_name(sharc_error_get_code(error)), sharc_error_message(error));
  sharc_error_free(error);
  return 1;
}

int main(void) {
  enum { M = 4, K = 6, N = 3 };
  float x[M * K], w[K * N], expected[M * N];
  for (int i = 0; i < M * K; ++i) x[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < K * N; ++i) w[i] = 0.5f * (float)(i % 5) - 1.0f;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float sum = 0;
      for (int k = 0; k < K; ++k) sum += x[i * K + k] * w[k * N + j];
      expected[i * N + j] = sum;
    }
  }

  printf("sharc %s\n", sharc_version());
  sharc_module* module = NULL;
  sharc_options* options = NULL;
  sharc_program* program = NULL;
  sharc_result* result = NULL;
  sharc_report* report = NULL;
  int status = 1;

  if (Failed(sharc_module_parse(kMatmul, "matmul.hlo", &module), "parse")) goto done;
  if (Failed(sharc_options_create(&options), "options")) goto done;
  if (Failed(sharc_options_set_num_devices(options, 2), "set devices")) goto done;
  if (Failed(sharc_compile(module, options, &program), "compile")) goto done;
  const char* notes = NULL;
  if (!Failed(sharc_program_notes(program, &notes), "notes") && notes[0] != '\0') {
    printf("note: %s\n", notes);
  }

  const int64_t x_dims[2] = {M, K};
  const int64_t w_dims[2] = {K, N};
  const sharc_array inputs[2] = {{SHARC_DTYPE_F32, 2, x_dims, x}, {SHARC_DTYPE_F32, 2, w_dims, w}};
  if (Failed(sharc_program_run(program, inputs, 2, &result), "run")) goto done;

  sharc_array y;
  if (Failed(sharc_result_output(result, 0, &y), "output")) goto done;
  if (y.dtype != SHARC_DTYPE_F32 || y.rank != 2 || y.dims[0] != M || y.dims[1] != N) {
    fprintf(stderr, "unexpected output shape\n");
    goto done;
  }
  const float* values = (const float*)y.data;
  for (int i = 0; i < M * N; ++i) {
    if (fabsf(values[i] - expected[i]) > 1e-4f * (1.0f + fabsf(expected[i]))) {
      fprintf(stderr, "y[%d] = %g but the C loop gives %g\n", i, values[i], expected[i]);
      goto done;
    }
  }
  printf("2 devices match the C loop: y[0][0] = %g, y[%d][%d] = %g\n", values[0], M - 1, N - 1,
         values[M * N - 1]);

  const char* json = NULL;
  double flops = 0;
  int64_t communication = 0;
  if (Failed(sharc_program_report(program, &report), "report")) goto done;
  if (Failed(sharc_report_json(report, &json), "report json")) goto done;
  if (Failed(sharc_report_flops(report, &flops), "flops")) goto done;
  if (Failed(sharc_report_communication_bytes(report, &communication), "bytes")) goto done;
  printf("cost report: %s\n", json);
  printf("per device: %.0f flops, %lld bytes sent\n", flops, (long long)communication);

  /* Errors come back as objects: a code, the `sharc` exit code and a message
   * that points at the fault. */
  sharc_module* broken = NULL;
  sharc_error* error = sharc_module_parse(kBroken, "broken.hlo", &broken);
  if (error == NULL || broken != NULL) {
    fprintf(stderr, "the broken module parsed\n");
    sharc_module_free(broken);
    goto done;
  }
  printf("a bad module is %s (exit code %d):\n%s\n",
         sharc_error_code_name(sharc_error_get_code(error)), sharc_error_exit_code(error),
         sharc_error_message(error));
  sharc_error_free(error);
  status = 0;

done:
  sharc_report_free(report);
  sharc_result_free(result);
  sharc_program_free(program);
  sharc_options_free(options);
  sharc_module_free(module);
  return status;
}
