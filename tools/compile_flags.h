// The flags behind driver::CompileOptions, for the compiling subcommands'
// flag tables. In usage texts they read:
//   --mesh AXES           named mesh, e.g. clients=2,data=2 (overrides the header)
//   --mapreduce-mode M    MapReduce lowering: annotated (default), ns or loop
//   --verify-passes       verify the module after every compiler pass
//   --dump-to DIR         write the module between passes matching
//   --dump-pass-re RE     RE into DIR (XLA's --xla_dump_to layout)
#pragma once

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

// Reads --devices, --mesh, --mapreduce-mode and the pipeline flags (usage
// errors as InvalidArgument).
absl::StatusOr<driver::CompileOptions> CompileOptionsFromFlags(const ParsedArgs& args);

// Reads --verify-passes, --dump-to and --dump-pass-re over the defaults.
// One of the dump flags without the other is a usage error; so is a regex
// that does not compile.
absl::StatusOr<hlo::PipelineOptions> PipelineOptionsFromFlags(const ParsedArgs& args);

}  // namespace sharc::tools
