#include "hlo/ir/module.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "hlo/ir/directed_graph.h"
#include "hlo/text/printer.h"

namespace sharc::hlo {

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  computation->parent_ = this;
  Computation* raw = computation.get();
  computations_.push_back(std::move(computation));
  return raw;
}

void Module::RemoveComputation(Computation* computation) {
  computations_.erase(
      std::remove_if(computations_.begin(), computations_.end(),
                     [&](const std::unique_ptr<Computation>& p) { return p.get() == computation; }),
      computations_.end());
}

std::vector<Computation*> Module::computations() const {
  std::vector<Computation*> out;
  out.reserve(computations_.size());
  for (const auto& p : computations_) out.push_back(p.get());
  return out;
}

void Module::ReorderComputations(const std::vector<int64_t>& order) {
  std::vector<std::unique_ptr<Computation>> reordered;
  reordered.reserve(order.size());
  for (int64_t i : order) reordered.push_back(std::move(computations_[static_cast<size_t>(i)]));
  computations_ = std::move(reordered);
}

void Module::SortCalleesFirst() {
  std::vector<Computation*> comps = computations();
  absl::flat_hash_map<const Computation*, int64_t> index;
  for (size_t i = 0; i < comps.size(); ++i) index[comps[i]] = static_cast<int64_t>(i);
  DirectedGraph graph(static_cast<int64_t>(comps.size()));
  for (size_t i = 0; i < comps.size(); ++i) {
    for (const Instruction* inst : comps[i]->instructions()) {
      for (const Computation* callee : inst->called_computations()) {
        auto it = index.find(callee);
        if (it != index.end()) graph.AddEdge(it->second, static_cast<int64_t>(i));
      }
    }
  }
  if (std::optional<std::vector<int64_t>> order = graph.TopologicalOrder()) {
    ReorderComputations(*order);
  }
}

Computation* Module::FindComputation(std::string_view name) const {
  for (const auto& p : computations_) {
    if (p->name() == name) return p.get();
  }
  return nullptr;
}

void Module::ReplaceWith(std::unique_ptr<Module> other) {
  name_ = std::move(other->name_);
  config_ = std::move(other->config_);
  computations_ = std::move(other->computations_);
  entry_ = other->entry_;
  for (const auto& comp : computations_) comp->parent_ = this;
}

std::unique_ptr<Module> Module::Clone() const {
  auto clone = std::make_unique<Module>(name_);
  clone->config_ = config_;
  // Create every computation first so attributes can refer to any of them,
  // whatever order the computations are in.
  absl::flat_hash_map<const Computation*, Computation*> comp_map;
  for (const auto& comp : computations_) {
    Computation* raw = clone->AddComputation(std::make_unique<Computation>(comp->name()));
    comp_map[comp.get()] = raw;
    if (comp.get() == entry_) clone->entry_ = raw;
  }
  for (const auto& comp : computations_) {
    Computation* new_comp = comp_map.at(comp.get());
    absl::flat_hash_map<const Instruction*, Instruction*> inst_map;
    for (Instruction* inst : comp->instructions()) {
      std::vector<Instruction*> operands;
      for (Instruction* op : inst->operands()) operands.push_back(inst_map.at(op));
      auto copy = inst->CloneWithOperands(inst->name(), operands);
      for (const Attribute& a : inst->attributes()) {
        AttrValue v = a.value;
        if (auto* c = std::get_if<Computation*>(&v)) {
          *c = comp_map.at(*c);
        } else if (auto* l = std::get_if<std::vector<Computation*>>(&v)) {
          for (Computation*& c2 : *l) c2 = comp_map.at(c2);
        } else {
          continue;
        }
        copy->set_attr(a.name, std::move(v));
      }
      inst_map[inst] = new_comp->AddInstruction(std::move(copy));
    }
    if (comp->root() != nullptr) new_comp->set_root(inst_map.at(comp->root()));
  }
  return clone;
}

std::string Module::ToString() const { return PrintModule(*this); }

}  // namespace sharc::hlo
