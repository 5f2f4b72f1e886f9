// The DPI imports of uscope_pkg as the C headers declare them: libuscope's
// (uscope.h, protocols.h) and the bridge's (uscope_dpi.h). A name the package
// imports that no header declares fails to compile here.
#include "uscope/protocols.h"
#include "uscope/uscope.h"
#include "uscope/uscope_dpi.h"

#include "sig.hpp"

namespace drift {
Table c_side() {
  return {
#define USCOPE_DPI_IMPORT(name) {#name, signature<decltype(name)>()},
#include "imports.inc"
#undef USCOPE_DPI_IMPORT
  };
}
}  // namespace drift
