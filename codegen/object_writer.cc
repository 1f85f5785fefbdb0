// Compiled without RTTI (codegen/CMakeLists.txt), like the libLLVM it calls:
// instantiating LLVM's IRBuilder with RTTI would need typeinfo LLVM does not
// export.
#include "codegen/object_writer.h"

#include <algorithm>
#include <memory>

#include "llvm/IR/DataLayout.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

namespace sharc::codegen {
namespace {

// The widest store the target writes in one instruction; non-temporal
// stores need their address aligned to it.
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

bool StoresInto(const llvm::StoreInst& store, const std::vector<std::string>& buffers) {
  const llvm::MDNode* tag = store.getMetadata(llvm::LLVMContext::MD_tbaa);
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

// A store that fills whole aligned chunks of the widest vector register.
bool IsFullVectorStore(const llvm::StoreInst& store, const llvm::DataLayout& layout) {
  llvm::Type* type = store.getValueOperand()->getType();
  if (!type->isVectorTy() || store.isVolatile() || store.isAtomic()) return false;
  const uint64_t bytes = layout.getTypeStoreSize(type).getFixedSize();
  return bytes >= kStreamAlignment && bytes % kStreamAlignment == 0;
}

void MarkNonTemporal(llvm::StoreInst* store) {
  llvm::LLVMContext& ctx = store->getContext();
  llvm::MDNode* one = llvm::MDNode::get(
      ctx, llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1)));
  store->setMetadata(llvm::LLVMContext::MD_nontemporal, one);
  store->setAlignment(llvm::Align(std::max<uint64_t>(store->getAlign().value(), kStreamAlignment)));
}

// Halide proves alignment only when it knows the index modulo the vector;
// tails shifted inwards make it unknown. Where it could not, the store is
// versioned on the address: non-temporal when aligned, as before otherwise.
void StreamStore(llvm::StoreInst* store) {
  if (store->getAlign().value() >= kStreamAlignment) {
    MarkNonTemporal(store);
    return;
  }
  llvm::IRBuilder<> b(store);
  llvm::Value* address = b.CreatePtrToInt(store->getPointerOperand(), b.getInt64Ty());
  llvm::Value* aligned =
      b.CreateICmpEQ(b.CreateAnd(address, b.getInt64(kStreamAlignment - 1)), b.getInt64(0));
  llvm::Instruction* then_point = nullptr;
  llvm::Instruction* else_point = nullptr;
  llvm::SplitBlockAndInsertIfThenElse(aligned, store, &then_point, &else_point);
  auto* streamed = llvm::cast<llvm::StoreInst>(store->clone());
  streamed->insertBefore(then_point);
  MarkNonTemporal(streamed);
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

int StreamOutputStores(llvm::Module& module, const std::vector<std::string>& buffers) {
  if (buffers.empty() || llvm::StringRef(module.getTargetTriple()).find("x86_64") ==
                             llvm::StringRef::npos) {
    return 0;
  }
  const llvm::DataLayout& layout = module.getDataLayout();
  int marked = 0;
  for (llvm::Function& f : module) {
    std::vector<llvm::StoreInst*> stores;
    for (llvm::BasicBlock& block : f) {
      for (llvm::Instruction& inst : block) {
        auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
        if (store != nullptr && IsFullVectorStore(*store, layout) && StoresInto(*store, buffers)) {
          stores.push_back(store);
        }
      }
    }
    if (stores.empty()) continue;
    for (llvm::StoreInst* store : stores) StreamStore(store);
    FenceBeforeReturns(f);
    marked += static_cast<int>(stores.size());
  }
  return marked;
}

}  // namespace

ObjectWriteStats WriteKernelObject(const Halide::Module& module, const std::string& path,
                                   const std::vector<std::string>& streamed_outputs) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvm_module = Halide::compile_module_to_llvm_module(module, context);
  ObjectWriteStats stats;
  stats.nontemporal_stores = StreamOutputStores(*llvm_module, streamed_outputs);
  std::unique_ptr<llvm::raw_fd_ostream> out = Halide::make_raw_fd_ostream(path);
  Halide::compile_llvm_module_to_object(*llvm_module, *out);
  return stats;
}

}  // namespace sharc::codegen
