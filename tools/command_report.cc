// `sharc report FILE`: the per-device cost of the partitioned program.
#include "spmd/cost_report.h"
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
using driver::kExitInputError;
using driver::kExitOk;
namespace {

constexpr absl::string_view kUsage = R"(usage: sharc report [FILE] [--devices N] [--mesh AXES] [--mapreduce-mode M] [--json] [--show NAME]

Propagates, partitions and reports what one device computes, reads, writes,
sends and holds: flops, transcendentals, bytes accessed, peak_memory_in_bytes
(liveness of the per-device program), each collective's count and bytes sent,
the largest buffers with their shardings, and the padding held for unevenly
split values (docs/partitioning.md).

flags:
  --devices N    partition count (overrides the header's num_partitions)
  --json         machine-readable, with "schema_version"
  --show NAME    draw which device holds which block of value NAME
  --top K        number of largest buffers listed (default 8)
  --mesh AXES       named mesh, e.g. clients=2,data=2 (overrides the header's)
  --mapreduce-mode M  lowering of MapReduce blocks: annotated, ns or loop
  -h, --help     show this text
)";

int RunReport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kReportCommand = {"report", "per-device cost: flops, memory, communication",
                                       kUsage, RunReport};

namespace {

constexpr FlagSpec kFlags[] = {{"devices", FlagKind::kValue}, kMeshFlag, kMapReduceModeFlag,
                               {"json", FlagKind::kBool},
                               {"show", FlagKind::kValue},
                               {"top", FlagKind::kValue}};

int RunReport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kReportCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() > 1) return UsageError(kReportCommand, "expected one FILE", err);
  absl::StatusOr<CompileOptions> compile = CompileOptionsFromFlags(*parsed);
  if (!compile.ok()) return UsageError(kReportCommand, compile.status().message(), err);
  const std::optional<int64_t> devices = compile->devices;
  int64_t top = 8;
  if (auto t = parsed->Get("top")) {
    absl::StatusOr<int64_t> n = ParseIntFlag("top", *t, 0, 1000);
    if (!n.ok()) return UsageError(kReportCommand, n.status().message(), err);
    top = *n;
  }
  std::string path = parsed->positionals.empty() ? "-" : parsed->positionals[0];
  auto module = LoadPreparedModule(path, *compile);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  auto local = PartitionGlobal(**module, devices);
  if (!local.ok()) {
    err << DisplayName(path) << ": error: " << local.status().message() << "\n";
    return kExitInputError;
  }
  if (auto name = parsed->Get("show")) {
    const hlo::Instruction* inst = nullptr;
    for (const hlo::Computation* comp : (*module)->computations())
      if (const hlo::Instruction* i = comp->FindInstruction(*name)) inst = i;
    if (inst == nullptr) {
      err << DisplayName(path) << ": error: no instruction named '" << *name << "'\n";
      return kExitInputError;
    }
    out << spmd::DrawShardingGrid(inst->shape(), inst->sharding() ? *inst->sharding()
                                                                 : hlo::Sharding::Replicated());
    return kExitOk;
  }
  absl::StatusOr<spmd::CostReport> report =
      spmd::AnalyzeCost(**local, module->get(), static_cast<int>(top));
  if (!report.ok()) {
    err << DisplayName(path) << ": error: " << report.status().message() << "\n";
    return kExitInputError;
  }
  out << (parsed->Has("json") ? report->ToJson() + "\n" : report->ToText());
  return kExitOk;
}

}  // namespace
}  // namespace sharc::tools
