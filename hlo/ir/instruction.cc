#include "hlo/ir/instruction.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/ir/computation.h"
#include "hlo/text/printer.h"

namespace sharc::hlo {

std::string SourceLocation::ToString() const {
  if (!known()) return "";
  return absl::StrCat(file.empty() ? "<input>" : file, ":", line, ":", column);
}

std::unique_ptr<Instruction> Instruction::Create(Opcode opcode, std::string name, Shape shape,
                                                 std::vector<Instruction*> operands) {
  std::unique_ptr<Instruction> inst(new Instruction(opcode, std::move(name), std::move(shape)));
  for (Instruction* op : operands) inst->AppendOperand(op);
  return inst;
}

std::unique_ptr<Instruction> Instruction::CreateParameter(int64_t number, std::string name,
                                                          Shape shape) {
  auto inst = Create(Opcode::kParameter, std::move(name), std::move(shape));
  inst->parameter_number_ = number;
  return inst;
}

std::unique_ptr<Instruction> Instruction::CreateConstant(std::string name, Literal literal) {
  auto inst = Create(Opcode::kConstant, std::move(name), literal.shape());
  inst->literal_ = std::move(literal);
  return inst;
}

std::unique_ptr<Instruction> Instruction::CloneWithOperands(
    std::string name, std::vector<Instruction*> operands) const {
  auto copy = Create(opcode_, std::move(name), shape_, std::move(operands));
  copy->attributes_ = attributes_;
  copy->literal_ = literal_;
  copy->parameter_number_ = parameter_number_;
  copy->sharding_ = sharding_;
  copy->variance_ = variance_;
  copy->metadata_ = metadata_;
  copy->frontend_attributes_ = frontend_attributes_;
  copy->backend_config_ = backend_config_;
  copy->location_ = location_;
  return copy;
}

void Instruction::AddUser(Instruction* user) {
  if (user_set_.insert(user).second) users_.push_back(user);
}

void Instruction::RemoveUser(Instruction* user) {
  // Only drop the user if it no longer uses us through any operand slot.
  if (std::find(user->operands_.begin(), user->operands_.end(), this) != user->operands_.end())
    return;
  if (user_set_.erase(user) == 0) return;
  users_.erase(std::remove(users_.begin(), users_.end(), user), users_.end());
}

void Instruction::AppendOperand(Instruction* operand) {
  operands_.push_back(operand);
  operand->AddUser(this);
}

void Instruction::ReplaceOperand(int64_t index, Instruction* new_operand) {
  Instruction* old = operands_[static_cast<size_t>(index)];
  operands_[static_cast<size_t>(index)] = new_operand;
  new_operand->AddUser(this);
  if (old != new_operand) old->RemoveUser(this);
}

void Instruction::ReplaceOperandWith(Instruction* old_operand, Instruction* new_operand) {
  for (size_t i = 0; i < operands_.size(); ++i) {
    if (operands_[i] == old_operand) operands_[i] = new_operand;
  }
  new_operand->AddUser(this);
  if (old_operand != new_operand) old_operand->RemoveUser(this);
}

void Instruction::ReplaceAllUsesWith(Instruction* other) {
  std::vector<Instruction*> users = users_;
  for (Instruction* user : users) {
    if (user == other) continue;
    user->ReplaceOperandWith(this, other);
  }
  if (parent_ != nullptr && parent_->root() == this) parent_->set_root(other);
}

void Instruction::DetachFromOperands() {
  std::vector<Instruction*> ops = operands_;
  operands_.clear();
  for (Instruction* op : ops) op->RemoveUser(this);
}

bool Instruction::has_attr(std::string_view name) const { return attr(name) != nullptr; }

const AttrValue* Instruction::attr(std::string_view name) const {
  for (const Attribute& a : attributes_) {
    if (a.name == name) return &a.value;
  }
  return nullptr;
}

void Instruction::set_attr(std::string name, AttrValue value) {
  for (Attribute& a : attributes_) {
    if (a.name == name) {
      a.value = std::move(value);
      return;
    }
  }
  attributes_.push_back(Attribute{std::move(name), std::move(value)});
}

void Instruction::remove_attr(std::string_view name) {
  attributes_.erase(std::remove_if(attributes_.begin(), attributes_.end(),
                                   [&](const Attribute& a) { return a.name == name; }),
                    attributes_.end());
}

int64_t Instruction::attr_int(std::string_view name, int64_t default_value) const {
  const AttrValue* v = attr(name);
  if (v == nullptr) return default_value;
  if (const int64_t* i = std::get_if<int64_t>(v)) return *i;
  return default_value;
}

bool Instruction::attr_bool(std::string_view name, bool default_value) const {
  const AttrValue* v = attr(name);
  if (v == nullptr) return default_value;
  if (const bool* b = std::get_if<bool>(v)) return *b;
  return default_value;
}

const std::string& Instruction::attr_string(std::string_view name) const {
  static const std::string* kEmpty = new std::string();
  const AttrValue* v = attr(name);
  if (v == nullptr) return *kEmpty;
  if (const std::string* s = std::get_if<std::string>(v)) return *s;
  return *kEmpty;
}

const IntList& Instruction::attr_ints(std::string_view name) const {
  static const IntList* kEmpty = new IntList();
  const AttrValue* v = attr(name);
  if (v == nullptr) return *kEmpty;
  if (const IntList* l = std::get_if<IntList>(v)) return *l;
  return *kEmpty;
}

const IntListList& Instruction::attr_int_lists(std::string_view name) const {
  static const IntListList* kEmpty = new IntListList();
  const AttrValue* v = attr(name);
  if (v == nullptr) return *kEmpty;
  if (const IntListList* l = std::get_if<IntListList>(v)) return *l;
  return *kEmpty;
}

Computation* Instruction::attr_computation(std::string_view name) const {
  const AttrValue* v = attr(name);
  if (v == nullptr) return nullptr;
  if (Computation* const* c = std::get_if<Computation*>(v)) return *c;
  return nullptr;
}

const std::vector<Computation*>& Instruction::attr_computations(std::string_view name) const {
  static const std::vector<Computation*>* kEmpty = new std::vector<Computation*>();
  const AttrValue* v = attr(name);
  if (v == nullptr) return *kEmpty;
  if (const auto* l = std::get_if<std::vector<Computation*>>(v)) return *l;
  return *kEmpty;
}

std::vector<Computation*> Instruction::called_computations() const {
  std::vector<Computation*> out;
  for (const Attribute& a : attributes_) {
    if (Computation* const* c = std::get_if<Computation*>(&a.value)) {
      if (*c != nullptr) out.push_back(*c);
    } else if (const auto* l = std::get_if<std::vector<Computation*>>(&a.value)) {
      out.insert(out.end(), l->begin(), l->end());
    }
  }
  return out;
}

std::string Instruction::ToString() const { return PrintInstruction(*this); }

std::string Instruction::Describe() const {
  // An instruction with a large literal or a long operand list can print as
  // kilobytes; a message needs only its start to be recognised.
  constexpr size_t kMaxDescribedChars = 200;
  std::string text = ToString();
  if (text.size() > kMaxDescribedChars) {
    text = absl::StrCat(text.substr(0, kMaxDescribedChars), "... (", text.size(), " characters)");
  }
  if (location_.known()) return absl::StrCat("`", text, "` at ", location_.ToString());
  return absl::StrCat("`", text, "`");
}

}  // namespace sharc::hlo
