// Compiled without RTTI (codegen/CMakeLists.txt), like the libLLVM it calls:
// instantiating LLVM's IRBuilder with RTTI would need typeinfo LLVM does not
// export.
#include "codegen/object_writer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/VectorUtils.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO.h"
#include "llvm/Transforms/IPO/AlwaysInliner.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/SymbolRewriter.h"

namespace sharc::codegen {
namespace {

// The narrowest vector access streamed (an AVX2 register; Halide splits
// vectors into the target's native width) and the widest alignment asked
// for (an AVX-512 register). A non-temporal store needs its address aligned
// to its own size.
constexpr uint64_t kMinStreamBytes = 32;
constexpr uint64_t kStreamAlignment = 64;

// Halide tags each access with a TBAA type per buffer (a chain under
// "Halide buffer": the buffer's name, then finer nodes named NAME.width...
// for known index ranges). A tuple output's buffers are NAME.0, NAME.1, ...
bool NamesBuffer(const llvm::MDString* name, const std::vector<std::string>& buffers) {
  if (name == nullptr) return false;
  llvm::StringRef s = name->getString();
  for (const std::string& b : buffers) {
    if (s == b || (s.startswith(b) && s.size() > b.size() && s[b.size()] == '.')) return true;
  }
  return false;
}

bool Accesses(const llvm::Instruction& access, const std::vector<std::string>& buffers) {
  if (buffers.empty()) return false;
  const llvm::MDNode* tag = access.getMetadata(llvm::LLVMContext::MD_tbaa);
  if (tag == nullptr || tag->getNumOperands() < 1) return false;
  const auto* type = llvm::dyn_cast<llvm::MDNode>(tag->getOperand(0));
  // Walk up the type chain; operand 1 of a type node is its parent.
  for (int depth = 0; type != nullptr && depth < 64; ++depth) {
    if (type->getNumOperands() < 1) return false;
    if (NamesBuffer(llvm::dyn_cast<llvm::MDString>(type->getOperand(0)), buffers)) return true;
    type = type->getNumOperands() > 1 ? llvm::dyn_cast<llvm::MDNode>(type->getOperand(1)) : nullptr;
  }
  return false;
}

// The alignment a vector access of `type` needs to be streamed: its size
// up to kStreamAlignment, or 0 if it is not a whole vector register.
uint64_t StreamAlignment(llvm::Type* type, const llvm::DataLayout& layout) {
  if (!type->isVectorTy()) return 0;
  const uint64_t bytes = layout.getTypeStoreSize(type).getFixedSize();
  if (bytes < kMinStreamBytes) return 0;
  const uint64_t alignment = std::min(bytes, kStreamAlignment);
  return bytes % alignment == 0 && (alignment & (alignment - 1)) == 0 ? alignment : 0;
}

void MarkNonTemporal(llvm::StoreInst* store, uint64_t alignment) {
  llvm::LLVMContext& ctx = store->getContext();
  llvm::MDNode* one = llvm::MDNode::get(
      ctx, llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1)));
  store->setMetadata(llvm::LLVMContext::MD_nontemporal, one);
  store->setAlignment(llvm::Align(std::max<uint64_t>(store->getAlign().value(), alignment)));
}

// Halide proves alignment only when it knows the index modulo the vector;
// tails shifted inwards make it unknown. Where it could not, the store is
// versioned on the address: non-temporal when aligned, as before otherwise.
void StreamStore(llvm::StoreInst* store, uint64_t alignment) {
  if (store->getAlign().value() >= alignment) {
    MarkNonTemporal(store, alignment);
    return;
  }
  llvm::IRBuilder<> b(store);
  llvm::Value* address = b.CreatePtrToInt(store->getPointerOperand(), b.getInt64Ty());
  llvm::Value* aligned =
      b.CreateICmpEQ(b.CreateAnd(address, b.getInt64(alignment - 1)), b.getInt64(0));
  llvm::Instruction* then_point = nullptr;
  llvm::Instruction* else_point = nullptr;
  llvm::SplitBlockAndInsertIfThenElse(aligned, store, &then_point, &else_point);
  auto* streamed = llvm::cast<llvm::StoreInst>(store->clone());
  streamed->insertBefore(then_point);
  MarkNonTemporal(streamed, alignment);
  store->moveBefore(else_point);
}

void FenceBeforeReturns(llvm::Function& f) {
  llvm::Function* sfence =
      llvm::Intrinsic::getDeclaration(f.getParent(), llvm::Intrinsic::x86_sse_sfence);
  std::vector<llvm::ReturnInst*> returns;
  for (llvm::BasicBlock& block : f) {
    if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(block.getTerminator())) returns.push_back(ret);
  }
  for (llvm::ReturnInst* ret : returns) llvm::IRBuilder<>(ret).CreateCall(sfence);
}

// How far ahead of a streamed load to prefetch unless the schedule chose a
// distance: past what the core's own out-of-order window reaches and well
// inside a 2 MiB page (for one stream the gain was flat from 4 to 16 KiB on
// this machine, docs/performance_log.md).
constexpr int64_t kDefaultPrefetchBytes = 4096;

// Prefetches `elements` of the load's own type ahead of `load`, or
// kDefaultPrefetchBytes when 0.
void PrefetchAhead(llvm::LoadInst* load, int64_t elements, const llvm::DataLayout& layout) {
  const int64_t element_bytes =
      static_cast<int64_t>(layout.getTypeStoreSize(load->getType()->getScalarType()).getFixedSize());
  const int64_t bytes = elements > 0 ? elements * element_bytes : kDefaultPrefetchBytes;
  llvm::IRBuilder<> b(load);
  llvm::Type* byte_pointer = b.getInt8PtrTy(load->getPointerAddressSpace());
  llvm::Value* ahead = b.CreateGEP(b.getInt8Ty(), b.CreateBitCast(load->getPointerOperand(), byte_pointer),
                                   b.getInt64(bytes));
  llvm::Function* prefetch =
      llvm::Intrinsic::getDeclaration(load->getModule(), llvm::Intrinsic::prefetch, {byte_pointer});
  // read, locality 2 (prefetcht1: into L2, where the next pass finds it), data
  b.CreateCall(prefetch, {ahead, b.getInt32(0), b.getInt32(2), b.getInt32(1)});
}

// Lets LLVM fuse a multiply and the add or subtract that consumes it into
// one FMA, and nothing else: XLA's CPU backend compiles with
// AllowFPOpFusion = Fast whatever its fast-math setting, so a*b+c rounding
// once is within XLA's semantics. Halide's StrictFloat target forbids it
// globally (and its fast mode would also assume there are no NaNs); the
// per-instruction flag keeps every other IEEE rule.
void AllowContraction(llvm::Module& module) {
  for (llvm::Function& f : module) {
    for (llvm::BasicBlock& block : f) {
      for (llvm::Instruction& inst : block) {
        const unsigned op = inst.getOpcode();
        if (op == llvm::Instruction::FMul || op == llvm::Instruction::FAdd ||
            op == llvm::Instruction::FSub) {
          inst.setHasAllowContract(true);
        }
      }
    }
  }
}

// Division of a float vector by one value in every lane (softmax's row sum,
// a constant): on Ice Lake vdivps issued once per 10 cycles for 16 floats,
// a quarter of a softmax row's time. The quotient is instead rounded
// correctly from the reciprocal y = RN(1/b), computed once where the
// divisor is defined, and two FMA corrections:
//   q0 = a*y;  q1 = fma(fma(-q0, b, a), y, q0);  q = fma(fma(-q1, b, a), y, q1)
// q0 can be 1.5 ulp from a/b; q1 is within 1 ulp (the first correction's
// error is 2^-22 ulp before its own rounding). Markstein's theorem then
// makes the second correction exact: with y within half an ulp of 1/b and
// q1 within one ulp of a/b, r = a - b*q1 is a float (the FMA computes it
// exactly) and RN(q1 + r*y) = RN(a/b). The theorem assumes no underflow or
// overflow, so a vector takes this path only if 1 <= |b| <= 2^60 and every
// lane has 2^-99 <= |q0| <= 2^125 (then |a| >= 2^-100 and every remainder
// lies on a grid no finer than 2^-145) or a = +-0 (whose quotient q0 already
// is, with its sign). Infinities, NaN, subnormal or huge quotients and small
// or huge divisors branch to the original division. Checked bit for bit
// against IEEE division on 2.3e9 random and adversarial pairs (single
// correction, which already passed); tests/codegen/reciprocal_division_test.cc
// checks 1.2e7 of them and the kernels themselves. On Zen 3 (AVX2) the
// 8-lane division is cheaper than this path's checks and corrections, and
// on Zen 4 the 16-lane one (6 cycles, against 8.4 for this path), so the
// compiler asks for the rewrite only where it pays (ReciprocalDivisionPays).
struct Reciprocal {
  llvm::Value* splat = nullptr;     // RN(1/b) in every lane
  llvm::Value* in_range = nullptr;  // 1 <= |b| <= 2^60, scalar i1
};

// Computed once, right where b is defined (a row's sum: once per row), not
// beside every division: Halide's LLVM passes have already run, so nothing
// would hoist it out of the loop afterwards.
// Null if b is defined by a terminator (an invoke: nothing can follow it in
// its block), which Halide never emits; such a division is left alone.
std::optional<Reciprocal> ReciprocalOf(llvm::Value* b, unsigned lanes, llvm::Function& f) {
  llvm::Instruction* at = nullptr;
  if (auto* def = llvm::dyn_cast<llvm::Instruction>(b)) {
    if (def->isTerminator()) return std::nullopt;
    at = llvm::isa<llvm::PHINode>(def) ? &*def->getParent()->getFirstInsertionPt() : def->getNextNode();
  } else {
    at = &*f.getEntryBlock().getFirstInsertionPt();
  }
  llvm::IRBuilder<> builder(at);
  llvm::Type* t = b->getType();
  Reciprocal r;
  r.splat = builder.CreateVectorSplat(lanes, builder.CreateFDiv(llvm::ConstantFP::get(t, 1.0), b));
  // Frozen: an undefined divisor must not make the branch on it undefined.
  llvm::Value* magnitude = builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, builder.CreateFreeze(b));
  r.in_range = builder.CreateAnd(builder.CreateFCmpOGE(magnitude, llvm::ConstantFP::get(t, 1.0)),
                                 builder.CreateFCmpOLE(magnitude, llvm::ConstantFP::get(t, 0x1p60)));
  return r;
}

int DivideThroughReciprocals(llvm::Function& f) {
  std::vector<std::pair<llvm::Instruction*, llvm::Value*>> divisions;  // and each one's divisor
  for (llvm::BasicBlock& block : f) {
    for (llvm::Instruction& inst : block) {
      auto* type = llvm::dyn_cast<llvm::FixedVectorType>(inst.getType());
      if (inst.getOpcode() != llvm::Instruction::FDiv || type == nullptr ||
          !type->getElementType()->isFloatTy()) {
        continue;
      }
      if (llvm::Value* b = llvm::getSplatValue(inst.getOperand(1))) divisions.emplace_back(&inst, b);
    }
  }
  std::map<std::pair<llvm::Value*, unsigned>, std::optional<Reciprocal>> reciprocals;
  llvm::MDBuilder weights(f.getContext());
  int rewritten = 0;
  for (auto [division, b] : divisions) {
    llvm::Value* a = division->getOperand(0);
    llvm::Value* splat_b = division->getOperand(1);
    auto* type = llvm::cast<llvm::FixedVectorType>(division->getType());
    auto [it, inserted] = reciprocals.try_emplace({b, type->getNumElements()});
    if (inserted) it->second = ReciprocalOf(b, type->getNumElements(), f);
    if (!it->second.has_value()) continue;
    const Reciprocal& reciprocal = *it->second;

    llvm::IRBuilder<> builder(division);
    llvm::Value* y = reciprocal.splat;
    auto fma = [&](llvm::Value* x, llvm::Value* z, llvm::Value* w) {
      return builder.CreateIntrinsic(llvm::Intrinsic::fma, {type}, {x, z, w});
    };
    llvm::Value* q0 = builder.CreateFMul(a, y);
    llvm::Value* q1 = fma(fma(builder.CreateFNeg(q0), splat_b, a), y, q0);
    llvm::Value* q = fma(fma(builder.CreateFNeg(q1), splat_b, a), y, q1);
    llvm::Value* zero = builder.CreateFCmpOEQ(a, llvm::ConstantFP::get(type, 0.0));
    llvm::Value* corrected = builder.CreateSelect(zero, q0, q);
    // The branch's lane tests read frozen copies of a and q0: an undefined
    // lane must neither make the branch undefined nor vouch for the other
    // lanes. Freezing the operands rather than the lanes' i1 mask lets LLVM
    // turn the mask into one movmskps on AVX2; a frozen mask went through
    // five byte-pack instructions per vector.
    llvm::Value* frozen_a = builder.CreateFreeze(a);
    llvm::Value* magnitude =
        builder.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, builder.CreateFreeze(q0));
    llvm::Value* lanes_ok = builder.CreateOr(
        builder.CreateAnd(builder.CreateFCmpOGE(magnitude, llvm::ConstantFP::get(type, 0x1p-99)),
                          builder.CreateFCmpOLE(magnitude, llvm::ConstantFP::get(type, 0x1p125))),
        builder.CreateFCmpOEQ(frozen_a, llvm::ConstantFP::get(type, 0.0)));
    llvm::Value* mask = builder.CreateBitCast(lanes_ok, builder.getIntNTy(type->getNumElements()));
    llvm::Value* fast = builder.CreateAnd(
        builder.CreateICmpEQ(mask, llvm::Constant::getAllOnesValue(mask->getType())), reciprocal.in_range);
    // Rare: the original division, out of line.
    llvm::Instruction* slow_end = llvm::SplitBlockAndInsertIfThen(
        builder.CreateNot(fast), division, /*Unreachable=*/false, weights.createBranchWeights(1, 1 << 20));
    llvm::BasicBlock* head = slow_end->getParent()->getSinglePredecessor();
    llvm::Instruction* exact = division->clone();
    exact->insertBefore(slow_end);
    llvm::PHINode* result = llvm::PHINode::Create(type, 2, "", division);
    result->addIncoming(corrected, head);
    result->addIncoming(exact, slow_end->getParent());
    division->replaceAllUsesWith(result);
    division->eraseFromParent();
    ++rewritten;
  }
  return rewritten;
}

ObjectWriteStats EditStreams(llvm::Module& module, const StreamedBuffers& streamed) {
  ObjectWriteStats stats;
  if (llvm::StringRef(module.getTargetTriple()).find("x86_64") == llvm::StringRef::npos) return stats;
  const llvm::DataLayout& layout = module.getDataLayout();
  for (llvm::Function& f : module) {
    std::vector<std::pair<llvm::StoreInst*, uint64_t>> stores;
    std::vector<llvm::LoadInst*> loads;
    for (llvm::BasicBlock& block : f) {
      for (llvm::Instruction& inst : block) {
        if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
          const uint64_t alignment = StreamAlignment(store->getValueOperand()->getType(), layout);
          if (store->isSimple() && alignment != 0 && Accesses(*store, streamed.outputs)) {
            stores.emplace_back(store, alignment);
          }
        } else if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
          if (load->isSimple() && StreamAlignment(load->getType(), layout) != 0 &&
              Accesses(*load, streamed.inputs)) {
            loads.push_back(load);
          }
        }
      }
    }
    for (llvm::LoadInst* load : loads) PrefetchAhead(load, streamed.prefetch_elements, layout);
    stats.prefetches += static_cast<int>(loads.size());
    if (stores.empty()) continue;
    for (const auto& [store, alignment] : stores) StreamStore(store, alignment);
    FenceBeforeReturns(f);
    stats.nontemporal_stores += static_cast<int>(stores.size());
  }
  return stats;
}

// Instruction selection to an object, as Halide's compile_llvm_module_to_object
// does it (Halide's target machine, the library info, the always-inliner,
// debug-info stripping, -mllvm symbol rewriting, then the target's passes)
// less its first step: that copies the module through bitcode, written and
// parsed back, to keep the caller's module unchanged, and this one is not
// used again. (The copy also renumbers use lists, so objects may differ in
// scheduling from Halide's; they compute the same.)
void EmitObject(llvm::Module& module, llvm::raw_pwrite_stream& out) {
  std::unique_ptr<llvm::TargetMachine> machine = Halide::Internal::make_target_machine(module);
  if (machine == nullptr) throw Halide::CompileError("LLVM has no target machine for the kernel");
  llvm::legacy::PassManager passes;
  passes.add(new llvm::TargetLibraryInfoWrapperPass(llvm::Triple(module.getTargetTriple())));
  passes.add(llvm::createAlwaysInlinerLegacyPass());
  passes.add(llvm::createStripDeadDebugInfoPass());
  passes.add(llvm::createRewriteSymbolsPass());
  if (machine->addPassesToEmitFile(passes, out, nullptr, llvm::CGFT_ObjectFile)) {
    throw Halide::CompileError("LLVM cannot emit an object file for the kernel's target");
  }
  passes.run(module);
}

}  // namespace

bool ReciprocalDivisionPays(const Halide::Target& target, bool divider_is_slow) {
  if (target.arch != Halide::Target::X86) return true;
  return target.has_feature(Halide::Target::AVX512) && divider_is_slow;
}

ObjectWriteStats WriteKernelObject(const Halide::Module& module, std::string* object,
                                   const StreamedBuffers& streamed,
                                   bool divide_through_reciprocals) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvm_module = Halide::compile_module_to_llvm_module(module, context);
  const Clock::time_point ir_done = Clock::now();
  AllowContraction(*llvm_module);
  ObjectWriteStats stats = EditStreams(*llvm_module, streamed);
  // Without FMA hardware llvm.fma is a library call per lane: slower than
  // the division it replaces.
  const Halide::Target& target = module.target();
  const bool has_fma = target.arch == Halide::Target::X86 ? target.has_feature(Halide::Target::FMA)
                                                          : target.arch == Halide::Target::ARM && target.bits == 64;
  if (divide_through_reciprocals && has_fma) {
    for (llvm::Function& f : *llvm_module) stats.reciprocal_divisions += DivideThroughReciprocals(f);
  }
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream out(bytes);
  EmitObject(*llvm_module, out);
  object->assign(bytes.data(), bytes.size());
  auto us = [](Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  };
  stats.llvm_ir_us = us(ir_done - start);
  stats.object_us = us(Clock::now() - ir_done);
  return stats;
}

}  // namespace sharc::codegen
