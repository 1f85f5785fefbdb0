// Helpers for the autodiff tests: parse and run modules, random f64 inputs,
// and the numerical checks (central finite differences, inner products) that
// every derivative is compared against.
#pragma once

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "autodiff/builder.h"
#include "autodiff/grad.h"
#include "autodiff/jvp.h"
#include "hlo/eval/interpreter.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/module.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "hlo/verifier/verifier.h"

namespace sharc::autodiff {
using hlo::Literal;
}  // namespace sharc::autodiff

namespace sharc::autodiff::testing {

using hlo::Literal;
using hlo::Module;
using hlo::Shape;

inline std::unique_ptr<Module> Parse(const std::string& text) {
  auto module = hlo::ParseAndVerifyModule(text);
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  return module.ok() ? std::move(*module) : nullptr;
}

// Printing, re-parsing and verifying: derivatives must be valid text modules.
inline std::unique_ptr<Module> Reparse(const Module& module) {
  const std::string text = hlo::PrintModule(module);
  auto reparsed = hlo::ParseAndVerifyModule(text);
  EXPECT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << text;
  return reparsed.ok() ? std::move(*reparsed) : nullptr;
}

inline Literal Run(const Module& module, const std::vector<Literal>& args) {
  auto result = hlo::Evaluate(module, args);
  EXPECT_TRUE(result.ok()) << result.status() << "\n" << module.ToString();
  return result.ok() ? std::move(*result) : Literal();
}

// Floats uniformly in [lo, hi]; integers kept as they are (zeros).
inline Literal Random(const Shape& shape, std::mt19937_64& rng, double lo = 0.5,
                      double hi = 2.0) {
  if (shape.is_tuple()) {
    std::vector<Literal> elements;
    for (const Shape& s : shape.tuple_shapes()) elements.push_back(Random(s, rng, lo, hi));
    return Literal::Tuple(std::move(elements));
  }
  Literal l(shape);
  std::uniform_real_distribution<double> dist(lo, hi);
  if (hlo::IsFloatingPoint(shape.type())) {
    for (int64_t i = 0; i < l.num_elements(); ++i) l.SetFromDouble(i, dist(rng));
  }
  return l;
}

// a + s*b leafwise (floating-point leaves; others are copied from a).
inline Literal Axpy(const Literal& a, double s, const Literal& b) {
  if (a.is_tuple()) {
    std::vector<Literal> elements;
    for (size_t i = 0; i < a.elements().size(); ++i) {
      elements.push_back(Axpy(a.elements()[i], s, b.elements()[i]));
    }
    return Literal::Tuple(std::move(elements));
  }
  Literal out = a;
  if (!hlo::IsFloatingPoint(a.shape().type())) return out;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    out.SetFromDouble(i, a.GetAsDouble(i) + s * b.GetAsDouble(i));
  }
  return out;
}

// Sum of elementwise products over floating-point leaves.
inline double Dot(const Literal& a, const Literal& b) {
  if (a.is_tuple()) {
    double sum = 0;
    for (size_t i = 0; i < a.elements().size(); ++i) sum += Dot(a.elements()[i], b.elements()[i]);
    return sum;
  }
  if (!hlo::IsFloatingPoint(a.shape().type())) return 0;
  double sum = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) sum += a.GetAsDouble(i) * b.GetAsDouble(i);
  return sum;
}

inline void ExpectNear(const Literal& actual, const Literal& expected, double tolerance,
                       const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  if (actual.is_tuple()) {
    for (size_t i = 0; i < actual.elements().size(); ++i) {
      ExpectNear(actual.elements()[i], expected.elements()[i], tolerance, what);
    }
    return;
  }
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    const double a = actual.GetAsDouble(i);
    const double e = expected.GetAsDouble(i);
    EXPECT_NEAR(a, e, tolerance * (1 + std::abs(e))) << what << " element " << i;
  }
}

inline std::vector<Literal> Elements(const Literal& tuple) {
  std::vector<Literal> out;
  for (const Literal& e : tuple.elements()) out.push_back(e);
  return out;
}

inline std::vector<Literal> RandomArgs(const hlo::Computation& f, std::mt19937_64& rng) {
  std::vector<Literal> args;
  for (const hlo::Instruction* p : f.parameters()) args.push_back(Random(p->shape(), rng));
  return args;
}

// Checks the JVP and the VJP of `module`'s entry at a random point.
inline void CheckDerivatives(const Module& module, uint64_t seed, const std::string& what) {
  std::mt19937_64 rng(seed);
  const hlo::Computation& f = *module.entry();
  std::vector<Literal> x = RandomArgs(f, rng);
  std::vector<Literal> t = RandomArgs(f, rng);
  const double eps = 1e-6;
  std::vector<Literal> plus, minus;
  for (size_t i = 0; i < x.size(); ++i) {
    plus.push_back(Axpy(x[i], eps, t[i]));
    minus.push_back(Axpy(x[i], -eps, t[i]));
  }
  Literal y = Run(module, x);
  Literal numeric = Axpy(Run(module, plus), -1, Run(module, minus));
  numeric = Axpy(Literal(numeric.shape()), 1 / (2 * eps), numeric);

  auto jvp = JvpModule(module);
  ASSERT_TRUE(jvp.ok()) << what << ": " << jvp.status();
  auto jvp_text = Reparse(**jvp);
  ASSERT_NE(jvp_text, nullptr) << what;
  std::vector<Literal> jvp_args = x;
  for (const Literal& l : t) jvp_args.push_back(l);
  Literal out = Run(*jvp_text, jvp_args);
  ASSERT_TRUE(out.is_tuple()) << what;
  ExpectNear(out.element(0), y, 1e-12, what + " jvp primal");
  ExpectNear(out.element(1), numeric, 1e-5, what + " jvp tangent");

  std::unique_ptr<Module> copy = module.Clone();
  auto vjp = Vjp(*copy, *copy->entry());
  ASSERT_TRUE(vjp.ok()) << what << ": " << vjp.status();
  copy->set_entry(*vjp);
  auto vjp_text = Reparse(*copy);
  ASSERT_NE(vjp_text, nullptr) << what;
  Literal ct = Random(y.shape(), rng, -1, 1);
  std::vector<Literal> vjp_args = x;
  vjp_args.push_back(ct);
  Literal back = Run(*vjp_text, vjp_args);
  ASSERT_TRUE(back.is_tuple()) << what;
  ExpectNear(back.element(0), y, 1e-12, what + " vjp primal");
  double lhs = 0;
  for (size_t i = 0; i < x.size(); ++i) lhs += Dot(back.element(static_cast<int64_t>(i) + 1), t[i]);
  const double rhs = Dot(ct, numeric);
  EXPECT_NEAR(lhs, rhs, 1e-5 * (1 + std::abs(rhs))) << what << " vjp";
}

}  // namespace sharc::autodiff::testing
