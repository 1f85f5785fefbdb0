// Wall time per pass, summed over every pipeline a compile runs, and the
// report `--pass-timings` prints: XLA's CompilationStats report, passes
// that took longest first (ties by name), one line per pass name with the
// number of runs and the total milliseconds:
//
//   Total runtime (ms) of HLO passes: 12.345
//   Pass name, num runs, time (ms)
//   propagate, 1, 8.100
//   localize, 1, 2.000
//   ...
//
// One object may be shared by pipelines on several threads (a program
// compiled for several device counts at once), so recording is locked.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sharc::hlo {

class PassTimings {
 public:
  void Record(std::string_view pass, absl::Duration time);

  // Per pass name: runs and total time, longest first.
  struct Summary {
    std::string pass;
    int runs = 0;
    absl::Duration time;
  };
  std::vector<Summary> Summarize() const;
  absl::Duration Total() const;

  // The report above; empty when no pass ran.
  std::string Report() const;

 private:
  mutable absl::Mutex mu_;
  std::vector<std::pair<std::string, absl::Duration>> runs_;
};

}  // namespace sharc::hlo
