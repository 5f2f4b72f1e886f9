#include "base/status.hpp"

namespace uscope {

const char *status_name(uscope_status_t s) noexcept {
  switch (s) {
    case USCOPE_OK: return "ok";
    case USCOPE_ERR_INVALID_ARGUMENT: return "invalid argument";
    case USCOPE_ERR_NO_MEMORY: return "out of memory";
    case USCOPE_ERR_IO: return "I/O error";
    case USCOPE_ERR_SCHEMA: return "invalid schema";
    case USCOPE_ERR_LIMIT: return "format limit exceeded";
    case USCOPE_ERR_BAD_STATE: return "call out of order";
    case USCOPE_ERR_TIME_BACKWARDS: return "time went backwards";
    case USCOPE_ERR_UNKNOWN_STORAGE: return "unknown storage id";
    case USCOPE_ERR_UNKNOWN_SLOT: return "slot index out of range";
    case USCOPE_ERR_UNKNOWN_FIELD: return "field index out of range";
    case USCOPE_ERR_UNKNOWN_PROPERTY: return "property index out of range";
    case USCOPE_ERR_UNKNOWN_EVENT: return "unknown event type id";
    case USCOPE_ERR_PAYLOAD_SIZE: return "event payload size differs from the schema";
    case USCOPE_ERR_VALUE_RANGE: return "value does not fit the field type";
    case USCOPE_ERR_DATA_DROPPED: return "cycles were dropped under backpressure";
    case USCOPE_ERR_INTERNAL: return "internal error";
    case USCOPE_ERR_UNSUPPORTED: return "unsupported";
    case USCOPE_ERR_CORRUPT: return "corrupt file";
    case USCOPE_ERR_TRUNCATED: return "truncated file";
    case USCOPE_ERR_BAD_MAGIC: return "not a uscope file";
    case USCOPE_ERR_UNSUPPORTED_VERSION: return "unsupported file-format version";
    case USCOPE_ERR_UNKNOWN_COMPRESSION: return "unknown compression method";
    case USCOPE_ERR_NOT_FOUND: return "not found";
    case USCOPE_ERR_CHECKSUM: return "checksum mismatch";
    case USCOPE_ERR_BAD_HEADER: return "invalid file header";
    case USCOPE_ERR_BAD_UTF8: return "invalid UTF-8 string";
    case USCOPE_ERR_DUPLICATE: return "name already defined";
    case USCOPE_ERR_AMBIGUOUS: return "name is ambiguous";
    case USCOPE_ERR_NONCONFORMING: return "file follows a known non-conforming writer (strict read)";
    case USCOPE_DONE: return "done (no more items)";
    default: return "unknown status";
  }
}

}  // namespace uscope
