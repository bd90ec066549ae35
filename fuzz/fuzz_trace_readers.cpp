// Fuzz target: the three trace readers (CSV, SWF, GWF) on arbitrary bytes. A reader may
// refuse a whole input only with an InputError that names the input; anything it reads
// must account for every line (kept, skipped with a reason, comment or continuation) and
// keep at most ReadReport::kMaxExamples examples. Anything else aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "data/line_source.hpp"
#include "data/trace_readers.hpp"
#include "util/error.hpp"

using namespace ttlpred;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto reader : {read_csv, read_swf, read_gwf}) {
    LineSource src(text, "fuzz-input");
    ReadReport report;
    report.path = "fuzz-input";
    JobTable table;
    try {
      reader(src, table, report);
    } catch (const InputError& e) {
      if (std::string_view(e.what()).find("fuzz-input") == std::string_view::npos) {
        std::fprintf(stderr, "refusal does not name the input: %s\n", e.what());
        std::abort();
      }
      continue;
    }
    if (!report.all_lines_accounted() || report.examples.size() > ReadReport::kMaxExamples ||
        table.rows() != report.rows) {
      std::fprintf(stderr, "lines %zu rows %zu (table %zu) skipped %zu comments %zu continuation %zu\n",
                   static_cast<std::size_t>(report.lines), static_cast<std::size_t>(report.rows), table.rows(),
                   static_cast<std::size_t>(report.skipped_total()), static_cast<std::size_t>(report.comment_lines),
                   static_cast<std::size_t>(report.continuation_lines));
      std::abort();
    }
  }
  return 0;
}
