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
#include "driver/compiler_passes.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/device_limits.h"
#include "hlo/passes/pipeline.h"
#include "tools/compile_flags.h"
#include "driver/exit_codes.h"
#include "tools/flags.h"
#include "driver/module_loader.h"

namespace sharc::tools {

using driver::LoadModule;
using driver::kExitInputError;
using driver::kExitOk;
namespace {

constexpr absl::string_view kUsage =
    R"(usage: sharc compile FILE --dump-dir DIR [--devices N] [--no-compile]
                     [--verify-passes] [--dump-to DIR --dump-pass-re RE] [--pass-timings]

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
  --verify-passes  verify the module after every compiler pass
  --dump-to DIR    with --dump-pass-re, write the module before and after
  --dump-pass-re RE  every compiler pass whose name matches RE into DIR
                   (driver/compiler_passes.h lists the passes; XLA's
                   --xla_dump_to layout)
  --pass-timings   print each compiler pass's wall time on stderr, longest
                   first (XLA's pass timing report)
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
                               {"no-compile", FlagKind::kBool},
                               kVerifyPassesFlag,
                               kDumpToFlag,
                               kDumpPassReFlag,
                               kPassTimingsFlag};

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
    ASSIGN_OR_RETURN(codegen::KernelDump dump, compiler.Dump(graph));
    // A kernel that fails to lower keeps the rest of its dump; compiling it
    // reports the error.
    const std::string loops = dump.loop_nest.ok()
                                  ? *dump.loop_nest
                                  : absl::StrCat("(", dump.loop_nest.status().message(), ")\n");
    absl::StrAppend(&text, "=== kernel ", count++, ": ", graph.name, " (key ", compiler.Key(graph),
                    ")\n", codegen::CanonicalText(graph), "--- Halide\n", dump.funcs,
                    "--- Halide loop nest\n", loops, "\n");
    return absl::OkStatus();
  });
  RETURN_IF_ERROR(st);
  return text;
}

// The stage files, written as the compiler's passes (driver/compiler_passes.h)
// finish, then the kernel compilation report.
class StageWriter {
 public:
  StageWriter(std::filesystem::path root, std::ostream& out) : root_(std::move(root)), out_(out) {}

  absl::Status AfterPass(const hlo::Pass& pass, hlo::Module& module) {
    const std::string_view name = pass.name();
    if (name == "propagate") return Write("1_propagated.hlo", module);
    if (name == "insert-reshards") return Write("2_partition_1_insert_reshards.hlo", module);
    if (name == "reshard-to-collectives") {
      return Write("2_partition_2_reshard_to_collectives.hlo", module);
    }
    if (name == "dce") return Write("2_partitioned.hlo", module);
    if (name != "fusion") return absl::OkStatus();
    RETURN_IF_ERROR(Write("3_fused.hlo", module));
    ASSIGN_OR_RETURN(std::string kernels, KernelsText(module));
    RETURN_IF_ERROR(WriteFile(root_ / "4_kernels.txt", kernels));
    const codegen::FusionStats& fused = static_cast<const driver::FusionPass&>(pass).stats();
    out_ << "wrote " << (root_ / "1_propagated.hlo").string() << " .. 4_kernels.txt ("
         << fused.fusions << " fusion(s) of " << fused.fused_instructions << " instructions)\n";
    // What compile-kernels, the next pass, does is measured from here.
    before_ = codegen::KernelCompiler::Global().stats();
    start_ = absl::Now();
    return absl::OkStatus();
  }

  void ReportKernels() const {
    const codegen::CompileStats after = codegen::KernelCompiler::Global().stats();
    out_ << "kernels: " << (after.llvm_compiles - before_.llvm_compiles) << " compiled, "
         << (after.disk_hits - before_.disk_hits) << " loaded from the cache ("
         << codegen::KernelCompiler::Global().cache_dir() << ") in "
         << absl::ToDoubleMilliseconds(absl::Now() - start_) << " ms\n";
    if (after.lower_us <= before_.lower_us) return;  // nothing compiled, only loaded
    // Summed over kernels, which compile in parallel, so it may exceed the
    // wall time above.
    auto ms = [](int64_t after_us, int64_t before_us) {
      return absl::StrFormat("%.1f", static_cast<double>(after_us - before_us) / 1000.0);
    };
    out_ << "compile phases (ms, summed over kernels): build "
         << ms(after.build_us, before_.build_us) << ", Halide lowering "
         << ms(after.lower_us, before_.lower_us) << ", LLVM IR "
         << ms(after.llvm_ir_us, before_.llvm_ir_us) << ", object "
         << ms(after.object_us, before_.object_us) << ", link "
         << ms(after.link_us, before_.link_us) << ", load " << ms(after.load_us, before_.load_us)
         << "\n";
  }

 private:
  absl::Status Write(const char* file, const hlo::Module& module) {
    return WriteFile(root_ / file, hlo::PrintModule(module));
  }

  std::filesystem::path root_;
  std::ostream& out_;
  codegen::CompileStats before_;
  absl::Time start_;
};

// The failed pass's stage, as the messages have always named it.
std::string Failure(std::string_view pass, absl::string_view message) {
  for (std::string_view partition : {"insert-reshards", "reshard-to-collectives", "localize", "dce"}) {
    if (pass == partition) return absl::StrCat("partitioning failed: ", message);
  }
  for (std::string_view prepare : {"lower-mapreduce", "lower-shard-maps", "propagate"}) {
    if (pass == prepare) return absl::StrCat("sharding propagation failed: ", message);
  }
  return std::string(message);
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
    absl::StatusOr<int64_t> n = ParseIntFlag("devices", *d, 1, hlo::kMaxDevices);
    if (!n.ok()) return UsageError(kCompileCommand, n.status().message(), err);
    devices = *n;
  }
  absl::StatusOr<hlo::PipelineOptions> pipeline_options = PipelineOptionsFromFlags(*parsed);
  if (!pipeline_options.ok()) {
    return UsageError(kCompileCommand, pipeline_options.status().message(), err);
  }
  PassTimingsPrinter timings(*pipeline_options, err);
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = LoadModule(parsed->positionals[0]);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  std::error_code ec;
  std::filesystem::create_directories(*dir, ec);
  if (ec) return Fail(err, absl::StrCat("--dump-dir: cannot create '", *dir, "': ", ec.message()));

  hlo::Module& compiled = **module;
  if (devices) compiled.mutable_config().num_partitions = *devices;
  driver::CompilerSpec spec;
  spec.compile_kernels = !parsed->Has("no-compile");
  spec.precompile.show_progress = true;
  hlo::Pipeline pipeline = driver::CompilerPipeline(spec, driver::Stage::kPrepare,
                                                    driver::Stage::kKernels, *pipeline_options);
  StageWriter writer(*dir, out);
  absl::Status write_error;  // not the pass's failure: reported as it is
  pipeline.set_observer([&](const hlo::Pass& pass, hlo::Module& m) {
    write_error = writer.AfterPass(pass, m);
    return write_error;
  });
  if (absl::Status st = pipeline.Run(compiled); !st.ok()) {
    if (!write_error.ok()) return Fail(err, write_error.message());
    return Fail(err, Failure(pipeline.failed_pass(), st.message()));
  }
  if (spec.compile_kernels) writer.ReportKernels();
  return kExitOk;
}

}  // namespace
}  // namespace sharc::tools
