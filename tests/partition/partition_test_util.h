// Helpers for partitioner tests: counting collectives, and running a
// partitioned module on simulated devices against the global module.
#pragma once

#include <map>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/strings/str_cat.h"
#include "hlo/eval/interpreter.h"
#include "hlo/ir/module.h"
#include "spmd/partition/device_values.h"

namespace sharc::spmd::testing_util {

inline std::string CollectiveCounts(const hlo::Module& module) {
  std::map<hlo::Opcode, int> n;
  for (const hlo::Computation* comp : module.computations())
    for (const hlo::Instruction* inst : comp->instructions()) ++n[inst->opcode()];
  return absl::StrCat("all-reduce=", n[hlo::Opcode::kAllReduce],
                      " all-gather=", n[hlo::Opcode::kAllGather],
                      " reduce-scatter=", n[hlo::Opcode::kReduceScatter],
                      " all-to-all=", n[hlo::Opcode::kAllToAll],
                      " collective-permute=", n[hlo::Opcode::kCollectivePermute]);
}

// Small integer-valued random inputs, so sums are exact in any order.
inline hlo::Literal RandomLiteral(const hlo::Shape& shape, std::mt19937& rng) {
  if (shape.is_tuple()) {
    std::vector<hlo::Literal> elems;
    for (const hlo::Shape& s : shape.tuple_shapes()) elems.push_back(RandomLiteral(s, rng));
    return hlo::Literal::Tuple(std::move(elems));
  }
  hlo::Literal l(shape);
  std::uniform_int_distribution<int> dist(-4, 4);
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    if (shape.type() == hlo::PrimitiveType::kPred) {
      l.SetFromInt64(i, dist(rng) > 0);
    } else {
      l.SetFromInt64(i, dist(rng));
    }
  }
  return l;
}

inline absl::Status CompareLiterals(const hlo::Literal& want, const hlo::Literal& got,
                                    const std::string& where) {
  if (want.shape() != got.shape()) {
    return absl::InternalError(absl::StrCat(where, ": shape ", got.shape().ToString(),
                                            " instead of ", want.shape().ToString()));
  }
  if (want.is_tuple()) {
    for (size_t i = 0; i < want.elements().size(); ++i) {
      absl::Status st = CompareLiterals(want.elements()[i], got.elements()[i],
                                        absl::StrCat(where, "{", i, "}"));
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    double a = want.GetAsDouble(i), b = got.GetAsDouble(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;
    // (An infinity matches only itself: its relative bound takes anything.)
    if (std::isfinite(a) && std::isfinite(b) && std::fabs(a - b) <= 1e-3 + 1e-3 * std::fabs(a)) {
      continue;
    }
    return absl::InternalError(absl::StrCat(where, ": element ", i, " is ", b, ", expected ", a));
  }
  return absl::OkStatus();
}

// XLA leaves a maximal value undefined on the devices other than its own
// (its data lives there): they get other random numbers, so a partitioned
// program that read it anywhere else would fail the comparison.
inline hlo::Literal NoiseOffItsDevice(hlo::Literal part, const hlo::Sharding& sharding,
                                      int64_t device, std::mt19937& rng) {
  const hlo::Shape shape = part.shape();
  if (shape.is_tuple()) {
    std::vector<hlo::Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      elements.push_back(NoiseOffItsDevice(part.element(i), sharding.ElementSharding(shape, i),
                                           device, rng));
    }
    return hlo::Literal::Tuple(std::move(elements));
  }
  if (!sharding.IsMaximal() || sharding.maximal_device() == device) return part;
  return RandomLiteral(shape, rng);
}

// Runs `global` on random inputs with the interpreter, and `local` on
// `num_partitions` simulated devices with the inputs sharded by the entry
// parameters' shardings; the assembled results must agree. `reference`, if
// given, is what the interpreter runs instead of `global` (same parameters):
// `global` with its manual regions spelled as ops on global values.
inline absl::Status ExpectPartitionedMatchesGlobal(const hlo::Module& global,
                                                   const hlo::Module& local, uint32_t seed,
                                                   absl::Duration collective_timeout =
                                                       absl::Seconds(60),
                                                   const hlo::Module* reference = nullptr) {
  std::mt19937 rng(seed);
  const hlo::Computation* entry = global.entry();
  std::vector<hlo::Literal> args;
  for (const hlo::Instruction* p : entry->parameters()) args.push_back(RandomLiteral(p->shape(), rng));
  absl::StatusOr<hlo::Literal> want = hlo::Evaluate(reference ? *reference : global, args);
  if (!want.ok()) return want.status();
  const int64_t n = local.config().num_partitions;
  std::vector<std::vector<hlo::Literal>> device_args(static_cast<size_t>(n));
  for (size_t i = 0; i < args.size(); ++i) {
    const hlo::Instruction* p = entry->parameter(static_cast<int64_t>(i));
    hlo::Sharding s = p->sharding() ? *p->sharding() : hlo::Sharding::Replicated();
    for (int64_t d = 0; d < n; ++d) {
      absl::StatusOr<hlo::Literal> part = ShardLiteral(args[i], s, d);
      if (!part.ok()) return part.status();
      device_args[static_cast<size_t>(d)].push_back(NoiseOffItsDevice(*std::move(part), s, d, rng));
    }
  }
  hlo::SpmdOptions options;
  options.num_devices = n;
  options.collective_timeout = collective_timeout;
  absl::StatusOr<std::vector<hlo::Literal>> parts = hlo::EvaluateSpmd(local, device_args, options);
  if (!parts.ok()) return parts.status();
  const hlo::Instruction* root = entry->root();
  hlo::Sharding rs = root->sharding() ? *root->sharding() : hlo::Sharding::Replicated();
  absl::StatusOr<hlo::Literal> got = AssembleLiteral(*parts, rs, root->shape());
  if (!got.ok()) return got.status();
  return CompareLiterals(*want, *got, "result");
}

}  // namespace sharc::spmd::testing_util
