#include "frontend/trees.h"

namespace sharc::frontend {

ShapeTree ShapesOf(const HostTree& values) {
  return MapTree(values, [](const hlo::Literal& l) { return l.shape(); });
}

}  // namespace sharc::frontend
