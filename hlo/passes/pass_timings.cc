#include "hlo/passes/pass_timings.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_format.h"

namespace sharc::hlo {

void PassTimings::Record(std::string_view pass, absl::Duration time) {
  absl::MutexLock lock(&mu_);
  runs_.emplace_back(std::string(pass), time);
}

std::vector<PassTimings::Summary> PassTimings::Summarize() const {
  std::map<std::string, Summary, std::less<>> by_name;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [pass, time] : runs_) {
      Summary& s = by_name[pass];
      s.pass = pass;
      ++s.runs;
      s.time += time;
    }
  }
  std::vector<Summary> sorted;
  for (auto& [name, summary] : by_name) sorted.push_back(std::move(summary));
  std::sort(sorted.begin(), sorted.end(), [](const Summary& a, const Summary& b) {
    return std::tie(b.time, a.pass) < std::tie(a.time, b.pass);
  });
  return sorted;
}

absl::Duration PassTimings::Total() const {
  absl::MutexLock lock(&mu_);
  absl::Duration total;
  for (const auto& run : runs_) total += run.second;
  return total;
}

std::string PassTimings::Report() const {
  const std::vector<Summary> summary = Summarize();
  if (summary.empty()) return "";
  std::string report = absl::StrFormat("Total runtime (ms) of HLO passes: %.3f\n",
                                       absl::ToDoubleMilliseconds(Total()));
  report += "Pass name, num runs, time (ms)\n";
  for (const Summary& s : summary) {
    absl::StrAppendFormat(&report, "%s, %d, %.3f\n", s.pass, s.runs,
                          absl::ToDoubleMilliseconds(s.time));
  }
  return report;
}

}  // namespace sharc::hlo
