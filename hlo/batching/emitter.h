// Emitter: appends the instructions a batching rule creates to the batched
// computation. Each gets a fresh name and the source location and metadata of
// the instruction being batched, so errors in the vmapped program still point
// at the user's code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/instruction.h"

namespace sharc::hlo {

class Emitter {
 public:
  explicit Emitter(Computation* computation);

  Computation* computation() const { return computation_; }
  // Keeps `name` for a later Claim (the batched version of the original
  // instruction takes over its name; helpers never steal it).
  void Reserve(const std::string& name) { reserved_.insert(name); }
  // Gives `inst` the reserved `name` (releasing the reservation).
  void Claim(Instruction* inst, const std::string& name);
  // The instruction whose batching is being emitted (location, metadata).
  void set_origin(const Instruction* origin) { origin_ = origin; }

  // Appends `inst`, renamed to a fresh "<base>.<n>" name unless `keep_name`.
  Instruction* Add(std::unique_ptr<Instruction> inst, bool keep_name = false);
  Instruction* Add(Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                   std::vector<Attribute> attributes = {});
  // A name unused in this computation, derived from `base`.
  std::string UniqueName(const std::string& base);
  // Every instruction added so far, in order (the driver tells which ones a
  // rule created from the count before and after it).
  const std::vector<Instruction*>& added() const { return added_; }

 private:
  Computation* computation_;
  const Instruction* origin_ = nullptr;
  absl::flat_hash_set<std::string> used_;
  absl::flat_hash_set<std::string> reserved_;
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
  std::vector<Instruction*> added_;
};

}  // namespace sharc::hlo
