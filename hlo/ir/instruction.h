// Instruction: one SSA value of a Computation.
//
// IR semantics every pass may rely on:
// - Values are immutable arrays (or tuples of arrays) in row-major order.
// - Operands are defined before their users within a computation; the
//   computation's instruction list is in a valid definition order.
// - Elementwise ops require operands of identical shape (no implicit
//   broadcasting); explicit `broadcast` makes shapes agree.
// - Integer overflow wraps; integer division by zero yields -1 (quotient)
//   and the dividend (remainder), as in XLA. Float ops follow IEEE with
//   round-to-nearest-even; f16/bf16 compute in f32 and round after each op.
// - A sharding, when present, says how the value is laid out over devices; it
//   never changes the value.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "hlo/ir/attribute.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/opcode.h"
#include "hlo/ir/shape.h"
#include "hlo/ir/sharding.h"

namespace sharc::hlo {

class Computation;

// Where an instruction came from: a position in a text file, or a C++ call
// site in frontend code. Used in every error message about the instruction.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  bool known() const { return line > 0; }
  std::string ToString() const;  // "file:line:col" (or "" if unknown)
};

// XLA's `metadata={op_type="..." op_name="..." source_file="..." source_line=N}`.
struct OpMetadata {
  std::string op_type;
  std::string op_name;
  std::string source_file;
  int64_t source_line = 0;
  bool empty() const {
    return op_type.empty() && op_name.empty() && source_file.empty() && source_line == 0;
  }
  bool operator==(const OpMetadata& o) const {
    return op_type == o.op_type && op_name == o.op_name && source_file == o.source_file &&
           source_line == o.source_line;
  }
};

class Instruction {
 public:
  // Creates a detached instruction; add it to a computation with
  // Computation::AddInstruction.
  static std::unique_ptr<Instruction> Create(Opcode opcode, std::string name, Shape shape,
                                             std::vector<Instruction*> operands = {});
  static std::unique_ptr<Instruction> CreateParameter(int64_t number, std::string name,
                                                      Shape shape);
  static std::unique_ptr<Instruction> CreateConstant(std::string name, Literal literal);
  // A detached copy of this instruction (attributes, payload, sharding,
  // metadata, location) under `name` with `operands` in place of its own.
  // Called computations are kept; a caller copying into another module
  // remaps them.
  std::unique_ptr<Instruction> CloneWithOperands(std::string name,
                                                 std::vector<Instruction*> operands) const;

  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  Opcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const Shape& shape() const { return shape_; }
  void set_shape(Shape shape) { shape_ = std::move(shape); }

  // Operands and users. Users are kept in sync by the mutators below; a user
  // appears once per instruction even if it uses the value several times.
  const std::vector<Instruction*>& operands() const { return operands_; }
  Instruction* operand(int64_t i) const { return operands_[static_cast<size_t>(i)]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  const std::vector<Instruction*>& users() const { return users_; }
  void AppendOperand(Instruction* operand);
  void ReplaceOperand(int64_t index, Instruction* new_operand);
  // Replaces every use of `old_operand` among this instruction's operands.
  void ReplaceOperandWith(Instruction* old_operand, Instruction* new_operand);
  // Makes every user of this instruction use `other` instead (and moves the
  // root of the parent computation if this was it).
  void ReplaceAllUsesWith(Instruction* other);
  // Removes this instruction from its operands' user lists (before deletion).
  void DetachFromOperands();

  // Attributes in schema order (see hlo/ops/op_def.h).
  const std::vector<Attribute>& attributes() const { return attributes_; }
  bool has_attr(std::string_view name) const;
  const AttrValue* attr(std::string_view name) const;
  void set_attr(std::string name, AttrValue value);
  void remove_attr(std::string_view name);
  // Typed getters; each returns the default for a missing attribute.
  int64_t attr_int(std::string_view name, int64_t default_value = 0) const;
  bool attr_bool(std::string_view name, bool default_value = false) const;
  const std::string& attr_string(std::string_view name) const;
  const IntList& attr_ints(std::string_view name) const;
  const IntListList& attr_int_lists(std::string_view name) const;
  Computation* attr_computation(std::string_view name) const;
  const std::vector<Computation*>& attr_computations(std::string_view name) const;
  // Every called computation in attribute order (to_apply, condition, body,
  // branches...).
  std::vector<Computation*> called_computations() const;

  // Constant and parameter payloads.
  const Literal& literal() const { return literal_; }
  void set_literal(Literal l) { literal_ = std::move(l); }
  int64_t parameter_number() const { return parameter_number_; }
  void set_parameter_number(int64_t n) { parameter_number_ = n; }

  const std::optional<Sharding>& sharding() const { return sharding_; }
  bool has_sharding() const { return sharding_.has_value(); }
  void set_sharding(Sharding s) { sharding_ = std::move(s); }
  void clear_sharding() { sharding_.reset(); }

  // Device variance, meaningful inside shard_map bodies: the mesh axes along
  // which this value may differ between devices (empty = invariant). Printed
  // after the shape as `f32[3]{V:i,j}`; computed by spmd's variance pass.
  const std::vector<std::string>& variance() const { return variance_; }
  void set_variance(std::vector<std::string> axes) { variance_ = std::move(axes); }

  const OpMetadata& metadata() const { return metadata_; }
  OpMetadata& mutable_metadata() { return metadata_; }
  // Verbatim `frontend_attributes={...}` body, kept for round trips.
  const std::string& frontend_attributes() const { return frontend_attributes_; }
  void set_frontend_attributes(std::string s) { frontend_attributes_ = std::move(s); }
  // `backend_config="..."` on ops other than custom-call (kept verbatim).
  const std::string& backend_config() const { return backend_config_; }
  void set_backend_config(std::string s) { backend_config_ = std::move(s); }

  const SourceLocation& location() const { return location_; }
  void set_location(SourceLocation loc) { location_ = std::move(loc); }

  Computation* parent() const { return parent_; }

  // Text form of the instruction, e.g.
  // "%add.1 = f32[4] add(%a, %b), sharding={replicated}" (no ROOT marker).
  std::string ToString() const;
  // Short form for error messages: the text plus the source location.
  std::string Describe() const;

 private:
  friend class Computation;
  Instruction(Opcode opcode, std::string name, Shape shape)
      : opcode_(opcode), name_(std::move(name)), shape_(std::move(shape)) {}
  void AddUser(Instruction* user);
  void RemoveUser(Instruction* user);

  Opcode opcode_;
  std::string name_;
  Shape shape_;
  std::vector<Instruction*> operands_;
  std::vector<Instruction*> users_;
  // Membership of users_, so adding a user stays O(1) for values with many
  // users (a parameter read by every layer).
  absl::flat_hash_set<const Instruction*> user_set_;
  std::vector<Attribute> attributes_;
  Literal literal_;
  int64_t parameter_number_ = -1;
  std::optional<Sharding> sharding_;
  std::vector<std::string> variance_;
  OpMetadata metadata_;
  std::string frontend_attributes_;
  std::string backend_config_;
  SourceLocation location_;
  Computation* parent_ = nullptr;
};

}  // namespace sharc::hlo
