// The dataflow graph of a module as Graphviz DOT, each value coloured by its
// sharding: people would rather look at where their tensors live than read
// it. `sharc propagate --format=dot FILE | dot -Tsvg > graph.svg`.
#pragma once

#include <string>

#include "hlo/ir/module.h"

namespace sharc::tools {

std::string ShardingGraphDot(const hlo::Module& module);

}  // namespace sharc::tools
