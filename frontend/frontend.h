// The whole tracing API in one include: Tensor and its numpy-like
// operations, pytrees, jit, vmap, sharding constraints, and the tracer for code
// that emits new ops or traces nested functions.
#pragma once

#include "frontend/creation.h"
#include "frontend/elementwise.h"
#include "frontend/jit.h"
#include "frontend/linalg.h"
#include "frontend/named_collectives.h"
#include "frontend/partition_spec.h"
#include "frontend/pytree.h"
#include "frontend/reductions.h"
#include "frontend/shape_ops.h"
#include "frontend/shard_map.h"
#include "frontend/sharding_constraint.h"
#include "frontend/tensor.h"
#include "frontend/trace_error.h"
#include "frontend/trace_module.h"
#include "frontend/tracer.h"
#include "frontend/tree_function.h"
#include "frontend/trees.h"
#include "frontend/vmap.h"
