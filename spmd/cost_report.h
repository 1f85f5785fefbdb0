// The cost report of a per-device program: what one device computes, reads,
// writes, sends and holds. Names follow XLA/JAX where they fit (`flops`,
// `bytes accessed`, `peak_memory_in_bytes`); the JSON form carries a
// `schema_version` so tools can depend on it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

inline constexpr int kCostReportSchemaVersion = 1;

struct CollectiveCost {
  int64_t count = 0;
  // Bytes this device sends (ring algorithms: all-reduce 2(n-1)/n of the
  // buffer, all-gather and reduce-scatter (n-1)/n, all-to-all (n-1)/n,
  // collective-permute the whole buffer).
  int64_t bytes_sent = 0;
};

struct BufferEntry {
  std::string name;
  std::string shape;      // per-device shape
  int64_t bytes = 0;      // per device
  std::string sharding;   // of the global value, if known
};

struct CostReport {
  int64_t num_devices = 1;
  double flops = 0;              // per device
  double transcendentals = 0;    // per device
  double bytes_accessed = 0;     // per device: operands read + results written
  int64_t peak_memory_in_bytes = 0;  // per device, from liveness of the entry
  int64_t argument_size_in_bytes = 0;
  int64_t output_size_in_bytes = 0;
  std::map<std::string, CollectiveCost> collectives;  // by opcode name
  int64_t communication_bytes = 0;  // sum over collectives
  std::vector<BufferEntry> largest_buffers;
  // Bytes of padding every device holds for unevenly split values, summed
  // over the values of the entry (per device).
  int64_t padding_bytes = 0;

  std::string ToText() const;
  std::string ToJson() const;
};

// Analyses `local` (a per-device module from the partitioner). `global`, if
// given, supplies the shardings of the values (by name) and the shapes to
// measure padding against.
absl::StatusOr<CostReport> AnalyzeCost(const hlo::Module& local, const hlo::Module* global,
                                       int top_buffers = 8);

// Side by side: the figures of several reports with ratios to the first.
std::string CompareReports(const std::vector<std::pair<std::string, CostReport>>& reports,
                           bool json);

// A text grid of which device holds which block of a 1-D or 2-D value (as
// JAX's visualize_array_sharding draws it).
std::string DrawShardingGrid(const hlo::Shape& shape, const hlo::Sharding& sharding);

}  // namespace sharc::spmd
