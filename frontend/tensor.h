// Tensor: a handle to one value of the computation being traced (like a JAX
// tracer). It records the value's IR instruction and a copy of its shape;
// operations on Tensors (elementwise.h, shape_ops.h, ...) append instructions
// to the trace instead of computing anything.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/ir/instruction.h"
#include "hlo/ir/primitive_type.h"
#include "hlo/ir/shape.h"

namespace sharc::frontend {

using DType = hlo::PrimitiveType;
inline constexpr DType pred = DType::kPred;
inline constexpr DType s8 = DType::kS8;
inline constexpr DType s32 = DType::kS32;
inline constexpr DType s64 = DType::kS64;
inline constexpr DType u8 = DType::kU8;
inline constexpr DType u32 = DType::kU32;
inline constexpr DType f16 = DType::kF16;
inline constexpr DType bf16 = DType::kBF16;
inline constexpr DType f32 = DType::kF32;
inline constexpr DType f64 = DType::kF64;

class Tensor {
 public:
  // An empty handle (a placeholder in containers); using it in an operation
  // is a trace error.
  Tensor() = default;
  // For emitters (tracer.cc): the value `instruction` of the function trace
  // `frame_id`.
  Tensor(uint64_t frame_id, hlo::Instruction* instruction)
      : frame_id_(frame_id), instruction_(instruction), shape_(instruction->shape()) {}

  bool valid() const { return instruction_ != nullptr; }
  // The shape stays readable after the trace ended (it is a copy), so error
  // messages about escaped tensors can still describe them.
  const hlo::Shape& shape() const { return shape_; }
  DType dtype() const { return shape_.type(); }
  int64_t rank() const { return shape_.rank(); }
  int64_t dim(int64_t i) const { return shape_.dim(i); }
  const std::vector<int64_t>& dims() const { return shape_.dims(); }

  // The IR value. Only meaningful while its function is being traced; emit
  // helpers resolve it through the tracer, which checks that.
  hlo::Instruction* instruction() const { return instruction_; }
  uint64_t frame_id() const { return frame_id_; }

  // "f32[2,3]", for messages (never reads the instruction, which may be gone).
  std::string ToString() const { return valid() ? shape_.ToString() : "<empty Tensor>"; }

 private:
  uint64_t frame_id_ = 0;
  hlo::Instruction* instruction_ = nullptr;
  hlo::Shape shape_;
};

}  // namespace sharc::frontend
