#include "data/line_source.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace_test_files.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace ttlpred {
namespace {

std::vector<std::string> all_lines(LineSource& src, std::vector<std::size_t>* numbers = nullptr) {
  std::vector<std::string> out;
  std::string_view line;
  while (src.next(line)) {
    out.emplace_back(line);
    if (numbers) numbers->push_back(src.line_number());
  }
  return out;
}

TEST(LineSource, SplitsLinesAndCountsFromOne) {
  LineSource src(std::string_view("a\n\nbc\r\nlast"), "mem");
  std::vector<std::size_t> numbers;
  const auto lines = all_lines(src, &numbers);
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "", "bc\r", "last"}));
  EXPECT_EQ(numbers, (std::vector<std::size_t>{1, 2, 3, 4}));
}

TEST(LineSource, EmptyInputHasNoLines) {
  LineSource src(std::string_view(""), "mem");
  std::string_view line;
  EXPECT_FALSE(src.next(line));
  EXPECT_EQ(src.line_number(), 0u);
}

TEST(LineSource, ReadsPlainAndGzipFilesAlike) {
  // 4.5 MB: more than one buffer, so lines straddle refills.
  const std::string pad(90, '.');
  auto expected = [&](int i) { return "line " + std::to_string(i) + pad; };
  std::string text;
  for (int i = 0; i < 45000; ++i) {
    text += expected(i);
    text += '\n';
  }
  for (const auto& path : {test::write_text_file("t.txt", text), test::write_gzip_file("t.txt.gz", text)}) {
    LineSource src(path);
    std::string_view line;
    int n = 0;
    while (src.next(line)) {
      ASSERT_EQ(line, expected(n)) << path;
      ++n;
    }
    EXPECT_EQ(n, 45000);
    EXPECT_EQ(src.line_number(), 45000u);
    EXPECT_TRUE(src.stream_problem().empty());
  }
}

TEST(LineSource, CutsOverLongLinesAndKeepsCounting) {
  std::string text = "short\n" + std::string(LineSource::kMaxLine * 2 + 10, 'x') + "\nafter\n";
  LineSource src(text, "mem");
  std::string_view line;
  ASSERT_TRUE(src.next(line));
  EXPECT_EQ(line, "short");
  ASSERT_TRUE(src.next(line));
  EXPECT_TRUE(src.line_truncated());
  EXPECT_EQ(line.size(), LineSource::kMaxLine);
  EXPECT_EQ(src.line_number(), 2u);
  ASSERT_TRUE(src.next(line));
  EXPECT_FALSE(src.line_truncated());
  EXPECT_EQ(line, "after");
  EXPECT_EQ(src.line_number(), 3u);
  EXPECT_FALSE(src.next(line));
}

TEST(LineSource, CutsOverLongLinesInFilesAcrossRefills) {
  // 2.5 MiB without a newline: longer than one read chunk, so the cut happens mid-refill.
  std::string text = "a\n" + std::string(LineSource::kMaxLine * 5 / 2, 'y') + "\nb\n" +
                     std::string(LineSource::kMaxLine + 1, 'z') + "\nc";
  for (const auto& path : {test::write_text_file("long.txt", text), test::write_gzip_file("long.txt.gz", text)}) {
    LineSource src(path);
    std::vector<std::size_t> numbers;
    const auto lines = all_lines(src, &numbers);
    ASSERT_EQ(lines.size(), 5u) << path;
    EXPECT_EQ(lines[0], "a");
    EXPECT_EQ(lines[1], std::string(LineSource::kMaxLine, 'y'));
    EXPECT_EQ(lines[2], "b");
    EXPECT_EQ(lines[3], std::string(LineSource::kMaxLine, 'z'));
    EXPECT_EQ(lines[4], "c");
    EXPECT_EQ(numbers, (std::vector<std::size_t>{1, 2, 3, 4, 5}));
  }
}

TEST(LineSource, MissingFileNamesThePath) {
  try {
    LineSource src("/nonexistent/dir/trace.swf");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/trace.swf: cannot open"), std::string::npos) << e.what();
  }
}

TEST(LineSource, TruncatedGzipKeepsWhatWasReadAndSaysSo) {
  std::string text;
  for (int i = 0; i < 50000; ++i) text += "row " + std::to_string(i * 7919 % 100003) + "\n";
  const auto bytes = read_file_bytes(test::write_gzip_file("full.gz", text));
  const std::string cut = test::write_text_file("cut.gz", std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size() / 2));
  LineSource src(cut);
  const auto lines = all_lines(src);
  EXPECT_GT(lines.size(), 1000u);
  EXPECT_LT(lines.size(), 50000u);
  EXPECT_EQ(lines[1], "row 7919");
  EXPECT_NE(src.stream_problem().find("reading stopped early"), std::string::npos) << src.stream_problem();
}

}  // namespace
}  // namespace ttlpred
