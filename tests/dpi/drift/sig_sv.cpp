// The DPI imports of uscope_pkg as Verilator declares them (generated __Dpi.h).
#include USCOPE_DPI_GENERATED_HEADER

#include "sig.hpp"

namespace drift {
Table sv_side() {
  return {
#define USCOPE_DPI_IMPORT(name) {#name, signature<decltype(name)>()},
#include "imports.inc"
#undef USCOPE_DPI_IMPORT
  };
}
}  // namespace drift
