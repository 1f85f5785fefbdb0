// Device buffers: the runtime's values. An array buffer is 64-byte aligned
// host memory with a shape; a tuple buffer holds its element buffers. A
// Buffer is a reference-counted handle: copying it aliases the same memory,
// which is how tuple, get-tuple-element, parameters and constants move
// through a schedule without copies. Values are immutable once produced (the
// executable only writes into freshly allocated buffers), so aliasing is safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"

namespace sharc::runtime {

// Alignment of every array buffer: one cache line, and enough for any vector
// load a kernel may issue.
inline constexpr int64_t kBufferAlignment = 64;

class BufferPool;

class Buffer {
 public:
  Buffer() = default;  // an empty handle (no shape, no memory)

  // A buffer of `shape` (array or tuple, recursively). Contents are
  // uninitialised unless `zero` is set. Memory comes from `pool` where one
  // is given (runtime/buffer_pool.h), else from the system. Fails on invalid
  // shapes and on allocation failure, naming the shape.
  static absl::StatusOr<Buffer> Allocate(const hlo::Shape& shape, bool zero = false,
                                         BufferPool* pool = nullptr);
  // A tuple of existing buffers (aliases them, no copy).
  static Buffer Tuple(std::vector<Buffer> elements);
  // A copy of `literal` (arrays and tuples).
  static absl::StatusOr<Buffer> FromLiteral(const hlo::Literal& literal);
  // An array buffer over memory that `owner` keeps alive (no copy), for
  // embedders that hand in their own arrays (a NumPy array from Python).
  // The memory must hold `shape`'s bytes in row-major order, aligned to the
  // element, and stay unchanged while any handle lives: values are
  // immutable, and kernels only read their operands.
  static absl::StatusOr<Buffer> Borrow(const hlo::Shape& shape, void* data,
                                       std::shared_ptr<void> owner);

  // The same array memory seen with `shape` (a row-major reshape: same
  // element count and type; the caller checks). No copy.
  Buffer Reshaped(const hlo::Shape& shape) const;

  // A copy of the contents as a Literal.
  absl::StatusOr<hlo::Literal> ToLiteral() const;
  // Copies `literal` into this buffer; shapes must be equal.
  absl::Status CopyFrom(const hlo::Literal& literal);
  // A deep copy with its own memory.
  absl::StatusOr<Buffer> Clone() const;

  bool valid() const { return shape_.valid(); }
  const hlo::Shape& shape() const { return shape_; }
  bool is_tuple() const { return shape_.is_tuple(); }
  hlo::PrimitiveType type() const { return shape_.type(); }
  int64_t num_elements() const { return is_tuple() ? 0 : shape_.num_elements(); }
  // Bytes of this array (0 for a tuple; see Shape::byte_size for the leaves).
  int64_t size_bytes() const { return size_bytes_; }

  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }
  template <typename T>
  absl::Span<T> typed() {
    return absl::Span<T>(static_cast<T*>(data()), static_cast<size_t>(num_elements()));
  }
  template <typename T>
  absl::Span<const T> typed() const {
    return absl::Span<const T>(static_cast<const T*>(data()),
                               static_cast<size_t>(num_elements()));
  }

  int64_t tuple_size() const { return static_cast<int64_t>(elements_.size()); }
  const Buffer& element(int64_t i) const { return elements_[static_cast<size_t>(i)]; }
  Buffer& mutable_element(int64_t i) { return elements_[static_cast<size_t>(i)]; }
  const std::vector<Buffer>& elements() const { return elements_; }

  // True if this handle is the only one holding its array memory (the
  // executable uses it to account for freed bytes).
  bool unique() const { return storage_.use_count() == 1; }

 private:
  hlo::Shape shape_;
  int64_t size_bytes_ = 0;
  std::shared_ptr<uint8_t> storage_;
  std::vector<Buffer> elements_;
};

}  // namespace sharc::runtime
