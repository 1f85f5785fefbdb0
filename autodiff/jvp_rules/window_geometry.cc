#include "autodiff/jvp_rules/window_geometry.h"

#include "hlo/ir/literal.h"

namespace sharc::autodiff {

WindowGeometry WindowGeometry::Of(const Instruction& inst) {
  WindowGeometry g;
  if (!inst.has_attr("window")) return g;  // a scalar's (empty) window
  const hlo::IntListList& window = inst.attr_int_lists("window");
  const Shape& operand = inst.operand(0)->shape();
  // select-and-scatter's source has the windows' dims.
  const Shape& result = inst.opcode() == Opcode::kSelectAndScatter ? inst.operand(1)->shape()
                        : inst.shape().is_tuple()                   ? inst.shape().tuple_shape(0)
                                                                    : inst.shape();
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const std::vector<int64_t>& w = window[static_cast<size_t>(d)];
    g.dims_.push_back(WindowDim{w[0], w[1], w[2], w[3], w[4], w[5], operand.dim(d),
                                result.dim(d)});
  }
  return g;
}

std::vector<int64_t> WindowGeometry::output_dims() const {
  std::vector<int64_t> dims;
  for (const WindowDim& w : dims_) dims.push_back(w.output);
  return dims;
}

int64_t WindowGeometry::num_offsets() const {
  int64_t n = 1;
  for (const WindowDim& w : dims_) n *= w.size;
  return n;
}

std::vector<int64_t> WindowGeometry::Offset(int64_t k) const {
  std::vector<int64_t> offset(dims_.size());
  for (size_t d = dims_.size(); d-- > 0;) {
    offset[d] = k % dims_[d].size;
    k /= dims_[d].size;
  }
  return offset;
}

Instruction* WindowGeometry::Pad(Emitter& e, Instruction* operand, Instruction* value) const {
  hlo::IntListList padding;
  std::vector<int64_t> dims;
  bool trivial = true;
  for (const WindowDim& w : dims_) {
    padding.push_back({w.pad_lo, w.pad_hi, w.base_dilation - 1});
    const int64_t base = w.operand == 0 ? 0 : (w.operand - 1) * w.base_dilation + 1;
    dims.push_back(w.pad_lo + base + w.pad_hi);
    trivial &= w.pad_lo == 0 && w.pad_hi == 0 && w.base_dilation == 1;
  }
  if (trivial) return operand;
  return e.Add(Opcode::kPad, Shape(operand->shape().type(), std::move(dims)), {operand, value},
               {{"padding", std::move(padding)}});
}

Instruction* WindowGeometry::Element(Emitter& e, Instruction* padded,
                                     const std::vector<int64_t>& offset) const {
  hlo::IntListList spec;
  bool whole = true;
  for (size_t d = 0; d < dims_.size(); ++d) {
    const WindowDim& w = dims_[d];
    const int64_t start = offset[d] * w.window_dilation;
    const int64_t limit = w.output == 0 ? start : start + (w.output - 1) * w.stride + 1;
    spec.push_back({start, limit, w.stride});
    whole &= start == 0 && limit == padded->shape().dim(static_cast<int64_t>(d)) &&
             (w.stride == 1 || w.output <= 1);
  }
  if (whole) return padded;
  return e.Add(Opcode::kSlice, Shape(padded->shape().type(), output_dims()), {padded},
               {{"slice", std::move(spec)}});
}

Instruction* WindowGeometry::AtOffsets(Emitter& e, Instruction* padded,
                                       Instruction* offsets) const {
  const Shape out(padded->shape().type(), output_dims());
  const Shape index_shape(PrimitiveType::kS32, output_dims());
  Instruction* zeros = Zeros(e, out);
  Instruction* sum = zeros;
  for (int64_t k = 0; k < num_offsets(); ++k) {
    Instruction* mine = Cmp(e, offsets, Full(e, index_shape, static_cast<double>(k)), "EQ");
    Instruction* term = Select(e, mine, Element(e, padded, Offset(k)), zeros);
    sum = k == 0 ? term : Add(e, sum, term);
  }
  return sum;
}

Instruction* WindowGeometry::Valid(Emitter& e, const std::vector<int64_t>& offset) const {
  const Shape mask_shape(PrimitiveType::kPred, output_dims());
  Instruction* mask = nullptr;
  for (size_t d = 0; d < dims_.size(); ++d) {
    const WindowDim& w = dims_[d];
    hlo::Literal valid(Shape(PrimitiveType::kPred, {w.output}));
    bool all = true;
    for (int64_t o = 0; o < w.output; ++o) {
      // Position in the base-dilated operand; holes and padding hold no element.
      const int64_t p = o * w.stride + offset[d] * w.window_dilation - w.pad_lo;
      const bool real = p >= 0 && p % w.base_dilation == 0 && p / w.base_dilation < w.operand;
      valid.SetFromDouble(o, real ? 1 : 0);
      all &= real;
    }
    if (all) continue;
    Instruction* row = e.Add(Instruction::CreateConstant("valid", std::move(valid)));
    Instruction* full = BroadcastInDim(e, row, mask_shape, {static_cast<int64_t>(d)});
    mask = mask == nullptr ? full : Binary(e, Opcode::kAnd, mask, full);
  }
  return mask;
}

}  // namespace sharc::autodiff
