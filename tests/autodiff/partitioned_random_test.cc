// Gradients of random sharded programs: the gradient module of a program
// whose parameters carry random shardings, propagated and partitioned over 2
// or 4 devices, must equal the same gradient module run unpartitioned. The
// programs mix dots (split contracting, batch and free dims), elementwise ops,
// reductions broadcast back and transposes, so cotangents cross every kind of
// resharding the partitioner emits.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autodiff/grad.h"
#include "tests/autodiff/autodiff_test_util.h"
#include "tests/testlib/status_matchers.h"
#include "driver/compile_stages.h"
#include "driver/spmd_runner.h"

namespace sharc::autodiff {
namespace {

// Shardings of an [8,8] value over `devices` devices.
std::string RandomSharding(std::mt19937_64& rng, int devices) {
  if (devices == 2) {
    const char* options[] = {"{replicated}", "{devices=[2,1]0,1}", "{devices=[1,2]0,1}",
                             "{devices=[1,2]1,0}"};
    return options[rng() % 4];
  }
  const char* options[] = {"{replicated}", "{devices=[2,2]0,1,2,3}", "{devices=[4,1]0,1,2,3}",
                           "{devices=[1,4]3,2,1,0}",
                           "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"};
  return options[rng() % 5];
}

// An entry of three f64[8,8] parameters combined through `steps` random ops
// into a scalar (the sum of squares of the last value).
std::string RandomShardedProgram(uint64_t seed, int devices, int steps) {
  std::mt19937_64 rng(seed);
  std::string text = absl::StrCat("HloModule random_grad_", seed, ", num_partitions=", devices,
                                  "\n%add {\n  %a = f64[] parameter(0)\n  %b = f64[] parameter(1)\n"
                                  "  ROOT %s = f64[] add(%a, %b)\n}\nENTRY %main {\n");
  for (int p = 0; p < 3; ++p) {
    absl::StrAppend(&text, "  %v", p, " = f64[8,8] parameter(", p, "), sharding=",
                    RandomSharding(rng, devices), "\n");
  }
  int next = 3;
  auto pick = [&] { return absl::StrCat("%v", rng() % static_cast<uint64_t>(next)); };
  for (int i = 0; i < steps; ++i, ++next) {
    const std::string out = absl::StrCat("%t", next);
    const std::string a = pick(), b = pick();
    switch (rng() % 7) {
      case 0:
        absl::StrAppend(&text, "  ", out, " = f64[8,8] add(", a, ", ", b, ")\n");
        break;
      case 1:
        absl::StrAppend(&text, "  ", out, " = f64[8,8] multiply(", a, ", ", b, ")\n");
        break;
      case 2:
        absl::StrAppend(&text, "  ", out, " = f64[8,8] tanh(", a, ")\n");
        break;
      case 3:
        absl::StrAppend(&text, "  ", out, " = f64[8,8] dot(", a, ", ", b,
                        "), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
        break;
      case 4:
        absl::StrAppend(&text, "  ", out, " = f64[8,8] transpose(", a, "), dimensions={1,0}\n");
        break;
      case 5: {
        const std::string z = absl::StrCat("%z", next), r = absl::StrCat("%r", next);
        absl::StrAppend(&text, "  ", z, " = f64[] constant(0)\n  ", r, " = f64[8] reduce(", a,
                        ", ", z, "), dimensions={1}, to_apply=%add\n  ", out,
                        " = f64[8,8] broadcast(", r, "), dimensions={0}\n");
        break;
      }
      default:
        absl::StrAppend(&text, "  ", out, " = f64[8,8] sine(", a, ")\n");
        break;
    }
    // Now and then an internal annotation, so resharding happens mid-program.
    if (rng() % 4 == 0) {
      absl::StrAppend(&text, "  %v", next, " = f64[8,8] custom-call(", out,
                      "), custom_call_target=\"Sharding\", sharding=", RandomSharding(rng, devices),
                      "\n");
    } else {
      absl::StrAppend(&text, "  %v", next, " = f64[8,8] copy(", out, ")\n");
    }
  }
  const std::string last = absl::StrCat("%v", next - 1);
  absl::StrAppend(&text, "  %sq = f64[8,8] multiply(", last, ", ", last,
                  ")\n  %zero = f64[] constant(0)\n  ROOT %loss = f64[] reduce(%sq, %zero), "
                  "dimensions={0,1}, to_apply=%add\n}\n");
  return text;
}

TEST(PartitionedRandomGradTest, PartitionedGradientsMatchUnpartitioned) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    const int devices = seed % 2 == 0 ? 2 : 4;
    const std::string text = RandomShardedProgram(seed, devices, 6);
    SCOPED_TRACE(text);
    std::unique_ptr<Module> module = testing::Parse(text);
    ASSERT_NE(module, nullptr);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> gradient, GradModule(*module));
    std::mt19937_64 rng(seed * 7919);
    std::vector<Literal> args = testing::RandomArgs(*gradient->entry(), rng);
    const Literal expected = testing::Run(*gradient, args);
    driver::CompileOptions options;
    options.devices = devices;
    ASSERT_OK(driver::PrepareModule(*gradient, options));
    absl::StatusOr<Literal> partitioned = driver::RunPartitioned(*gradient, args, devices);
    ASSERT_TRUE(partitioned.ok()) << partitioned.status() << "\n" << gradient->ToString();
    testing::ExpectNear(*partitioned, expected, 1e-9, absl::StrCat("seed ", seed));
  }
}

}  // namespace
}  // namespace sharc::autodiff
