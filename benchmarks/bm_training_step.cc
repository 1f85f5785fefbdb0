// One training step of the transformer LM of examples/transformer_lm, as a
// user writes it: value_and_grad of the mean next-token cross-entropy, then
// params -= lr * grad, jitted with the Halide backend. Three sizes (vocab,
// context, width, heads, mlp, layers, batch):
//   small   256,  64, 128, 4,  512, 2, 16   (0.44M parameters)
//   medium 1024, 128, 256, 8, 1024, 4, 16   (3.45M)
//   large  1024, 128, 512, 8, 2048, 6, 16   (19.5M)
// on 1 device, and on 2 with the batch split over a `data` axis.
//
// Counters: ms per step, GFLOP per step (the cost model's, over all
// devices) and GFLOPS achieved; `loss` is the first step's, for comparing
// with the torch eager peer (benchmarks/torch_training_step.py), which
// scripts/bench_training_step.sh runs in the same run on the same initial
// parameters and batch (written by --dump-inputs=DIR).
//
//   bm_training_step [--dump-inputs=DIR] [--profile=SIZE[:DEVICES]]
//                    [--dump-hlo=SIZE:FILE] [benchmark flags]
//
// --profile prints where one size's step spends its time (tools/profile.h,
// as `sharc run --profile`) instead of benchmarking. --dump-hlo writes one
// size's traced step (1 device) as HLO text, so that `sharc run FILE
// --random-inputs --profile` can work on it kernel by kernel.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codegen/kernel_compiler.h"
#include "examples/transformer_lm/model.h"
#include "frontend/autodiff.h"
#include "frontend/frontend.h"
#include "runtime/npy.h"

namespace {

namespace fe = sharc::frontend;
namespace lm = sharc::examples::lm;
using sharc::hlo::Literal;

struct StepSize {
  const char* name;
  lm::ModelConfig model;
  int64_t batch;
};

const StepSize kSizes[] = {
    {"small", {256, 64, 128, 4, 512, 2}, 16},
    {"medium", {1024, 128, 256, 8, 1024, 4}, 16},
    {"large", {1024, 128, 512, 8, 2048, 6}, 16},
};
constexpr double kLearningRate = 0.1;
constexpr uint64_t kSeed = 7;

// s32[batch, context + 1] tokens, uniform over the vocabulary.
Literal Tokens(const StepSize& size) {
  Literal tokens(sharc::hlo::Shape(sharc::hlo::PrimitiveType::kS32,
                                   {size.batch, size.model.context + 1}));
  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<int32_t> token(0, static_cast<int32_t>(size.model.vocab - 1));
  for (int32_t& t : tokens.data<int32_t>()) t = token(rng);
  return tokens;
}

// (params, tokens) -> [updated params, loss].
fe::Jitted StepFunction(const StepSize& size, int64_t devices) {
  fe::JitOptions options;
  options.name = std::string("training_step_") + size.name;
  options.backend = sharc::driver::Backend::kHalide;
  if (devices > 1) {
    options.mesh = sharc::spmd::Mesh::OneDimensional("data", devices);
    options.in_shardings =
        fe::SpecTree::list({fe::SpecTree(fe::P()), fe::SpecTree(fe::P("data", fe::None))});
    options.out_shardings = fe::SpecTree(fe::P());
  }
  const lm::ModelConfig model = size.model;
  return fe::jit(
      [model](const fe::Tree& args) {
        const fe::Tensor tokens = args[1].leaf();
        auto loss = [&model, tokens](const fe::Tree& p) {
          return fe::Tree(lm::Loss(model, p, tokens));
        };
        fe::Tree value_and_grad = fe::value_and_grad(loss)(args[0]);
        std::vector<fe::Tensor> p = fe::Leaves(args[0]), g = fe::Leaves(value_and_grad[1]);
        std::vector<fe::Tensor> updated;
        for (size_t i = 0; i < p.size(); ++i) updated.push_back(p[i] - g[i] * kLearningRate);
        return fe::Tree::list(
            {*fe::Unflatten(fe::StructureOf(args[0]), std::move(updated)), value_and_grad[0]});
      },
      options);
}

void BM_TrainingStep(benchmark::State& state) {
  const StepSize& size = kSizes[state.range(0)];
  const int64_t devices = state.range(1);
  fe::Jitted step = StepFunction(size, devices);
  const fe::HostTree args =
      fe::HostTree::list({lm::InitParams(size.model, kSeed), fe::HostTree(Tokens(size))});
  auto compiled = step.Compile(fe::ShapesOf(args));
  if (!compiled.ok()) {
    state.SkipWithError(std::string(compiled.status().message()).c_str());
    return;
  }
  auto first = step(args);
  auto report = (*compiled)->Report();
  if (!first.ok() || !report.ok()) {
    state.SkipWithError("the first step or the cost report failed");
    return;
  }
  for (auto _ : state) {
    auto seconds = (*compiled)->TimeRuns(fe::Leaves(args), 1);
    if (!seconds.ok()) {
      state.SkipWithError(std::string(seconds.status().message()).c_str());
      return;
    }
    state.SetIterationTime((*seconds)[0]);
  }
  const double flops = report->flops * static_cast<double>(devices);
  state.SetLabel(size.name);
  state.counters["params"] = static_cast<double>(lm::CountParams(args[0]));
  state.counters["GFLOP_per_step"] = flops / 1e9;
  state.counters["GFLOPS"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["loss"] = (*first)[1].leaf().GetAsDouble(0);
}
BENCHMARK(BM_TrainingStep)
    ->ArgNames({"size", "devices"})
    ->ArgsProduct({{0, 1, 2}, {1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinWarmUpTime(0.2);

// Compile time of one step: trace, autodiff, the compiler's passes, fusion
// and the kernels. `cache:disk` finds every kernel in the disk cache (the
// usual second run of a program; the in-memory cache is cleared each time);
// `cache:none` compiles every kernel with Halide/LLVM into an empty cache
// directory (a program seen for the first time). Counters: kernels compiled
// and loaded per compile.
void BM_CompileStep(benchmark::State& state) {
  const StepSize& size = kSizes[state.range(0)];
  const bool cold = state.range(1) == 0;
  sharc::codegen::KernelCompiler& compiler = sharc::codegen::KernelCompiler::Global();
  const std::string cache_dir = compiler.cache_dir();
  const fe::HostTree args =
      fe::HostTree::list({lm::InitParams(size.model, kSeed), fe::HostTree(Tokens(size))});
  if (!cold && !StepFunction(size, 1).Compile(fe::ShapesOf(args)).ok()) {  // fills the disk cache
    state.SkipWithError("the warm-up compile failed");
    return;
  }
  const sharc::codegen::CompileStats before = compiler.stats();
  int64_t run = 0;
  for (auto _ : state) {
    state.PauseTiming();
    compiler.ClearMemoryCache();
    if (cold) {
      char dir[] = "/tmp/sharc_bm_compile_XXXXXX";
      if (mkdtemp(dir) == nullptr) {
        state.SkipWithError("mkdtemp failed");
        return;
      }
      compiler.set_cache_dir(dir);
    }
    fe::Jitted step = StepFunction(size, 1);
    state.ResumeTiming();
    auto compiled = step.Compile(fe::ShapesOf(args));
    if (!compiled.ok()) {
      state.SkipWithError(std::string(compiled.status().message()).c_str());
      break;
    }
    ++run;
  }
  if (cold) {
    std::filesystem::remove_all(compiler.cache_dir());
    compiler.set_cache_dir(cache_dir);
  }
  const sharc::codegen::CompileStats after = compiler.stats();
  const double runs = static_cast<double>(std::max<int64_t>(run, 1));
  state.SetLabel(size.name);
  state.counters["llvm_compiles"] = static_cast<double>(after.llvm_compiles - before.llvm_compiles) / runs;
  state.counters["disk_hits"] = static_cast<double>(after.disk_hits - before.disk_hits) / runs;
}
BENCHMARK(BM_CompileStep)
    ->ArgNames({"size", "cache"})
    ->ArgsProduct({{0, 1}, {1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);
BENCHMARK(BM_CompileStep)
    ->ArgNames({"size", "cache"})
    ->Args({1, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// Writes every size's initial parameters (one .npy per leaf, named by its
// path in manifest_SIZE.txt) and tokens to `dir` for the torch peer.
int DumpInputs(const std::string& dir) {
  for (const StepSize& size : kSizes) {
    const fe::HostTree params = lm::InitParams(size.model, kSeed);
    const std::vector<std::string> paths = fe::StructureOf(params).LeafPaths();
    const std::vector<Literal> leaves = fe::Leaves(params);
    std::ofstream manifest(dir + "/manifest_" + size.name + ".txt");
    const lm::ModelConfig& m = size.model;
    manifest << "config " << m.vocab << " " << m.context << " " << m.width << " " << m.heads << " "
             << m.mlp_width << " " << m.layers << " " << size.batch << " " << kLearningRate << "\n";
    for (size_t i = 0; i < leaves.size(); ++i) {
      const std::string file = std::string(size.name) + "_param" + std::to_string(i) + ".npy";
      if (!sharc::runtime::WriteNpyFile(dir + "/" + file, leaves[i]).ok()) return 1;
      manifest << paths[i] << " " << file << "\n";
    }
    const std::string tokens = std::string(size.name) + "_tokens.npy";
    if (!sharc::runtime::WriteNpyFile(dir + "/" + tokens, Tokens(size)).ok()) return 1;
    manifest << "tokens " << tokens << "\n";
  }
  return 0;
}

// The profile of 10 steps of one size.
int PrintProfile(const std::string& spec) {
  const std::string name = spec.substr(0, spec.find(':'));
  const int64_t devices = spec.find(':') == std::string::npos ? 1 : std::stoll(spec.substr(spec.find(':') + 1));
  for (const StepSize& size : kSizes) {
    if (name != size.name) continue;
    fe::Jitted step = StepFunction(size, devices);
    const fe::HostTree args =
        fe::HostTree::list({lm::InitParams(size.model, kSeed), fe::HostTree(Tokens(size))});
    auto compiled = step.Compile(fe::ShapesOf(args));
    if (!compiled.ok()) {
      std::fprintf(stderr, "%s\n", std::string(compiled.status().message()).c_str());
      return 1;
    }
    auto profile = (*compiled)->ProfileRuns(fe::Leaves(args), 10);
    if (!profile.ok()) {
      std::fprintf(stderr, "%s\n", std::string(profile.status().message()).c_str());
      return 1;
    }
    std::fputs(profile->ToText().c_str(), stdout);
    return 0;
  }
  std::fprintf(stderr, "bm_training_step: --profile takes small, medium or large[:DEVICES]\n");
  return 2;
}

// Writes one size's traced step, lowered for one device, to a file.
int DumpHlo(const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  for (const StepSize& size : kSizes) {
    if (colon == std::string::npos || name != size.name) continue;
    const fe::HostTree args =
        fe::HostTree::list({lm::InitParams(size.model, kSeed), fe::HostTree(Tokens(size))});
    auto module = StepFunction(size, 1).Lower(args);
    if (!module.ok()) {
      std::fprintf(stderr, "%s\n", std::string(module.status().message()).c_str());
      return 1;
    }
    std::ofstream(spec.substr(colon + 1)) << (*module)->ToString();
    return 0;
  }
  std::fprintf(stderr, "bm_training_step: --dump-hlo takes small, medium or large:FILE\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--dump-inputs=", 14) == 0) {
      const int failed = DumpInputs(argv[i] + 14);
      if (failed != 0) std::fprintf(stderr, "bm_training_step: could not write %s\n", argv[i] + 14);
      return failed;
    }
    if (std::strncmp(argv[i], "--profile=", 10) == 0) return PrintProfile(argv[i] + 10);
    if (std::strncmp(argv[i], "--dump-hlo=", 11) == 0) return DumpHlo(argv[i] + 11);
    rest.push_back(argv[i]);
  }
  int rest_count = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_count, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_count, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
