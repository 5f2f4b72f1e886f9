// uscope view (tools/cmd_view.cpp, tools/view_page.cpp), run as a program: the static page's
// embedded data (its command count is the analysis layer's, "</" escaped, no external load),
// the messages for bad input, and the server's answers over a socket (200, 400, 404, 431),
// including that it keeps answering after bad requests. The page's drawing is tested in a
// browser (tests/browser, ctest view_browser); these tests also run under ASan.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uscope/convert.h>

#include <fstream>
#include <sstream>
#include <string>

#include "support/cli_run.hpp"
#include "support/test_util.hpp"

extern char **environ;

namespace {

using uscope::test::run_cli;
using uscope::test::TempDir;

// Three commands (one with a cmd_type that tries to close the page's <script>), each with a TE
// job; an IRQ. Converted to .uscope by the library.
std::string write_npu(const TempDir &dir) {
  const std::string jsonl = dir.file("npu.jsonl"), out = dir.file("npu.uscope");
  std::ofstream f(jsonl);
  for (int c = 0; c < 3; ++c) {
    const int t = 10 + 20 * c;
    f << R"({"event_type":"CMD_ENQUEUE","t_cycle":)" << t << R"(,"cmd_id":)" << c
      << R"(,"cmd_type":")" << (c == 1 ? "</script><b>x" : "MATMUL")
      << R"(","source":"ISA","token":)" << c << R"(,"desc_addr":4096,"layer_id":0,"block_id":0,"phase":"MLP"})"
      << "\n";
    f << R"({"event_type":"CMD_START","t_cycle":)" << t + 2 << R"(,"cmd_id":)" << c << "}\n";
    f << R"({"event_type":"TE_START","t_cycle":)" << t + 3 << R"(,"job_id":)" << c << R"(,"cmd_id":)" << c
      << R"(,"m":8,"n":8,"k":8,"tile_m":8,"tile_n":8,"tile_k":8})" << "\n";
    f << R"({"event_type":"TE_END","t_cycle":)" << t + 9 << R"(,"job_id":)" << c << R"(,"cmd_id":)" << c
      << R"(,"mac_count":512,"latency_cycles":6})" << "\n";
    f << R"({"event_type":"CMD_END","t_cycle":)" << t + 10 << R"(,"cmd_id":)" << c << R"(,"status":"OK"})" << "\n";
  }
  f << R"({"event_type":"IRQ_EMIT","t_cycle":75,"cmd_id":2,"token":2,"irq_line":1})" << "\n";
  f.close();
  EXPECT_EQ(uscope_convert(nullptr, jsonl.c_str(), USCOPE_CONVERT_JSONL, out.c_str(), USCOPE_CONVERT_USCOPE, nullptr),
            USCOPE_OK)
      << uscope_last_error();
  return out;
}

std::string read_text(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The JSON between the data <script>'s tags.
std::string page_data(const std::string &page) {
  const std::string open = "id=\"uscope-data\" data-mode=\"static\">";
  const size_t a = page.find(open);
  if (a == std::string::npos) return "";
  const size_t b = page.find("</script>", a);
  return page.substr(a + open.size(), b - a - open.size());
}

TEST(CliView, StaticPageEmbedsTheAnalysisAndEscapesScriptEnds) {
  TempDir dir;
  const std::string trace = write_npu(dir), html = dir.file("out.html");
  const auto r = run_cli("view " + trace + " -o " + html, true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string page = read_text(html);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("</script><b>x"), std::string::npos) << "a trace string closed the data <script>";
  const std::string data = page_data(page);
  ASSERT_FALSE(data.empty());
  simdjson::dom::parser p;
  simdjson::dom::element d;
  ASSERT_EQ(p.parse(data).get(d), simdjson::SUCCESS);
  EXPECT_TRUE(d["cpu"].is_null());
  EXPECT_EQ(uint64_t(d["npu"]["commands"]), 3u);
  EXPECT_EQ(uint64_t(d["npu"]["analyze"]["npu"]["command_latency"]["count"]), 3u);
  EXPECT_EQ(d["npu"]["events"].get_array().size(), 16u);
  bool found = false;
  for (auto e : d["npu"]["events"].get_array()) {
    std::string_view type = e["type"];
    if (type == "cmd_enqueue" && std::string_view(e["fields"]["cmd_type"]) == "</script><b>x") found = true;
  }
  EXPECT_TRUE(found) << "the escaped string does not read back whole";
  std::string_view note = d["notes"].at(0);
  EXPECT_NE(note.find("no cpu protocol scope"), std::string_view::npos);
  EXPECT_EQ(uint64_t(d["window"]["start"]), 0u);
}

TEST(CliView, RangeIsTheWindow) {
  TempDir dir;
  const std::string trace = write_npu(dir), html = dir.file("r.html");
  ASSERT_EQ(run_cli("view " + trace + " --range 25:45 -o " + html, true).exit_code, 0);
  simdjson::dom::parser p;
  simdjson::dom::element d;
  ASSERT_EQ(p.parse(page_data(read_text(html))).get(d), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(d["window"]["start"]), 25u);
  EXPECT_EQ(uint64_t(d["window"]["end"]), 45u);
  EXPECT_EQ(uint64_t(d["npu"]["commands"]), 1u);  // cmd 1 ends at 40; cmd 0 at 20, cmd 2 at 60
}

TEST(CliView, BadInputGivesAClearMessage) {
  TempDir dir;
  const std::string trace = write_npu(dir);
  auto r = run_cli("view " + dir.file("missing.uscope") + " -o " + dir.file("a.html"), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("cannot open"), std::string::npos) << r.out;
  r = run_cli("view " + dir.file("npu.jsonl") + " -o " + dir.file("a.html"), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("not a uscope file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("uscope convert"), std::string::npos) << r.out;
  r = run_cli("view " + trace + " --range 9:3 -o " + dir.file("a.html"), true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  r = run_cli("view " + trace + " --range 5000:6000 -o " + dir.file("a.html"), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("past the trace's last cycle"), std::string::npos) << r.out;
  r = run_cli("view " + trace + " --serve -o " + dir.file("a.html"), true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_FALSE(std::ifstream(dir.file("a.html")).good()) << "a failed view wrote its page";
}

// `uscope view TRACE --serve --port 0`, its port read from its first line.
class Server {
 public:
  explicit Server(const std::string &trace) {
    int fds[2];
    if (pipe(fds) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::string a0 = USCOPE_CLI, a1 = "view", a3 = "--serve", a4 = "--port", a5 = "0";
    std::string a2 = trace;
    char *argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), a5.data(), nullptr};
    if (posix_spawn(&pid_, USCOPE_CLI, &fa, nullptr, argv, environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    std::string line;
    char c;
    while (line.find('\n') == std::string::npos && read(fds[0], &c, 1) == 1) line.push_back(c);
    close(fds[0]);
    const size_t at = line.find("http://127.0.0.1:");
    if (at != std::string::npos) port_ = std::stoi(line.substr(at + 17));
  }
  ~Server() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int st = 0;
      waitpid(pid_, &st, 0);
    }
  }
  int port() const { return port_; }
  bool alive() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

  // One request: the status code and the body.
  std::pair<int, std::string> get(const std::string &request) const {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
      close(fd);
      return {-1, ""};
    }
    (void)!write(fd, request.data(), request.size());
    std::string resp;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) resp.append(buf, static_cast<size_t>(n));
    close(fd);
    if (resp.size() < 12) return {-1, resp};
    const size_t body = resp.find("\r\n\r\n");
    return {std::stoi(resp.substr(9, 3)), body == std::string::npos ? "" : resp.substr(body + 4)};
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

TEST(CliView, ServerAnswersAndRefusesBadRequests) {
  TempDir dir;
  const std::string trace = write_npu(dir);
  Server s(trace);
  ASSERT_GT(s.port(), 0);
  auto r = s.get("GET /api/view?range=25:45 HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(r.first, 200) << r.second;
  simdjson::dom::parser p;
  simdjson::dom::element d;
  ASSERT_EQ(p.parse(r.second).get(d), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(d["npu"]["commands"]), 1u);
  for (const char *bad : {"/api/view?range=x", "/api/view?range=9:3", "/api/view?range=1:2&file=/etc/passwd",
                          "/api/view?trace=../../etc/passwd", "/api/view?range=5000:6000", "/?x=1"}) {
    r = s.get(std::string("GET ") + bad + " HTTP/1.1\r\n\r\n");
    EXPECT_EQ(r.first, 400) << bad << ": " << r.second;
    EXPECT_NE(r.second.find("\"error\""), std::string::npos) << bad;
  }
  EXPECT_EQ(s.get("GET /etc/passwd HTTP/1.1\r\n\r\n").first, 404);
  EXPECT_EQ(s.get("DELETE / HTTP/1.1\r\n\r\n").first, 405);
  EXPECT_EQ(s.get("garbage\r\n\r\n").first, 400);
  EXPECT_EQ(s.get("GET / HTTP/1.1\r\nX: " + std::string(10000, 'a') + "\r\n\r\n").first, 431);
  r = s.get("GET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(r.first, 200);
  EXPECT_NE(r.second.find("data-mode=\"serve\""), std::string::npos);
  EXPECT_TRUE(s.alive());
}

}  // namespace
