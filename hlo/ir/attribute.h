// Op attributes: typed values keyed by XLA's attribute names
// (`dimensions={1,0}`, `to_apply=%sum`, `slice={[0:4:1]}`...). Each op's
// schema (hlo/ops/op_def.h) lists which attributes it takes and of which kind;
// the parser and printer are generic over these kinds.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace sharc::hlo {

class Computation;

enum class AttrKind {
  kInt,              // index=1
  kIntList,          // dimensions={1,0}
  kBool,             // indices_are_sorted=true
  kString,           // custom_call_target="Sharding"
  kEnum,             // direction=LT, type=FLOAT (an identifier)
  kSlice,            // slice={[0:4], [2:10:2]}        -> {start, limit, stride} per dim
  kPadding,          // padding=1_2_0x0_0_1            -> {low, high, interior} per dim
  kWindow,           // window={size=3x3 stride=2x2}   -> {size, stride, pad_lo, pad_hi,
                     //                                   base_dilation, window_dilation} per dim
  kReplicaGroups,    // replica_groups={{0,1},{2,3}} or [2,2]<=[4]
  kPairs,            // source_target_pairs={{0,1},{1,0}}
  kComputation,      // to_apply=%sum
  kComputationList,  // branch_computations={%a, %b}
  kShape,            // outfeed_shape=(f32[2]{0}, pred[]), stored as the
                     // shape's canonical text (a std::string)
  kDimLabels,        // dim_labels=b01f_01io->b01f (a convolution's dimension
                     // numbers), stored as its text (a std::string)
  kLiteral,          // literal=s32[2] {1, 2} (a custom call's constant
                     // argument), stored as its canonical text (a std::string)
  // shard_map's own kinds, stored as their canonical text without the outer
  // braces (a std::string); hlo/ops/shard_map_attrs.h reads them.
  kMesh,             // mesh={i=4, j=2}
  kPartitionSpecs,   // in_specs={P(i), P((i,j), None), P()}
  kAxisNames,        // axes={i,j}
};

using IntList = std::vector<int64_t>;
using IntListList = std::vector<std::vector<int64_t>>;
using AttrValue = std::variant<int64_t, bool, std::string, IntList, IntListList,
                               Computation*, std::vector<Computation*>>;

struct Attribute {
  std::string name;
  AttrValue value;
};

}  // namespace sharc::hlo
