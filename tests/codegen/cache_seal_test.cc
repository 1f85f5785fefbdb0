// The kernel cache's trailer (codegen/cache_seal.h): a sealed file gives its
// bytes back, and any damage is DataLoss.
#include "codegen/cache_seal.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

class CacheSealTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/sharc_seal_test_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return absl::StrCat(dir_, "/", name); }
  std::string dir_;
};

TEST_F(CacheSealTest, SealedBytesComeBack) {
  // Lengths around the checksum's 8-byte words, and empty.
  for (const size_t n : {0, 1, 7, 8, 9, 4096, 4099}) {
    std::string bytes(n, '\0');
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>(i * 37 + 11);
    const std::string path = Path(absl::StrCat("f", n));
    ASSERT_OK(WriteSealedFile(path, bytes));
    EXPECT_EQ(std::filesystem::file_size(path), n + 24);
    ASSERT_OK_AND_ASSIGN(std::string back, ReadSealedFile(path));
    EXPECT_EQ(back, bytes) << n;
  }
}

// A leftover file at the path (a killed writer's) is replaced, not extended.
TEST_F(CacheSealTest, WritingReplacesWhatWasThere) {
  const std::string path = Path("k.o");
  std::ofstream(path, std::ios::binary) << std::string(5000, 'z');
  ASSERT_OK(WriteSealedFile(path, "object"));
  EXPECT_EQ(std::filesystem::file_size(path), 6u + 24u);
  ASSERT_OK_AND_ASSIGN(std::string back, ReadSealedFile(path));
  EXPECT_EQ(back, "object");
}

TEST_F(CacheSealTest, EveryDamageIsDataLoss) {
  // Not a multiple of 8: the checksum's tail bytes count too.
  std::string bytes(1003, 'x');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 251);
  const std::string path = Path("k.o");
  ASSERT_OK(WriteSealedFile(path, bytes));
  std::ifstream in(path, std::ios::binary);
  const std::string sealed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_OK(Unseal(sealed, "k.o").status());
  // A changed bit: every 13th byte of the body, every byte of the trailer.
  for (size_t at = 0; at < sealed.size(); at += at + 24 < sealed.size() ? 13 : 1) {
    std::string changed = sealed;
    changed[at] = static_cast<char>(changed[at] ^ 0x04);
    EXPECT_EQ(Unseal(changed, "k.o").status().code(), absl::StatusCode::kDataLoss) << at;
  }
  // Any lost tail, and an object that was never sealed.
  for (size_t n = 0; n < sealed.size(); n += 17) {
    EXPECT_EQ(Unseal(sealed.substr(0, n), "k.o").status().code(), absl::StatusCode::kDataLoss) << n;
  }
  absl::Status unsealed = Unseal(bytes, "k.o").status();
  EXPECT_EQ(unsealed.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(unsealed.message().find("k.o"), std::string::npos) << unsealed;
  EXPECT_EQ(ReadSealedFile(absl::StrCat(dir_, "/missing.o")).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace sharc::codegen
