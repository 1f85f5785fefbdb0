#include "tools/sharding_dot.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace sharc::tools {

namespace {

// A palette of distinguishable fill colours, assigned to shardings in order
// of first appearance (so the same module always gets the same colours).
constexpr const char* kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
                                    "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd",
                                    "#ccebc5", "#ffed6f"};

std::string Escape(const std::string& s) {
  return absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}});
}

}  // namespace

std::string ShardingGraphDot(const hlo::Module& module) {
  std::map<std::string, std::string> colour;
  std::string out = absl::StrCat("digraph \"", Escape(module.name()), "\" {\n",
                                 "  node [shape=box, style=filled, fontname=\"monospace\"];\n");
  std::string legend;
  int cluster = 0;
  for (const hlo::Computation* comp : module.computations()) {
    absl::StrAppend(&out, "  subgraph cluster_", cluster++, " {\n    label=\"",
                    Escape(comp->name()), "\";\n");
    for (const hlo::Instruction* inst : comp->instructions()) {
      std::string sharding = inst->sharding() ? inst->sharding()->ToString() : "(none)";
      auto it = colour.find(sharding);
      if (it == colour.end()) {
        std::string c = inst->sharding()
                            ? kPalette[colour.size() % (sizeof(kPalette) / sizeof(kPalette[0]))]
                            : "#ffffff";
        it = colour.emplace(sharding, c).first;
        absl::StrAppend(&legend, "    \"legend ", Escape(sharding), "\" [label=\"",
                        Escape(sharding), "\", fillcolor=\"", c, "\"];\n");
      }
      absl::StrAppend(&out, "    \"", Escape(comp->name()), "/", Escape(inst->name()),
                      "\" [label=\"%", Escape(inst->name()), "\\n",
                      Escape(std::string(hlo::OpcodeName(inst->opcode()))), " ",
                      Escape(inst->shape().ToString()), "\\n", Escape(sharding),
                      "\", fillcolor=\"", it->second, "\"];\n");
    }
    for (const hlo::Instruction* inst : comp->instructions()) {
      for (const hlo::Instruction* op : inst->operands()) {
        absl::StrAppend(&out, "    \"", Escape(comp->name()), "/", Escape(op->name()), "\" -> \"",
                        Escape(comp->name()), "/", Escape(inst->name()), "\";\n");
      }
    }
    out += "  }\n";
  }
  absl::StrAppend(&out, "  subgraph cluster_legend {\n    label=\"shardings\";\n", legend, "  }\n}\n");
  return out;
}

}  // namespace sharc::tools
