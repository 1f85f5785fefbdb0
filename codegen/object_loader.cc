// In-process linking of kernel objects (see object_loader.h).
#include "codegen/object_loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace sharc::codegen {
namespace {

// Where each loaded section goes: three groups of pages, so that code ends
// up executable and nothing both writable and executable.
enum class Group { kCode, kReadOnly, kWritable };

struct Placement {
  bool loaded = false;
  Group group = Group::kCode;
  uint64_t offset = 0;  // within its group
};

// One 8-byte slot (the symbol's address) and, for calls, a 16-byte stub
// `jmp *slot(%rip)` per symbol that is outside the image or read through
// the GOT.
constexpr uint64_t kStubBytes = 16;
constexpr uint64_t kSlotBytes = 8;
// No section of a kernel comes near this; bounding each keeps every sum of
// offsets and sizes below it far from wrapping.
constexpr uint64_t kMaxSectionBytes = uint64_t{1} << 30;

uint64_t AlignUp(uint64_t v, uint64_t alignment) {
  return alignment <= 1 ? v : (v + alignment - 1) / alignment * alignment;
}

bool IsGotRelocation(uint32_t type) {
  return type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX ||
         type == R_X86_64_REX_GOTPCRELX;
}

class Linker {
 public:
  Linker(absl::string_view bytes, absl::string_view name) : bytes_(bytes), name_(name) {}

  // Links the image; on success hands over its pages and its global symbols.
  absl::Status Run(absl::flat_hash_map<std::string, void*>& symbols_out,
                   std::vector<LoadedObject::Function>& functions_out, void*& image, size_t& size);

 private:
  // Malformed bytes (a damaged file): DataLoss, which the kernel cache
  // answers by compiling again. What a well-formed object may hold but this
  // linker does not take is Unimplemented; the other failures say what.
  absl::Status Error(absl::string_view what) const {
    return absl::DataLossError(absl::StrCat("cannot link kernel object ", name_, ": ", what));
  }
  absl::Status Unsupported(absl::string_view what) const {
    return absl::UnimplementedError(absl::StrCat("cannot link kernel object ", name_, ": ", what));
  }
  // The symbol's name for messages, or its index.
  std::string SymbolName(uint64_t i) const {
    if (i < symbols_.size()) {
      absl::StatusOr<absl::string_view> name = StringAt(symbol_strings_, symbols_[i].st_name);
      if (name.ok() && !name->empty()) return std::string(*name);
    }
    return absl::StrCat("#", i);
  }
  // Copies a T from `offset`, if it lies inside the bytes.
  template <typename T>
  bool Read(uint64_t offset, T* out) const {
    if (offset > bytes_.size() || bytes_.size() - offset < sizeof(T)) return false;
    std::memcpy(out, bytes_.data() + offset, sizeof(T));
    return true;
  }
  // The NUL-terminated string at `offset` of string table section `table`.
  absl::StatusOr<absl::string_view> StringAt(uint32_t table, uint64_t offset) const;
  absl::Status ReadHeaders();
  absl::Status ReadSymbols();
  absl::Status Place();
  absl::Status ResolveSymbols();
  absl::Status Relocate(const Elf64_Shdr& relocations);
  // Where symbol `i`'s slot and stub are in the image (slot_index_[i] >= 0).
  uint64_t SlotAddress(size_t i) const {
    return reinterpret_cast<uint64_t>(image_) + group_base_[static_cast<int>(Group::kReadOnly)] +
           slots_offset_ + static_cast<uint64_t>(slot_index_[i]) * kSlotBytes;
  }
  uint64_t StubAddress(size_t i) const {
    return reinterpret_cast<uint64_t>(image_) + group_base_[static_cast<int>(Group::kCode)] +
           stubs_offset_ + static_cast<uint64_t>(slot_index_[i]) * kStubBytes;
  }

  absl::string_view bytes_;
  absl::string_view name_;
  Elf64_Ehdr header_{};
  std::vector<Elf64_Shdr> sections_;
  std::vector<Placement> placements_;
  std::vector<Elf64_Sym> symbols_;
  uint32_t symbol_strings_ = 0;
  std::vector<uint64_t> addresses_;    // per symbol, once resolved
  std::vector<bool> resolved_;         // false: in a section not loaded, or weak and absent
  std::vector<int64_t> slot_index_;    // per symbol: its slot and stub, or -1
  std::vector<bool> referenced_;       // per symbol: used by a relocation of a loaded section
  int64_t slots_ = 0;
  uint64_t group_size_[3] = {0, 0, 0};
  uint64_t group_base_[3] = {0, 0, 0};
  uint64_t stubs_offset_ = 0;  // in the code group
  uint64_t slots_offset_ = 0;  // in the read-only group
  uint8_t* image_ = nullptr;
  size_t image_size_ = 0;
};

absl::StatusOr<absl::string_view> Linker::StringAt(uint32_t table, uint64_t offset) const {
  if (table >= sections_.size() || sections_[table].sh_type != SHT_STRTAB) {
    return Error(absl::StrCat("string table ", table, " is not one"));
  }
  const Elf64_Shdr& s = sections_[table];
  if (offset >= s.sh_size) return Error(absl::StrCat("string offset ", offset, " out of its table"));
  absl::string_view strings = bytes_.substr(s.sh_offset, s.sh_size);
  const size_t end = strings.find('\0', offset);
  if (end == absl::string_view::npos) return Error("unterminated string");
  return strings.substr(offset, end - offset);
}

absl::Status Linker::ReadHeaders() {
  if (!Read(0, &header_) || std::memcmp(header_.e_ident, ELFMAG, SELFMAG) != 0) {
    return Error("not an ELF file");
  }
  if (header_.e_ident[EI_CLASS] != ELFCLASS64 || header_.e_ident[EI_DATA] != ELFDATA2LSB) {
    return Error("not a 64-bit little-endian ELF file");
  }
  if (header_.e_type != ET_REL) return Error(absl::StrCat("ELF type ", header_.e_type, " is not a relocatable object"));
  if (header_.e_machine != EM_X86_64) {
    return Error(absl::StrCat("ELF machine ", header_.e_machine, " is not x86-64"));
  }
  if (header_.e_shentsize != sizeof(Elf64_Shdr) || header_.e_shnum == 0) {
    return Error("no section headers of the expected size");
  }
  sections_.resize(header_.e_shnum);
  for (uint16_t i = 0; i < header_.e_shnum; ++i) {
    if (!Read(header_.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), &sections_[i])) {
      return Error(absl::StrCat("section header ", i, " lies outside the file"));
    }
    const Elf64_Shdr& s = sections_[i];
    if (s.sh_type != SHT_NOBITS && s.sh_type != SHT_NULL &&
        (s.sh_offset > bytes_.size() || bytes_.size() - s.sh_offset < s.sh_size)) {
      return Error(absl::StrCat("section ", i, " lies outside the file"));
    }
    if (s.sh_addralign > 4096) return Error(absl::StrCat("section ", i, " wants alignment ", s.sh_addralign));
    if ((s.sh_flags & SHF_ALLOC) != 0) {
      if (s.sh_type == SHT_NULL) return Error(absl::StrCat("section ", i, " is allocated but of type NULL"));
      if (s.sh_size >= kMaxSectionBytes) return Error(absl::StrCat("section ", i, " of ", s.sh_size, " bytes"));
    }
  }
  return absl::OkStatus();
}

absl::Status Linker::ReadSymbols() {
  for (const Elf64_Shdr& s : sections_) {
    if (s.sh_type != SHT_SYMTAB) continue;
    if (!symbols_.empty()) return Error("two symbol tables");
    if (s.sh_entsize != sizeof(Elf64_Sym)) return Error("symbol table entries of an unknown size");
    symbols_.resize(s.sh_size / sizeof(Elf64_Sym));
    for (size_t i = 0; i < symbols_.size(); ++i) Read(s.sh_offset + i * sizeof(Elf64_Sym), &symbols_[i]);
    symbol_strings_ = s.sh_link;
  }
  return absl::OkStatus();
}

// Sections to load: allocated ones, except the unwind tables (nothing here
// registers them: a kernel never throws, and debuggers see the code as
// anonymous memory either way).
absl::Status Linker::Place() {
  placements_.resize(sections_.size());
  for (size_t i = 0; i < sections_.size(); ++i) {
    const Elf64_Shdr& s = sections_[i];
    if ((s.sh_flags & SHF_ALLOC) == 0 || s.sh_type == SHT_X86_64_UNWIND) continue;
    absl::StatusOr<absl::string_view> name = StringAt(header_.e_shstrndx, s.sh_name);
    if (!name.ok()) return name.status();
    if (*name == ".eh_frame") continue;
    if ((s.sh_flags & SHF_TLS) != 0) return Unsupported(absl::StrCat("thread-local section ", *name));
    if (s.sh_type == SHT_INIT_ARRAY || s.sh_type == SHT_FINI_ARRAY || s.sh_type == SHT_PREINIT_ARRAY ||
        *name == ".ctors" || *name == ".dtors") {
      return Unsupported(absl::StrCat("constructor or destructor section ", *name));
    }
    Placement& p = placements_[i];
    p.loaded = true;
    p.group = (s.sh_flags & SHF_EXECINSTR) != 0 ? Group::kCode
              : (s.sh_flags & SHF_WRITE) != 0  ? Group::kWritable
                                               : Group::kReadOnly;
    uint64_t& size = group_size_[static_cast<int>(p.group)];
    p.offset = AlignUp(size, s.sh_addralign);
    size = p.offset + s.sh_size;
  }
  // A slot for every symbol called or read through the GOT from outside the
  // image, or read through the GOT at all.
  slot_index_.assign(symbols_.size(), -1);
  referenced_.assign(symbols_.size(), false);
  for (size_t i = 0; i < sections_.size(); ++i) {
    const Elf64_Shdr& r = sections_[i];
    if (r.sh_type == SHT_REL) return Unsupported("REL relocations (without addends)");
    if (r.sh_type != SHT_RELA) continue;
    if (r.sh_info >= sections_.size()) {
      return Error(absl::StrCat("relocation section ", i, " applies to section ", r.sh_info));
    }
    if (!placements_[r.sh_info].loaded) continue;
    if (r.sh_entsize != sizeof(Elf64_Rela)) return Error("relocation entries of an unknown size");
    for (uint64_t k = 0; k < r.sh_size / sizeof(Elf64_Rela); ++k) {
      Elf64_Rela rela;
      Read(r.sh_offset + k * sizeof(Elf64_Rela), &rela);
      const uint64_t sym = ELF64_R_SYM(rela.r_info);
      const uint32_t type = ELF64_R_TYPE(rela.r_info);
      if (sym >= symbols_.size()) return Error(absl::StrCat("relocation against symbol ", sym, " of ", symbols_.size()));
      referenced_[sym] = true;
      const bool external = symbols_[sym].st_shndx == SHN_UNDEF;
      if ((IsGotRelocation(type) || (external && type == R_X86_64_PLT32)) && slot_index_[sym] < 0) {
        slot_index_[sym] = slots_++;
      }
    }
  }
  uint64_t& code = group_size_[static_cast<int>(Group::kCode)];
  stubs_offset_ = AlignUp(code, kStubBytes);
  code = stubs_offset_ + static_cast<uint64_t>(slots_) * kStubBytes;
  uint64_t& read_only = group_size_[static_cast<int>(Group::kReadOnly)];
  slots_offset_ = AlignUp(read_only, kSlotBytes);
  read_only = slots_offset_ + static_cast<uint64_t>(slots_) * kSlotBytes;

  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t total = 0;
  for (int g = 0; g < 3; ++g) {
    group_base_[g] = total;
    total += AlignUp(group_size_[g], page);
  }
  // Every displacement inside the image must fit in 32 bits.
  if (total >= (uint64_t{1} << 31)) return Error("image larger than 2 GiB");
  void* image = mmap(nullptr, total == 0 ? page : total, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (image == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot link kernel object ", name_, ": mmap of ", total, " bytes failed"));
  }
  image_ = static_cast<uint8_t*>(image);
  image_size_ = total == 0 ? page : total;
  for (size_t i = 0; i < sections_.size(); ++i) {
    const Placement& p = placements_[i];
    if (!p.loaded || sections_[i].sh_type == SHT_NOBITS) continue;  // mmap zeroed .bss
    std::memcpy(image_ + group_base_[static_cast<int>(p.group)] + p.offset,
                bytes_.data() + sections_[i].sh_offset, sections_[i].sh_size);
  }
  return absl::OkStatus();
}

absl::Status Linker::ResolveSymbols() {
  addresses_.assign(symbols_.size(), 0);
  resolved_.assign(symbols_.size(), false);
  for (size_t i = 1; i < symbols_.size(); ++i) {
    const Elf64_Sym& sym = symbols_[i];
    const unsigned binding = ELF64_ST_BIND(sym.st_info);
    const unsigned type = ELF64_ST_TYPE(sym.st_info);
    if (type == STT_TLS) return Unsupported(absl::StrCat("thread-local symbol ", SymbolName(i)));
    if (type == STT_GNU_IFUNC) return Unsupported(absl::StrCat("indirect function ", SymbolName(i)));
    if (sym.st_shndx == SHN_COMMON) return Unsupported(absl::StrCat("common symbol ", SymbolName(i)));
    if (sym.st_shndx == SHN_ABS) {
      addresses_[i] = sym.st_value;
      resolved_[i] = true;
    } else if (sym.st_shndx == SHN_UNDEF) {
      absl::StatusOr<absl::string_view> name = StringAt(symbol_strings_, sym.st_name);
      if (!name.ok()) return name.status();
      // Only what a relocation uses: compilers also list symbols they
      // need nothing from (GCC's _GLOBAL_OFFSET_TABLE_).
      if (name->empty() || !referenced_[i]) continue;
      void* address = dlsym(RTLD_DEFAULT, std::string(*name).c_str());
      if (address == nullptr && binding != STB_WEAK) {
        return absl::FailedPreconditionError(
            absl::StrCat("cannot link kernel object ", name_, ": undefined symbol ", *name));
      }
      addresses_[i] = reinterpret_cast<uint64_t>(address);
      resolved_[i] = address != nullptr || binding == STB_WEAK;
    } else if (sym.st_shndx < sections_.size() && sym.st_shndx < SHN_LORESERVE) {
      const Placement& p = placements_[sym.st_shndx];
      if (!p.loaded) continue;
      if (sym.st_value > sections_[sym.st_shndx].sh_size) {
        return Error(absl::StrCat("symbol ", SymbolName(i), " lies outside its section"));
      }
      addresses_[i] = reinterpret_cast<uint64_t>(image_) + group_base_[static_cast<int>(p.group)] +
                      p.offset + sym.st_value;
      resolved_[i] = true;
    } else {
      return Error(absl::StrCat("symbol ", SymbolName(i), " in section index ", sym.st_shndx));
    }
  }
  // Fill the slots and write the stubs: jmp *slot(%rip), padded with int3.
  for (size_t i = 0; i < symbols_.size(); ++i) {
    if (slot_index_[i] < 0) continue;
    const uint64_t slot = SlotAddress(i);
    const uint64_t stub = StubAddress(i);
    std::memcpy(reinterpret_cast<void*>(slot), &addresses_[i], sizeof(uint64_t));
    uint8_t jump[kStubBytes];
    std::memset(jump, 0xcc, sizeof(jump));
    jump[0] = 0xff;
    jump[1] = 0x25;
    const int32_t displacement = static_cast<int32_t>(static_cast<int64_t>(slot - (stub + 6)));
    std::memcpy(jump + 2, &displacement, sizeof(displacement));
    std::memcpy(reinterpret_cast<void*>(stub), jump, sizeof(jump));
  }
  return absl::OkStatus();
}

absl::Status Linker::Relocate(const Elf64_Shdr& r) {
  const Elf64_Shdr& target = sections_[r.sh_info];
  const Placement& p = placements_[r.sh_info];
  uint8_t* base = image_ + group_base_[static_cast<int>(p.group)] + p.offset;
  for (uint64_t k = 0; k < r.sh_size / sizeof(Elf64_Rela); ++k) {
    Elf64_Rela rela;
    Read(r.sh_offset + k * sizeof(Elf64_Rela), &rela);
    const uint64_t sym = ELF64_R_SYM(rela.r_info);
    const uint32_t type = ELF64_R_TYPE(rela.r_info);
    if (type == R_X86_64_NONE) continue;
    const uint64_t width = (type == R_X86_64_64 || type == R_X86_64_PC64) ? 8 : 4;
    if (rela.r_offset > target.sh_size || target.sh_size - rela.r_offset < width) {
      return Error(absl::StrCat("relocation ", k, " of section ", r.sh_info, " lies outside it"));
    }
    if (target.sh_type == SHT_NOBITS) return Error("relocation in a section without contents");
    if (sym != 0 && !resolved_[sym]) {
      return Error(absl::StrCat("relocation against ", SymbolName(sym), ", which is not loaded"));
    }
    uint8_t* at = base + rela.r_offset;
    const uint64_t place = reinterpret_cast<uint64_t>(at);
    uint64_t s = addresses_[sym];
    const int64_t a = rela.r_addend;
    auto put32 = [&](int64_t v, bool is_signed) -> absl::Status {
      const bool fits = is_signed ? (v >= INT32_MIN && v <= INT32_MAX) : (v >= 0 && v <= UINT32_MAX);
      if (!fits) {
        return Error(absl::StrCat("relocation ", k, " (type ", type, ") of section ", r.sh_info,
                                  " against ", SymbolName(sym), " does not fit in 32 bits"));
      }
      const uint32_t bits = static_cast<uint32_t>(v);
      std::memcpy(at, &bits, sizeof(bits));
      return absl::OkStatus();
    };
    absl::Status st;
    switch (type) {
      case R_X86_64_64: {
        const uint64_t v = s + static_cast<uint64_t>(a);
        std::memcpy(at, &v, sizeof(v));
        break;
      }
      case R_X86_64_PC64: {
        const uint64_t v = s + static_cast<uint64_t>(a) - place;
        std::memcpy(at, &v, sizeof(v));
        break;
      }
      case R_X86_64_PLT32:
        if (slot_index_[sym] >= 0) s = StubAddress(sym);
        [[fallthrough]];
      case R_X86_64_PC32:
        st = put32(static_cast<int64_t>(s + static_cast<uint64_t>(a) - place), true);
        break;
      case R_X86_64_GOTPCREL:
      case R_X86_64_GOTPCRELX:
      case R_X86_64_REX_GOTPCRELX: {
        st = put32(static_cast<int64_t>(SlotAddress(sym) + static_cast<uint64_t>(a) - place), true);
        break;
      }
      case R_X86_64_32:
        st = put32(static_cast<int64_t>(s + static_cast<uint64_t>(a)), false);
        break;
      case R_X86_64_32S:
        st = put32(static_cast<int64_t>(s + static_cast<uint64_t>(a)), true);
        break;
      default:
        return Unsupported(absl::StrCat("relocation type ", type, " in section ", r.sh_info));
    }
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status Linker::Run(absl::flat_hash_map<std::string, void*>& symbols_out,
                         std::vector<LoadedObject::Function>& functions_out, void*& image,
                         size_t& size) {
  absl::Status st = ReadHeaders();
  if (st.ok()) st = ReadSymbols();
  if (st.ok()) st = Place();
  if (st.ok()) st = ResolveSymbols();
  for (size_t i = 0; st.ok() && i < sections_.size(); ++i) {
    const Elf64_Shdr& r = sections_[i];
    if (r.sh_type == SHT_RELA && r.sh_info < sections_.size() && placements_[r.sh_info].loaded) {
      st = Relocate(r);
    }
  }
  for (size_t i = 1; st.ok() && i < symbols_.size(); ++i) {
    const Elf64_Sym& sym = symbols_[i];
    const unsigned binding = ELF64_ST_BIND(sym.st_info);
    if (sym.st_shndx == SHN_UNDEF || !resolved_[i]) continue;
    if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size > 0 && sym.st_shndx != SHN_ABS) {
      functions_out.push_back(LoadedObject::Function{
          SymbolName(i), reinterpret_cast<const void*>(addresses_[i]), sym.st_size});
    }
    if (binding != STB_GLOBAL && binding != STB_WEAK) continue;
    absl::StatusOr<absl::string_view> name = StringAt(symbol_strings_, sym.st_name);
    if (!name.ok()) {
      st = name.status();
    } else {
      symbols_out[std::string(*name)] = reinterpret_cast<void*>(addresses_[i]);
    }
  }
  // Code becomes executable, constants and slots read-only, writable data
  // stays writable: no page is both writable and executable.
  const int protections[3] = {PROT_READ | PROT_EXEC, PROT_READ, PROT_READ | PROT_WRITE};
  for (int g = 0; st.ok() && g < 3; ++g) {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t bytes = AlignUp(group_size_[g], page);
    if (bytes > 0 && mprotect(image_ + group_base_[g], bytes, protections[g]) != 0) {
      st = absl::InternalError(absl::StrCat("cannot link kernel object ", name_, ": mprotect failed"));
    }
  }
  if (!st.ok()) {
    if (image_ != nullptr) munmap(image_, image_size_);
    return st;
  }
  image = image_;
  size = image_size_;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<LoadedObject>> LoadedObject::Link(absl::string_view bytes,
                                                                 absl::string_view name) {
  absl::flat_hash_map<std::string, void*> symbols;
  std::vector<Function> functions;
  void* image = nullptr;
  size_t size = 0;
  Linker linker(bytes, name);
  absl::Status linked = linker.Run(symbols, functions, image, size);
  if (!linked.ok()) return linked;
  std::unique_ptr<LoadedObject> object(new LoadedObject(image, size));
  object->symbols_ = std::move(symbols);
  object->functions_ = std::move(functions);
  return object;
}

LoadedObject::~LoadedObject() {
  if (image_ != nullptr) munmap(image_, size_);
}

void* LoadedObject::Symbol(absl::string_view name) const {
  auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : it->second;
}

}  // namespace sharc::codegen
