// Feeds the readers random bytes and randomly damaged valid lines. Nothing may crash (the
// sanitizer build checks memory safety too), and every line must be accounted for as kept,
// skipped or comment.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "data/trace_readers.hpp"
#include "trace_test_files.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

constexpr std::string_view kValid[] = {
    // SWF, extended SWF, GWF, CSV
    "    7   327952 291900   9382   80     -1    -1   80  14400    -1  1   2   2  -1 -1 -1 -1 -1",
    "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 3 -1 -1 -1 -1 q_long",
    "1\t1136070024\t5\t3600.5\t1\t3000\t20480\t1\t86400\t-1\t1\tU1\tG2\tE3\tQ4\t-1\tS1\tS2\tUNITARY\t-1\t-1\t-1\t-1\t-1\t-1\t-1\t-1\tvo1\t-1",
    "3,\"multi, \"\"q\"\"\",12.5,CERN,21600",
};
constexpr std::string_view kCsvHeader = "job_id,user,wall_s,site,requested_ttl_s\n";

std::string mutate(std::string_view line, std::mt19937& rng) {
  std::string s(line);
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const std::size_t pos = s.empty() ? 0 : rng() % s.size();
    switch (rng() % 6) {
      case 0: if (!s.empty()) s[pos] = static_cast<char>(rng() % 256); break;      // any byte
      case 1: s.insert(pos, 1, "\",;#\t -.eE0x\n\r"[rng() % 14]); break;           // syntax bytes
      case 2: if (!s.empty()) s.erase(pos, 1 + rng() % 8); break;                   // cut
      case 3: s.resize(pos); break;                                                 // truncate
      case 4: s.insert(pos, rng() % 2 ? "nan" : "-7"); break;
      default: s.insert(pos, std::string(1 + rng() % 3, static_cast<char>('a' + rng() % 26))); break;
    }
  }
  return s;
}

template <class Reader>
void check_never_crashes(Reader reader, std::string_view header, std::uint32_t seed, int cases) {
  std::mt19937 rng(seed);
  for (int c = 0; c < cases; ++c) {
    std::string text(header);
    const int lines = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < lines; ++i) {
      if (rng() % 8 == 0) {  // a random binary blob
        const std::size_t n = rng() % 64;
        for (std::size_t k = 0; k < n; ++k) text.push_back(static_cast<char>(rng() % 256));
      } else {
        text += mutate(kValid[rng() % std::size(kValid)], rng);
      }
      if (rng() % 10) text.push_back('\n');
    }
    ReadReport rep;
    try {
      test::read_memory(reader, text, rep, "fuzz");
    } catch (const InputError&) {
      continue;  // only a CSV whose header got damaged may refuse the whole file
    }
    ASSERT_TRUE(rep.all_lines_accounted())
        << "case " << c << ": lines " << rep.lines << " rows " << rep.rows << " skipped " << rep.skipped_total()
        << " comments " << rep.comment_lines << " continuation " << rep.continuation_lines << "\n" << text;
    ASSERT_LE(rep.examples.size(), ReadReport::kMaxExamples);
  }
}

TEST(ReaderFuzz, SwfNeverCrashesAndAccountsForEveryLine) { check_never_crashes(read_swf, "; UnixStartTime: 5\n", 1, 3000); }
TEST(ReaderFuzz, GwfNeverCrashesAndAccountsForEveryLine) { check_never_crashes(read_gwf, "# GWF\n", 2, 3000); }
TEST(ReaderFuzz, CsvNeverCrashesAndAccountsForEveryLine) { check_never_crashes(read_csv, kCsvHeader, 3, 3000); }

TEST(ReaderFuzz, PureRandomBytesNeverCrash) {
  std::mt19937 rng(4);
  for (int c = 0; c < 2000; ++c) {
    std::string text(rng() % 300, '\0');
    for (auto& ch : text) ch = static_cast<char>(rng() % 256);
    for (auto reader : {read_swf, read_gwf, read_csv}) {
      ReadReport rep;
      try {
        test::read_memory(reader, text, rep, "random");
      } catch (const InputError&) {
        continue;
      }
      ASSERT_TRUE(rep.all_lines_accounted()) << "case " << c;
    }
  }
}

}  // namespace
}  // namespace ttlpred
