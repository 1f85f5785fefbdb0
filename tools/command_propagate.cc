// `sharc propagate FILE`: the module with the shardings propagation infers,
// as text (XLA's syntax), as a Graphviz graph, or an explanation of one
// value's sharding.
#include "hlo/text/printer.h"
#include "tools/command.h"
#include "driver/compile_stages.h"
#include "tools/compile_flags.h"
#include "driver/exit_codes.h"
#include "tools/flags.h"
#include "driver/module_loader.h"
#include "tools/sharding_dot.h"

namespace sharc::tools {

using driver::CompileOptions;
using driver::DisplayName;
using driver::LoadPreparedModule;
using driver::PropagateModule;
using driver::kExitInputError;
using driver::kExitOk;
namespace {

constexpr absl::string_view kUsage = R"(usage: sharc propagate [FILE] [--devices N] [--mesh AXES] [--mapreduce-mode M] [--format=text|dot] [--explain NAME]
       [--pass-timings]

Infers a sharding for every value from the module's annotations, with XLA
GSPMD's rules (docs/propagation.md), and prints the module.

flags:
  --devices N       partition count (overrides the header's num_partitions)
  --format=text     the module in HLO text with the inferred shardings (default)
  --format=dot      the dataflow graph for Graphviz, values coloured by sharding
  --explain NAME    say where NAME's sharding came from: through which
                    instructions and rules, back to an annotation
  --mesh AXES       named mesh, e.g. clients=2,data=2 (overrides the header's)
  --mapreduce-mode M  lowering of MapReduce blocks: annotated, ns or loop
  --pass-timings    print each compiler pass's wall time on stderr, longest
                    first (XLA's pass timing report)
  -h, --help        show this text
)";

int RunPropagate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

extern const Command kPropagateCommand = {
    "propagate", "infer shardings for every value (GSPMD semantics)", kUsage, RunPropagate};

namespace {

constexpr FlagSpec kFlags[] = {{"devices", FlagKind::kValue}, kMeshFlag, kMapReduceModeFlag,
                               {"format", FlagKind::kValue},
                               {"explain", FlagKind::kValue}, kPassTimingsFlag};

int RunPropagate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(args, kFlags);
  if (!parsed.ok()) return UsageError(kPropagateCommand, parsed.status().message(), err);
  if (parsed->help) {
    out << kUsage;
    return kExitOk;
  }
  if (parsed->positionals.size() > 1) return UsageError(kPropagateCommand, "expected one FILE", err);
  absl::StatusOr<CompileOptions> compile = CompileOptionsFromFlags(*parsed);
  if (!compile.ok()) return UsageError(kPropagateCommand, compile.status().message(), err);
  PassTimingsPrinter timings(compile->pipeline, err);
  const std::optional<int64_t> devices = compile->devices;
  std::string format = parsed->Get("format").value_or("text");
  if (format != "text" && format != "dot") {
    return UsageError(kPropagateCommand, "--format must be text or dot", err);
  }
  std::string path = parsed->positionals.empty() ? "-" : parsed->positionals[0];
  auto module = LoadPreparedModule(path, *compile);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  absl::StatusOr<spmd::PropagationResult> result = PropagateModule(**module, devices, compile->pipeline);
  if (!result.ok()) {
    err << DisplayName(path) << ": error: " << result.status().message() << "\n";
    return kExitInputError;
  }
  if (auto name = parsed->Get("explain")) {
    absl::StatusOr<std::string> text = spmd::ExplainSharding(**module, *result, *name);
    if (!text.ok()) {
      err << DisplayName(path) << ": error: " << text.status().message() << "\n";
      return kExitInputError;
    }
    out << *text;
    return kExitOk;
  }
  out << (format == "dot" ? ShardingGraphDot(**module) : hlo::PrintModule(**module));
  return kExitOk;
}

}  // namespace
}  // namespace sharc::tools
