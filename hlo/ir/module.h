// Module: the unit of compilation. Owns computations (callees before callers,
// as XLA prints them) and the module-level configuration from the header.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hlo/ir/buffer_aliasing.h"
#include "hlo/ir/computation.h"

namespace sharc::hlo {

// A named mesh axis (`mesh={clients=2, data=2}` in the header; sharc's
// addition to XLA's header attributes).
struct MeshAxis {
  std::string name;
  int64_t size = 1;
  bool operator==(const MeshAxis& o) const { return name == o.name && size == o.size; }
};

struct ModuleConfig {
  int64_t num_partitions = 1;
  int64_t replica_count = 1;
  // Empty = not given (XLA's default: false).
  std::vector<bool> allow_spmd_sharding_propagation_to_output;
  std::vector<bool> allow_spmd_sharding_propagation_to_parameters;
  std::vector<MeshAxis> mesh;
  // The header's `frontend_attributes={...}`, verbatim (e.g. Shardy's
  // xla.sdy.meshes); sharc does not interpret it.
  std::string frontend_attributes;
  // The header's `input_output_alias` and `buffer_donor`, in written order.
  std::vector<InputOutputAlias> input_output_alias;
  std::vector<BufferDonor> buffer_donors;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  Computation* AddComputation(std::unique_ptr<Computation> computation);
  // Removes a computation that nothing calls.
  void RemoveComputation(Computation* computation);
  std::vector<Computation*> computations() const;
  // Reorders computations: new position i holds old computation order[i].
  void ReorderComputations(const std::vector<int64_t>& order);
  // Puts every callee before its callers, as the text format requires
  // (passes append the computations they create at the end). Keeps the order
  // otherwise; does nothing if calls form a cycle (the verifier reports it).
  void SortCalleesFirst();
  Computation* FindComputation(std::string_view name) const;
  Computation* entry() const { return entry_; }
  void set_entry(Computation* entry) { entry_ = entry; }

  const ModuleConfig& config() const { return config_; }
  ModuleConfig& mutable_config() { return config_; }

  // A deep copy (computations, instructions, attributes, shardings).
  std::unique_ptr<Module> Clone() const;
  // Becomes `other` (name, config, computations, entry), dropping what this
  // module held: a pass that builds a new module (the partitioner's) still
  // fits the in-place pass contract of hlo/passes/pass.h.
  void ReplaceWith(std::unique_ptr<Module> other);

  // Canonical text (see hlo/text/printer.h).
  std::string ToString() const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  ModuleConfig config_;
};

}  // namespace sharc::hlo
