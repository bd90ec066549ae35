#include "data/csv_writer.hpp"

#include <unistd.h>
#include <zlib.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "util/error.hpp"

namespace ttlpred {

namespace {

bool ends_with_gz(const std::string& p) { return p.size() >= 3 && p.compare(p.size() - 3, 3, ".gz") == 0; }

void append_number(std::string& out, double v) {
  if (std::isnan(v)) return;  // unknown: empty field
  char tmp[32];
  std::to_chars_result res;
  if (std::abs(v) < 9.0e15 && v == std::trunc(v)) res = std::to_chars(tmp, tmp + sizeof tmp, static_cast<long long>(v));
  else res = std::to_chars(tmp, tmp + sizeof tmp, v);
  out.append(tmp, res.ptr);
}

void append_text(std::string& out, std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    out.append(s);
    return;
  }
  out.push_back('"');
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

}  // namespace

// Plain files go through stdio, ".gz" through zlib at a fast level (traces are large and
// written once; level 1 keeps `generate` I/O-cheap).
struct CsvWriter::Sink {
  std::FILE* file = nullptr;
  gzFile gz = nullptr;
  void write(const std::string& path, const char* data, std::size_t n) {
    if (n == 0) return;
    const bool ok = gz ? gzwrite(gz, data, static_cast<unsigned>(n)) == static_cast<int>(n)
                       : std::fwrite(data, 1, n, file) == n;
    if (!ok) throw Error("cannot write " + path);
  }
};

CsvWriter::CsvWriter(std::string path, std::vector<Field> columns)
    : path_(std::move(path)), columns_(std::move(columns)), sink_(std::make_unique<Sink>()) {
  if (columns_.empty())
    for (const auto& f : kFields) columns_.push_back(f.field);
  std::random_device rd;
  tmp_path_ = path_ + ".tmp." + std::to_string(getpid()) + "." + std::to_string(rd());
  if (ends_with_gz(path_)) sink_->gz = gzopen(tmp_path_.c_str(), "wb1");
  else sink_->file = std::fopen(tmp_path_.c_str(), "wb");
  if (!sink_->gz && !sink_->file) throw Error("cannot create " + tmp_path_ + ": " + std::strerror(errno));
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (i) buf_.push_back(',');
    buf_.append(info(columns_[i]).name);
  }
  buf_.push_back('\n');
}

CsvWriter::~CsvWriter() {
  if (sink_->gz) gzclose(sink_->gz);
  if (sink_->file) std::fclose(sink_->file);
  if (sink_->gz || sink_->file) std::remove(tmp_path_.c_str());
}

void CsvWriter::write(const JobRecord& r) {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (i) buf_.push_back(',');
    const Field f = columns_[i];
    if (is_category(f)) append_text(buf_, r.text(f));
    else append_number(buf_, r[f]);
  }
  buf_.push_back('\n');
  ++rows_;
  if (buf_.size() >= (1u << 20)) flush_buffer();
}

void CsvWriter::flush_buffer() {
  sink_->write(path_, buf_.data(), buf_.size());
  buf_.clear();
}

void CsvWriter::close() {
  flush_buffer();
  bool ok;
  if (sink_->gz) {
    ok = gzclose(sink_->gz) == Z_OK;
    sink_->gz = nullptr;
  } else {
    ok = std::fflush(sink_->file) == 0 && fsync(fileno(sink_->file)) == 0;
    ok = (std::fclose(sink_->file) == 0) && ok;
    sink_->file = nullptr;
  }
  if (!ok || std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_path_.c_str());
    throw Error("cannot write " + path_);
  }
}

void write_csv(const JobTable& table, const std::string& path) {
  std::vector<Field> cols;
  for (const auto& f : kFields)
    if (table.has_values(f.field)) cols.push_back(f.field);
  CsvWriter w(path, cols);
  JobRecord r;
  for (std::size_t i = 0; i < table.rows(); ++i) {
    table.record(i, r);
    w.write(r);
  }
  w.close();
}

}  // namespace ttlpred
