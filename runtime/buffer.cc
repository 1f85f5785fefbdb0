#include "runtime/buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "hlo/base/status_macros.h"
#include "absl/strings/str_cat.h"
#include "runtime/buffer_pool.h"

namespace sharc::runtime {

absl::StatusOr<Buffer> Buffer::Allocate(const hlo::Shape& shape, bool zero, BufferPool* pool) {
  if (absl::Status st = hlo::ValidateShape(shape); !st.ok()) return st;
  Buffer b;
  b.shape_ = shape;
  if (shape.is_tuple()) {
    b.elements_.reserve(static_cast<size_t>(shape.tuple_size()));
    for (const hlo::Shape& s : shape.tuple_shapes()) {
      ASSIGN_OR_RETURN(Buffer e, Allocate(s, zero, pool));
      b.elements_.push_back(std::move(e));
    }
    return b;
  }
  if (!shape.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot allocate a buffer of invalid shape ", shape.ToString()));
  }
  b.size_bytes_ = shape.byte_size();
  ASSIGN_OR_RETURN(std::shared_ptr<uint8_t> storage,
                   pool != nullptr
                       ? pool->Acquire(b.size_bytes_, shape)
                       : AllocateFromSystem(b.size_bytes_, shape));
  b.storage_ = std::move(storage);
  if (zero) std::memset(b.storage_.get(), 0, static_cast<size_t>(b.size_bytes_));
  return b;
}

Buffer Buffer::Tuple(std::vector<Buffer> elements) {
  std::vector<hlo::Shape> shapes;
  shapes.reserve(elements.size());
  for (const Buffer& e : elements) shapes.push_back(e.shape());
  Buffer b;
  b.shape_ = hlo::Shape::Tuple(std::move(shapes));
  b.elements_ = std::move(elements);
  return b;
}

absl::StatusOr<Buffer> Buffer::FromLiteral(const hlo::Literal& literal) {
  ASSIGN_OR_RETURN(Buffer b, Allocate(literal.shape()));
  if (absl::Status st = b.CopyFrom(literal); !st.ok()) return st;
  return b;
}

Buffer Buffer::Reshaped(const hlo::Shape& shape) const {
  Buffer b = *this;
  b.shape_ = shape;
  return b;
}

absl::StatusOr<Buffer> Buffer::Borrow(const hlo::Shape& shape, void* data,
                                      std::shared_ptr<void> owner) {
  if (absl::Status st = hlo::ValidateShape(shape); !st.ok()) return st;
  if (!shape.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("only an array can be borrowed, not ", shape.ToString()));
  }
  const int64_t width = hlo::ByteWidth(shape.type());
  if (reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(width) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("borrowed memory for ", shape.ToString(),
                                                   " is not aligned to its ", width,
                                                   "-byte elements"));
  }
  Buffer b;
  b.shape_ = shape;
  b.size_bytes_ = shape.byte_size();
  // The aliasing constructor: the handle points at `data` and owns `owner`.
  b.storage_ = std::shared_ptr<uint8_t>(std::move(owner), static_cast<uint8_t*>(data));
  return b;
}

absl::Status Buffer::CopyFrom(const hlo::Literal& literal) {
  if (literal.shape() != shape_) {
    return absl::InvalidArgumentError(absl::StrCat("cannot copy a value of ",
                                                   literal.shape().ToString(),
                                                   " into a buffer of ", shape_.ToString()));
  }
  if (is_tuple()) {
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (absl::Status st = elements_[i].CopyFrom(literal.elements()[i]); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (literal.size_bytes() != size_bytes_) {
    return absl::InternalError(absl::StrCat("literal of ", shape_.ToString(), " holds ",
                                            literal.size_bytes(), " bytes, expected ",
                                            size_bytes_));
  }
  if (size_bytes_ > 0) {
    std::memcpy(data(), literal.untyped_data(), static_cast<size_t>(size_bytes_));
  }
  return absl::OkStatus();
}

absl::StatusOr<hlo::Literal> Buffer::ToLiteral() const {
  if (!valid()) return absl::FailedPreconditionError("cannot read an empty buffer handle");
  if (is_tuple()) {
    std::vector<hlo::Literal> elements;
    elements.reserve(elements_.size());
    for (const Buffer& e : elements_) {
      ASSIGN_OR_RETURN(hlo::Literal l, e.ToLiteral());
      elements.push_back(std::move(l));
    }
    return hlo::Literal::Tuple(std::move(elements));
  }
  hlo::Literal literal(shape_);
  if (literal.size_bytes() != size_bytes_) {
    return absl::InternalError(absl::StrCat("buffer of ", shape_.ToString(), " holds ",
                                            size_bytes_, " bytes, a literal ",
                                            literal.size_bytes()));
  }
  if (size_bytes_ > 0) {
    std::memcpy(literal.untyped_data(), data(), static_cast<size_t>(size_bytes_));
  }
  return literal;
}

absl::StatusOr<Buffer> Buffer::Clone() const {
  if (!valid()) return Buffer();
  ASSIGN_OR_RETURN(Buffer b, Allocate(shape_));
  if (is_tuple()) {
    for (size_t i = 0; i < elements_.size(); ++i) {
      ASSIGN_OR_RETURN(Buffer e, elements_[i].Clone());
      b.elements_[i] = std::move(e);
    }
  } else if (size_bytes_ > 0) {
    std::memcpy(b.data(), data(), static_cast<size_t>(size_bytes_));
  }
  return b;
}

}  // namespace sharc::runtime
