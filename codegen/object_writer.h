// Internal to codegen/: writes a compiled Halide module as an object file,
// marking the full-vector stores into large outputs non-temporal on the way.
//
// Why this exists: a kernel that streams a big output through the cache
// first reads every line it is about to overwrite (read-for-ownership), so
// on this class of machine it moves 1.5x the bytes of a copy (docs/
// performance.md). Halide 14 has no schedule directive for non-temporal
// stores, so the mark is put on the LLVM module Halide produces, between
// Halide's code generation and LLVM's instruction selection.
#pragma once

#include <string>
#include <vector>

#include "Halide.h"

namespace sharc::codegen {

struct ObjectWriteStats {
  int nontemporal_stores = 0;  // vector stores given the non-temporal mark
};

// Compiles `module` to the object file `path`. Full-width vector stores into
// the buffers named in `streamed_outputs` (the output Funcs' names) become
// non-temporal where the address is 64-byte aligned at run time (a branch
// chooses per store; an unaligned one stays an ordinary store), and every
// function that has them ends with an sfence, so the data is visible to
// whichever thread reads it next. Throws Halide::Error like Halide's own
// compile_to_object.
ObjectWriteStats WriteKernelObject(const Halide::Module& module, const std::string& path,
                                   const std::vector<std::string>& streamed_outputs);

}  // namespace sharc::codegen
