// The MCP server of `uscope mcp --trace FILE` (cmd_mcp.cpp) and of the
// `uscope-mcp --trace FILE` program (mcp_main.cpp): the Model Context
// Protocol over stdio, JSON-RPC 2.0 with one message per line, whose tools
// answer questions about one trace through the public C API (uscope.h,
// analysis.h, convert.h). A class on streams, so that the unit tests run it
// in-process (tests/unit/test_mcp_server.cpp) and the SDK client test
// (tests/mcp/) spawns the program.
//
// Protocol (MCP 2025-06-18, negotiating 2025-03-26 and 2024-11-05):
// initialize, notifications/initialized, ping, tools/list, tools/call.
//  - A malformed line is answered -32700 (id null) and the server goes on
//    reading; a message that is not an object, lacks jsonrpc "2.0" or a
//    method, or has an id that is neither a string nor a number is -32600;
//    a batch (a JSON array, removed by 2025-06-18) is -32600 too; an unknown
//    method with an id -32601; tools/call without a tool name -32602.
//  - A notification (no id) is never answered, nor is a malformed message
//    without an id or a response (the server sends no requests): both are
//    logged on stderr.
//  - A tool's failure (an unknown tool, entity, counter or buffer, a bad
//    argument, a trace without a cpu scope) is a tool result with isError
//    and a message, never a JSON-RPC error, so that the assistant reads it.
//  - A result is one JSON object, both as text (content[0].text) and as
//    structuredContent. Its text is at most max_text_bytes (256 KiB): tools
//    that return lists take limit / offset and say "truncated": true with
//    "next_offset"; an answer over the cap otherwise is refused (isError)
//    with a hint to ask for less.
//  - stdout carries the protocol only; logging goes to stderr.
#pragma once

#include <uscope/analysis.h>
#include <uscope/uscope.h>

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli_common.hpp"

namespace uscope_cli::mcp {

// Protocol revisions this server speaks, newest first: the answer to an
// initialize that asks for another is the first.
inline constexpr const char *kProtocolVersions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};
inline constexpr size_t kMaxTextBytes = 256 * 1024;

// A tool's failure: a result with isError and this text.
struct ToolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args;     // the arguments of one tools/call (mcp_server.cpp)
class Session;  // the open trace, its cpu analysis if it has a cpu scope

// One tool: its name, what it does (for the assistant), the JSON Schema of its
// arguments (JSON text), and the handler, which writes one JSON object to out
// or throws ToolError. A new tool is one entry in the table (mcp_server.cpp).
struct Tool {
  const char *name;
  const char *description;
  std::string input_schema;
  void (*run)(Session &s, const Args &args, Json &out);
};
// The tools, in the order tools/list gives them.
const std::vector<Tool> &tools();

class Server {
 public:
  struct Options {
    size_t max_text_bytes = kMaxTextBytes;  // the cap of one tool answer's text
    bool log_messages = false;              // every message in and out on stderr
  };
  // Opens the trace, and its cpu analysis when it has a cpu scope. Throws
  // Failure when the file is no readable trace.
  Server(const std::string &trace_path, Options opts);
  explicit Server(const std::string &trace_path);
  ~Server();
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;

  // Answers each line of in (one JSON-RPC message each) on out, one line
  // per answer, flushed, until in ends.
  void serve(std::istream &in, std::ostream &out);
  // The answer to one message, without its newline; "" for none (a
  // notification, a blank line).
  std::string handle(std::string_view line);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs the server on stdin / stdout (`uscope mcp`, `uscope-mcp`): the exit
// status, 1 when the trace cannot be opened (the message on stderr).
int run_stdio_server(const std::string &trace_path, bool log_messages);

}  // namespace uscope_cli::mcp
