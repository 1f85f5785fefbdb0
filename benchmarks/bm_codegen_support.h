// Shared by the codegen benchmarks: compile an HLO module's entry as one
// Halide kernel and run it on preallocated buffers.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "codegen/kernel_compiler.h"
#include "codegen/kernel_graph.h"
#include "hlo/text/parser.h"
#include "runtime/buffer.h"

namespace sharc::bench {

// f32 row-major [n,n] x [n,n] dot (bm_codegen_gemm, bm_codegen_compile_time).
inline std::string GemmModuleText(int64_t n) {
  const std::string d = absl::StrCat("[", n, ",", n, "]");
  return absl::StrCat("HloModule gemm\nENTRY main {\n  a = f32", d, " parameter(0)\n  b = f32", d,
                      " parameter(1)\n  ROOT c = f32", d,
                      " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
}

// softmax over the rows of f32[rows,1024], as the fusion pass would see it
// (bm_codegen_elementwise, bm_halide_autoschedulers); with `masked`, the
// second half of every row is set to -1e9 first, as an attention mask does,
// so that half of the exp results round to zero.
inline std::string SoftmaxRowsModule(int64_t rows, bool masked = false) {
  const std::string input = masked ? R"(
  x0 = f32[$R,1024] parameter(0)
  col = s32[$R,1024] iota(), iota_dimension=1
  half = s32[] constant(512)
  bhalf = s32[$R,1024] broadcast(half), dimensions={}
  hidden = pred[$R,1024] compare(col, bhalf), direction=GE
  big = f32[] constant(-1e9)
  bbig = f32[$R,1024] broadcast(big), dimensions={}
  x = f32[$R,1024] select(hidden, bbig, x0))"
                                   : R"(
  x = f32[$R,1024] parameter(0))";
  return absl::StrReplaceAll(absl::StrCat(R"(
HloModule softmax
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] maximum(x, y) }
ENTRY main {)", input, R"(
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[$R] reduce(x, ninf), dimensions={1}, to_apply=max
  bm = f32[$R,1024] broadcast(m), dimensions={0}
  s = f32[$R,1024] subtract(x, bm)
  e = f32[$R,1024] exponential(s)
  d = f32[$R] reduce(e, zero), dimensions={1}, to_apply=add
  bd = f32[$R,1024] broadcast(d), dimensions={0}
  ROOT y = f32[$R,1024] divide(e, bd)
}
)"),
                             {{"$R", absl::StrCat(rows)}});
}

// An HLO module's entry as one kernel graph, not compiled (the graph points
// into the module, which it keeps alive).
struct EntryGraph {
  std::unique_ptr<hlo::Module> module;
  codegen::KernelGraph graph;
};

inline absl::StatusOr<EntryGraph> TryParseEntryGraph(const std::string& text) {
  EntryGraph e;
  absl::StatusOr<std::unique_ptr<hlo::Module>> m = hlo::ParseAndVerifyModule(text);
  if (!m.ok()) return m.status();
  e.module = *std::move(m);
  absl::StatusOr<codegen::KernelGraph> g = codegen::GraphForComputation(*e.module->entry());
  if (!g.ok()) return g.status();
  e.graph = *std::move(g);
  return e;
}

// Aborts on any error (a benchmark has no one to report to).
inline EntryGraph ParseEntryGraph(const std::string& text) {
  absl::StatusOr<EntryGraph> e = TryParseEntryGraph(text);
  if (!e.ok()) std::abort();
  return *std::move(e);
}

struct CompiledEntry {
  std::unique_ptr<hlo::Module> module;
  std::shared_ptr<const codegen::CompiledKernel> kernel;
  std::vector<runtime::Buffer> inputs;
  std::vector<const runtime::Buffer*> input_ptrs;
  runtime::Buffer output;
  double compile_ms = 0;

  void Run() {
    absl::Status st = kernel->Run(input_ptrs, &output);
    if (!st.ok()) std::abort();
  }
};

// Inputs are filled with a pattern (values in [-1, 1)); aborts on any error
// (a benchmark has no one to report to).
inline CompiledEntry CompileEntry(const std::string& text) {
  CompiledEntry e;
  EntryGraph parsed = ParseEntryGraph(text);
  e.module = std::move(parsed.module);
  const codegen::KernelGraph* g = &parsed.graph;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::shared_ptr<const codegen::CompiledKernel>> k =
      codegen::KernelCompiler::Global().Compile(*g);
  if (!k.ok()) {
    fprintf(stderr, "%s\n", std::string(k.status().message()).c_str());
    std::abort();
  }
  e.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  e.kernel = *k;
  for (const hlo::Instruction* p : e.module->entry()->parameters()) {
    absl::StatusOr<runtime::Buffer> b = runtime::Buffer::Allocate(p->shape());
    if (!b.ok()) std::abort();
    if (p->shape().type() == hlo::PrimitiveType::kF32) {
      float* f = static_cast<float*>(b->data());
      for (int64_t i = 0; i < b->num_elements(); ++i) f[i] = static_cast<float>((i * 7919) % 2000) / 1000.f - 1.f;
    }
    e.inputs.push_back(*std::move(b));
  }
  for (const runtime::Buffer& b : e.inputs) e.input_ptrs.push_back(&b);
  absl::StatusOr<runtime::Buffer> out = runtime::Buffer::Allocate(e.module->entry()->root()->shape());
  if (!out.ok()) std::abort();
  e.output = *std::move(out);
  return e;
}

}  // namespace sharc::bench
