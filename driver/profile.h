// Where a compiled program's time goes: every kernel and collective of the
// per-device program, timed over repeated runs on the in-process mesh, with
// the HLO instructions it implements, its FLOPs and bytes from the cost
// model, and the fraction of the machine's limit (FMA peak or memory
// bandwidth, runtime/machine_limits.h) it reaches; longest first. As text
// (`sharc run --profile`), versioned JSON (`--profile-json`) and a Chrome
// trace with one track per device (`--trace`; chrome://tracing, Perfetto).
//
//   ASSIGN_OR_RETURN(Profile profile, program.Profile(args, 10));
//   std::cout << profile.ToText();
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/executable.h"
#include "runtime/machine_limits.h"

namespace sharc::driver {

inline constexpr int kProfileSchemaVersion = 1;

struct ProfileEntry {
  std::string name;  // the kernel's (fusion's) or collective's instruction
  std::string kind;  // "kernel" or the collective's opcode
  std::string shape;  // its result's
  // The HLO instructions it implements, each "name (where)": the frontend's
  // source line from the metadata, else the HLO text's file:line.
  std::vector<std::string> instructions;
  int64_t calls = 0;   // per device and run
  double seconds = 0;  // per run, the mean over devices
  double flops = 0;    // per call on one device, from the cost model
  double bytes = 0;    // per call: operands read and results written
  // The larger of the achieved FLOP rate over the FMA peak and the achieved
  // bytes per second over the memory bandwidth (each device's share of the
  // limits measured with all the program's threads), and which one it is.
  double fraction_of_limit = 0;
  std::string limit;  // "fma" or "memory"
};

// One timed step for the trace, in nanoseconds from the run's start.
struct TraceSpan {
  std::string name;
  std::string kind;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

struct Profile {
  int64_t num_devices = 1;
  int64_t runs = 0;
  double seconds_per_run = 0;  // wall time of a whole run (mean)
  runtime::MachineLimits limits;
  std::vector<ProfileEntry> entries;  // longest first
  // Per device, every timed step of the last run, for the trace.
  std::vector<std::vector<TraceSpan>> trace;

  std::string ToText() const;
  std::string ToJson() const;
  // Chrome's trace-event JSON: one process, one thread (track) per device.
  std::string ToChromeTrace() const;
};

// Aggregates the events of the runs (events[run][device], pointing into
// the executable's module, which must outlive the call) whose wall times are
// `run_seconds`.
Profile BuildProfile(const std::vector<std::vector<std::vector<runtime::StepEvent>>>& events,
                     const std::vector<double>& run_seconds, int64_t num_devices,
                     const runtime::MachineLimits& limits);

}  // namespace sharc::driver
