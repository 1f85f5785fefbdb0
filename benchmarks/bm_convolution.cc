// Convolution against the way a compiler without one would run it: im2col
// (pad, one slice per window position, concatenated along the features)
// then sharc's GEMM, both compiled through the whole pipeline (fusion and
// Halide kernels, one device) and run in one process, alternating.
//
//   HL_NUM_THREADS=1 ./bm_convolution
//
// Layers (batch, spatial, in features -> out features, 3x3, same padding):
//   nhwc      8 x 32x32, 64 -> 64     (b01f_01io->b01f; 0.60 GFLOP)
//   nhwc_deep 8 x 16x16, 128 -> 128   (0.60 GFLOP)
//   nchw      8 x 32x32, 64 -> 64     (bf01_oi01->bf01; direct only: its
//             im2col writes the same GEMM, transposed)
// Counter GFLOPS: 2 * multiply-adds of the convolution per second (the
// im2col form does the same multiply-adds).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "driver/compiled_program.h"
#include "hlo/ir/literal.h"
#include "hlo/text/parser.h"

namespace {

struct Layer {
  int64_t batch, size, in, out;
};

std::string DirectNhwc(const Layer& l) {
  return absl::StrCat(R"(HloModule conv_nhwc
ENTRY e {
  x = f32[)", l.batch, ",", l.size, ",", l.size, ",", l.in, R"(] parameter(0)
  k = f32[3,3,)", l.in, ",", l.out, R"(] parameter(1)
  ROOT y = f32[)", l.batch, ",", l.size, ",", l.size, ",", l.out,
                      R"(] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
}

std::string DirectNchw(const Layer& l) {
  return absl::StrCat(R"(HloModule conv_nchw
ENTRY e {
  x = f32[)", l.batch, ",", l.in, ",", l.size, ",", l.size, R"(] parameter(0)
  k = f32[)", l.out, ",", l.in, R"(,3,3] parameter(1)
  ROOT y = f32[)", l.batch, ",", l.out, ",", l.size, ",", l.size,
                      R"(] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})");
}

// The same layer as pad, 9 slices, a concatenate along the features (in
// the kernel's (ky, kx, c) order) and one [positions, 9c] x [9c, out] dot.
std::string Im2colNhwc(const Layer& l) {
  const int64_t n = l.batch, s = l.size, c = l.in, o = l.out;
  std::string text = absl::StrCat("HloModule im2col_nhwc\nENTRY e {\n  x = f32[", n, ",", s, ",", s, ",",
                                  c, "] parameter(0)\n  k = f32[3,3,", c, ",", o,
                                  "] parameter(1)\n  zero = f32[] constant(0)\n  p = f32[", n, ",",
                                  s + 2, ",", s + 2, ",", c,
                                  "] pad(x, zero), padding=0_0x1_1x1_1x0_0\n");
  std::vector<std::string> slices;
  for (int ky = 0; ky < 3; ++ky) {
    for (int kx = 0; kx < 3; ++kx) {
      const std::string name = absl::StrCat("s", ky, kx);
      slices.push_back(name);
      absl::StrAppend(&text, "  ", name, " = f32[", n, ",", s, ",", s, ",", c, "] slice(p), slice={[0:", n,
                      "], [", ky, ":", ky + s, "], [", kx, ":", kx + s, "], [0:", c, "]}\n");
    }
  }
  absl::StrAppend(&text, "  cols = f32[", n, ",", s, ",", s, ",", 9 * c, "] concatenate(",
                  absl::StrJoin(slices, ", "), "), dimensions={3}\n", "  m = f32[", n * s * s, ",",
                  9 * c, "] reshape(cols)\n", "  km = f32[", 9 * c, ",", o, "] reshape(k)\n", "  d = f32[",
                  n * s * s, ",", o,
                  "] dot(m, km), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", "  ROOT y = f32[",
                  n, ",", s, ",", s, ",", o, "] reshape(d)\n}\n");
  return text;
}

std::vector<sharc::hlo::Literal> PatternArgs(const sharc::hlo::Module& module) {
  std::vector<sharc::hlo::Literal> args;
  for (const sharc::hlo::Instruction* p : module.entry()->parameters()) {
    sharc::hlo::Literal l(p->shape());
    for (int64_t i = 0; i < l.num_elements(); ++i) l.SetFromDouble(i, ((i * 7919) % 2001) / 1000.0 - 1.0);
    args.push_back(std::move(l));
  }
  return args;
}

void BM_Convolution(benchmark::State& state, std::string text, Layer layer) {
  auto module = sharc::hlo::ParseAndVerifyModule(text);
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  sharc::driver::ProgramOptions options;
  options.backend = sharc::driver::Backend::kHalide;
  auto program = sharc::driver::CompiledProgram::Compile(**module, options);
  if (!program.ok()) {
    state.SkipWithError(std::string(program.status().message()).c_str());
    return;
  }
  const std::vector<sharc::hlo::Literal> args = PatternArgs(**module);
  for (auto _ : state) {
    auto seconds = (*program)->TimeRuns(args, 1);
    if (!seconds.ok()) {
      state.SkipWithError(std::string(seconds.status().message()).c_str());
      return;
    }
    state.SetIterationTime((*seconds)[0]);
  }
  const double flops = 2.0 * layer.batch * layer.size * layer.size * layer.out * layer.in * 9;
  state.counters["GFLOPS"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

const Layer kNhwc{8, 32, 64, 64};
const Layer kNhwcDeep{8, 16, 128, 128};

BENCHMARK_CAPTURE(BM_Convolution, nhwc_direct, DirectNhwc(kNhwc), kNhwc)
    ->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Convolution, nhwc_im2col_gemm, Im2colNhwc(kNhwc), kNhwc)
    ->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Convolution, nhwc_deep_direct, DirectNhwc(kNhwcDeep), kNhwcDeep)
    ->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Convolution, nhwc_deep_im2col_gemm, Im2colNhwc(kNhwcDeep), kNhwcDeep)
    ->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Convolution, nchw_direct, DirectNchw(kNhwc), kNhwc)
    ->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
