#include "spmd/cost_report.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "hlo/ops/collective_groups.h"
#include "hlo/ops/op_def.h"
#include "spmd/cost_model.h"

namespace sharc::spmd {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

namespace {

// The computations `inst` passes values into, from its op's declared data
// flow (hlo/ops/data_flow.h): a call's, loop's or conditional's bodies, whose
// ops run as part of it. Reducers and comparators (to_apply of a reduce or
// sort) are not entered: their op's cost counts them.
std::vector<const Computation*> BodiesRun(const Instruction& inst) {
  std::vector<const Computation*> bodies;
  const hlo::DataFlowFn& flow = hlo::GetOpDef(inst.opcode()).data_flow;
  if (!flow) return bodies;
  for (const hlo::FlowEdge& edge : flow(inst).edges) {
    const Computation* callee = edge.target.computation;
    if (edge.target.kind == hlo::FlowPoint::Kind::kParameter && callee != nullptr &&
        std::find(bodies.begin(), bodies.end(), callee) == bodies.end()) {
      bodies.push_back(callee);
    }
  }
  return bodies;
}

// Device 0's group, by the op's group mode (collective_groups.h): an
// all-reduce without a channel in a partitioned module is one replica's.
int64_t GroupSize(const Instruction& inst, int64_t num_devices) {
  absl::StatusOr<std::vector<int64_t>> group =
      hlo::CollectiveGroup(inst, 0, std::max<int64_t>(num_devices, 1));
  if (group.ok()) return static_cast<int64_t>(group->size());
  const hlo::IntListList& groups = inst.attr_int_lists("replica_groups");
  if (groups.empty() || groups[0].empty()) return num_devices;
  return static_cast<int64_t>(groups[0].size());
}

int64_t BytesSent(const Instruction& inst, int64_t num_devices) {
  const int64_t n = GroupSize(inst, num_devices);
  const int64_t in = inst.operand(0)->shape().byte_size();
  const int64_t out = inst.shape().byte_size();
  switch (inst.opcode()) {
    case Opcode::kAllReduce:
      return n <= 1 ? 0 : 2 * (n - 1) * in / n;
    case Opcode::kAllGather:
      return n <= 1 ? 0 : (n - 1) * out / n;
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
      return n <= 1 ? 0 : (n - 1) * in / n;
    case Opcode::kCollectivePermute:
      return in;
    default:
      return 0;
  }
}

// Peak of the bytes of values alive at once while `comp` runs in order; a
// value lives from its definition to its last use (parameters from the
// start, the root to the end). While a call, loop or conditional runs, its
// callee's own temporaries are alive on top of the caller's values (its
// parameters alias the caller's operands, so they are not counted twice).
int64_t PeakLiveBytes(const Computation& comp) {
  std::vector<Instruction*> order = comp.instructions();
  absl::flat_hash_map<const Instruction*, size_t> last_use;
  for (size_t i = 0; i < order.size(); ++i) {
    for (const Instruction* op : order[i]->operands()) last_use[op] = i;
  }
  int64_t live = 0, peak = 0;
  for (const Instruction* p : comp.parameters())
    if (p != nullptr) live += p->shape().byte_size();
  std::vector<std::vector<const Instruction*>> dies(order.size());
  for (const auto& [inst, i] : last_use) {
    if (inst != comp.root()) dies[i].push_back(inst);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const Instruction* inst = order[i];
    // Tuples and get-tuple-element alias their operands.
    const bool aliases = inst->opcode() == Opcode::kTuple ||
                         inst->opcode() == Opcode::kGetTupleElement ||
                         inst->opcode() == Opcode::kParameter;
    int64_t callee_extra = 0;
    for (const Computation* callee : BodiesRun(*inst)) {
      int64_t parameters = 0;
      for (const Instruction* p : callee->parameters())
        if (p != nullptr) parameters += p->shape().byte_size();
      callee_extra = std::max(callee_extra, PeakLiveBytes(*callee) - parameters);
    }
    peak = std::max(peak, live + callee_extra);
    if (!aliases) live += inst->shape().byte_size();
    peak = std::max(peak, live);
    for (const Instruction* dead : dies[i]) {
      const bool dead_aliases = dead->opcode() == Opcode::kTuple ||
                                dead->opcode() == Opcode::kGetTupleElement;
      if (!dead_aliases) live -= dead->shape().byte_size();
    }
    if (!last_use.contains(inst) && inst != comp.root() && !aliases) {
      live -= inst->shape().byte_size();  // never used
    }
  }
  return peak;
}

void Accumulate(const Computation& comp, int64_t num_devices, CostReport& report,
                double multiplier) {
  for (const Instruction* inst : comp.instructions()) {
    const OpCost cost = CostOf(*inst);
    report.flops += multiplier * cost.flops;
    report.transcendentals += multiplier * cost.transcendentals;
    report.bytes_accessed += multiplier * cost.bytes_accessed;
    if (inst->opcode() == Opcode::kAllReduce || inst->opcode() == Opcode::kAllGather ||
        inst->opcode() == Opcode::kReduceScatter || inst->opcode() == Opcode::kAllToAll ||
        inst->opcode() == Opcode::kCollectivePermute) {
      CollectiveCost& c = report.collectives[hlo::OpcodeName(inst->opcode())];
      c.count += 1;
      c.bytes_sent += static_cast<int64_t>(multiplier) * BytesSent(*inst, num_devices);
    }
    // Loop bodies are counted once (their trip count is not known statically).
    for (const Computation* callee : BodiesRun(*inst)) {
      Accumulate(*callee, num_devices, report, multiplier);
    }
  }
}

std::string Bytes(int64_t b) {
  if (b >= (int64_t{1} << 30)) return absl::StrFormat("%.2f GiB", b / double(int64_t{1} << 30));
  if (b >= (1 << 20)) return absl::StrFormat("%.2f MiB", b / double(1 << 20));
  if (b >= (1 << 10)) return absl::StrFormat("%.2f KiB", b / 1024.0);
  return absl::StrCat(b, " B");
}

}  // namespace

absl::StatusOr<CostReport> AnalyzeCost(const hlo::Module& local, const hlo::Module* global,
                                       int top_buffers) {
  if (local.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  CostReport report;
  report.num_devices = local.config().num_partitions;
  const Computation& entry = *local.entry();
  Accumulate(entry, report.num_devices, report, 1.0);
  for (const auto& [name, c] : report.collectives) report.communication_bytes += c.bytes_sent;
  report.peak_memory_in_bytes = PeakLiveBytes(entry);
  for (const Instruction* p : entry.parameters())
    if (p != nullptr) report.argument_size_in_bytes += p->shape().byte_size();
  report.output_size_in_bytes = entry.root()->shape().byte_size();

  // Largest per-device buffers, with the global value's sharding.
  absl::flat_hash_map<std::string, const Instruction*> global_by_name;
  if (global != nullptr && global->entry() != nullptr) {
    for (const Instruction* g : global->entry()->instructions()) global_by_name[g->name()] = g;
  }
  std::vector<BufferEntry> buffers;
  for (const Instruction* inst : entry.instructions()) {
    if (inst->opcode() == Opcode::kTuple || inst->opcode() == Opcode::kGetTupleElement) continue;
    BufferEntry e;
    e.name = inst->name();
    e.shape = inst->shape().ToString();
    e.bytes = inst->shape().byte_size();
    auto it = global_by_name.find(inst->name());
    if (it != global_by_name.end()) {
      const Instruction* g = it->second;
      e.sharding = g->sharding() ? g->sharding()->ToString() : "{replicated}";
      // Padding: what this device holds beyond its share of the real data.
      if (g->shape().is_array() && inst->shape().is_array() && g->sharding() &&
          g->sharding()->IsTiled()) {
        int64_t held = inst->shape().byte_size() * g->sharding()->NumTiles();
        report.padding_bytes += std::max<int64_t>(0, held - g->shape().byte_size()) /
                                std::max<int64_t>(1, g->sharding()->NumTiles());
      }
    }
    buffers.push_back(std::move(e));
  }
  std::stable_sort(buffers.begin(), buffers.end(),
                   [](const BufferEntry& a, const BufferEntry& b) { return a.bytes > b.bytes; });
  if (static_cast<int>(buffers.size()) > top_buffers) buffers.resize(static_cast<size_t>(top_buffers));
  report.largest_buffers = std::move(buffers);
  return report;
}

std::string CostReport::ToText() const {
  std::string out = absl::StrCat("per-device cost on ", num_devices, " device(s)\n");
  absl::StrAppendFormat(&out, "  flops                  %.0f\n", flops);
  absl::StrAppendFormat(&out, "  transcendentals        %.0f\n", transcendentals);
  absl::StrAppendFormat(&out, "  bytes accessed         %s\n", Bytes(static_cast<int64_t>(bytes_accessed)));
  absl::StrAppendFormat(&out, "  peak memory            %s\n", Bytes(peak_memory_in_bytes));
  absl::StrAppendFormat(&out, "  arguments / outputs    %s / %s\n", Bytes(argument_size_in_bytes),
                        Bytes(output_size_in_bytes));
  absl::StrAppendFormat(&out, "  padding held           %s\n", Bytes(padding_bytes));
  absl::StrAppendFormat(&out, "  communication          %s\n", Bytes(communication_bytes));
  for (const auto& [name, c] : collectives) {
    absl::StrAppendFormat(&out, "    %-20s %3d x, sends %s\n", name, c.count, Bytes(c.bytes_sent));
  }
  out += "  largest buffers\n";
  for (const BufferEntry& b : largest_buffers) {
    absl::StrAppendFormat(&out, "    %-24s %-18s %10s  %s\n", b.name, b.shape, Bytes(b.bytes),
                          b.sharding);
  }
  return out;
}

std::string CostReport::ToJson() const {
  std::vector<std::string> coll;
  for (const auto& [name, c] : collectives) {
    coll.push_back(absl::StrFormat("\"%s\": {\"count\": %d, \"bytes_sent\": %d}", name, c.count,
                                   c.bytes_sent));
  }
  std::vector<std::string> bufs;
  for (const BufferEntry& b : largest_buffers) {
    bufs.push_back(absl::StrFormat(
        "{\"name\": \"%s\", \"shape\": \"%s\", \"bytes\": %d, \"sharding\": \"%s\"}", b.name,
        b.shape, b.bytes, b.sharding));
  }
  return absl::StrFormat(
      "{\"schema_version\": %d, \"num_devices\": %d, \"flops\": %.0f, \"transcendentals\": %.0f, "
      "\"bytes accessed\": %.0f, \"peak_memory_in_bytes\": %d, \"argument_size_in_bytes\": %d, "
      "\"output_size_in_bytes\": %d, \"padding_bytes\": %d, \"communication_bytes\": %d, "
      "\"collectives\": {%s}, \"largest_buffers\": [%s]}",
      kCostReportSchemaVersion, num_devices, flops, transcendentals, bytes_accessed,
      peak_memory_in_bytes, argument_size_in_bytes, output_size_in_bytes, padding_bytes,
      communication_bytes, absl::StrJoin(coll, ", "), absl::StrJoin(bufs, ", "));
}

std::string CompareReports(const std::vector<std::pair<std::string, CostReport>>& reports,
                           bool json) {
  struct Row {
    const char* name;
    double (*get)(const CostReport&);
  };
  static const Row kRows[] = {
      {"flops", [](const CostReport& r) { return r.flops; }},
      {"bytes accessed", [](const CostReport& r) { return r.bytes_accessed; }},
      {"peak_memory_in_bytes", [](const CostReport& r) { return double(r.peak_memory_in_bytes); }},
      {"communication_bytes", [](const CostReport& r) { return double(r.communication_bytes); }},
      {"padding_bytes", [](const CostReport& r) { return double(r.padding_bytes); }},
  };
  if (json) {
    std::vector<std::string> parts;
    for (const auto& [label, r] : reports) {
      parts.push_back(absl::StrCat("\"", label, "\": ", r.ToJson()));
    }
    return absl::StrCat("{\"schema_version\": ", kCostReportSchemaVersion, ", ",
                        absl::StrJoin(parts, ", "), "}");
  }
  std::string out = absl::StrFormat("%-22s", "per device");
  for (const auto& [label, r] : reports) absl::StrAppendFormat(&out, " %18s", label);
  for (size_t i = 1; i < reports.size(); ++i)
    absl::StrAppendFormat(&out, " %10s", absl::StrCat(reports[i].first, "/", reports[0].first));
  out += "\n";
  for (const Row& row : kRows) {
    absl::StrAppendFormat(&out, "%-22s", row.name);
    for (const auto& [label, r] : reports) absl::StrAppendFormat(&out, " %18.0f", row.get(r));
    const double base = row.get(reports[0].second);
    for (size_t i = 1; i < reports.size(); ++i) {
      double v = row.get(reports[i].second);
      if (base == 0) {
        absl::StrAppendFormat(&out, " %10s", v == 0 ? "1.00" : "inf");
      } else {
        absl::StrAppendFormat(&out, " %10.2f", v / base);
      }
    }
    out += "\n";
  }
  return out;
}

std::string DrawShardingGrid(const Shape& shape, const hlo::Sharding& sharding) {
  if (!shape.is_array() || shape.rank() > 2) {
    return absl::StrCat("(grids are drawn for rank 1 and 2 values; ", shape.ToString(),
                        " is sharded ", sharding.ToString(), ")\n");
  }
  const int64_t rows = shape.rank() == 2 ? sharding.TileCount(0) : 1;
  const int64_t cols = shape.rank() == 2 ? sharding.TileCount(1) : sharding.TileCount(0);
  // Devices holding each tile.
  std::vector<std::vector<std::string>> cell(static_cast<size_t>(rows),
                                             std::vector<std::string>(static_cast<size_t>(cols)));
  if (!sharding.IsTiled()) {
    cell[0][0] = sharding.IsMaximal() ? absl::StrCat("device ", sharding.maximal_device())
                                      : std::string("all devices");
  } else {
    std::vector<std::vector<std::vector<int64_t>>> holders(
        static_cast<size_t>(rows), std::vector<std::vector<int64_t>>(static_cast<size_t>(cols)));
    for (int64_t d : sharding.Devices()) {
      std::vector<int64_t> idx = *sharding.TileIndexForDevice(d);
      int64_t r = shape.rank() == 2 ? idx[0] : 0;
      int64_t c = shape.rank() == 2 ? idx[1] : idx[0];
      holders[r][c].push_back(d);
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        cell[r][c] = absl::StrCat(holders[r][c].size() > 1 ? "devices " : "device ",
                                  absl::StrJoin(holders[r][c], ","));
  }
  size_t width = 0;
  for (const auto& row : cell)
    for (const std::string& s : row) width = std::max(width, s.size());
  width += 2;
  std::string line = "+";
  for (int64_t c = 0; c < cols; ++c) line += std::string(width, '-') + "+";
  std::string out = absl::StrCat(shape.ToString(), " ", sharding.ToString(), "\n", line, "\n");
  for (int64_t r = 0; r < rows; ++r) {
    out += "|";
    for (int64_t c = 0; c < cols; ++c) {
      const std::string& s = cell[r][c];
      size_t left = (width - s.size()) / 2;
      out += std::string(left, ' ') + s + std::string(width - s.size() - left, ' ') + "|";
    }
    out += "\n" + line + "\n";
  }
  return out;
}

}  // namespace sharc::spmd
