// A pipeline runs passes (hlo/passes/pass.h) in order and does, around
// every one of them, what no pass should do for itself (XLA's
// HloPassPipeline):
//   - verifies the module after each pass when asked (`verify_each`, on in
//     the tests through SHARC_VERIFY_PASSES=1, and by `--verify-passes`), so
//     a broken pass is named at once instead of failing three passes later
//     (shardings are not checked against the device count: that is the
//     user's input, which the partitioner reports in its own words);
//   - times each pass (records(), and into `timings` when given: the
//     report `--pass-timings` prints, hlo/passes/pass_timings.h);
//   - dumps the module between passes whose name matches `dump_pass_re`
//     into `dump_to`, in the layout of XLA's --xla_dump_to with
//     --xla_dump_hlo_pass_re:
//       DIR/module_0000.NAME.0001.PIPELINE.after_PREV.before_NEXT.txt
//     where PREV/NEXT are the passes on either side ("pipeline-start" and
//     "pipeline-end" at the ends) and the second number counts the dumps of
//     this run. `--dump-pass-re .` dumps the module between every two passes.
//
//   Pipeline pipeline("compile", options);
//   pipeline.Add<DeadCodeElimination>();
//   RETURN_IF_ERROR(pipeline.Run(module));
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hlo/ir/module.h"
#include "hlo/passes/pass.h"
#include "hlo/passes/pass_timings.h"

namespace sharc::hlo {

struct PipelineOptions {
  bool verify_each = false;
  std::string dump_to;       // a directory (created if missing); no dumps if empty
  std::string dump_pass_re;  // ECMAScript regex searched in pass names; none if empty
  // Every pass's wall time is added here too; shared by the pipelines of one
  // compile so the report covers all of them.
  std::shared_ptr<PassTimings> timings;
};

// The defaults: verify_each from the environment (SHARC_VERIFY_PASSES=1,
// which the test suite sets), no dumps.
PipelineOptions DefaultPipelineOptions();

// What one pass did in the last Run.
struct PassRecord {
  std::string pass;
  absl::Duration time;
  bool changed = false;
};

class Pipeline {
 public:
  explicit Pipeline(std::string name, PipelineOptions options = DefaultPipelineOptions());

  void AddPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  template <typename P, typename... Args>
  P& Add(Args&&... args) {
    auto pass = std::make_unique<P>(std::forward<Args>(args)...);
    P& raw = *pass;
    passes_.push_back(std::move(pass));
    return raw;
  }

  // Called after each pass that succeeded (and verified), with the module
  // as that pass left it: how a driver keeps a snapshot mid-pipeline.
  using Observer = std::function<absl::Status(const Pass&, Module&)>;
  void set_observer(Observer observer) { observer_ = std::move(observer); }

  // Runs every pass in order. A pass's error comes back as the pass
  // returned it (failed_pass() names the pass); a module that does not
  // verify after a pass is Internal; a dump that cannot be written, or a
  // dump_pass_re that is no regex, is InvalidArgument.
  absl::Status Run(Module& module);

  const std::string& name() const { return name_; }
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }
  const std::vector<PassRecord>& records() const { return records_; }
  std::string_view failed_pass() const { return failed_pass_; }

 private:
  class Dumper;
  absl::Status RunPass(Pass& pass, Module& module);

  std::string name_;
  PipelineOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
  Observer observer_;
  std::vector<PassRecord> records_;
  std::string failed_pass_;
};

}  // namespace sharc::hlo
