// The pytrees the frontend passes around: of traced Tensors (inside a traced
// function), of host literals (jit's inputs and outputs), of shapes (abstract
// inputs, like jax.ShapeDtypeStruct) and of PartitionSpecs (shardings).
#pragma once

#include <functional>

#include "frontend/pytree.h"
#include "frontend/tensor.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "spmd/mesh.h"

namespace sharc::frontend {

using Tree = PyTree<Tensor>;
using HostTree = PyTree<hlo::Literal>;
using ShapeTree = PyTree<hlo::Shape>;
using SpecTree = PyTree<spmd::PartitionSpec>;

// A traceable function: a tree of Tensors in, a tree of Tensors out.
using TreeFunction = std::function<Tree(const Tree&)>;

// The shapes of a tree of literals (what a function would be traced with).
ShapeTree ShapesOf(const HostTree& values);

}  // namespace sharc::frontend
