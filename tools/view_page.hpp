// What `uscope view` shows (cmd_view.cpp): the data of the page, collected
// from a trace through the analysis layer as one JSON object, and the page
// itself (tools/view/*.html|js|css, embedded at build time) with that object
// in it. The static page and the server's JSON API both use view_data, so the
// two never disagree.
#pragma once

#include <cstdint>
#include <string>

#include "cli_common.hpp"

namespace uscope_cli {

// Bounds that keep the page's size independent of the trace's.
inline constexpr uint32_t kViewBuckets = 2000;         // overview series: at most this many buckets
inline constexpr uint64_t kViewWindowCycles = 10000;   // the default window: the busiest this many cycles
inline constexpr uint32_t kViewMaxInsns = 5000;        // pipeline rows of a window
inline constexpr uint32_t kViewMaxEvents = 20000;      // npu events of a window

struct ViewRequest {
  bool ranged = false;           // --range given: [start, end] in cycles of the view's clock
  uint64_t start = 0, end = 0;
  bool overview = true;          // the whole-trace overview (the server's window answers leave it out)
};

// The page's data: {file, trace{...}, clock{...}, window{...}, notes[], schema,
// cpu{...}|null, npu{...}|null}. The view's clock is the cpu scope's when
// the trace has one, else the npu scope's. Throws Failure (no cpu and no npu
// scope; a range past the end) with the message the user sees.
std::string view_data(const Trace &t, const std::string &label, const ViewRequest &rq);

// The self-contained page: the embedded HTML, CSS and JS with data (the JSON
// of view_data, "</" escaped so that it cannot end its <script>). serve_mode
// tells the script it may ask the server for other windows.
std::string view_page(const std::string &data, bool serve_mode);

}  // namespace uscope_cli
