#include "driver/profile.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "codegen/halide_kernel_factory.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"
#include "spmd/cost_model.h"

namespace sharc::driver {
namespace {

bool IsCollective(const hlo::Instruction& inst) {
  return hlo::GetOpDef(inst.opcode()).traits.collective;
}

std::string Where(const hlo::Instruction& inst) {
  const hlo::OpMetadata& metadata = inst.metadata();
  if (!metadata.source_file.empty()) {
    return absl::StrCat(metadata.source_file, ":", metadata.source_line);
  }
  return inst.location().known() ? absl::StrCat(inst.location().file, ":", inst.location().line)
                                 : "";
}

std::string Named(const hlo::Instruction& inst) {
  const std::string where = Where(inst);
  return where.empty() ? inst.name() : absl::StrCat(inst.name(), " (", where, ")");
}

// What a step implements and costs per call: a fused kernel stands for its
// computation's instructions, read from its operands and written once.
ProfileEntry Describe(const hlo::Instruction& inst) {
  ProfileEntry entry;
  entry.name = inst.name();
  entry.shape = inst.shape().ToString();
  const bool collective = IsCollective(inst);
  entry.kind = collective ? hlo::OpcodeName(inst.opcode()) : "kernel";
  if (codegen::IsFusionCall(inst)) {
    for (const hlo::Instruction* fused : inst.called_computations()[0]->instructions()) {
      if (fused->opcode() == hlo::Opcode::kParameter) continue;
      entry.instructions.push_back(Named(*fused));
      entry.flops += spmd::CostOf(*fused).flops;
    }
    for (const hlo::Instruction* operand : inst.operands()) {
      entry.bytes += static_cast<double>(operand->shape().byte_size());
    }
    entry.bytes += static_cast<double>(inst.shape().byte_size());
  } else {
    entry.instructions.push_back(Named(inst));
    const spmd::OpCost cost = spmd::CostOf(inst);
    entry.flops = cost.flops;
    entry.bytes = cost.bytes_accessed;
  }
  return entry;
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

Profile BuildProfile(const std::vector<std::vector<std::vector<runtime::StepEvent>>>& events,
                     const std::vector<double>& run_seconds, int64_t num_devices,
                     const runtime::MachineLimits& limits) {
  Profile profile;
  profile.num_devices = num_devices;
  profile.runs = static_cast<int64_t>(events.size());
  profile.seconds_per_run = Mean(run_seconds);
  profile.limits = limits;
  absl::flat_hash_map<const hlo::Instruction*, size_t> index;
  const double runs = std::max<double>(1, profile.runs);
  const double devices = std::max<double>(1, static_cast<double>(num_devices));
  for (const auto& run : events) {
    for (const auto& device_events : run) {
      for (const runtime::StepEvent& event : device_events) {
        auto [it, inserted] = index.try_emplace(event.instruction, profile.entries.size());
        if (inserted) profile.entries.push_back(Describe(*event.instruction));
        ProfileEntry& entry = profile.entries[it->second];
        entry.calls += 1;
        entry.seconds += static_cast<double>(event.end_ns - event.start_ns) * 1e-9;
      }
    }
  }
  for (ProfileEntry& entry : profile.entries) {
    const double calls = static_cast<double>(entry.calls);
    entry.calls = static_cast<int64_t>(calls / runs / devices + 0.5);
    entry.seconds /= runs * devices;
    // Per device: the kernel's calls of one run, over its time in that run.
    const double seconds = std::max(entry.seconds, 1e-12);
    const double flop_rate = entry.flops * entry.calls / seconds;
    const double byte_rate = entry.bytes * entry.calls / seconds;
    // The limits were measured with all the threads the program runs on;
    // each device has its share of them.
    const double fma = limits.fma_gflops * 1e9 / devices;
    const double memory = limits.memory_gbps * 1e9 / devices;
    const double of_fma = fma > 0 ? flop_rate / fma : 0;
    const double of_memory = memory > 0 ? byte_rate / memory : 0;
    entry.limit = of_fma >= of_memory ? "fma" : "memory";
    entry.fraction_of_limit = std::max(of_fma, of_memory);
  }
  std::stable_sort(profile.entries.begin(), profile.entries.end(),
                   [](const ProfileEntry& a, const ProfileEntry& b) { return a.seconds > b.seconds; });
  if (!events.empty()) {
    int64_t origin = INT64_MAX;
    for (const auto& device_events : events.back()) {
      for (const runtime::StepEvent& e : device_events) origin = std::min(origin, e.start_ns);
    }
    for (const auto& device_events : events.back()) {
      std::vector<TraceSpan>& spans = profile.trace.emplace_back();
      for (const runtime::StepEvent& e : device_events) {
        spans.push_back({e.instruction->name(),
                         IsCollective(*e.instruction)
                             ? hlo::OpcodeName(e.instruction->opcode())
                             : "kernel",
                         e.start_ns - origin, e.end_ns - origin});
      }
    }
  }
  return profile;
}

std::string Profile::ToText() const {
  double timed = 0;
  for (const ProfileEntry& e : entries) timed += e.seconds;
  std::string out = absl::StrFormat(
      "profile: %d run(s) on %d device(s), %.3f ms per run, %.3f ms of it in kernels and "
      "collectives per device (means); limits for %d thread(s): FMA peak %.1f GFLOP/s, memory %.1f GB/s\n",
      runs, num_devices, seconds_per_run * 1e3, timed * 1e3, limits.threads, limits.fma_gflops,
      limits.memory_gbps);
  absl::StrAppendFormat(&out, "%7s %6s %9s %6s %10s %10s %8s  %-22s %-24s %s\n", "time%",
                        "calls", "ms/run", "bound", "GFLOP/s", "GB/s", "limit%", "kernel", "shape",
                        "instructions");
  for (const ProfileEntry& e : entries) {
    const double s = std::max(e.seconds, 1e-12);
    std::string what = absl::StrJoin(e.instructions, ", ");
    if (what.size() > 120) what = what.substr(0, 117) + "...";
    absl::StrAppendFormat(&out, "%6.1f%% %6d %9.3f %6s %10.2f %10.2f %7.1f%%  %-22s %-24s %s\n",
                          timed > 0 ? 100 * e.seconds / timed : 0.0, e.calls, e.seconds * 1e3,
                          e.limit, e.flops * e.calls / s / 1e9, e.bytes * e.calls / s / 1e9,
                          100 * e.fraction_of_limit,
                          e.kind == "kernel" ? e.name : absl::StrCat(e.name, " [", e.kind, "]"),
                          e.shape, what);
  }
  return out;
}

std::string Profile::ToJson() const {
  std::vector<std::string> rows;
  for (const ProfileEntry& e : entries) {
    std::vector<std::string> names;
    for (const std::string& n : e.instructions) names.push_back(JsonString(n));
    rows.push_back(absl::StrFormat(
        "{\"name\": %s, \"kind\": %s, \"shape\": %s, \"instructions\": [%s], \"calls\": %d, "
        "\"seconds\": %.9g, \"flops\": %.0f, \"bytes\": %.0f, \"fraction_of_limit\": %.4f, "
        "\"limit\": %s}",
        JsonString(e.name), JsonString(e.kind), JsonString(e.shape), absl::StrJoin(names, ", "),
        e.calls, e.seconds,
        e.flops, e.bytes, e.fraction_of_limit, JsonString(e.limit)));
  }
  return absl::StrFormat(
      "{\"schema_version\": %d, \"num_devices\": %d, \"runs\": %d, \"seconds_per_run\": %.9g, "
      "\"limits\": {\"threads\": %d, \"fma_gflops\": %.2f, \"memory_gbps\": %.2f}, "
      "\"entries\": [%s]}",
      kProfileSchemaVersion, num_devices, runs, seconds_per_run, limits.threads,
      limits.fma_gflops, limits.memory_gbps, absl::StrJoin(rows, ", "));
}

std::string Profile::ToChromeTrace() const {
  std::vector<std::string> events;
  events.push_back(
      "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"sharc\"}}");
  for (size_t d = 0; d < trace.size(); ++d) {
    events.push_back(absl::StrFormat(
        "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": %d, "
        "\"args\": {\"name\": \"device %d\"}}",
        d, d));
    for (const TraceSpan& span : trace[d]) {
      events.push_back(absl::StrFormat(
          "{\"name\": %s, \"cat\": %s, \"ph\": \"X\", \"pid\": 0, \"tid\": %d, \"ts\": %.3f, "
          "\"dur\": %.3f}",
          JsonString(span.name), JsonString(span.kind), d, span.start_ns / 1e3,
          (span.end_ns - span.start_ns) / 1e3));
    }
  }
  return absl::StrCat("{\"traceEvents\": [\n", absl::StrJoin(events, ",\n"),
                      "\n], \"displayTimeUnit\": \"ms\"}\n");
}

}  // namespace sharc::driver
