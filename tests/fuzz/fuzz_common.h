// Shared by the libFuzzer harnesses (tests/fuzz/README.md): every reader of outside bytes
// must either succeed or throw attnkit::Error; anything else (a crash, a sanitizer report,
// another exception, an allocation beyond libFuzzer's -rss_limit_mb) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "attnkit/core/error.h"

#define ATTNKIT_FUZZ_TARGET(...)                                             \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {  \
    const std::string_view bytes(reinterpret_cast<const char*>(data), size); \
    try {                                                                    \
      __VA_ARGS__;                                                           \
    } catch (const attnkit::Error&) {                                        \
    }                                                                        \
    return 0;                                                                \
  }
