#include "tools/run_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "driver/compile_stages.h"
#include "hlo/ir/computation.h"
#include "spmd/cost_report.h"

namespace sharc::tools {

int64_t PhysicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  int64_t memory = pages <= 0 || page_size <= 0 ? 0 : static_cast<int64_t>(pages) * page_size;
  // A smaller budget, for sharing the machine (and for tests).
  int64_t limit = 0;
  if (const char* text = std::getenv("SHARC_MEMORY_LIMIT");
      text != nullptr && absl::SimpleAtoi(text, &limit) && limit > 0) {
    memory = memory == 0 ? limit : std::min(memory, limit);
  }
  return memory;
}

absl::Status CheckValuesFitInMemory(const hlo::Module& module) {
  const int64_t memory = PhysicalMemoryBytes();
  if (memory == 0) return absl::OkStatus();
  for (const hlo::Computation* computation : module.computations()) {
    for (const hlo::Instruction* instruction : computation->instructions()) {
      const int64_t bytes = instruction->shape().byte_size();
      if (bytes > memory) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "%", instruction->name(), " (", instruction->shape().ToString(), ") needs ", bytes,
            " bytes but this machine has ", memory, " bytes of memory"));
      }
    }
  }
  return absl::OkStatus();
}

namespace {

// What one device holds at most: its program's liveness peak, plus the
// copy of its result read back for assembly while its buffers still live.
// Measured on a partitioned copy (propagating and partitioning again costs
// milliseconds); the whole program's peak is no bound: halo masks, gathered
// operands and padding can make a device's program hold more than the
// global one. nullopt when the analysis cannot take the module.
std::optional<int64_t> PerDevicePeak(const hlo::Module& prepared, int64_t devices) {
  absl::StatusOr<spmd::CostReport> whole = spmd::AnalyzeCost(prepared, nullptr, 0);
  if (!whole.ok()) return std::nullopt;
  if (devices <= 1) return whole->peak_memory_in_bytes;
  std::unique_ptr<hlo::Module> global = prepared.Clone();
  absl::StatusOr<std::unique_ptr<hlo::Module>> local =
      driver::PartitionGlobal(*global, devices);
  // A module that does not partition fails later with its own error.
  if (!local.ok()) return std::nullopt;
  absl::StatusOr<spmd::CostReport> part = spmd::AnalyzeCost(**local, nullptr, 0);
  if (!part.ok()) return std::nullopt;
  return part->peak_memory_in_bytes + part->output_size_in_bytes;
}

}  // namespace

absl::Status CheckRunFitsInMemory(const hlo::Module& prepared, int64_t devices,
                                  const hlo::Module& global, bool with_reference) {
  const int64_t memory = PhysicalMemoryBytes();
  if (memory == 0) return absl::OkStatus();
  const int64_t budget = memory / 100 * 85;
  // Liveness peaks of the entries (spmd/cost_report.h); a module the
  // analysis cannot take is left to run.
  absl::StatusOr<spmd::CostReport> whole = spmd::AnalyzeCost(global, nullptr, 0);
  if (!whole.ok()) return absl::OkStatus();
  const int64_t global_bytes = whole->argument_size_in_bytes + whole->output_size_in_bytes;
  const int64_t reference_bytes = with_reference ? whole->peak_memory_in_bytes : 0;
  std::optional<int64_t> device_peak = PerDevicePeak(prepared, devices);
  if (!device_peak) return absl::OkStatus();
  const int64_t need = devices * *device_peak + global_bytes + reference_bytes;
  if (need <= budget) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "the run needs about ", need, " bytes but this machine has ", memory,
      " bytes of memory: ", devices, " device(s) x ", *device_peak,
      " bytes at their peak (with the result read back), ", global_bytes, " bytes of global inputs and result",
      with_reference ? absl::StrCat(", ", reference_bytes, " bytes for --check's reference")
                     : std::string()));
}

}  // namespace sharc::tools
