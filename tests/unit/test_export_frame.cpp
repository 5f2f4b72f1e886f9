// The exporters' shared frame (include/uscope/export.h, src/export/export.*):
// format names, options, argument and input checks, and the output that
// replaces its path only on success (a file, or hpctoolkit's directory).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uscope/export.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "format/file_codec.hpp"
#include "format/schema_codec.hpp"
#include "format/wire.hpp"
#include "export/export.hpp"
#include "support/test_util.hpp"
#include "support/trace_file.hpp"

namespace {

namespace fs = std::filesystem;
using uscope::test::kCorpusDir;
using uscope::test::read_all;
using uscope::test::TempDir;
using uscope::test::write_all;

uscope_export_options_t opts_for(uint32_t format) {
  uscope_export_options_t o;
  uscope_export_options_init(&o);
  o.format = format;
  return o;
}

// The names in a directory, but for "." and "..".
std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> v;
  for (const auto &e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

TEST(ExportFrame, FormatNamesGoBothWays) {
  const char *names[] = {"konata", "perfetto", "chrome-json", "nytprof", "hpctoolkit", "fst", "vcd"};
  for (uint32_t f = USCOPE_EXPORT_KONATA; f <= USCOPE_EXPORT_VCD; ++f) {
    ASSERT_NE(uscope_export_format_name(f), nullptr);
    EXPECT_STREQ(uscope_export_format_name(f), names[f - 1]);
    EXPECT_EQ(uscope_export_format_from_name(names[f - 1]), f);
  }
  EXPECT_EQ(uscope_export_format_from_name("Chrome-JSON"), USCOPE_EXPORT_CHROME_JSON);
  EXPECT_EQ(uscope_export_format_from_name("json"), 0u);
  EXPECT_EQ(uscope_export_format_from_name(""), 0u);
  EXPECT_EQ(uscope_export_format_from_name(nullptr), 0u);
  EXPECT_EQ(uscope_export_format_name(0), nullptr);
  EXPECT_EQ(uscope_export_format_name(8), nullptr);
}

TEST(ExportFrame, OptionsDefaults) {
  uscope_export_options_t o;
  std::memset(&o, 0xAB, sizeof o);
  uscope_export_options_init(&o);
  EXPECT_EQ(o.struct_size, sizeof o);
  EXPECT_EQ(o.format, 0u);
  EXPECT_EQ(o.range_start, 0u);
  EXPECT_EQ(o.range_end, UINT64_MAX);
  EXPECT_EQ(o.time_unit, static_cast<uint32_t>(USCOPE_TIME_AUTO));
  EXPECT_EQ(o.elf_path, nullptr);
  EXPECT_EQ(o.on_issue, nullptr);
  uscope_konata_import_options_t k;
  std::memset(&k, 0xAB, sizeof k);
  uscope_konata_import_options_init(&k);
  EXPECT_EQ(k.struct_size, sizeof k);
  EXPECT_EQ(k.clock_period_ps, 1000u);
  EXPECT_EQ(k.dut_name, nullptr);
  EXPECT_EQ(k.strict, 0u);
  uscope_export_options_init(nullptr);  // no crash
  uscope_konata_import_options_init(nullptr);
}

TEST(ExportFrame, BadArgumentsAreRefusedWithAMessage) {
  TempDir d("export_args");
  const std::string in = kCorpusDir + "01_tiny.uscope", out = d.file("o.vcd");
  uscope_export_options_t o = opts_for(USCOPE_EXPORT_VCD);
  EXPECT_EQ(uscope_export(nullptr, nullptr, out.c_str(), &o), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_export(nullptr, in.c_str(), nullptr, &o), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(uscope_export(nullptr, in.c_str(), out.c_str(), nullptr), USCOPE_ERR_INVALID_ARGUMENT);
  uscope_export_options_t unsized = o;
  unsized.struct_size = 0;
  EXPECT_EQ(uscope_export(nullptr, in.c_str(), out.c_str(), &unsized), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(uscope_last_error()).find("struct_size"), std::string::npos);
  uscope_export_options_t bad = opts_for(99);
  EXPECT_EQ(uscope_export(nullptr, in.c_str(), out.c_str(), &bad), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(uscope_last_error()).find("unknown format 99"), std::string::npos);
  uscope_export_options_t range = o;
  range.range_start = 10;
  range.range_end = 9;
  EXPECT_EQ(uscope_export(nullptr, in.c_str(), out.c_str(), &range), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(uscope_last_error()).find("10:9"), std::string::npos);
  uscope_export_options_t unit = o;
  unit.time_unit = 7;
  EXPECT_EQ(uscope_export(nullptr, in.c_str(), out.c_str(), &unit), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(entries(d.path()), std::vector<std::string>{});
  uscope_konata_import_options_t k;
  uscope_konata_import_options_init(&k);
  EXPECT_EQ(uscope_import_konata(nullptr, nullptr, out.c_str(), &k), USCOPE_ERR_INVALID_ARGUMENT);
  k.struct_size = 0;
  EXPECT_EQ(uscope_import_konata(nullptr, in.c_str(), out.c_str(), &k), USCOPE_ERR_INVALID_ARGUMENT);
}

TEST(ExportFrame, TheInputIsNeverTheOutput) {
  TempDir d("export_same");
  const std::string in = d.file("t.uscope");
  fs::copy_file(kCorpusDir + "01_tiny.uscope", in);
  const std::string before = read_all(in);
  const std::string link = d.file("link.uscope"), hard = d.file("hard.uscope");
  fs::create_symlink(in, link);
  fs::create_hard_link(in, hard);
  for (const std::string &out : {in, link, hard, d.path() + "/./t.uscope"}) {
    uscope_export_options_t o = opts_for(USCOPE_EXPORT_VCD);
    EXPECT_EQ(uscope_export(nullptr, in.c_str(), out.c_str(), &o), USCOPE_ERR_INVALID_ARGUMENT) << out;
    EXPECT_NE(std::string(uscope_last_error()).find("the output is the input"), std::string::npos)
        << uscope_last_error();
  }
  EXPECT_EQ(read_all(in), before);
}

TEST(ExportFrame, InputsThatAreNoTraceNameTheFile) {
  TempDir d("export_inputs");
  const std::string out = d.file("o.log");
  uscope_export_options_t o = opts_for(USCOPE_EXPORT_KONATA);
  const std::string missing = d.file("missing.uscope");
  EXPECT_EQ(uscope_export(nullptr, missing.c_str(), out.c_str(), &o), USCOPE_ERR_IO);
  EXPECT_NE(std::string(uscope_last_error()).find(missing), std::string::npos);
  EXPECT_EQ(uscope_export(nullptr, d.path().c_str(), out.c_str(), &o), USCOPE_ERR_IO);
  EXPECT_NE(std::string(uscope_last_error()).find("directory"), std::string::npos);
  const std::string junk = d.file("junk.uscope");
  write_all(junk, std::string(4096, 'x'));
  EXPECT_EQ(uscope_export(nullptr, junk.c_str(), out.c_str(), &o), USCOPE_ERR_BAD_MAGIC);
  EXPECT_NE(std::string(uscope_last_error()).find(junk), std::string::npos);
  // Only the timeline exporters read NPU JSONL and .pccx inputs.
  const std::string jsonl = d.file("t.jsonl");
  write_all(jsonl, "{\"event_type\":\"IRQ\",\"t_cycle\":1}\n");
  EXPECT_EQ(uscope_export(nullptr, jsonl.c_str(), out.c_str(), &o), USCOPE_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(uscope_last_error()).find("needs a µScope trace"), std::string::npos);
  EXPECT_FALSE(fs::exists(out));
}

// A schema whose names point past its string pool (a fuzzer's finding: the
// hpctoolkit exporter passed the null name of a scope's protocol to strcmp).
// The reader takes such a file (the pool is the writer's business); each
// exporter must treat the name as absent or empty, and answer with a status.
TEST(ExportFrame, SchemaNamesPastTheStringPoolAreNoCrash) {
  TempDir d("export_bad_names");
  const std::vector<uint8_t> good = uscope::test::read_bytes(kCorpusDir + "20_konata_sample.uscope");
  const uscope::FileHeader h = uscope::decode_file_header(good.data(), good.size());
  const auto chunks = uscope::walk_chunks(good.data(), good.size(), h.preamble_end);
  const auto sc = std::find_if(chunks.begin(), chunks.end(),
                               [](const uscope::ChunkRef &c) { return c.type == uscope::wire::CHUNK_SCHEMA; });
  ASSERT_NE(sc, chunks.end());
  const uscope::Schema schema = uscope::decode_schema(good.data() + sc->offset, sc->size);
  // 0xFFFE: past any pool (at most 65,535 bytes), and not kNoString.
  constexpr uint16_t kPast = 0xFFFE;
  auto variant = [&](const std::string &name, const std::function<void(uscope::Schema &)> &damage) {
    uscope::Schema s = schema;
    damage(s);
    const std::vector<uint8_t> payload = uscope::encode_schema(s);
    EXPECT_EQ(payload.size(), sc->size);  // same counts, same size: patched in place
    std::vector<uint8_t> b = good;
    std::copy(payload.begin(), payload.end(), b.begin() + static_cast<ptrdiff_t>(sc->offset));
    const std::string path = d.file(name + ".uscope");
    write_all(path, std::string(b.begin(), b.end()));
    return path;
  };
  bool had_cpu = false;
  for (const uscope::ScopeDef &x : schema.scopes) had_cpu |= x.protocol != uscope::wire::kNoString;
  ASSERT_TRUE(had_cpu) << "20_konata_sample should hold a cpu protocol scope";
  const std::string no_protocol = variant("protocol", [](uscope::Schema &s) {
    for (uscope::ScopeDef &x : s.scopes)
      if (x.protocol != uscope::wire::kNoString) x.protocol = kPast;
  });
  const std::string no_names = variant("names", [](uscope::Schema &s) {
    for (uscope::ScopeDef &x : s.scopes) x.name = kPast;
    for (uscope::ClockDef &x : s.clocks) x.name = kPast;
    for (uscope::EnumDef &x : s.enums) {
      x.name = kPast;
      for (uscope::EnumValue &v : x.values) v.name = kPast;
    }
    for (uscope::StorageDef &x : s.storages) {
      x.name = kPast;
      for (uscope::FieldDef &f : x.fields) f.name = kPast;
      for (uscope::FieldDef &f : x.props) f.name = kPast;
    }
    for (uscope::EventDef &x : s.events) {
      x.name = kPast;
      for (uscope::FieldDef &f : x.fields) f.name = kPast;
    }
  });
  for (const std::string &in : {no_protocol, no_names}) {
    for (uint32_t f = USCOPE_EXPORT_KONATA; f <= USCOPE_EXPORT_VCD; ++f) {
      uscope_export_options_t o = opts_for(f);
      const std::string out = d.file(std::string("out.") + uscope_export_format_name(f));
      const uscope_status_t st = uscope_export(nullptr, in.c_str(), out.c_str(), &o);
      const std::string what = in + " to " + uscope_export_format_name(f) + ": " + uscope_last_error();
      EXPECT_NE(st, USCOPE_ERR_INTERNAL) << what;
      if (st != USCOPE_OK) {
        EXPECT_NE(std::string(uscope_last_error()), "") << what;
      }
    }
  }
  // Without a protocol name the cpu scope is no cpu scope: the cpu
  // exporters say so, as for a trace that never had one.
  uscope_export_options_t o = opts_for(USCOPE_EXPORT_HPCTOOLKIT);
  EXPECT_EQ(uscope_export(nullptr, no_protocol.c_str(), d.file("h").c_str(), &o), USCOPE_ERR_NOT_FOUND)
      << uscope_last_error();
  o = opts_for(USCOPE_EXPORT_KONATA);
  EXPECT_EQ(uscope_export(nullptr, no_protocol.c_str(), d.file("k.log").c_str(), &o), USCOPE_ERR_NOT_FOUND)
      << uscope_last_error();
}

TEST(ExportFrame, AFailedExportLeavesTheOldOutputAndNoTemporaryFile) {
  TempDir d("export_fail");
  const std::string out = d.file("o.log");
  write_all(out, "previous");
  // 01_tiny has no cpu protocol: the konata exporter has nothing to export.
  uscope_export_options_t o = opts_for(USCOPE_EXPORT_KONATA);
  EXPECT_NE(uscope_export(nullptr, (kCorpusDir + "01_tiny.uscope").c_str(), out.c_str(), &o), USCOPE_OK);
  EXPECT_NE(std::string(uscope_last_error()).find("01_tiny.uscope"), std::string::npos) << uscope_last_error();
  EXPECT_EQ(read_all(out), "previous");
  EXPECT_EQ(entries(d.path()), std::vector<std::string>{"o.log"});
}

TEST(ExportFrame, OutFileReplacesItsPathOnlyWhenPublished) {
  TempDir d("export_outfile");
  const std::string path = d.file("f.txt");
  write_all(path, "old");
  {
    uscope::exporter::OutFile f(path);
    f.write("new ");
    std::string big(9 << 20, 'z');  // past two 4 MiB blocks: written before publish
    f.write(big);
    EXPECT_EQ(read_all(path), "old");
    EXPECT_EQ(f.bytes(), 4u + big.size());
    EXPECT_NE(f.temp_path(), path);
  }  // never published: the temporary file goes, the old file stays
  EXPECT_EQ(read_all(path), "old");
  EXPECT_EQ(entries(d.path()), std::vector<std::string>{"f.txt"});
  {
    uscope::exporter::OutFile f(path);
    f.write("new");
    f.publish();
  }
  EXPECT_EQ(read_all(path), "new");
  EXPECT_EQ(entries(d.path()), std::vector<std::string>{"f.txt"});
  // A directory in the way is refused, not replaced.
  fs::create_directory(d.file("dir"));
  EXPECT_THROW(uscope::exporter::OutFile f(d.file("dir")), uscope::Error);
}

// The writer thread writes full 4 MiB blocks with O_DIRECT and the last,
// partial one through the page cache: every byte lands, in order, for sizes
// around the block and the device's 4 KiB, whether the bytes come through
// write() or buf() (whose contents go first), on a file system that takes
// O_DIRECT (the test's) and on tmpfs (which may refuse it: the plain-write
// fallback).
TEST(ExportFrame, OutFileWritesEveryByteInOrderWhateverTheSize) {
  TempDir d("export_outfile_sizes");
  std::vector<std::string> dirs = {d.path()};
  const std::string shm = "/dev/shm/uscope_outfile_" + std::to_string(::getpid());
  ASSERT_TRUE(fs::create_directory(shm)) << "/dev/shm is needed for the tmpfs case";
  dirs.push_back(shm);
  std::mt19937_64 rng(42);
  for (const std::string &dir : dirs)
    for (size_t size : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{(4 << 20) - 1},
                        size_t{4 << 20}, size_t{(4 << 20) + 3}, size_t{(8 << 20) - 4096}, size_t{8 << 20},
                        size_t{(13 << 20) + 4097}, size_t{(29 << 20) + 11}}) {
      SCOPED_TRACE(dir + ": " + std::to_string(size) + " bytes");
      std::string want(size, '\0');
      for (size_t i = 0; i < size; ++i) want[i] = static_cast<char>(rng() >> 56);
      const std::string path = dir + "/out.bin";
      {
        uscope::exporter::OutFile f(path);
        size_t at = 0;
        while (at < size) {  // chunks of any size, as the exporters write
          const size_t n = std::min<size_t>(size - at, 1 + rng() % 300000);
          if (rng() & 1) {
            f.write(want.data() + at, n);
          } else {
            f.buf().append(want.data() + at, n);
            f.maybe_flush();
          }
          at += n;
        }
        EXPECT_EQ(f.bytes(), size);
        f.publish();
      }
      EXPECT_TRUE(read_all(path) == want);
    }
  fs::remove_all(shm);
}

// A file with no name to replace (a memfd, through its /proc/self/fd link)
// is written in place, through the same writer thread: on shmem, which may
// refuse O_DIRECT, every byte lands too.
TEST(ExportFrame, OutFileWritesAMemfdInPlace) {
  const int fd = ::memfd_create("uscope_outfile", 0);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  std::string want((9 << 20) + 123, 'p');
  for (size_t i = 0; i < want.size(); i += 4093) want[i] = static_cast<char>('a' + i % 26);
  {
    uscope::exporter::OutFile f("/proc/self/fd/" + std::to_string(fd));
    f.write(want);
    f.publish();
  }
  std::string got(want.size() + 1, '\0');
  const ssize_t n = ::pread(fd, got.data(), got.size(), 0);
  ::close(fd);
  ASSERT_EQ(n, static_cast<ssize_t>(want.size()));
  got.resize(static_cast<size_t>(n));
  EXPECT_TRUE(got == want);
}

// An error met by the writer thread (here the file size limit) is thrown by
// publish() with the path, and the old file stays.
TEST(ExportFrame, OutFileReportsTheWriterThreadsError) {
  TempDir d("export_outfile_error");
  const std::string path = d.file("f.bin");
  write_all(path, "old");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // In a child: the limit and the ignored SIGXFSZ are its own.
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl {6 << 20, 6 << 20};
    if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(3);
    try {
      uscope::exporter::OutFile f(path);
      f.write(std::string(20 << 20, 'x'));
      f.publish();
    } catch (const uscope::Error &e) {
      ::_exit(std::string(e.what()).find("cannot write " + path) != std::string::npos ? 0 : 4);
    }
    ::_exit(5);
  }
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0) << "3: no limit, 4: another message, 5: no error";
  EXPECT_EQ(read_all(path), "old");
  EXPECT_EQ(entries(d.path()), std::vector<std::string>{"f.bin"});
}

TEST(ExportFrame, OutDirReplacesAnOldDatabaseOnlyWhenPublished) {
  TempDir d("export_outdir");
  const std::string db = d.file("db");
  fs::create_directory(db);
  write_all(db + "/old.db", "old");
  {
    uscope::exporter::OutDir o(db);
    write_all(o.dir() + "/meta.db", "new");
    EXPECT_TRUE(fs::exists(db + "/old.db"));
  }  // never published: removed with its files
  EXPECT_EQ(entries(d.path()), std::vector<std::string>{"db"});
  EXPECT_EQ(entries(db), std::vector<std::string>{"old.db"});
  {
    uscope::exporter::OutDir o(db);
    write_all(o.dir() + "/meta.db", "new");
    fs::create_directory(o.dir() + "/sub");
    write_all(o.dir() + "/sub/x", "x");
    o.publish();
  }
  EXPECT_EQ(entries(d.path()), std::vector<std::string>{"db"});
  EXPECT_EQ(entries(db), (std::vector<std::string>{"meta.db", "sub"}));
  EXPECT_EQ(read_all(db + "/meta.db"), "new");
  // A file of that name is refused.
  write_all(d.file("file"), "f");
  EXPECT_THROW(uscope::exporter::OutDir o(d.file("file")), uscope::Error);
  EXPECT_EQ(read_all(d.file("file")), "f");
}

// What Progress draws on stderr while stderr is `fd` (a terminal or not).
void progress_output(int fd, bool enabled) {
  std::fflush(stderr);
  const int saved = ::dup(2);
  ::dup2(fd, 2);
  {
    uscope::exporter::Progress p(enabled, "export konata");
    p.update(50, 100, "cycles");
    p.update(60, 100, "cycles");  // within 0.2 s of the first: not drawn
    p.finish();
  }
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
}

std::string drain(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

TEST(ExportFrame, TheProgressBarIsDrawnOnATerminalOnly) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  ::fcntl(master, F_SETFL, O_NONBLOCK);
  progress_output(slave, true);
  const std::string drawn = drain(master);
  EXPECT_NE(drawn.find("\rexport konata ["), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("50%"), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("50 / 100 cycles"), std::string::npos) << drawn;
  EXPECT_EQ(drawn.find("60%"), std::string::npos) << drawn;
  EXPECT_EQ(drawn.back(), '\n');  // the terminal shows "\r\n" for finish()'s "\n"
  progress_output(slave, false);  // not asked for
  EXPECT_EQ(drain(master), "");
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  ::fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
  progress_output(pipefd[1], true);  // asked for, but stderr is no terminal
  EXPECT_EQ(drain(pipefd[0]), "");
  ::close(pipefd[0]);
  ::close(pipefd[1]);
  ::close(slave);
  ::close(master);
}

}  // namespace
