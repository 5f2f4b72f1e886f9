// The `uscope-mcp` program: `uscope-mcp --trace FILE [--log]`, the MCP server
// of `uscope mcp` (mcp_server.hpp) as a program of its own, for the
// assistants' settings that name one (README: "Use it from an AI assistant").
#include <CLI/CLI.hpp>
#include <uscope/uscope.h>

#include <string>

#include "mcp_server.hpp"

int main(int argc, char **argv) {
  CLI::App app{"MCP server for µScope trace inspection (libuscope " + std::string(uscope_version_string()) +
                   "): the Model Context Protocol over stdio",
               "uscope-mcp"};
  app.set_version_flag("--version", std::string("uscope-mcp ") + uscope_version_string());
  std::string trace;
  bool log = false;
  app.add_option("--trace", trace, "trace file (.uscope)")->required();
  app.add_flag("--log", log, "log every message in and out on stderr");
  app.failure_message([](const CLI::App *, const CLI::Error &e) {
    return std::string("uscope-mcp: ") + e.what() + "\nRun with --help for more information.\n";
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return uscope_cli::mcp::run_stdio_server(trace, log);
}
