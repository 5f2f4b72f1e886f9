// FNV-1a 64: the digest the conformance corpus uses to compare decoded
// content between writers (../shared/conformance/README.md).
#pragma once

#include <cstddef>
#include <cstdint>

namespace uscope {

inline constexpr uint64_t kFnv64Offset = 0xcbf29ce484222325ull;
uint64_t fnv1a64(const void *data, size_t n, uint64_t h = kFnv64Offset);

}  // namespace uscope
