// `sharc compile FILE --dump-dir DIR`: runs the compile stages of the Halide
// backend and writes each one to DIR: the module with propagated shardings,
// the per-device (partitioned) module, the fused module, and every kernel's
// canonical text and Halide lowering. Kernels are compiled too (into the
// kernel cache), so a later `sharc run` of the same program starts at once.
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "codegen/fusion.h"
#include "codegen/halide_kernel_factory.h"
#include "codegen/kernel_compiler.h"
#include "hlo/text/printer.h"
#include "tools/command.h"
#include "tools/compile_pipeline.h"
#include "tools/exit_codes.h"
#include "tools/flags.h"
#include "tools/module_loader.h"

namespace sharc::tools {
namespace {

constexpr absl::string_view kUsage =
    R"(usage: sharc compile FILE --dump-dir DIR [--devices N] [--no-compile]

Compiles a module for the Halide backend and writes every stage to DIR:
  1_propagated.hlo    the module with the shardings propagation inferred
  2_partition_1_insert_reshards.hlo, 2_partition_2_reshard_to_collectives.hlo
                      the global module after the partitioner's first two
                      passes (explicit reshards, then global-view collectives)
  2_partitioned.hlo   the per-device program (collectives inserted)
  3_fused.hlo         the per-device program with kernels fused (calls with
                      backend_config="sharc.fusion")
  4_kernels.txt       each kernel's canonical text, cache key, Halide
                      lowering (one Func per instruction) and loop nest
                      (Halide's lowered statement: parallel and vector
                      loops, where each stage is computed)
and prints how many kernels were compiled and how long it took.

flags:
  --dump-dir DIR   where to write the stages (created if missing)
  --devices N      partition count (overrides the header's num_partitions)
  --no-compile     write the stages without compiling the kernels
  -h, --help       show this text

exit codes: 0 ok, 1 invalid module or a stage failed, 2 usage
)";

int RunCompile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kCompileCommand = {
    "compile", "compile a module to Halide kernels and dump every stage", kUsage, RunCompile};

namespace {

constexpr FlagSpec kFlags[] = {{"dump-dir", FlagKind::kValue},
                               {"devices", FlagKind::kValue},
                               {"no-compile", FlagKind::kBool}};

absl::Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

int Fail(std::ostream& err, absl::string_view message) {
  err << "sharc compile: error: " << message << "\n";
  return kExitInputError;
}

// Every kernel of the fused module with its lowering.
absl::StatusOr<std::string> KernelsText(const hlo::Module& fused) {
  std::string text;
  int count = 0;
  codegen::KernelCompiler& compiler = codegen::KernelCompiler::Global();
  absl::Status st = codegen::ForEachKernel(fused, [&](const codegen::KernelGraph& graph) {
    absl::StatusOr<codegen::KernelDump> dump = compiler.Dump(graph);
    if (!dump.ok()) return dump.status();
    // A kernel that fails to lower keeps the rest of its dump; compiling it
    // reports the error.
    const std::string loops = dump->loop_nest.ok()
                                  ? *dump->loop_nest
                                  : absl::StrCat("(", dump->loop_nest.status().message(), ")\n");
    absl::StrAppend(&text, "=== kernel ", count++, ": ", graph.name, " (key ", compiler.Key(graph),
                    ")\n", codegen::CanonicalText(graph), "--- Halide\n", dump->funcs,
                    "--- Halide loop nest\n", loops, "\n");
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return text;
}

int RunCompile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kCompileCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() != 1) {
    return UsageError(kCompileCommand, "expected exactly one FILE", err);
  }
  std::optional<std::string> dir = parsed->Get("dump-dir");
  if (!dir) return UsageError(kCompileCommand, "--dump-dir DIR is required", err);
  std::optional<int64_t> devices;
  if (auto d = parsed->Get("devices")) {
    absl::StatusOr<int64_t> n = ParseIntFlag("devices", *d, 1, 1 << 20);
    if (!n.ok()) return UsageError(kCompileCommand, n.status().message(), err);
    devices = *n;
  }
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = LoadModule(parsed->positionals[0]);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  std::error_code ec;
  std::filesystem::create_directories(*dir, ec);
  if (ec) return Fail(err, absl::StrCat("--dump-dir: cannot create '", *dir, "': ", ec.message()));
  const std::filesystem::path root(*dir);

  std::unique_ptr<hlo::Module> propagated = (*module)->Clone();
  if (auto r = PropagateModule(*propagated, devices); !r.ok()) {
    return Fail(err, absl::StrCat("sharding propagation failed: ", r.status().message()));
  }
  if (absl::Status st = WriteFile(root / "1_propagated.hlo", hlo::PrintModule(*propagated));
      !st.ok()) {
    return Fail(err, st.message());
  }
  using Stage = spmd::PartitionOptions::Stage;
  for (auto [stage, file] : {std::pair{Stage::kInsertReshards, "2_partition_1_insert_reshards.hlo"},
                             std::pair{Stage::kReshardToCollectives,
                                       "2_partition_2_reshard_to_collectives.hlo"}}) {
    absl::StatusOr<std::unique_ptr<hlo::Module>> explicit_module =
        PartitionGlobal(*propagated, devices, /*propagate=*/false, stage);
    if (!explicit_module.ok()) {
      return Fail(err, absl::StrCat("partitioning failed: ", explicit_module.status().message()));
    }
    if (absl::Status st = WriteFile(root / file, hlo::PrintModule(**explicit_module)); !st.ok()) {
      return Fail(err, st.message());
    }
  }
  absl::StatusOr<std::unique_ptr<hlo::Module>> local =
      PartitionGlobal(*propagated, devices, /*propagate=*/false);
  if (!local.ok()) return Fail(err, absl::StrCat("partitioning failed: ", local.status().message()));
  if (absl::Status st = WriteFile(root / "2_partitioned.hlo", hlo::PrintModule(**local)); !st.ok()) {
    return Fail(err, st.message());
  }
  if (absl::Status st = codegen::CheckHalideSupports(**local); !st.ok()) {
    return Fail(err, st.message());
  }
  absl::StatusOr<codegen::FusionStats> fused = codegen::FuseModule(**local);
  if (!fused.ok()) return Fail(err, fused.status().message());
  if (absl::Status st = WriteFile(root / "3_fused.hlo", hlo::PrintModule(**local)); !st.ok()) {
    return Fail(err, st.message());
  }
  absl::StatusOr<std::string> kernels = KernelsText(**local);
  if (!kernels.ok()) return Fail(err, kernels.status().message());
  if (absl::Status st = WriteFile(root / "4_kernels.txt", *kernels); !st.ok()) {
    return Fail(err, st.message());
  }
  out << "wrote " << (root / "1_propagated.hlo").string() << " .. 4_kernels.txt ("
      << fused->fusions << " fusion(s) of " << fused->fused_instructions << " instructions)\n";
  if (parsed->Has("no-compile")) return kExitOk;
  const codegen::CompileStats before = codegen::KernelCompiler::Global().stats();
  const absl::Time start = absl::Now();
  codegen::PrecompileOptions options;
  options.show_progress = true;
  if (absl::Status st = codegen::PrecompileKernels(**local, options); !st.ok()) {
    return Fail(err, st.message());
  }
  const codegen::CompileStats after = codegen::KernelCompiler::Global().stats();
  out << "kernels: " << (after.llvm_compiles - before.llvm_compiles) << " compiled, "
      << (after.disk_hits - before.disk_hits) << " loaded from the cache ("
      << codegen::KernelCompiler::Global().cache_dir() << ") in "
      << absl::ToDoubleMilliseconds(absl::Now() - start) << " ms\n";
  if (after.lower_us > before.lower_us) {  // a kernel was compiled, not just the runtime
    // Summed over kernels, which compile in parallel, so it may exceed the
    // wall time above.
    auto ms = [](int64_t after_us, int64_t before_us) {
      return absl::StrFormat("%.1f", static_cast<double>(after_us - before_us) / 1000.0);
    };
    out << "compile phases (ms, summed over kernels): build " << ms(after.build_us, before.build_us)
        << ", Halide lowering " << ms(after.lower_us, before.lower_us) << ", LLVM IR "
        << ms(after.llvm_ir_us, before.llvm_ir_us) << ", object "
        << ms(after.object_us, before.object_us) << ", link " << ms(after.link_us, before.link_us)
        << ", load " << ms(after.load_us, before.load_us) << "\n";
  }
  return kExitOk;
}

}  // namespace
}  // namespace sharc::tools
