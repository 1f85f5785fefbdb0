// Helpers for runtime tests: random per-device inputs of any dtype, running a
// module on the DeviceMesh with the interpreter kernels, and running device
// threads against a communicator directly.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "hlo/eval/interpreter.h"
#include "hlo/ir/literal.h"
#include "hlo/text/parser.h"
#include "runtime/executable.h"
#include "runtime/interpreter_kernels.h"
#include "runtime/mesh_runtime.h"

namespace sharc::runtime::testing_util {

// Random values of `shape`: small integers for integer types (so products and
// sums stay meaningful), signed fractions for floats, with `nan_every` > 0
// putting a NaN every so many elements.
inline hlo::Literal RandomLiteral(const hlo::Shape& shape, std::mt19937& rng, int nan_every = 0) {
  hlo::Literal l(shape);
  std::uniform_int_distribution<int> small(-5, 5);
  std::uniform_real_distribution<double> real(-4.0, 4.0);
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    hlo::PrimitiveType t = shape.type();
    if (t == hlo::PrimitiveType::kPred) {
      l.SetFromInt64(i, small(rng) > -2);
    } else if (hlo::IsFloatingPoint(t)) {
      if (nan_every > 0 && i % nan_every == nan_every - 1) {
        l.SetFromDouble(i, std::nan(""));
      } else {
        l.SetFromDouble(i, real(rng));
      }
    } else if (hlo::IsUnsignedInteger(t)) {
      l.SetFromInt64(i, small(rng) + 5);
    } else {
      l.SetFromInt64(i, small(rng));
    }
  }
  return l;
}

inline absl::StatusOr<std::vector<hlo::Literal>> RunOnMesh(
    const hlo::Module& module, const std::vector<std::vector<hlo::Literal>>& args,
    MeshOptions options) {
  InterpreterKernelFactory factory;
  absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(module, factory);
  if (!exe.ok()) return exe.status();
  DeviceMesh mesh(options);
  absl::StatusOr<std::vector<std::vector<hlo::Literal>>> out = mesh.Run(**exe, args);
  if (!out.ok()) return out.status();
  // Re-tuple multi-output roots so results compare with the interpreter's.
  std::vector<hlo::Literal> per_device;
  for (std::vector<hlo::Literal>& values : *out) {
    if (module.entry()->root()->shape().is_tuple()) {
      per_device.push_back(hlo::Literal::Tuple(std::move(values)));
    } else {
      per_device.push_back(std::move(values[0]));
    }
  }
  return per_device;
}

// Runs fn(device) on `n` threads and waits for all of them.
inline void RunDevices(int64_t n, const std::function<void(int64_t)>& fn) {
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < n; ++d) threads.emplace_back(fn, d);
  for (std::thread& t : threads) t.join();
}

}  // namespace sharc::runtime::testing_util
