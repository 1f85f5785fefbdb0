// The pass contract and pipeline (hlo/passes/pipeline.h) and the generic
// dead-code elimination (hlo/passes/dce.h).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/ir/module.h"
#include "hlo/passes/dce.h"
#include "hlo/passes/pipeline.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::MatchesRegex;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kDead[] = R"(HloModule dead, num_partitions=2

%add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main {
  %x = f32[4] parameter(0)
  %neg = f32[4] negate(%x)
  %dead_chain = f32[4] abs(%neg)
  %dead_sum = f32[4] all-reduce(%x), channel_id=1, replica_groups={{0,1}}, to_apply=%add
  %trace = f32[4] custom-call(%x), custom_call_target="trace", custom_call_has_side_effect=true
  ROOT %r = f32[4] exponential(%x)
}
)";

std::string Entry(const Module& module) { return PrintComputation(*module.entry(), true); }

TEST(DeadCodeEliminationTest, KeepsEffectsByDefault) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseModule(kDead));
  DeadCodeElimination dce;
  ASSERT_OK_AND_ASSIGN(bool changed, dce.Run(*module));
  EXPECT_TRUE(changed);
  const std::string text = Entry(*module);
  // A dead chain goes in one run, users before producers.
  EXPECT_THAT(text, Not(HasSubstr("%neg")));
  EXPECT_THAT(text, Not(HasSubstr("%dead_chain")));
  EXPECT_THAT(text, HasSubstr("%dead_sum"));
  EXPECT_THAT(text, HasSubstr("%trace"));
  EXPECT_THAT(text, HasSubstr("%x = f32[4] parameter(0)"));
  // Nothing left to remove.
  ASSERT_OK_AND_ASSIGN(changed, dce.Run(*module));
  EXPECT_FALSE(changed);
}

// The per-device program's clean-up: an unused collective goes, an effect
// stays (a partitioned outfeed whose token no one read used to vanish).
TEST(DeadCodeEliminationTest, PartitionedProgramsDropUnusedCollectivesButKeepEffects) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseModule(kDead));
  DceOptions options;
  options.keep = DceOptions::Keep::kEffectsButNotCollectives;
  ASSERT_OK_AND_ASSIGN(bool changed, DeadCodeElimination(options).Run(*module));
  EXPECT_TRUE(changed);
  const std::string text = Entry(*module);
  EXPECT_THAT(text, Not(HasSubstr("%dead_sum")));
  EXPECT_THAT(text, HasSubstr("%trace"));
  EXPECT_THAT(text, HasSubstr("ROOT %r"));
}

// Records the order passes run in; optionally breaks the module.
class RecordingPass final : public Pass {
 public:
  RecordingPass(std::string name, std::vector<std::string>* log, bool break_module = false)
      : name_(std::move(name)), log_(log), break_module_(break_module) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override {
    log_->push_back(name_);
    if (break_module_) {
      // The root's declared shape no longer matches what exponential infers.
      module.entry()->root()->set_shape(Shape(PrimitiveType::kF32, {5}));
    }
    return break_module_;
  }

 private:
  std::string name_;
  std::vector<std::string>* log_;
  bool break_module_;
};

class FailingPass final : public Pass {
 public:
  std::string_view name() const override { return "fails"; }
  absl::StatusOr<bool> Run(Module&) override { return absl::InvalidArgumentError("no good"); }
};

TEST(PipelineTest, RunsPassesInOrderAndRecordsThem) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseModule(kDead));
  std::vector<std::string> log;
  std::vector<std::string> observed;
  Pipeline pipeline("test", PipelineOptions{});
  pipeline.Add<RecordingPass>("first", &log);
  pipeline.Add<DeadCodeElimination>();
  pipeline.Add<RecordingPass>("last", &log);
  pipeline.set_observer([&](const Pass& pass, Module&) {
    observed.emplace_back(pass.name());
    return absl::OkStatus();
  });
  ASSERT_OK(pipeline.Run(*module));
  EXPECT_THAT(log, ElementsAre("first", "last"));
  EXPECT_THAT(observed, ElementsAre("first", "dce", "last"));
  ASSERT_EQ(pipeline.records().size(), 3u);
  EXPECT_EQ(pipeline.records()[1].pass, "dce");
  EXPECT_TRUE(pipeline.records()[1].changed);
  EXPECT_FALSE(pipeline.records()[0].changed);
}

TEST(PassTimingsTest, SumsRunsPerPassLongestFirstInXlasLayout) {
  PassTimings timings;
  timings.Record("cse", absl::Milliseconds(1));
  timings.Record("propagate", absl::Milliseconds(5));
  timings.Record("cse", absl::Milliseconds(2));
  timings.Record("algsimp", absl::Milliseconds(3));  // ties with cse: by name
  EXPECT_EQ(timings.Total(), absl::Milliseconds(11));
  EXPECT_EQ(timings.Report(),
            "Total runtime (ms) of HLO passes: 11.000\n"
            "Pass name, num runs, time (ms)\n"
            "propagate, 1, 5.000\n"
            "algsimp, 1, 3.000\n"
            "cse, 2, 3.000\n");
  EXPECT_EQ(PassTimings().Report(), "");
}

TEST(PassTimingsTest, PipelinesSharingOneRecordEveryPass) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseModule(kDead));
  PipelineOptions options;
  options.timings = std::make_shared<PassTimings>();
  std::vector<std::string> log;
  for (int i = 0; i < 2; ++i) {
    Pipeline pipeline("test", options);
    pipeline.Add<RecordingPass>("first", &log);
    pipeline.Add<DeadCodeElimination>();
    ASSERT_OK(pipeline.Run(*module));
  }
  std::vector<std::string> names;
  for (const PassTimings::Summary& s : options.timings->Summarize()) {
    names.push_back(s.pass);
    EXPECT_EQ(s.runs, 2) << s.pass;
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("first", "dce"));
}

TEST(PipelineTest, StopsAtTheFirstErrorAndNamesThePass) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseModule(kDead));
  std::vector<std::string> log;
  Pipeline pipeline("test", PipelineOptions{});
  pipeline.Add<FailingPass>();
  pipeline.Add<RecordingPass>("after", &log);
  EXPECT_THAT(pipeline.Run(*module),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no good")));
  EXPECT_EQ(pipeline.failed_pass(), "fails");
  EXPECT_TRUE(log.empty());
}

TEST(PipelineTest, VerifiesAfterEachPassWhenAsked) {
  std::vector<std::string> log;
  for (bool verify : {false, true}) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseModule(kDead));
    PipelineOptions options;
    options.verify_each = verify;
    Pipeline pipeline("test", options);
    pipeline.Add<RecordingPass>("breaks", &log, /*break_module=*/true);
    pipeline.Add<RecordingPass>("next", &log);
    absl::Status status = pipeline.Run(*module);
    if (!verify) {
      EXPECT_OK(status);
      continue;
    }
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInternal,
                                 HasSubstr("does not verify after pass 'breaks'")));
    EXPECT_EQ(pipeline.failed_pass(), "breaks");
  }
  // Without verification both passes ran; with it the second never did.
  EXPECT_THAT(log, ElementsAre("breaks", "next", "breaks"));
}

std::vector<std::string> FilesIn(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(PipelineTest, DumpsAroundMatchingPassesInXlaLayout) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "pass_pipeline_dump";
  std::filesystem::remove_all(dir);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseModule(kDead));
  std::vector<std::string> log;
  PipelineOptions options;
  options.dump_to = dir.string();
  options.dump_pass_re = "^dce$";
  Pipeline pipeline("test", options);
  pipeline.Add<RecordingPass>("first", &log);
  pipeline.Add<DeadCodeElimination>();
  pipeline.Add<RecordingPass>("last", &log);
  ASSERT_OK(pipeline.Run(*module));
  const std::vector<std::string> files = FilesIn(dir);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_THAT(files[0], MatchesRegex(
                            R"(module_[0-9]{4}\.dead\.0000\.test\.after_first\.before_dce\.txt)"));
  EXPECT_THAT(files[1], MatchesRegex(
                            R"(module_[0-9]{4}\.dead\.0001\.test\.after_dce\.before_last\.txt)"));
  std::ifstream before(dir / files[0]);
  std::stringstream text;
  text << before.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("%dead_chain"));
  std::filesystem::remove_all(dir);
}

TEST(PipelineTest, RejectsARegexThatDoesNotCompile) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseModule(kDead));
  PipelineOptions options;
  options.dump_to = ::testing::TempDir();
  options.dump_pass_re = "(";
  Pipeline pipeline("test", options);
  pipeline.Add<DeadCodeElimination>();
  EXPECT_THAT(pipeline.Run(*module), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("--dump-pass-re")));
}

}  // namespace
}  // namespace sharc::hlo
