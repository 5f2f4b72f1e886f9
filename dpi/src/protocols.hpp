// Protocol declarations from SV arguments (protocols.cpp).
#pragma once

#include "bridge.hpp"
#include "schema.hpp"

namespace uscope_dpi {

/** Declare on s; returns libuscope's protocol handle. Throws Failure. */
void *cpu_declare(Schema &s, const CpuArgs &a);
void *noc_declare(Schema &s, const NocArgs &a);
void *npu_declare(Schema &s, const NpuArgs &a);

}  // namespace uscope_dpi
