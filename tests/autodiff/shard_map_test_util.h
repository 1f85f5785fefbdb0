// Helpers for the shard_map autodiff tests: typing programs with the
// variance pass (as sharc's commands do), transposing whole modules,
// counting ops in shard_map bodies, comparing printed programs up to names,
// and the dot-product test of a transpose.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "autodiff/transpose_module.h"
#include "spmd/variance.h"
#include "tests/autodiff/autodiff_test_util.h"

namespace sharc::autodiff::testing {

// Parses, verifies and types `text` (pbroadcasts made explicit).
inline std::unique_ptr<Module> Typed(const std::string& text) {
  std::unique_ptr<Module> module = Parse(text);
  if (module == nullptr) return nullptr;
  absl::Status typed = spmd::InferDeviceVariance(*module);
  EXPECT_TRUE(typed.ok()) << typed << "\n" << text;
  return typed.ok() ? Reparse(*module) : nullptr;
}

// `sharc transpose`: transposes, types the new bodies, prints and re-parses.
inline std::unique_ptr<Module> Transposed(const Module& module, int64_t num_linear = -1) {
  absl::StatusOr<std::unique_ptr<Module>> t = TransposeModule(module, num_linear);
  EXPECT_TRUE(t.ok()) << t.status() << "\n" << hlo::PrintModule(module);
  if (!t.ok()) return nullptr;
  absl::Status typed = spmd::InferDeviceVariance(**t);
  EXPECT_TRUE(typed.ok()) << typed << "\n" << hlo::PrintModule(**t);
  return typed.ok() ? Reparse(**t) : nullptr;
}

// Opcodes of the instructions (parameters aside) of every computation but
// the entry: the shard_map bodies in these tests.
inline std::vector<std::string> BodyOps(const Module& module) {
  std::vector<std::string> ops;
  for (const hlo::Computation* c : module.computations()) {
    if (c == module.entry()) continue;
    for (const hlo::Instruction* inst : c->instructions()) {
      if (inst->opcode() != hlo::Opcode::kParameter) ops.push_back(hlo::OpcodeName(inst->opcode()));
    }
  }
  return ops;
}

inline int64_t CountOps(const Module& module, hlo::Opcode opcode) {
  int64_t n = 0;
  for (const hlo::Computation* c : module.computations()) {
    for (const hlo::Instruction* inst : c->instructions()) n += inst->opcode() == opcode;
  }
  return n;
}

// The named-axis collectives (all but pbroadcast, a cast) in `module`.
inline int64_t CountCommunicating(const Module& module) {
  int64_t n = 0;
  for (hlo::Opcode op :
       {hlo::Opcode::kPSum, hlo::Opcode::kPMax, hlo::Opcode::kPMin, hlo::Opcode::kNamedAllGather,
        hlo::Opcode::kNamedAllGatherInvariant, hlo::Opcode::kPSumScatter,
        hlo::Opcode::kNamedAllToAll, hlo::Opcode::kPPermute}) {
    n += CountOps(module, op);
  }
  return n;
}

// The printed module with every %name replaced by its order of first
// appearance: equal programs that differ only in names compare equal.
inline std::string UpToNames(const std::string& text) {
  static const std::regex name(R"(%[A-Za-z0-9_.\-]+)");
  std::map<std::string, std::string> renamed;
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), name);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    out.append(text, last, static_cast<size_t>(it->position()) - last);
    auto [entry, inserted] = renamed.emplace(it->str(), "");
    if (inserted) entry->second = "%v" + std::to_string(renamed.size());
    out += entry->second;
    last = static_cast<size_t>(it->position() + it->length());
  }
  out.append(text, last, std::string::npos);
  return out;
}

// The dot-product test: `transposed` is the transpose of `linear`'s entry
// with its first `num_linear` parameters linear (the rest pass through in
// the same order after the cotangents). <T(v), w> must equal <v, L(w)>.
inline void ExpectAdjoint(const Module& linear, const Module& transposed, int64_t num_linear,
                          uint64_t seed, const std::string& what) {
  std::mt19937_64 rng(seed);
  const hlo::Computation& f = *linear.entry();
  std::vector<Literal> args, ws, rest;
  for (int64_t i = 0; i < f.num_parameters(); ++i) {
    Literal v = Random(f.parameter(i)->shape(), rng, -1, 1);
    (i < num_linear ? ws : rest).push_back(v);
    args.push_back(std::move(v));
  }
  Literal y = Run(linear, args);
  Literal v = Random(y.shape(), rng, -1, 1);
  std::vector<Literal> targs;
  if (v.is_tuple()) {
    for (const Literal& e : v.elements()) targs.push_back(e);
  } else {
    targs.push_back(v);
  }
  for (Literal& r : rest) targs.push_back(std::move(r));
  Literal back = Run(transposed, targs);
  double lhs = 0;
  if (num_linear == 1) {
    lhs = Dot(back, ws[0]);
  } else {
    for (int64_t i = 0; i < num_linear; ++i)
      lhs += Dot(back.element(i), ws[static_cast<size_t>(i)]);
  }
  const double rhs = Dot(v, y);
  EXPECT_NEAR(lhs, rhs, 1e-4 * (1 + std::abs(rhs))) << what;
}

}  // namespace sharc::autodiff::testing
