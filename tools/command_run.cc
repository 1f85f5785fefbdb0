// `sharc run FILE`: run a module on inputs from .npy files (or synthetic
// ones) and summarise / save its results. With --devices 1 the global
// program is interpreted; with N > 1 it is propagated, partitioned and run
// on N simulated devices (driver/spmd_runner.h). Inputs and outputs are the
// global arrays either way, so the two runs can be compared.
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <functional>
#include <limits>
#include <system_error>

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "hlo/base/status_macros.h"
#include "hlo/eval/interpreter.h"
#include "runtime/npy.h"
#include "tools/command.h"
#include "driver/compile_stages.h"
#include "tools/compile_flags.h"
#include "driver/exit_codes.h"
#include "tools/flags.h"
#include "tools/literal_summary.h"
#include "driver/module_loader.h"
#include "tools/random_inputs.h"
#include "tools/per_device_reference.h"
#include "tools/result_check.h"
#include "tools/run_memory.h"
#include "driver/host_transfers.h"
#include "driver/spmd_runner.h"

namespace sharc::tools {

using driver::CompileOptions;
using driver::DescribeDeviceMesh;
using driver::HostTransfers;
using driver::InfeedSource;
using driver::IsMainProcess;
using driver::LaunchedByMpirun;
using driver::LoadModule;
using driver::ParseBackend;
using driver::PartitionedRunOptions;
using driver::PrepareModule;
using driver::Profile;
using driver::RunPartitioned;
using driver::kExitInputError;
using driver::kExitInternal;
using driver::kExitOk;
using driver::kExitRuntimeFailure;
using driver::kExitUsage;
namespace {

constexpr absl::string_view kUsage =
    R"(usage: sharc run FILE [--input X.npy]... [--infeed X.npy]... [--random-inputs[=SEED]]
                 [--devices N] [--backend halide|interpreter] [--output-dir DIR]
                 [--collective-timeout DURATION] [--iterations K]
                 [--profile] [--profile-json FILE] [--trace FILE]
                 [--verify-passes] [--dump-to DIR --dump-pass-re RE] [--pass-timings]
                 [--check [--check-reference auto|interpreter|compiled]]

Runs the entry computation of an HLO module and prints a summary of each
result: its shape and its values (all of them up to 64 elements, otherwise
the first 8 and min/max/mean). A tuple result gives one output per leaf
(nested tuples are flattened), numbered out0, out1, ...

Inputs are the global (unpartitioned) arrays, one .npy file per entry
parameter in parameter order; dtype and shape must match the parameter.
Types NumPy lacks (bf16, the 8- and 4-bit floats, s4/u4/s2/u2) are written
widened (f32, s8, u8) and read from those dtypes (rounding to nearest even)
or from raw void bytes of their width ('<V2' for bf16: ml_dtypes' arrays).

A module's infeeds read global values from the host, in the order they run
(--infeed, or random with --random-inputs); every device reads the whole
value. Its outfeeds' global values print after the results as outfeed0,
outfeed1, ... (one per array: a tuple outfed gives one per leaf).

flags:
  --input X.npy            an entry argument (repeat once per parameter)
  --infeed X.npy           an array the module's infeeds read (repeat, in the
                           order they are read; an infeed of a tuple takes
                           one file per leaf). An infeed with none left
                           fails the run naming it and the device
  --random-inputs[=SEED]   fill every parameter with small deterministic
                           values instead (SEED defaults to 0), and every
                           infeed value after the --infeed files (value k
                           is seeded after the parameters)
  --devices N              number of devices (default 1: run the global
                           program as written; a per-device program whose
                           collectives span devices runs on its header's
                           count, or the count its collectives name). With
                           N > 1: propagate
                           shardings, partition for N devices and run the
                           per-device program on N simulated devices
  --collective-timeout D   with --devices N > 1: a collective whose peers do
                           not all arrive within D (e.g. 30s, 500ms; a bare
                           number is seconds; default 60s) fails the run,
                           naming the collective and the missing devices.
                           Under `mpirun -np R` the N devices are spread over
                           the R processes (N/R each); process 0 alone reads
                           the inputs and prints or writes the results
  --backend NAME           `halide`: fused, compiled Halide kernels (cached
                           in $SHARC_CACHE_DIR or ~/.cache/sharc; the
                           default when it supports every op of the
                           module); `interpreter`: the reference
                           interpreter (the default otherwise). Asking for
                           halide on a module it cannot run is an error
                           naming the op
  --iterations K           after the run, run K more times and print
                           `median X ms per run` (compilation excluded)
  --profile                then run once untimed and K more times (K from
                           --iterations, else 5) with every kernel and
                           collective timed, and print where the time goes:
                           per kernel the HLO instructions it implements,
                           calls, time, GFLOP/s
                           and GB/s (cost model) and the fraction of the
                           machine's FMA peak or memory bandwidth (measured
                           once and cached), longest first
  --profile-json FILE      the same as JSON (schema_version 1)
  --trace FILE             the last profiled run as a Chrome trace (one track
                           per device; chrome://tracing or Perfetto)
  --output-dir DIR         also write DIR/out0.npy, DIR/out1.npy, ... and
                           DIR/outfeed0.npy, ...
  --mesh AXES              named mesh, e.g. clients=2,data=2 (overrides the
                           header's; runs on its devices unless --devices)
  --mapreduce-mode M       lowering of MapReduce blocks: annotated (default),
                           ns or loop
  --verify-passes          verify the module after every compiler pass
  --dump-to DIR            with --dump-pass-re, write the module before and
  --dump-pass-re RE        after every compiler pass whose name matches RE
                           (driver/compiler_passes.h lists them) into DIR,
                           as XLA's --xla_dump_to does
  --pass-timings           print each compiler pass's wall time on stderr,
                           longest first (XLA's pass timing report)
  --check                  with --devices N > 1, also interpret the global
                           (unpartitioned) program and compare: integers
                           and pred exactly, floats to a tolerance of their
                           type (f64 1e-9, f32 1e-4, f16 3.9e-3, bf16
                           3.1e-2 relative, of each value plus the result's
                           mean magnitude; more for reductions over 1024
                           terms, as partial sums add in another order); a
                           mismatch exits 3 naming the output and element.
                           Outfed values are compared the same way (the
                           reference reads the same infeed values).
                           A program with manual regions or collectives of
                           its own is compared with its per-device reference
                           instead: the regions and those collectives kept,
                           every other value replicated, run on the
                           interpreter's kernels. Refused (exit 2) where
                           neither is a reference: partition-id outside
                           manual regions
  --check-reference R      interpreter: the global program on the reference
                           interpreter; compiled: compiled for one device
                           with the run's kernels (checks the partitioning,
                           not the kernels); auto (default): compiled when
                           the cost model counts more than 2e8 FLOPs plus
                           bytes in the global program (the interpreter
                           would take minutes), else the interpreter
  -h, --help               show this text

exit codes: 0 ok, 1 invalid module or inputs or partitioning failed,
            2 usage, 3 evaluation failed
)";

int RunRun(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kRunCommand = {
    "run", "run a module on .npy (or random) inputs and print or save the results", kUsage,
    RunRun};

namespace {

constexpr FlagSpec kFlags[] = {
    {"input", FlagKind::kValue, /*repeated=*/true},
    {"infeed", FlagKind::kValue, /*repeated=*/true},
    {"random-inputs", FlagKind::kOptionalValue},
    {"devices", FlagKind::kValue},
    {"backend", FlagKind::kValue},
    {"output-dir", FlagKind::kValue},
    {"check", FlagKind::kBool},
    {"check-reference", FlagKind::kValue},
    kMeshFlag,
    kMapReduceModeFlag,
    kVerifyPassesFlag,
    kDumpToFlag,
    kDumpPassReFlag,
    kPassTimingsFlag,
    {"collective-timeout", FlagKind::kValue},
    {"iterations", FlagKind::kValue},
    {"profile", FlagKind::kBool},
    {"profile-json", FlagKind::kValue},
    {"trace", FlagKind::kValue},
};

// --profile's table on `out`, --profile-json's and --trace's files.
absl::Status WriteProfile(const Profile& profile, const ParsedArgs& args, std::ostream& out) {
  if (args.Has("profile")) out << profile.ToText();
  const std::pair<const char*, std::string> files[] = {
      {"profile-json", profile.ToJson()}, {"trace", profile.ToChromeTrace()}};
  for (const auto& [flag, text] : files) {
    std::optional<std::string> path = args.Get(flag);
    if (!path) continue;
    std::ofstream file(*path);
    file << text;
    if (!file.good()) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": cannot write '", *path, "'"));
  }
  return absl::OkStatus();
}

int Fail(std::ostream& err, absl::string_view message, int code) {
  err << "sharc run: error: " << message << "\n";
  return code;
}

std::string DescribeParameters(const hlo::Computation& entry) {
  std::vector<std::string> parts;
  for (const hlo::Instruction* p : entry.parameters()) {
    parts.push_back(absl::StrCat("%", p->name(), " ", p->shape().ToString()));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

// Reads the --input files against the entry parameters' shapes.
absl::StatusOr<std::vector<hlo::Literal>> ReadInputs(const hlo::Computation& entry,
                                                     const std::vector<std::string>& paths) {
  if (static_cast<int64_t>(paths.size()) != entry.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the entry computation '", entry.name(), "' takes ", entry.num_parameters(),
        " parameter(s) (", DescribeParameters(entry), ") but ", paths.size(),
        " --input file(s) were given"));
  }
  std::vector<hlo::Literal> args;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    const hlo::Instruction* param = entry.parameter(i);
    const hlo::Shape& shape = param->shape();
    if (!shape.is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter ", i, " (%", param->name(), ") has tuple shape ", shape.ToString(),
          "; a .npy file holds one array, so use --random-inputs for this module"));
    }
    absl::StatusOr<hlo::Literal> arg = runtime::ReadNpyFile(paths[static_cast<size_t>(i)], shape);
    if (!arg.ok()) {
      return absl::Status(arg.status().code(),
                          absl::StrCat("input for parameter ", i, " (%", param->name(), "): ",
                                       arg.status().message()));
    }
    args.push_back(*std::move(arg));
  }
  return args;
}

// Checks before running that every result leaf can be written as .npy, so a
// long run does not end in an unwritable result.
absl::Status CheckWritable(const hlo::Shape& shape, int64_t& index) {
  if (shape.is_tuple()) {
    for (const hlo::Shape& s : shape.tuple_shapes()) {
      if (absl::Status st = CheckWritable(s, index); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> descr = runtime::NpyDescrFor(runtime::NpyWrittenType(shape.type()));
  if (!descr.ok() && shape.type() != hlo::PrimitiveType::kToken) {  // a token is not written
    return absl::InvalidArgumentError(
        absl::StrCat("--output-dir: output out", index, " (", shape.ToString(),
                     ") cannot be saved as .npy: ", descr.status().message()));
  }
  ++index;
  return absl::OkStatus();
}

// The module as it runs: a clone with its MapReduce blocks lowered
// (--mapreduce-mode) and, on several devices, partitioned; the module as
// written stays the reference for --check (the blocks' own semantics).
// Refused when a value or the run does not fit the memory (run_memory.h).
absl::StatusOr<std::unique_ptr<hlo::Module>> PrepareForRun(const hlo::Module& written,
                                                           const CompileOptions& compile,
                                                           int64_t devices, bool check) {
  RETURN_IF_ERROR(CheckValuesFitInMemory(written));
  std::unique_ptr<hlo::Module> prepared = written.Clone();
  RETURN_IF_ERROR(PrepareModule(*prepared, compile));
  RETURN_IF_ERROR(
      CheckRunFitsInMemory(*prepared, LaunchedByMpirun() ? 1 : devices, written, check));
  return prepared;
}

// The flags that shape a run, read and checked before the module is
// loaded (errors are usage errors).
struct RunSettings {
  std::optional<absl::Duration> collective_timeout;
  std::string backend;  // "" = halide when it supports the module, else the interpreter
  int64_t iterations = 0;
  bool profiling = false;
  std::vector<std::string> input_paths;
  std::vector<std::string> infeed_paths;
  bool random = false;
  uint64_t seed = 0;
  // --check-reference: the global program on one device with the run's
  // kernels ("compiled") or on the reference interpreter ("interpreter");
  // "auto" picks by the global program's cost (result_check.h).
  std::string check_reference = "auto";
};

absl::StatusOr<RunSettings> ReadRunSettings(const ParsedArgs& args) {
  RunSettings settings;
  if (auto value = args.Get("collective-timeout")) {
    absl::Duration timeout;
    double seconds = 0;
    if (absl::SimpleAtod(*value, &seconds)) {
      timeout = absl::Seconds(seconds);
    } else if (!absl::ParseDuration(*value, &timeout)) {
      timeout = absl::ZeroDuration();
    }
    if (timeout <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--collective-timeout: expected a positive duration such as 30s or 500ms, "
                       "got '", *value, "'"));
    }
    settings.collective_timeout = timeout;
  }
  settings.backend = args.Get("backend").value_or("");
  RETURN_IF_ERROR(ParseBackend(settings.backend).status());
  if (auto value = args.Get("iterations")) {
    ASSIGN_OR_RETURN(settings.iterations, ParseIntFlag("iterations", *value, 1, 1 << 24));
  }
  settings.profiling = args.Has("profile") || args.Has("profile-json") || args.Has("trace");
  settings.input_paths = args.GetAll("input");
  settings.infeed_paths = args.GetAll("infeed");
  settings.random = args.Has("random-inputs");
  if (auto value = args.Get("check-reference")) {
    if (*value != "interpreter" && *value != "compiled" && *value != "auto") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--check-reference: expected auto, interpreter or compiled, got '", *value, "'"));
    }
    settings.check_reference = *value;
  }
  if (settings.random && !settings.input_paths.empty()) {
    return absl::InvalidArgumentError("--input and --random-inputs cannot be combined");
  }
  if (std::string value = args.Get("random-inputs").value_or(""); !value.empty()) {
    ASSIGN_OR_RETURN(int64_t seed, ParseIntFlag("random-inputs", value, 0,
                                                std::numeric_limits<int64_t>::max()));
    settings.seed = static_cast<uint64_t>(seed);
  }
  return settings;
}

// --random-inputs: one literal per entry parameter from `seed`.
std::vector<hlo::Literal> RandomArguments(const hlo::Computation& entry, uint64_t seed,
                                          std::ostream& err) {
  std::vector<hlo::Literal> arguments;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    arguments.push_back(
        MakeRandomLiteral(entry.parameter(i)->shape(), seed, static_cast<uint64_t>(i)));
  }
  if (entry.num_parameters() > 0) {
    err << "note: " << entry.num_parameters() << " parameter(s) filled with random inputs (seed "
        << seed << ")\n";
  }
  return arguments;
}

// --check's reference result: the module as written on the reference
// interpreter (or, with --check-reference=compiled, compiled for one device
// with the run's kernels: a large convolution or dot takes the interpreter
// minutes), or, with manual regions, its per-device reference
// (per_device_reference.h) partitioned like the run, on the interpreter's
// kernels.
absl::StatusOr<hlo::Literal> ReferenceResult(const hlo::Module& written,
                                             const std::vector<hlo::Literal>& arguments,
                                             const PartitionedRunOptions& run_options,
                                             bool compiled_reference, HostTransfers* host) {
  PartitionedRunOptions options;
  options.host = host;
  options.num_devices = run_options.num_devices;
  options.collective_timeout = run_options.collective_timeout;
  options.pipeline = run_options.pipeline;
  options.backend = driver::Backend::kInterpreter;
  if (NeedsPerDeviceReference(written)) {
    return RunPartitioned(*PerDeviceReference(written), arguments, options);
  }
  if (!compiled_reference) return driver::EvaluateWithHost(written, arguments, host);
  // The global program on one device, compiled like the run.
  options.num_devices = 1;
  options.backend = run_options.backend;
  return RunPartitioned(written, arguments, options);
}

// --check: compares the partitioned run's result with the reference's,
// within the tolerance of result_check.h.
absl::Status CheckAgainstReference(const hlo::Module& written,
                                   const std::vector<hlo::Literal>& arguments,
                                   const PartitionedRunOptions& run_options,
                                   bool compiled_reference, const hlo::Literal& result,
                                   std::ostream& err) {
  const bool per_device = NeedsPerDeviceReference(written);
  // The reference reads the run's infeed values (the source keeps them).
  HostTransfers reference_host;
  if (run_options.host != nullptr) reference_host.infeed = run_options.host->infeed;
  absl::StatusOr<hlo::Literal> reference = ReferenceResult(written, arguments, run_options,
                                                           compiled_reference, &reference_host);
  if (!reference.ok()) {
    return absl::Status(reference.status().code(),
                        absl::StrCat("--check: the ", per_device ? "per-device" : "global",
                                     " reference failed: ", reference.status().message()));
  }
  double max_diff = 0;
  std::string mismatch =
      FirstMismatch(result, *reference, "result", LongestReduction(written), max_diff,
                    run_options.num_devices);
  if (!mismatch.empty()) return absl::InternalError(absl::StrCat("--check failed: ", mismatch));
  const std::vector<hlo::Literal> no_outfeed;
  const std::vector<hlo::Literal>& outfed =
      run_options.host != nullptr ? run_options.host->outfeed : no_outfeed;
  if (outfed.size() != reference_host.outfeed.size()) {
    return absl::InternalError(absl::StrCat("--check failed: the run outfed ", outfed.size(),
                                            " value(s), the reference ",
                                            reference_host.outfeed.size()));
  }
  for (size_t k = 0; k < outfed.size(); ++k) {
    mismatch = FirstMismatch(outfed[k], reference_host.outfeed[k], absl::StrCat("outfeed value #", k),
                             LongestReduction(written), max_diff, run_options.num_devices);
    if (!mismatch.empty()) return absl::InternalError(absl::StrCat("--check failed: ", mismatch));
  }
  err << "check: the partitioned run matches the "
      << (per_device ? "per-device reference (manual regions and the program's collectives kept, "
                       "everything else replicated)"
          : compiled_reference ? "global program compiled for one device"
                               : "global program")
      << " (max abs difference " << max_diff << ")\n";
  return absl::OkStatus();
}

// The reference interpreter on the global program (shard_map bodies run per
// mesh device inside it), then `iterations` timed runs more.
absl::StatusOr<hlo::Literal> Interpret(const hlo::Module& module,
                                       const std::vector<hlo::Literal>& arguments,
                                       int64_t iterations, std::vector<double>& run_seconds,
                                       HostTransfers* host) {
  absl::StatusOr<hlo::Literal> result = driver::EvaluateWithHost(module, arguments, host);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat("evaluation failed: ", result.status().message()));
  }
  for (int64_t i = 0; i < iterations; ++i) {
    const absl::Time start = absl::Now();
    HostTransfers again{host->infeed, {}};
    RETURN_IF_ERROR(driver::EvaluateWithHost(module, arguments, &again).status());
    run_seconds.push_back(absl::ToDoubleSeconds(absl::Now() - start));
  }
  return result;
}

// The options of a compiled run beyond the devices, timeout and pipeline.
void SetCompiledRunOptions(const RunSettings& settings, std::vector<double>& run_seconds,
                           Profile& profile, std::ostream& err, PartitionedRunOptions& options) {
  options.backend = *ParseBackend(settings.backend);
  options.show_progress = true;
  options.note = [&err](std::string_view note) { err << "note: " << note << "\n"; };
  options.timed_iterations = settings.iterations;
  options.run_seconds = &run_seconds;
  if (settings.profiling) {
    options.profiled_iterations = settings.iterations > 0 ? settings.iterations : 5;
    options.profile = &profile;
  }
}

// --iterations: the median of the timed runs.
void PrintMedian(std::vector<double> run_seconds, std::ostream& out) {
  if (run_seconds.empty()) return;
  std::sort(run_seconds.begin(), run_seconds.end());
  const size_t n = run_seconds.size();
  const double median =
      n % 2 == 1 ? run_seconds[n / 2] : (run_seconds[n / 2 - 1] + run_seconds[n / 2]) / 2;
  out << absl::StrFormat("median %.3f ms per run\n", median * 1e3);
}

// Prints a summary of every result leaf and, with --output-dir, writes
// each as outI.npy.
int ReportOutputs(const hlo::Literal& result, const std::vector<hlo::Literal>& outfed,
                  const std::optional<std::string>& output_dir, std::ostream& out,
                  std::ostream& err) {
  std::vector<const hlo::Literal*> leaves = FlattenLeaves(result);
  std::vector<const hlo::Literal*> outfed_leaves;
  for (const hlo::Literal& value : outfed) {
    for (const hlo::Literal* leaf : FlattenLeaves(value)) outfed_leaves.push_back(leaf);
  }
  if (leaves.empty()) out << "(no outputs: the result is an empty tuple)\n";
  if (output_dir) {
    std::error_code ec;
    std::filesystem::create_directories(*output_dir, ec);
    if (ec) {
      return Fail(err, absl::StrCat("--output-dir: cannot create '", *output_dir,
                                    "': ", ec.message()),
                  kExitInputError);
    }
  }
  const std::pair<const char*, const std::vector<const hlo::Literal*>*> groups[] = {
      {"out", &leaves}, {"outfeed", &outfed_leaves}};
  int64_t written[2] = {0, 0};  // per group: a token has no data to write
  for (const auto& [name, group] : groups) {
    for (size_t i = 0; i < group->size(); ++i) {
      out << name << i << " = " << SummarizeArray(*(*group)[i]) << "\n";
      if (!output_dir || (*group)[i]->shape().type() == hlo::PrimitiveType::kToken) continue;
      ++written[group == &leaves ? 0 : 1];
      std::string file = (std::filesystem::path(*output_dir) / absl::StrCat(name, i, ".npy"));
      if (absl::Status st = runtime::WriteNpyFile(file, *(*group)[i]); !st.ok()) {
        return Fail(err, st.message(), kExitInputError);
      }
      const hlo::PrimitiveType type = (*group)[i]->shape().type();
      if (runtime::NpyWrittenType(type) != type) {
        err << "note: " << name << i << " is " << hlo::PrimitiveTypeName(type) << ", written as "
            << hlo::PrimitiveTypeName(runtime::NpyWrittenType(type)) << " (NumPy has no "
            << hlo::PrimitiveTypeName(type) << ")\n";
      }
    }
  }
  if (output_dir && written[0] > 0) {
    out << "wrote " << written[0] << " output(s) to " << *output_dir << "/out*.npy\n";
  }
  if (output_dir && written[1] > 0) {
    out << "wrote " << written[1] << " outfed array(s) to " << *output_dir << "/outfeed*.npy\n";
  }
  return kExitOk;
}

// What the module's infeeds read: the --infeed files, then (with
// --random-inputs) random values, value k seeded after the parameters.
absl::StatusOr<std::unique_ptr<InfeedSource>> MakeInfeedSource(const hlo::Module& module,
                                                              const RunSettings& settings) {
  if (!settings.infeed_paths.empty() && !driver::UsesHostQueues(module)) {
    return absl::InvalidArgumentError("--infeed: the module has no infeed");
  }
  std::vector<hlo::Literal> leaves;
  for (const std::string& path : settings.infeed_paths) {
    absl::StatusOr<hlo::Literal> leaf = runtime::ReadNpyFile(path);
    if (!leaf.ok()) {
      return absl::Status(leaf.status().code(),
                          absl::StrCat("--infeed: ", leaf.status().message()));
    }
    leaves.push_back(*std::move(leaf));
  }
  InfeedSource::MakeFn make;
  if (settings.random) {
    const uint64_t first_stream = static_cast<uint64_t>(module.entry()->num_parameters());
    make = [seed = settings.seed, first_stream](const hlo::Shape& shape, int64_t index) {
      return MakeRandomLiteral(shape, seed, first_stream + static_cast<uint64_t>(index));
    };
  }
  return std::make_unique<InfeedSource>(std::move(leaves), std::move(make));
}

// After the run: --infeed files never read, values --random-inputs made.
void NoteInfeedUse(const InfeedSource& infeed, uint64_t seed, std::ostream& err) {
  if (const int64_t unread = infeed.unread_leaves(); unread > 0) {
    err << "note: " << unread << " --infeed array(s) were not read\n";
  }
  if (const int64_t made = infeed.made_values(); made > 0) {
    err << "note: " << made << " infeed value(s) filled with random inputs (seed " << seed
        << ")\n";
  }
}

// The run's inputs into `arguments`: none on another MPI process (they come
// from process 0), random ones with --random-inputs, else one --input per
// parameter. On failure, the exit code.
std::optional<int> ReadArguments(const hlo::Computation& entry, const RunSettings& settings,
                                 std::vector<hlo::Literal>& arguments, std::ostream& err) {
  if (!IsMainProcess()) return std::nullopt;
  if (settings.random) {
    arguments = RandomArguments(entry, settings.seed, err);
    return std::nullopt;
  }
  if (settings.input_paths.empty() && entry.num_parameters() > 0) {
    return UsageError(kRunCommand,
                      absl::StrCat("the entry computation takes ", entry.num_parameters(),
                                   " parameter(s) (", DescribeParameters(entry),
                                   "): pass one --input X.npy per parameter, or --random-inputs"),
                      err);
  }
  absl::StatusOr<std::vector<hlo::Literal>> read = ReadInputs(entry, settings.input_paths);
  if (!read.ok()) return Fail(err, read.status().message(), kExitInputError);
  arguments = *std::move(read);
  return std::nullopt;
}

int RunRun(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kRunCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() != 1) {
    return UsageError(kRunCommand, "expected exactly one FILE", err);
  }
  const std::string& path = parsed->positionals[0];

  absl::StatusOr<CompileOptions> compile = CompileOptionsFromFlags(*parsed);
  if (!compile.ok()) return UsageError(kRunCommand, compile.status().message(), err);
  PassTimingsPrinter timings(compile->pipeline, err);
  absl::StatusOr<RunSettings> settings = ReadRunSettings(*parsed);
  if (!settings.ok()) return UsageError(kRunCommand, settings.status().message(), err);
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = LoadModule(path);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  // A --mesh alone runs on its devices; a per-device program on those its
  // collectives span; otherwise the default is 1 device.
  const int64_t devices = compile->devices.value_or(
      compile->mesh ? compile->mesh->num_devices() : DefaultRunDevices(**module));
  if (!compile->devices && !compile->mesh && devices > 1) {
    err << "note: the module's collectives span " << devices << " devices (replica_count="
        << (*module)->config().replica_count << ", num_partitions="
        << (*module)->config().num_partitions << "); running on " << devices
        << " (--devices N to choose)\n";
  }
  compile->devices = devices;
  compile->lower_shard_maps = devices > 1 || LaunchedByMpirun();
  PartitionedRunOptions run_options;
  run_options.num_devices = devices;
  run_options.pipeline = compile->pipeline;
  if (settings->collective_timeout) run_options.collective_timeout = *settings->collective_timeout;
  const std::string& backend = settings->backend;
  const bool profiling = settings->profiling;
  const hlo::Computation& entry = *(*module)->entry();
  absl::StatusOr<std::unique_ptr<hlo::Module>> prepared =
      PrepareForRun(**module, *compile, devices, parsed->Has("check"));
  if (!prepared.ok()) return Fail(err, prepared.status().message(), kExitInputError);

  std::optional<std::string> output_dir = parsed->Get("output-dir");
  int64_t leaf_index = 0;
  if (absl::Status st = output_dir ? CheckWritable(entry.root()->shape(), leaf_index)
                                   : absl::OkStatus();
      !st.ok()) {
    return Fail(err, st.message(), kExitInputError);
  }

  std::vector<hlo::Literal> arguments;
  if (std::optional<int> failed = ReadArguments(entry, *settings, arguments, err)) return *failed;
  absl::StatusOr<std::unique_ptr<InfeedSource>> infeed = MakeInfeedSource(**module, *settings);
  if (!infeed.ok()) return Fail(err, infeed.status().message(), kExitInputError);
  HostTransfers host{infeed->get(), {}};
  run_options.host = &host;

  std::vector<double> run_seconds;
  absl::StatusOr<hlo::Literal> result;
  const bool partition = devices > 1 || LaunchedByMpirun();
  if (profiling && (backend == "interpreter" && !partition)) {
    return UsageError(kRunCommand,
                      "--profile times compiled kernels: drop --backend interpreter, or add "
                      "--devices N to profile the interpreter's kernels on a mesh",
                      err);
  }
  Profile profile;
  if (partition && parsed->Has("check")) {
    if (absl::Status st = HasGlobalReference(**module); !st.ok()) {
      return Fail(err, st.message(), kExitUsage);
    }
  }
  if (partition || backend != "interpreter") {
    // Compiled: partitioned for the devices (one device runs the program as
    // written), with Halide kernels unless the interpreter is asked for.
    if (devices > 1) {
      err << "note: partitioning for " << devices << " devices and running them on "
          << DescribeDeviceMesh(devices) << " ("
          << (backend == "interpreter" ? "reference-interpreter" : "Halide") << " kernels)\n";
    }
    SetCompiledRunOptions(*settings, run_seconds, profile, err, run_options);
    result = RunPartitioned(**prepared, arguments, run_options);
    if (!result.ok()) {
      const absl::Status& st = result.status();
      return Fail(err, st.message(), absl::IsAborted(st)    ? kExitRuntimeFailure
                                     : absl::IsInternal(st) ? kExitInternal
                                                            : kExitInputError);
    }
    if (!IsMainProcess()) return kExitOk;
    if (partition && parsed->Has("check")) {
      const bool compiled_reference =
          settings->check_reference == "compiled" ||
          (settings->check_reference == "auto" && InterpreterReferenceIsSlow(**module));
      if (absl::Status st = CheckAgainstReference(**module, arguments, run_options,
                                                  compiled_reference, *result, err);
          !st.ok()) {
        return Fail(err, st.message(), kExitRuntimeFailure);
      }
    }
  } else {
    // The reference interpreter on the global program (shard_map bodies run
    // per mesh device inside it).
    result = Interpret(**prepared, arguments, settings->iterations, run_seconds, &host);
    if (!result.ok()) return Fail(err, result.status().message(), kExitRuntimeFailure);
  }
  PrintMedian(run_seconds, out);
  if (profiling) {
    if (absl::Status written = WriteProfile(profile, *parsed, out); !written.ok()) {
      return Fail(err, written.message(), kExitInputError);
    }
  }

  NoteInfeedUse(**infeed, settings->seed, err);
  return ReportOutputs(*result, host.outfeed, output_dir, out, err);
}

}  // namespace
}  // namespace sharc::tools
