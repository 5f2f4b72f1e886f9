// uscope view TRACE [-o report.html] [--range A:B] [--serve [--port P]]: the
// trace in a web page (docs/view.md). Static mode writes one self-contained
// HTML file, the data embedded (view_page.hpp); serve mode answers the same
// page and a JSON API for other windows on 127.0.0.1, one request at a time,
// with plain POSIX sockets.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "cli_command.hpp"
#include "cli_cpu.hpp"
#include "view_page.hpp"

namespace uscope_cli {
namespace {

// The longest request head the server reads; more is answered 431 unread.
constexpr size_t kMaxRequest = 8192;

// "trace.uscope" of "dir/trace.uscope": what the page calls the trace (a
// page attached to a bug report should not carry the sender's directories).
std::string base_name(const std::string &path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void send_all(int fd, const std::string &s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the client left: nothing to tell it
    off += static_cast<size_t>(n);
  }
}

void respond(int fd, int code, const char *reason, const char *type, const std::string &body) {
  std::string head = "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Type: " + type +
                     "\r\nContent-Length: " + std::to_string(body.size()) +
                     "\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n";
  send_all(fd, head + body);
}

std::string error_json(const std::string &message) {
  std::string out;
  Json j(&out);
  j.begin_object();
  j.field("error", message);
  j.end_object();
  return out;
}

// %XX and '+' of a query value.
std::string url_decode(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') out.push_back(' ');
    else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
             std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else out.push_back(s[i]);
  }
  return out;
}

class Server {
 public:
  Server(const Trace &t, std::string label, std::string page) : t_(t), label_(std::move(label)), page_(std::move(page)) {}

  // One request: read its head, answer, close. Every error is an answer.
  void serve_one(int fd) {
    std::string req;
    char buf[2048];
    for (;;) {
      const size_t head_end = req.find("\r\n\r\n");
      if (head_end != std::string::npos && head_end <= kMaxRequest) break;
      if (req.size() > kMaxRequest) {
        respond(fd, 431, "Request Header Fields Too Large", "application/json",
                error_json("request head longer than 8192 bytes"));
        // Read (a bounded amount of) what the client still sends before closing: closing with
        // unread input resets the connection, and the client would lose the answer.
        ::shutdown(fd, SHUT_WR);
        for (size_t drained = 0; drained < 1024 * 1024;) {
          const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
          if (n <= 0) break;
          drained += static_cast<size_t>(n);
        }
        return;
      }
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      req.append(buf, static_cast<size_t>(n));
    }
    const std::string line = req.substr(0, req.find("\r\n"));  // METHOD TARGET VERSION
    const size_t sp1 = line.find(' '), sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string::npos) return bad(fd, "malformed request line");
    const std::string method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    if (method != "GET") return respond(fd, 405, "Method Not Allowed", "application/json", error_json("only GET"));
    const size_t q = target.find('?');
    const std::string path = target.substr(0, q), query = q == std::string::npos ? "" : target.substr(q + 1);
    try {
      if (path == "/" || path == "/index.html") {
        if (!query.empty()) return bad(fd, "the page takes no parameters; the API is /api/view?range=A:B");
        return respond(fd, 200, "OK", "text/html; charset=utf-8", page_);
      }
      if (path == "/api/view") return respond(fd, 200, "OK", "application/json", api_view(query));
      respond(fd, 404, "Not Found", "application/json",
              error_json("no such resource: " + path + " (the server answers /, /api/view)"));
    } catch (const Usage &e) {
      bad(fd, e.what());
    } catch (const Failure &e) {
      bad(fd, e.what());
    } catch (const std::exception &e) {
      respond(fd, 500, "Internal Server Error", "application/json", error_json(e.what()));
    }
  }

 private:
  void bad(int fd, const std::string &message) {
    respond(fd, 400, "Bad Request", "application/json", error_json(message));
  }
  // /api/view?range=A:B: the page's data for that window, without the
  // overview (the page has it). Only "range" is a parameter: the trace is
  // the one of the command line, never a path from the request.
  std::string api_view(const std::string &query) {
    ViewRequest rq;
    rq.overview = false;
    size_t at = 0;
    while (at <= query.size() && !query.empty()) {
      const size_t amp = query.find('&', at);
      const std::string kv = query.substr(at, amp == std::string::npos ? std::string::npos : amp - at);
      const size_t eq = kv.find('=');
      const std::string key = kv.substr(0, eq), value = eq == std::string::npos ? "" : url_decode(kv.substr(eq + 1));
      if (key == "range") {
        const CycleRange r = parse_range(value, "range");
        rq.ranged = true;
        rq.start = r.start;
        rq.end = r.end;
      } else {
        throw Usage("unknown parameter \"" + key + "\" (/api/view takes range=A:B only)");
      }
      if (amp == std::string::npos) break;
      at = amp + 1;
    }
    return view_data(t_, label_, rq);
  }
  const Trace &t_;
  std::string label_, page_;
};

class View final : public TraceCommand {
 public:
  View()
      : TraceCommand("view", "the trace in a self-contained web page (CPU pipeline, IPC, NPU Gantt, ...), or served",
                     "trace file (.uscope) with a cpu or npu protocol scope") {}

 private:
  void add_trace_options(CLI::App &sub) override {
    sub.add_option("-o,--output", out_, "the HTML file to write (default: TRACE's name + .html, here)");
    sub.add_option("--range", range_text_,
                   "cycles A:B (closed) of the pipeline, Gantt and event views; default: the busiest 10,000 cycles")
        ->type_name("A:B");
    sub.add_flag("--serve", serve_, "serve the page and its JSON API on 127.0.0.1 instead of writing a file");
    add_number(&sub, "--port", &port_, "serve mode: the port (0: any free one; default 8765)");
    sub.footer(
        "Static mode writes one HTML file that needs no network. Serve mode prints the URL and answers\n"
        "until interrupted: GET / (the page), GET /api/view?range=A:B (the data of a window, JSON).\n"
        "Example: uscope view trace.uscope -o report.html");
  }
  bool before_open() override {
    if (!range_text_.empty()) {
      const CycleRange r = parse_range(range_text_, "--range");
      rq_.ranged = true;
      rq_.start = r.start;
      rq_.end = r.end;
    }
    if (port_ > 65535) throw Usage("view --port " + std::to_string(port_) + ": expected 0..65535");
    if (serve_ && !out_.empty()) throw Usage("view: -o writes a file, --serve serves the page: give one of them");
    return false;
  }
  std::string error_hint() const override {
    return "\n(uscope view reads a µScope trace; an NPU .jsonl or .pccx file is converted first: uscope convert IN -o "
           "trace.uscope)";
  }
  void read(const Trace &t) override {
    const std::string label = base_name(file());
    const std::string page = view_page(view_data(t, label, rq_), serve_);
    if (serve_) return serve(t, label, page);
    const std::string out = out_.empty() ? label + ".html" : out_;
    // Written beside its name and renamed over it: a failed run leaves no half page.
    const std::string tmp = out + ".tmp";
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      f.write(page.data(), static_cast<std::streamsize>(page.size()));
      f.close();
      if (!f) {
        std::remove(tmp.c_str());
        throw Failure("cannot write " + out + ": " + std::strerror(errno));
      }
    }
    if (std::rename(tmp.c_str(), out.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      std::remove(tmp.c_str());
      throw Failure("cannot write " + out + ": " + why);
    }
    std::printf("wrote %s (%zu bytes)\n", out.c_str(), page.size());
  }
  void serve(const Trace &t, const std::string &label, const std::string &page) {
    Fd s;
    s.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s.fd < 0) throw Failure(std::string("view --serve: socket: ") + std::strerror(errno));
    const int one = 1;
    (void)::setsockopt(s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only: the trace is not published
    if (::bind(s.fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0)
      throw Failure("view --serve: cannot listen on 127.0.0.1:" + std::to_string(port_) + ": " + std::strerror(errno));
    if (::listen(s.fd, 16) != 0) throw Failure(std::string("view --serve: listen: ") + std::strerror(errno));
    socklen_t len = sizeof a;
    if (::getsockname(s.fd, reinterpret_cast<sockaddr *>(&a), &len) != 0)
      throw Failure(std::string("view --serve: getsockname: ") + std::strerror(errno));
    std::printf("uscope view: serving %s on http://127.0.0.1:%u/ (Ctrl-C stops)\n", label.c_str(),
                static_cast<unsigned>(ntohs(a.sin_port)));
    std::fflush(stdout);
    Server server(t, label, page);
    for (;;) {
      Fd c;
      c.fd = ::accept4(s.fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c.fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        throw Failure(std::string("view --serve: accept: ") + std::strerror(errno));
      }
      // A client that sends nothing must not hold the one-at-a-time server.
      timeval tv{10, 0};
      (void)::setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      (void)::setsockopt(c.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      server.serve_one(c.fd);
    }
  }
  std::string out_, range_text_;
  bool serve_ = false;
  uint64_t port_ = 8765;
  ViewRequest rq_;
};

}  // namespace

std::unique_ptr<Command> view_command() { return std::make_unique<View>(); }

}  // namespace uscope_cli
