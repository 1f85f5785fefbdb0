// Reductions over axes with numpy's conventions: sum, mean, max, min, with
// keepdims. Each emits XLA's reduce with a scalar reducer computation that
// the module holds once per (op, dtype).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <source_location>
#include <vector>

#include "frontend/tensor.h"

namespace sharc::frontend {

// Which axes to reduce: `Axes()` (or `{}`) means every axis, like numpy's
// axis=None; an int or a braced list names axes (negative from the end).
class Axes {
 public:
  Axes() = default;
  Axes(int64_t axis) : axes_(std::vector<int64_t>{axis}) {}  // NOLINT: sum(x, 1)
  Axes(std::initializer_list<int64_t> axes) {
    if (axes.size() > 0) axes_ = std::vector<int64_t>(axes);
  }
  Axes(std::vector<int64_t> axes) : axes_(std::move(axes)) {}  // NOLINT
  bool all() const { return !axes_.has_value(); }
  const std::vector<int64_t>& list() const { return *axes_; }

 private:
  std::optional<std::vector<int64_t>> axes_;
};

#define SHARC_FRONTEND_LOC std::source_location loc = std::source_location::current()
Tensor sum(const Tensor& x, Axes axes = {}, bool keepdims = false, SHARC_FRONTEND_LOC);
// Integer inputs are averaged in f32 (numpy gives a float too).
Tensor mean(const Tensor& x, Axes axes = {}, bool keepdims = false, SHARC_FRONTEND_LOC);
Tensor max(const Tensor& x, Axes axes = {}, bool keepdims = false, SHARC_FRONTEND_LOC);
Tensor min(const Tensor& x, Axes axes = {}, bool keepdims = false, SHARC_FRONTEND_LOC);
#undef SHARC_FRONTEND_LOC

}  // namespace sharc::frontend
