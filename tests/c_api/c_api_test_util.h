// Helpers for the C API tests: owning wrappers for the C handles and
// assertions that print the error's message when a call fails.
#pragma once

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include <sharc/sharc_c.h>

namespace sharc::c_api_test {

struct Deleter {
  void operator()(sharc_error* e) const { sharc_error_free(e); }
  void operator()(sharc_module* m) const { sharc_module_free(m); }
  void operator()(sharc_builder* b) const { sharc_builder_free(b); }
  void operator()(sharc_options* o) const { sharc_options_free(o); }
  void operator()(sharc_program* p) const { sharc_program_free(p); }
  void operator()(sharc_result* r) const { sharc_result_free(r); }
  void operator()(sharc_report* r) const { sharc_report_free(r); }
  void operator()(char* s) const { sharc_string_free(s); }
};
template <typename T>
using Owned = std::unique_ptr<T, Deleter>;

// The message of `error` ("" for success); releases the error.
inline std::string Message(sharc_error* error) {
  Owned<sharc_error> owned(error);
  return sharc_error_message(error);
}

// A failed call fails the test with the call's message.
#define SHARC_ASSERT_OK(call)                                                    \
  do {                                                                           \
    ::sharc::c_api_test::Owned<sharc_error> sharc_error_(call);                  \
    ASSERT_EQ(sharc_error_.get(), nullptr) << sharc_error_message(sharc_error_.get()); \
  } while (false)

inline Owned<sharc_module> ParseOrDie(const char* text) {
  sharc_module* module = nullptr;
  Owned<sharc_error> error(sharc_module_parse(text, "test.hlo", &module));
  EXPECT_EQ(error, nullptr) << sharc_error_message(error.get());
  return Owned<sharc_module>(module);
}

inline std::string PrintModule(const sharc_module* module) {
  char* text = nullptr;
  Owned<sharc_error> error(sharc_module_print(module, &text));
  EXPECT_EQ(error, nullptr) << sharc_error_message(error.get());
  Owned<char> owned(text);
  return text != nullptr ? std::string(text) : std::string();
}

}  // namespace sharc::c_api_test
