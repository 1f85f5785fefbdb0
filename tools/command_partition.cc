// `sharc partition FILE`: the per-device program (after propagation).
#include "absl/strings/numbers.h"
#include "hlo/text/printer.h"
#include "tools/command.h"
#include "driver/compile_stages.h"
#include "tools/compile_flags.h"
#include "driver/exit_codes.h"
#include "tools/flags.h"
#include "driver/module_loader.h"

namespace sharc::tools {

using driver::CompileOptions;
using driver::DisplayName;
using driver::LoadPreparedModule;
using driver::PartitionGlobal;
using driver::PropagateModule;
using driver::kExitInputError;
using driver::kExitOk;
namespace {

constexpr absl::string_view kUsage = R"(usage: sharc partition [FILE] [--devices N] [--mesh AXES] [--mapreduce-mode M] [--no-propagate] [--stop-after PASS]
       [--explain NAME] [--no-halo-exchange] [--windowed-einsum-mib N]
       [--verify-passes] [--dump-to DIR --dump-pass-re RE] [--pass-timings]

Propagates shardings and prints the per-device program every device runs:
per-device shapes, with the collectives (replica groups, channel ids) that make
it compute the global program (docs/partitioning.md). Local values keep their
global instruction's name.

flags:
  --devices N       partition count (overrides the header's num_partitions)
  --no-propagate    partition the shardings as written; unannotated values are
                    replicated
  --mesh AXES       named mesh, e.g. clients=2,data=2 (overrides the header's)
  --mapreduce-mode M  lowering of MapReduce blocks: annotated, ns or loop
  --stop-after PASS print the global module after one of the partitioner's
                    passes: insert-reshards (explicit SpmdReshard ops where a
                    value changes layout), reshard-to-collectives (the
                    reshards as global-view collectives), localize (default:
                    the per-device program)
  --no-halo-exchange  slice, pad and reverse along a split dim gather the dim
                    instead of exchanging halos with collective-permutes
  --windowed-einsum-mib N  a dot whose operand of at least N MiB would be
                    all-gathered along a free dim runs as partial dots while
                    the chunks rotate by collective-permutes (default 256, as
                    XLA's threshold_for_windowed_einsum_mib; -1: never)
  --explain NAME    instead of the program, say how NAME is partitioned: the
                    plans considered (how to split the op's dims across the
                    devices), the bytes each would send per device, step by
                    step, and why the chosen one won
  --verify-passes   verify the module after every compiler pass
  --dump-to DIR     with --dump-pass-re, write the module before and after
  --dump-pass-re RE every compiler pass whose name matches RE into DIR
                    (XLA's --xla_dump_to layout)
  --pass-timings    print each compiler pass's wall time on stderr, longest
                    first (XLA's pass timing report)
  -h, --help        show this text
)";

int RunPartition(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kPartitionCommand = {
    "partition", "print the per-device (SPMD) program with its collectives", kUsage, RunPartition};

namespace {

constexpr FlagSpec kFlags[] = {{"devices", FlagKind::kValue}, kMeshFlag, kMapReduceModeFlag, {"no-propagate", FlagKind::kBool}, {"stop-after", FlagKind::kValue}, {"explain", FlagKind::kValue}, {"no-halo-exchange", FlagKind::kBool},
                               {"windowed-einsum-mib", FlagKind::kValue}, kVerifyPassesFlag, kDumpToFlag, kDumpPassReFlag,
                               kPassTimingsFlag};

int RunPartition(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kPartitionCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() > 1) return UsageError(kPartitionCommand, "expected one FILE", err);
  absl::StatusOr<CompileOptions> compile = CompileOptionsFromFlags(*parsed);
  if (!compile.ok()) return UsageError(kPartitionCommand, compile.status().message(), err);
  PassTimingsPrinter timings(compile->pipeline, err);
  const std::optional<int64_t> devices = compile->devices;
  spmd::PartitionOptions::Stage stop_after = spmd::PartitionOptions::Stage::kLocalize;
  if (parsed->Has("stop-after")) {
    absl::StatusOr<spmd::PartitionOptions::Stage> stage =
        spmd::ParsePartitionStage(*parsed->Get("stop-after"));
    if (!stage.ok()) return UsageError(kPartitionCommand, stage.status().message(), err);
    stop_after = *stage;
  }
  std::string path = parsed->positionals.empty() ? "-" : parsed->positionals[0];
  auto module = LoadPreparedModule(path, *compile);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  if (parsed->Has("explain") || parsed->Has("no-halo-exchange") ||
      parsed->Has("windowed-einsum-mib")) {
    // The steps of PartitionGlobal, with the partitioner's own options.
    hlo::Module& global = **module;
    if (!parsed->Has("no-propagate")) {
      absl::Status st = PropagateModule(global, devices, compile->pipeline).status();
      if (!st.ok()) {
        err << DisplayName(path) << ": error: " << st.message() << "\n";
        return kExitInputError;
      }
    } else if (devices) {
      global.mutable_config().num_partitions = *devices;
    }
    spmd::PartitionOptions options;
    options.num_devices = global.config().num_partitions;
    options.stop_after = stop_after;
    options.halo_exchange = !parsed->Has("no-halo-exchange");
    if (auto mib = parsed->Get("windowed-einsum-mib")) {
      int64_t value = 0;
      if (!absl::SimpleAtoi(*mib, &value) || value < -1 || value > (int64_t{1} << 40)) {
        return UsageError(kPartitionCommand,
                          "--windowed-einsum-mib expects a size in MiB (or -1 for never)", err);
      }
      options.windowed_einsum_threshold_mib = value;
    }
    if (auto name = parsed->Get("explain")) {
      absl::StatusOr<std::string> text = spmd::ExplainPartitionChoice(global, *name, options);
      if (!text.ok()) {
        err << DisplayName(path) << ": error: " << text.status().message() << "\n";
        return kExitInputError;
      }
      out << *text;
      return kExitOk;
    }
    auto local = spmd::PartitionModule(global, options);
    if (!local.ok()) {
      err << DisplayName(path) << ": error: " << local.status().message() << "\n";
      return kExitInputError;
    }
    out << hlo::PrintModule(**local);
    return kExitOk;
  }
  auto local = PartitionGlobal(**module, devices, !parsed->Has("no-propagate"), stop_after,
                               compile->pipeline);
  if (!local.ok()) {
    err << DisplayName(path) << ": error: " << local.status().message() << "\n";
    return kExitInputError;
  }
  out << hlo::PrintModule(**local);
  return kExitOk;
}

}  // namespace
}  // namespace sharc::tools
