// The cost report through the C API: the JSON of `sharc report --json`
// (with its schema_version) and the per-device figures.
#include <string>

#include "gmock/gmock.h"
#include "tests/c_api/c_api_test_util.h"

namespace sharc::c_api_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The contracting dim split over 2 devices: each multiplies half and an
// all-reduce adds the partial products.
constexpr char kSplitContraction[] = R"(HloModule split_k, num_partitions=2

ENTRY %main {
  %x = f32[4,6] parameter(0), sharding={devices=[1,2]0,1}
  %w = f32[6,3] parameter(1), sharding={devices=[2,1]0,1}
  ROOT %y = f32[4,3] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
}
)";

TEST(CApiReport, JsonHasTheSchemaVersionAndTheFigures) {
  Owned<sharc_module> module = ParseOrDie(kSplitContraction);
  sharc_options* raw_options = nullptr;
  SHARC_ASSERT_OK(sharc_options_create(&raw_options));
  Owned<sharc_options> options(raw_options);
  SHARC_ASSERT_OK(sharc_options_set_backend(options.get(), SHARC_BACKEND_INTERPRETER));
  sharc_program* raw_program = nullptr;
  SHARC_ASSERT_OK(sharc_compile(module.get(), options.get(), &raw_program));
  Owned<sharc_program> program(raw_program);

  sharc_report* raw_report = nullptr;
  SHARC_ASSERT_OK(sharc_program_report(program.get(), &raw_report));
  Owned<sharc_report> report(raw_report);
  const char* json = nullptr;
  SHARC_ASSERT_OK(sharc_report_json(report.get(), &json));
  EXPECT_THAT(json, StartsWith("{"));
  EXPECT_THAT(json, HasSubstr("\"schema_version\": 1"));
  EXPECT_THAT(json, HasSubstr("all-reduce"));
  const char* text = nullptr;
  SHARC_ASSERT_OK(sharc_report_text(report.get(), &text));
  EXPECT_THAT(text, HasSubstr("flops"));

  int64_t devices = 0, peak = 0, communication = 0;
  double flops = 0, bytes = 0;
  SHARC_ASSERT_OK(sharc_report_num_devices(report.get(), &devices));
  SHARC_ASSERT_OK(sharc_report_flops(report.get(), &flops));
  SHARC_ASSERT_OK(sharc_report_bytes_accessed(report.get(), &bytes));
  SHARC_ASSERT_OK(sharc_report_peak_memory_bytes(report.get(), &peak));
  SHARC_ASSERT_OK(sharc_report_communication_bytes(report.get(), &communication));
  EXPECT_EQ(devices, 2);
  // Each device does half of the 4*6*3 multiply-adds (2 flops each), and the
  // all-reduce adds the two f32[4,3] partial products: as `sharc report`.
  EXPECT_EQ(flops, 2.0 * 4 * 3 * 3 + 4 * 3);
  EXPECT_GT(bytes, 0);
  EXPECT_GT(peak, 0);
  // A ring all-reduce of the f32[4,3] partial product on 2 devices sends
  // 2(n-1)/n of its 48 bytes.
  EXPECT_EQ(communication, 48);
}

}  // namespace
}  // namespace sharc::c_api_test
