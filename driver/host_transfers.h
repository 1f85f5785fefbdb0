// What the host gives a run's infeeds and takes from its outfeeds, in
// global values, and how they reach the devices' host queues
// (hlo/eval/host_queues.h).
//
// sharc partitions an infeed and an outfeed as whole values (their sharding
// rule is replicated, spmd/rules/structural_rules.cc): every device's infeed
// reads the whole global value and slices its own tile after it, and every
// device outfeeds the whole value. So each device's infeed queue receives
// every global value, and the global outfeed values are what the devices
// outfed, which must agree (a device that outfeeds something else is a
// partitioner bug, reported as such, never a silent answer).
//
//   InfeedSource source(leaves_from_files, make_random);
//   HostTransfers host{&source};
//   program->Run(args, &host);   // host.outfeed: the global values outfed
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "hlo/eval/host_queues.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/module.h"

namespace sharc::driver {

// The global values a program's infeeds read, value k for the k-th pop: made
// once and kept, so every device, the global reference and repeated runs read
// the same values.
class InfeedSource {
 public:
  // Makes value `index` of `shape` (random inputs).
  using MakeFn = std::function<hlo::Literal(const hlo::Shape& shape, int64_t index)>;

  // Values are built from `leaves` first (arrays, in order: a value of tuple
  // shape takes one per leaf), then by `make`; with neither left the queue
  // is empty.
  InfeedSource(std::vector<hlo::Literal> leaves, MakeFn make);

  // Value `index` for an infeed that reads `shape` (values are made in
  // index order; the shape of the first read makes it), or nullopt.
  absl::StatusOr<std::optional<hlo::Literal>> Value(int64_t index, const hlo::Shape& shape);

  // Leaves given but never read (after a run: more --infeed files than pops).
  int64_t unread_leaves() const;
  // Values `make` made so far.
  int64_t made_values() const;

 private:
  mutable absl::Mutex mu_;
  std::vector<hlo::Literal> leaves_ ABSL_GUARDED_BY(mu_);
  size_t next_leaf_ ABSL_GUARDED_BY(mu_) = 0;
  MakeFn make_;
  std::vector<hlo::Literal> values_ ABSL_GUARDED_BY(mu_);
  int64_t made_ ABSL_GUARDED_BY(mu_) = 0;
};

// A run's host side: where its infeeds read from, and (filled by the run)
// the global values its outfeeds sent, oldest first.
struct HostTransfers {
  InfeedSource* infeed = nullptr;  // none: an infeed finds its queue empty
  std::vector<hlo::Literal> outfeed;
};

// One HostQueues per device, each reading `source` (if any) in full.
std::vector<std::unique_ptr<hlo::HostQueues>> MakeDeviceQueues(int64_t num_devices,
                                                               InfeedSource* source);
std::vector<hlo::HostQueues*> Pointers(const std::vector<std::unique_ptr<hlo::HostQueues>>& queues);

// The global values outfed: every device's k-th outfeed must be the same
// value (sharc outfeeds whole values); Internal, naming the device and the
// value, if they differ.
absl::StatusOr<std::vector<hlo::Literal>> GlobalOutfeed(
    const std::vector<std::unique_ptr<hlo::HostQueues>>& queues);

// The reference interpreter on `module` (hlo::Evaluate, one device) with
// `host` (may be null) as the host's side of its infeeds and outfeeds.
absl::StatusOr<hlo::Literal> EvaluateWithHost(const hlo::Module& module,
                                              const std::vector<hlo::Literal>& args,
                                              HostTransfers* host);

// True if `module` has an infeed or an outfeed anywhere.
bool UsesHostQueues(const hlo::Module& module);

}  // namespace sharc::driver
