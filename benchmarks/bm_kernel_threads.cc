// A Halide kernel with a parallel loop, run on meshes of 1, 2, 4 and 8
// in-process devices, with the kernels' loops routed by each
// runtime/kernel_loop_pool.h KernelLoopPool (the `pool` argument):
//   0  serial when the device's share of the cores is one thread, else
//      Halide's pool (the default before the OpenMP executor)
//   1  always an OpenMP team of the device's share (`omp parallel for`)
//   2  always Halide's own pool (what the runtime did before
//      kernel_loop_pool existed): on 2 cores, 8 devices plus Halide's pool
//      keep more threads runnable than there are cores
//   3  serial at a share of one, else the process-wide OpenMP executor
//   4  always serial on the device thread
// The default is marked by the counter is_default = 1.
//
//   build/benchmarks/bm_kernel_threads --benchmark_min_time=0.5
//   chrt -f 10 build/benchmarks/bm_kernel_threads --benchmark_min_time=0.5
//
// Every device computes tanh(x * y + x) on its own f32[512, 1024] (2 MiB per
// array); time = wall time of one DeviceMesh::RunBuffers (all devices, with
// the device threads' start-up), items = elements over all devices.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "codegen/halide_kernel_factory.h"
#include "hlo/text/parser.h"
#include "runtime/executable.h"
#include "runtime/kernel_loop_pool.h"
#include "runtime/mesh_runtime.h"

namespace sharc::runtime {
namespace {

constexpr const char* kModule = R"(
HloModule kernel_threads
ENTRY e {
  x = f32[512,1024] parameter(0)
  y = f32[512,1024] parameter(1)
  p = f32[512,1024] multiply(x, y)
  s = f32[512,1024] add(p, x)
  ROOT t = f32[512,1024] tanh(s)
}
)";

struct Program {
  std::unique_ptr<hlo::Module> module;
  std::unique_ptr<Executable> executable;
};

Program* GetProgram() {
  static Program* program = [] {
    auto* p = new Program;
    absl::StatusOr<std::unique_ptr<hlo::Module>> m = hlo::ParseModule(kModule);
    if (!m.ok()) return p;
    p->module = *std::move(m);
    // Fused into one kernel, as `sharc run` does.
    if (!codegen::PrepareForHalide(*p->module).ok()) return p;
    codegen::HalideKernelFactory factory;
    absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(*p->module, factory);
    if (exe.ok()) p->executable = *std::move(exe);
    return p;
  }();
  return program;
}

// range(0): devices; range(1): the KernelLoopPool (see the top of the file).
void BM_ParallelKernelOnMesh(benchmark::State& state) {
  const int64_t devices = state.range(0);
  const auto loop_pool = static_cast<KernelLoopPool>(state.range(1));
  Program* program = GetProgram();
  if (program->executable == nullptr) {
    state.SkipWithError("the kernel did not compile");
    return;
  }
  const hlo::Shape shape(hlo::PrimitiveType::kF32, {512, 1024});
  std::vector<std::vector<Buffer>> args(static_cast<size_t>(devices));
  for (int64_t d = 0; d < devices; ++d) {
    for (int k = 0; k < 2; ++k) {
      Buffer b = *Buffer::Allocate(shape);
      auto v = b.typed<float>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i + d + k) % 97) / 97.0f;
      args[static_cast<size_t>(d)].push_back(std::move(b));
    }
  }
  SetKernelLoopPool(loop_pool);
  MeshOptions options;
  options.num_devices = devices;
  DeviceMesh mesh(options);
  for (auto _ : state) {
    absl::StatusOr<std::vector<Buffer>> out = mesh.RunBuffers(*program->executable, args);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out->data());
  }
  SetKernelLoopPool(kDefaultKernelLoopPool);
  state.SetItemsProcessed(state.iterations() * devices * shape.num_elements());
  state.counters["threads_per_device"] = mesh.threads_per_device();
  state.counters["is_default"] = loop_pool == kDefaultKernelLoopPool ? 1 : 0;
}

BENCHMARK(BM_ParallelKernelOnMesh)
    ->ArgNames({"devices", "pool"})
    ->ArgsProduct({{1, 2, 4, 8}, {0, 1, 2, 3, 4}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sharc::runtime

BENCHMARK_MAIN();
