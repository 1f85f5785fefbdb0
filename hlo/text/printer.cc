#include "hlo/text/printer.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/ops/op_def.h"
#include "hlo/text/lexer.h"

namespace sharc::hlo {
namespace {

// A user-chosen name (module, mesh axis) as the parser reads it back: bare
// where the lexer takes it bare, else after '%', the only way the parser
// accepted it (`HloModule %01_model`, `mesh={%0x=2}`).
std::string NameText(const std::string& name) {
  return IsBareName(name) ? name : absl::StrCat("%", name);
}

std::string Quote(const std::string& s) { return absl::StrCat("\"", absl::CEscape(s), "\""); }

std::string PrintIntListList(const IntListList& lists) {
  std::vector<std::string> parts;
  for (const auto& l : lists) parts.push_back(absl::StrCat("{", absl::StrJoin(l, ","), "}"));
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

// Attributes built through the API may be malformed; printing them must not
// crash, because every error message prints the instruction.
constexpr char kInvalid[] = "<invalid>";

std::string PrintSlice(const IntListList& dims) {
  std::vector<std::string> parts;
  for (const auto& d : dims) {
    if (d.size() < 2) return kInvalid;
    // {start, limit, stride}; a unit stride is omitted as XLA does.
    if (d.size() == 3 && d[2] != 1) {
      parts.push_back(absl::StrCat("[", d[0], ":", d[1], ":", d[2], "]"));
    } else {
      parts.push_back(absl::StrCat("[", d[0], ":", d[1], "]"));
    }
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

std::string PrintPadding(const IntListList& dims) {
  std::vector<std::string> parts;
  for (const auto& d : dims) {
    if (d.size() < 2) return kInvalid;
    if (d.size() == 3 && d[2] != 0) {
      parts.push_back(absl::StrCat(d[0], "_", d[1], "_", d[2]));
    } else {
      parts.push_back(absl::StrCat(d[0], "_", d[1]));
    }
  }
  return absl::StrJoin(parts, "x");
}

// {size, stride, pad_lo, pad_hi, base_dilation, window_dilation[, reversal]}
// per dim.
std::string PrintWindow(const IntListList& dims) {
  for (const auto& d : dims)
    if (d.size() < 6) return kInvalid;
  auto field = [&](size_t k) {
    std::vector<int64_t> v;
    for (const auto& d : dims) v.push_back(d[k]);
    return v;
  };
  auto all_equal = [&](size_t k, int64_t value) {
    for (const auto& d : dims)
      if (d[k] != value) return false;
    return true;
  };
  std::vector<std::string> parts;
  parts.push_back(absl::StrCat("size=", absl::StrJoin(field(0), "x")));
  if (!all_equal(1, 1)) parts.push_back(absl::StrCat("stride=", absl::StrJoin(field(1), "x")));
  if (!all_equal(2, 0) || !all_equal(3, 0)) {
    std::vector<std::string> pads;
    for (const auto& d : dims) pads.push_back(absl::StrCat(d[2], "_", d[3]));
    parts.push_back(absl::StrCat("pad=", absl::StrJoin(pads, "x")));
  }
  if (!all_equal(4, 1)) parts.push_back(absl::StrCat("lhs_dilate=", absl::StrJoin(field(4), "x")));
  if (!all_equal(5, 1)) parts.push_back(absl::StrCat("rhs_dilate=", absl::StrJoin(field(5), "x")));
  // A seventh field (a convolution's kernel reversal) is printed when set.
  bool has_reversal = !dims.empty();
  for (const auto& d : dims) has_reversal = has_reversal && d.size() == 7;
  if (has_reversal && !all_equal(6, 0)) {
    parts.push_back(absl::StrCat("rhs_reversal=", absl::StrJoin(field(6), "x")));
  }
  if (dims.empty()) return "{}";
  return absl::StrCat("{", absl::StrJoin(parts, " "), "}");
}

std::string PrintMetadata(const OpMetadata& m) {
  std::vector<std::string> parts;
  if (!m.op_type.empty()) parts.push_back(absl::StrCat("op_type=", Quote(m.op_type)));
  if (!m.op_name.empty()) parts.push_back(absl::StrCat("op_name=", Quote(m.op_name)));
  if (!m.source_file.empty()) parts.push_back(absl::StrCat("source_file=", Quote(m.source_file)));
  if (m.source_line != 0) parts.push_back(absl::StrCat("source_line=", m.source_line));
  return absl::StrCat("{", absl::StrJoin(parts, " "), "}");
}

std::string PrintBoolList(const std::vector<bool>& v) {
  if (v.size() == 1) return absl::StrCat("{", v[0] ? "true" : "false", "}");
  std::vector<std::string> parts;
  for (bool b : v) parts.push_back(b ? "true" : "false");
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

// `{}` or `{1, 0}`, as XLA writes a ShapeIndex.
std::string PrintShapeIndexPath(const ShapeIndexPath& index) {
  return absl::StrCat("{", absl::StrJoin(index, ", "), "}");
}

}  // namespace

std::string PrintAttributeValue(const AttrValue& value, AttrKind kind) {
  // The stored alternative must match the schema's kind.
  auto holds = [&](auto tag) { return std::holds_alternative<decltype(tag)>(value); };
  bool ok = true;
  switch (kind) {
    case AttrKind::kInt: ok = holds(int64_t{}); break;
    case AttrKind::kBool: ok = holds(bool{}); break;
    case AttrKind::kString: case AttrKind::kEnum: case AttrKind::kMesh:
    case AttrKind::kPartitionSpecs: case AttrKind::kAxisNames: case AttrKind::kDimLabels:
    case AttrKind::kShape: case AttrKind::kLiteral:
      ok = holds(std::string{});
      break;
    case AttrKind::kIntList: ok = holds(IntList{}); break;
    case AttrKind::kSlice: case AttrKind::kPadding: case AttrKind::kWindow:
    case AttrKind::kReplicaGroups: case AttrKind::kPairs: ok = holds(IntListList{}); break;
    case AttrKind::kComputation: ok = holds(static_cast<Computation*>(nullptr)); break;
    case AttrKind::kComputationList: ok = holds(std::vector<Computation*>{}); break;
  }
  if (!ok) return kInvalid;
  switch (kind) {
    case AttrKind::kInt:
      return absl::StrCat(std::get<int64_t>(value));
    case AttrKind::kBool:
      return std::get<bool>(value) ? "true" : "false";
    case AttrKind::kString:
      return Quote(std::get<std::string>(value));
    case AttrKind::kEnum:
    case AttrKind::kDimLabels:
    case AttrKind::kShape:
    case AttrKind::kLiteral:
      return std::get<std::string>(value);
    case AttrKind::kIntList:
      return absl::StrCat("{", absl::StrJoin(std::get<IntList>(value), ","), "}");
    case AttrKind::kSlice:
      return PrintSlice(std::get<IntListList>(value));
    case AttrKind::kPadding:
      return PrintPadding(std::get<IntListList>(value));
    case AttrKind::kWindow:
      return PrintWindow(std::get<IntListList>(value));
    case AttrKind::kReplicaGroups:
    case AttrKind::kPairs:
      return PrintIntListList(std::get<IntListList>(value));
    case AttrKind::kComputation: {
      Computation* c = std::get<Computation*>(value);
      return absl::StrCat("%", c ? c->name() : "<null>");
    }
    case AttrKind::kComputationList: {
      std::vector<std::string> names;
      for (Computation* c : std::get<std::vector<Computation*>>(value))
        names.push_back(c != nullptr ? absl::StrCat("%", c->name()) : kInvalid);
      return absl::StrCat("{", absl::StrJoin(names, ", "), "}");
    }
    case AttrKind::kMesh:
    case AttrKind::kPartitionSpecs:
    case AttrKind::kAxisNames:
      return absl::StrCat("{", std::get<std::string>(value), "}");
  }
  return "";
}

std::string PrintInstruction(const Instruction& inst) {
  const OpDef& def = GetOpDef(inst.opcode());
  std::string out = absl::StrCat("%", inst.name(), " = ", inst.shape().ToString());
  if (!inst.variance().empty()) {
    std::vector<std::string> axes;
    for (const std::string& axis : inst.variance()) axes.push_back(NameText(axis));
    absl::StrAppend(&out, "{V:", absl::StrJoin(axes, ","), "}");
  }
  absl::StrAppend(&out, " ", OpcodeName(inst.opcode()), "(");
  switch (def.syntax) {
    case OperandSyntax::kLiteral:
      out += inst.literal().ValuesToString();
      break;
    case OperandSyntax::kParameterNumber:
      absl::StrAppend(&out, inst.parameter_number());
      break;
    case OperandSyntax::kOperands: {
      std::vector<std::string> names;
      for (const Instruction* op : inst.operands()) names.push_back(absl::StrCat("%", op->name()));
      out += absl::StrJoin(names, ", ");
      break;
    }
  }
  out += ")";
  // Schema order first, so the text does not depend on how the instruction
  // was built.
  for (const AttrSpec& spec : def.attributes) {
    const AttrValue* v = inst.attr(spec.name);
    if (v == nullptr) continue;
    absl::StrAppend(&out, ", ", spec.name, "=", PrintAttributeValue(*v, spec.kind));
  }
  if (inst.sharding()) absl::StrAppend(&out, ", sharding=", inst.sharding()->ToString());
  if (!inst.frontend_attributes().empty())
    absl::StrAppend(&out, ", frontend_attributes=", inst.frontend_attributes());
  if (!inst.metadata().empty()) absl::StrAppend(&out, ", metadata=", PrintMetadata(inst.metadata()));
  if (!inst.backend_config().empty())
    absl::StrAppend(&out, ", backend_config=", Quote(inst.backend_config()));
  return out;
}

std::string PrintComputation(const Computation& computation, bool is_entry) {
  std::string out;
  if (is_entry) out += "ENTRY ";
  absl::StrAppend(&out, "%", computation.name(), " {\n");
  for (const Instruction* inst : computation.instructions()) {
    absl::StrAppend(&out, "  ", inst == computation.root() ? "ROOT " : "", PrintInstruction(*inst),
                    "\n");
  }
  out += "}\n";
  return out;
}

std::string PrintModule(const Module& module) {
  std::string out = absl::StrCat("HloModule ", NameText(module.name()));
  const ModuleConfig& config = module.config();
  if (config.replica_count != 1) absl::StrAppend(&out, ", replica_count=", config.replica_count);
  if (config.num_partitions != 1) absl::StrAppend(&out, ", num_partitions=", config.num_partitions);
  if (!config.allow_spmd_sharding_propagation_to_parameters.empty()) {
    absl::StrAppend(&out, ", allow_spmd_sharding_propagation_to_parameters=",
                    PrintBoolList(config.allow_spmd_sharding_propagation_to_parameters));
  }
  if (!config.allow_spmd_sharding_propagation_to_output.empty()) {
    absl::StrAppend(&out, ", allow_spmd_sharding_propagation_to_output=",
                    PrintBoolList(config.allow_spmd_sharding_propagation_to_output));
  }
  if (!config.mesh.empty()) {
    std::vector<std::string> axes;
    for (const MeshAxis& a : config.mesh) axes.push_back(absl::StrCat(NameText(a.name), "=", a.size));
    absl::StrAppend(&out, ", mesh={", absl::StrJoin(axes, ", "), "}");
  }
  if (!config.input_output_alias.empty()) {
    std::vector<std::string> entries;
    for (const InputOutputAlias& a : config.input_output_alias) {
      entries.push_back(absl::StrCat(PrintShapeIndexPath(a.output_index), ": (",
                                     a.parameter_number, ", ",
                                     PrintShapeIndexPath(a.parameter_index), ", ",
                                     a.must_alias ? "must-alias" : "may-alias", ")"));
    }
    absl::StrAppend(&out, ", input_output_alias={ ", absl::StrJoin(entries, ", "), " }");
  }
  if (!config.buffer_donors.empty()) {
    std::vector<std::string> entries;
    for (const BufferDonor& d : config.buffer_donors) {
      entries.push_back(absl::StrCat("(", d.parameter_number, ", ",
                                     PrintShapeIndexPath(d.parameter_index), ")"));
    }
    absl::StrAppend(&out, ", buffer_donor={ ", absl::StrJoin(entries, ", "), " }");
  }
  if (!config.frontend_attributes.empty()) {
    absl::StrAppend(&out, ", frontend_attributes=", config.frontend_attributes);
  }
  out += "\n";
  for (const Computation* c : module.computations()) {
    absl::StrAppend(&out, "\n", PrintComputation(*c, c == module.entry()));
  }
  return out;
}

}  // namespace sharc::hlo
