// Helpers for the autodiff tests: parse and run modules, random f64 inputs,
// and the numerical checks (central finite differences, inner products) that
// every derivative is compared against. Complex values are pairs of reals:
// random parts, parts compared, and the inner product Re(sum(a b)) that
// pairs JAX's complex cotangents with tangents (transposes, not adjoints).
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
#include "autodiff/linearize.h"
#include "hlo/eval/complex_values.h"
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
  if (hlo::IsComplex(shape.type())) {
    for (int64_t i = 0; i < l.num_elements(); ++i) {
      const double re = dist(rng);
      hlo::SetComplex(l, i, hlo::Complex128(re, dist(rng)));
    }
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
  if (hlo::IsComplex(a.shape().type())) {
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      hlo::SetComplex(out, i, hlo::GetComplex(a, i) + s * hlo::GetComplex(b, i));
    }
    return out;
  }
  if (!hlo::IsFloatingPoint(a.shape().type())) return out;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    out.SetFromDouble(i, a.GetAsDouble(i) + s * b.GetAsDouble(i));
  }
  return out;
}

// Sum of elementwise products over floating-point leaves; the real part of
// it over complex ones.
inline double Dot(const Literal& a, const Literal& b) {
  if (a.is_tuple()) {
    double sum = 0;
    for (size_t i = 0; i < a.elements().size(); ++i) sum += Dot(a.elements()[i], b.elements()[i]);
    return sum;
  }
  double sum = 0;
  if (hlo::IsComplex(a.shape().type())) {
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      sum += (hlo::GetComplex(a, i) * hlo::GetComplex(b, i)).real();
    }
    return sum;
  }
  if (!hlo::IsFloatingPoint(a.shape().type())) return 0;
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
  if (hlo::IsComplex(actual.shape().type())) {
    for (int64_t i = 0; i < actual.num_elements(); ++i) {
      const hlo::Complex128 a = hlo::GetComplex(actual, i);
      const hlo::Complex128 e = hlo::GetComplex(expected, i);
      EXPECT_NEAR(a.real(), e.real(), tolerance * (1 + std::abs(e))) << what << " element " << i;
      EXPECT_NEAR(a.imag(), e.imag(), tolerance * (1 + std::abs(e))) << what << " element " << i;
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

// The dot-product test of a transpose: for `module`'s entry L, linear in
// its first `linear` parameters (the rest fixed), the transpose T must
// satisfy <T(v), w> = <v, L(w)> for random w and v. The transposed program
// must also print, re-parse and verify.
inline void CheckTransposeByDotProduct(const Module& module, int64_t linear,
                                       const std::string& what, double tolerance = 1e-6) {
  const hlo::Computation& f = *module.entry();
  std::unique_ptr<Module> t = module.Clone();
  auto transposed = Transpose(*t, *t->entry(), linear);
  ASSERT_TRUE(transposed.ok()) << what << ": " << transposed.status();
  t->set_entry(*transposed);
  std::unique_ptr<Module> reparsed = Reparse(*t);
  ASSERT_NE(reparsed, nullptr) << what;
  for (uint64_t seed : {7, 8}) {
    std::mt19937_64 rng(seed);
    std::vector<Literal> args;
    for (const hlo::Instruction* p : f.parameters()) args.push_back(Random(p->shape(), rng, -1, 1));
    Literal lw = Run(module, args);
    Literal v = Random(lw.shape(), rng, -1, 1);
    std::vector<Literal> t_args;
    for (size_t i = static_cast<size_t>(linear); i < args.size(); ++i) t_args.push_back(args[i]);
    t_args.push_back(v);
    Literal tv = Run(*reparsed, t_args);
    double lhs = 0;
    for (int64_t i = 0; i < linear; ++i) lhs += Dot(tv.element(i), args[static_cast<size_t>(i)]);
    const double rhs = Dot(v, lw);
    EXPECT_NEAR(lhs, rhs, tolerance * (1 + std::abs(rhs))) << what;
  }
}

// Checks the JVP and the VJP of `module`'s entry at a random point, against
// central differences with step `eps` (larger for f32 and c64 programs,
// whose rounding a small step would magnify).
inline void CheckDerivatives(const Module& module, uint64_t seed, const std::string& what,
                             double eps = 1e-6, double tolerance = 1e-5) {
  std::mt19937_64 rng(seed);
  const hlo::Computation& f = *module.entry();
  std::vector<Literal> x = RandomArgs(f, rng);
  std::vector<Literal> t = RandomArgs(f, rng);
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
  ExpectNear(out.element(1), numeric, tolerance, what + " jvp tangent");

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
  EXPECT_NEAR(lhs, rhs, tolerance * (1 + std::abs(rhs))) << what << " vjp";
}

}  // namespace sharc::autodiff::testing
