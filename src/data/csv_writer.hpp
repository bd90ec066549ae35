#pragma once
// Streams job records to an ALICE-style CSV file (docs/data-format.md), gzip-compressed when
// the path ends in ".gz". The file appears only when close() succeeds: rows go to a
// temporary file that is renamed over the target, so a crash never leaves half a trace.
#include <memory>
#include <string>
#include <vector>

#include "data/job_record.hpp"
#include "data/job_table.hpp"

namespace ttlpred {

class CsvWriter {
 public:
  // `columns` in header order; all schema fields when empty.
  CsvWriter(std::string path, std::vector<Field> columns = {});
  ~CsvWriter();  // without close(): discards the temporary file
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  void write(const JobRecord& r);
  void close();
  std::size_t rows_written() const { return rows_; }

 private:
  void flush_buffer();
  struct Sink;
  std::string path_, tmp_path_;
  std::vector<Field> columns_;
  std::unique_ptr<Sink> sink_;
  std::string buf_;
  std::size_t rows_ = 0;
};

// Writes a whole table (every column that has at least one known value).
void write_csv(const JobTable& table, const std::string& path);

}  // namespace ttlpred
