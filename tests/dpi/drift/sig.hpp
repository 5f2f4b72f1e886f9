// An ABI description of a C function type, e.g. "i32(ptr,u16,u16,u16,u64)":
// sizes and integer / pointer classes, which is what a DPI call depends on.
// Type names do not matter (unsigned long long vs uint64_t, void * vs
// uscope_writer_t *), except that strings stay distinct from other pointers
// and a pointer to an integer (an output argument) names the integer.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace drift {

template <class T>
std::string describe() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_void_v<U>) {
    return "void";
  } else if constexpr (std::is_pointer_v<U>) {
    using P = std::remove_cv_t<std::remove_pointer_t<U>>;
    if constexpr (std::is_same_v<P, char>) return "str";
    else if constexpr (std::is_integral_v<P>) return "ptr<" + describe<P>() + ">";
    else return "ptr";
  } else if constexpr (std::is_same_v<U, bool>) {
    return "bool";
  } else if constexpr (std::is_enum_v<U>) {
    return describe<std::underlying_type_t<U>>();
  } else if constexpr (std::is_integral_v<U>) {
    return (std::is_signed_v<U> ? "i" : "u") + std::to_string(8 * sizeof(U));
  } else if constexpr (std::is_floating_point_v<U>) {
    return "f" + std::to_string(8 * sizeof(U));
  } else {
    return "?";
  }
}

template <class F>
struct Signature;
template <class R, class... A>
struct Signature<R(A...)> {
  static std::string str() {
    std::string s = describe<R>() + "(";
    ((s += describe<A>() + ","), ...);
    if (sizeof...(A)) s.pop_back();
    return s + ")";
  }
};

// decltype(f) only: nothing is called or linked.
template <class F>
std::string signature() {
  return Signature<F>::str();
}

using Table = std::vector<std::pair<std::string, std::string>>;

// Every DPI import of uscope_pkg, described from Verilator's generated header
// (sig_sv.cpp) and from the C headers, uscope.h + protocols.h + uscope_dpi.h
// (sig_c.cpp). Same order: both expand imports.inc.
Table sv_side();
Table c_side();

}  // namespace drift
