// The flags behind driver::CompileOptions, for the compiling subcommands'
// flag tables. In usage texts they read:
//   --mesh AXES           named mesh, e.g. clients=2,data=2 (overrides the header)
//   --mapreduce-mode M    MapReduce lowering: annotated (default), ns or loop
//   --verify-passes       verify the module after every compiler pass
//   --dump-to DIR         write the module between passes matching
//   --dump-pass-re RE     RE into DIR (XLA's --xla_dump_to layout)
//   --pass-timings        print each pass's wall time on stderr, longest first
#pragma once

#include <memory>
#include <ostream>

#include "absl/status/statusor.h"
#include "driver/compile_stages.h"
#include "hlo/passes/pipeline.h"
#include "tools/flags.h"

namespace sharc::tools {

inline constexpr FlagSpec kMeshFlag = {"mesh", FlagKind::kValue};
inline constexpr FlagSpec kMapReduceModeFlag = {"mapreduce-mode", FlagKind::kValue};
inline constexpr FlagSpec kVerifyPassesFlag = {"verify-passes", FlagKind::kBool};
inline constexpr FlagSpec kDumpToFlag = {"dump-to", FlagKind::kValue};
inline constexpr FlagSpec kDumpPassReFlag = {"dump-pass-re", FlagKind::kValue};
inline constexpr FlagSpec kPassTimingsFlag = {"pass-timings", FlagKind::kBool};

// Reads --devices, --mesh, --mapreduce-mode and the pipeline flags (usage
// errors as InvalidArgument).
absl::StatusOr<driver::CompileOptions> CompileOptionsFromFlags(const ParsedArgs& args);

// Reads --verify-passes, --dump-to, --dump-pass-re and --pass-timings over
// the defaults.
// One of the dump flags without the other is a usage error; so is a regex
// that does not compile.
absl::StatusOr<hlo::PipelineOptions> PipelineOptionsFromFlags(const ParsedArgs& args);

// Writes the --pass-timings report (hlo/passes/pass_timings.h) to `err`
// when it goes out of scope, so a command prints it on every return path,
// a failed compile included (the passes that ran are what one wants timed).
// Prints nothing when the options collect no timings.
class PassTimingsPrinter {
 public:
  PassTimingsPrinter(const hlo::PipelineOptions& options, std::ostream& err)
      : timings_(options.timings), err_(err) {}
  PassTimingsPrinter(const PassTimingsPrinter&) = delete;
  PassTimingsPrinter& operator=(const PassTimingsPrinter&) = delete;
  ~PassTimingsPrinter() {
    if (timings_) err_ << timings_->Report();
  }

 private:
  std::shared_ptr<hlo::PassTimings> timings_;
  std::ostream& err_;
};

}  // namespace sharc::tools
