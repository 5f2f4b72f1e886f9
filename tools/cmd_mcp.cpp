// uscope mcp --trace FILE [--log]: the MCP server (mcp_server.hpp) on stdin /
// stdout, for an AI assistant to ask questions of one trace. The same server
// is installed as the `uscope-mcp` program (mcp_main.cpp).
#include <memory>
#include <string>

#include "cli_command.hpp"
#include "mcp_server.hpp"

namespace uscope_cli {
namespace {

class Mcp final : public Command {
 public:
  Mcp() : Command("mcp", "serve a trace to an AI assistant: the Model Context Protocol over stdio (JSON-RPC 2.0)") {}
  int run() override { return mcp::run_stdio_server(trace_, log_); }

 private:
  void add_options(CLI::App &sub) override {
    sub.add_option("--trace", trace_, "trace file (.uscope)")->required();
    sub.add_flag("--log", log_, "log every message in and out on stderr");
  }
  std::string trace_;
  bool log_ = false;
};

}  // namespace

std::unique_ptr<Command> mcp_command() { return std::make_unique<Mcp>(); }

}  // namespace uscope_cli
