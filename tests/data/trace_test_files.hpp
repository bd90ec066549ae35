#pragma once
// Helpers for the reader tests: write small trace files (plain or gzip) and read text
// through the in-memory line source.
#include <zlib.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

#include "data/trace_readers.hpp"
#include "test_support.hpp"

namespace ttlpred::test {

inline std::string write_text_file(const std::string& name, std::string_view content) {
  const std::string path = temp_dir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot create " + path);
  std::fwrite(content.data(), 1, content.size(), f);
  std::fclose(f);
  return path;
}

inline std::string write_gzip_file(const std::string& name, std::string_view content) {
  const std::string path = temp_dir() + "/" + name;
  gzFile g = gzopen(path.c_str(), "wb");
  if (!g) throw std::runtime_error("cannot create " + path);
  if (!content.empty()) gzwrite(g, content.data(), static_cast<unsigned>(content.size()));
  gzclose(g);
  return path;
}

// Runs one reader over `text` held in memory.
template <class Reader>
JobTable read_memory(Reader reader, std::string_view text, ReadReport& report, std::string name = "mem") {
  LineSource src(text, name);
  report = ReadReport{};
  report.path = name;
  JobTable t;
  reader(src, t, report);
  return t;
}

}  // namespace ttlpred::test
