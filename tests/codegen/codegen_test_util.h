// Helpers for codegen tests: random inputs over a chosen range, running a
// computation as one Halide kernel or a module through the Executable with
// the Halide factory, and comparing against the interpreter (bit-exact, or
// within a tolerance for ops whose float results depend on the libm/Halide
// polynomial or on summation order).
#pragma once

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "codegen/halide_kernel_factory.h"
#include "codegen/kernel_compiler.h"
#include "codegen/kernel_graph.h"
#include "gtest/gtest.h"
#include "hlo/eval/interpreter.h"
#include "hlo/ir/literal.h"
#include "hlo/text/parser.h"
#include "runtime/buffer.h"
#include "runtime/executable.h"

namespace sharc::codegen::testing_util {

// Scalar computations defining `picks`, a reducer Halide does not lower
// (it branches through a conditional): the tests' example of an op with no
// Halide lowering. Put it before the ENTRY of a module text.
inline constexpr const char* kBranchingReducer = R"(
neg { p = f32[] parameter(0)  ROOT n = f32[] negate(p) }
same { p = f32[] parameter(0)  ROOT c = f32[] copy(p) }
picks { x = f32[] parameter(0)  y = f32[] parameter(1)  lt = pred[] compare(x, y), direction=LT
        ROOT c = f32[] conditional(lt, x, y), true_computation=neg, false_computation=same }
)";

// softmax over the rows of f32[rows,cols], as front ends write it: the row
// max subtracted, exp, divided by the row sum.
inline std::string SoftmaxText(int64_t rows, int64_t cols) {
  return absl::StrReplaceAll(R"(
HloModule softmax
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] maximum(x, y) }
ENTRY main {
  x = f32[$R,$C] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[$R] reduce(x, ninf), dimensions={1}, to_apply=max
  bm = f32[$R,$C] broadcast(m), dimensions={0}
  s = f32[$R,$C] subtract(x, bm)
  e = f32[$R,$C] exponential(s)
  d = f32[$R] reduce(e, zero), dimensions={1}, to_apply=add
  bd = f32[$R,$C] broadcast(d), dimensions={0}
  ROOT y = f32[$R,$C] divide(e, bd)
}
)",
                             {{"$R", absl::StrCat(rows)}, {"$C", absl::StrCat(cols)}});
}

// Every array element type of the IR, for tests parameterised over dtypes.
inline std::vector<hlo::PrimitiveType> AllTypes() {
  int count = 0;
  const hlo::PrimitiveType* all = hlo::AllArrayTypes(&count);
  return std::vector<hlo::PrimitiveType>(all, all + count);
}

// Instantiates a module text for one element type: T[ becomes the type,
// OPA its accumulating op (add; or for pred, which has no add) and OPS an
// order-dependent one (subtract; xor for pred).
inline std::string ForType(const char* text, hlo::PrimitiveType t) {
  return absl::StrReplaceAll(text, {{"T[", hlo::PrimitiveTypeName(t) + "["},
                                    {"OPA", t == hlo::PrimitiveType::kPred ? "or" : "add"},
                                    {"OPS", t == hlo::PrimitiveType::kPred ? "xor" : "subtract"}});
}

// Every test process compiles into its own fresh cache directory, so tests
// never depend on what an earlier run left behind.
// The directory is removed when the process exits.
inline void UseFreshCacheDir() {
  static bool done = [] {
    static char dir[] = "/tmp/sharc_codegen_test_XXXXXX";
    if (mkdtemp(dir) != nullptr) {
      KernelCompiler::Global().set_cache_dir(dir);
      std::atexit([] {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
      });
    }
    return true;
  }();
  (void)done;
}

// Floats uniform in [lo, hi); integers from random bits over their whole
// range (so wrap-around is exercised) unless `small_ints`; pred fair coins.
inline hlo::Literal RandomLiteral(const hlo::Shape& shape, std::mt19937_64& rng, double lo = -3,
                                  double hi = 3, bool small_ints = false) {
  hlo::Literal l(shape);
  std::uniform_real_distribution<double> real(lo, hi);
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    const hlo::PrimitiveType t = shape.type();
    if (t == hlo::PrimitiveType::kPred) {
      l.SetFromInt64(i, rng() & 1);
    } else if (hlo::IsFloatingPoint(t)) {
      l.SetFromDouble(i, real(rng));
    } else if (small_ints) {
      l.SetFromInt64(i, static_cast<int64_t>(rng() % 17) - (hlo::IsSignedInteger(t) ? 8 : 0));
    } else {
      // Mostly full-range bits, with small values and edge cases mixed in.
      uint64_t r = rng();
      int64_t v = static_cast<int64_t>(r);
      switch (r % 5) {
        case 0: v = static_cast<int64_t>(r >> 8) % 9 - 4; break;
        case 1: v = static_cast<int64_t>(r >> 8) % 70; break;
        default: break;
      }
      l.SetFromInt64(i, v);
    }
  }
  return l;
}

inline std::vector<hlo::Literal> RandomArgs(const hlo::Module& module, uint64_t seed,
                                            double lo = -3, double hi = 3,
                                            bool small_ints = false) {
  std::mt19937_64 rng(seed);
  std::vector<hlo::Literal> args;
  for (const hlo::Instruction* p : module.entry()->parameters()) {
    args.push_back(RandomLiteral(p->shape(), rng, lo, hi, small_ints));
  }
  return args;
}

// The Halide lowering of the entry computation as one kernel, as text.
inline absl::StatusOr<std::string> LoweringOfEntry(const hlo::Module& module) {
  absl::StatusOr<KernelGraph> graph = GraphForComputation(*module.entry());
  if (!graph.ok()) return graph.status();
  return KernelCompiler::Global().LoweringText(*graph);
}

// The Halide loop nest of the entry computation as one kernel, as text.
inline absl::StatusOr<std::string> LoopNestOfEntry(const hlo::Module& module) {
  absl::StatusOr<KernelGraph> graph = GraphForComputation(*module.entry());
  if (!graph.ok()) return graph.status();
  absl::StatusOr<KernelDump> dump = KernelCompiler::Global().Dump(*graph);
  if (!dump.ok()) return dump.status();
  return dump->loop_nest;
}

// Runs the entry computation as one Halide kernel.
inline absl::StatusOr<hlo::Literal> RunAsOneKernel(const hlo::Module& module,
                                                   const std::vector<hlo::Literal>& args) {
  UseFreshCacheDir();
  absl::StatusOr<KernelGraph> graph = GraphForComputation(*module.entry());
  if (!graph.ok()) return graph.status();
  absl::StatusOr<std::shared_ptr<const CompiledKernel>> kernel =
      KernelCompiler::Global().Compile(*graph);
  if (!kernel.ok()) return kernel.status();
  std::vector<runtime::Buffer> inputs;
  for (const hlo::Literal& a : args) {
    absl::StatusOr<runtime::Buffer> b = runtime::Buffer::FromLiteral(a);
    if (!b.ok()) return b.status();
    inputs.push_back(*std::move(b));
  }
  std::vector<const runtime::Buffer*> ptrs;
  for (const runtime::Buffer& b : inputs) ptrs.push_back(&b);
  absl::StatusOr<runtime::Buffer> out =
      runtime::Buffer::Allocate(module.entry()->root()->shape());
  if (!out.ok()) return out.status();
  absl::Status st = (*kernel)->Run(ptrs, &*out);
  if (!st.ok()) return st;
  return out->ToLiteral();
}

// Runs `module` through the Executable with Halide kernels on one device.
inline absl::StatusOr<hlo::Literal> RunWithHalideFactory(const hlo::Module& module,
                                                         const std::vector<hlo::Literal>& args) {
  UseFreshCacheDir();
  HalideKernelFactory factory;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> exe =
      runtime::Executable::Create(module, factory);
  if (!exe.ok()) return exe.status();
  std::vector<runtime::Buffer> inputs;
  for (const hlo::Literal& a : args) {
    absl::StatusOr<runtime::Buffer> b = runtime::Buffer::FromLiteral(a);
    if (!b.ok()) return b.status();
    inputs.push_back(*std::move(b));
  }
  runtime::DeviceContext device;
  absl::StatusOr<runtime::Buffer> out = (*exe)->Run(device, inputs);
  if (!out.ok()) return out.status();
  return out->ToLiteral();
}

// Elements agree: bit-equal after the same NaN test, or within
// atol + rtol*|expected| for floats when a tolerance is given.
inline ::testing::AssertionResult LiteralsMatch(const hlo::Literal& expected,
                                                const hlo::Literal& actual, double rtol = 0,
                                                double atol = 0, const std::string& what = "") {
  if (expected.shape() != actual.shape()) {
    return ::testing::AssertionFailure() << what << ": shape " << actual.shape().ToString()
                                         << ", expected " << expected.shape().ToString();
  }
  if (expected.is_tuple()) {
    for (int64_t i = 0; i < expected.shape().tuple_size(); ++i) {
      ::testing::AssertionResult r = LiteralsMatch(expected.element(i), actual.element(i), rtol,
                                                   atol, absl::StrCat(what, "[", i, "]"));
      if (!r) return r;
    }
    return ::testing::AssertionSuccess();
  }
  const bool is_float = hlo::IsFloatingPoint(expected.shape().type());
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    if (is_float) {
      double e = expected.GetAsDouble(i), a = actual.GetAsDouble(i);
      if (std::isnan(e) && std::isnan(a)) continue;
      if (e == a && std::signbit(e) == std::signbit(a)) continue;
      if (std::isinf(e) || std::isinf(a) || std::isnan(e) || std::isnan(a) ||
          std::abs(e - a) > atol + rtol * std::abs(e)) {
        return ::testing::AssertionFailure()
               << what << " " << expected.shape().ToString() << " element " << i << ": got "
               << a << ", expected " << e;
      }
    } else if (expected.GetAsInt64(i) != actual.GetAsInt64(i)) {
      return ::testing::AssertionFailure()
             << what << " " << expected.shape().ToString() << " element " << i << ": got "
             << actual.GetAsInt64(i) << ", expected " << expected.GetAsInt64(i);
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace sharc::codegen::testing_util
