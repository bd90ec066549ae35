#include "cli/prediction_output.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace ttlpred::cli {
namespace {

// A number, or the format's empty value when it is unknown.
void put_number(std::FILE* f, bool csv, const char* fmt, double v) {
  if (std::isnan(v)) std::fputs(csv ? "" : "null", f);
  else std::fprintf(f, fmt, v);
}

}  // namespace

void check_prediction_format(const std::string& format) {
  if (format != "csv" && format != "jsonl") throw Error("--format must be csv or jsonl, not '" + format + "'");
}

void write_predictions(std::FILE* f, const std::string& format, const JobTable& table,
                       std::span<const std::size_t> rows, const std::vector<Prediction>& p, bool with_outcome) {
  check_prediction_format(format);
  const bool csv = format == "csv";
  const auto ids = table.num(Field::JobId), wall = table.num(Field::WallTime), req = table.num(Field::RequestedTtl);
  const bool with_upper = std::any_of(p.begin(), p.end(), [](const Prediction& x) { return std::isfinite(x.upper_s); });
  if (csv) {
    std::fputs(with_outcome ? "job_id,expected_wall_s,safe_ttl_s,capped,wall_s,requested_ttl_s"
                            : "job_id,expected_wall_s,safe_ttl_s,capped", f);
    std::fputs(with_upper ? ",upper_s,cold\n" : "\n", f);
  }
  for (std::size_t i = 0; i < p.size(); ++i) {
    const std::size_t r = rows[i];
    if (csv) {
      put_number(f, true, "%.0f", ids[r]);
      std::fprintf(f, ",%.1f,%.1f,%d", p[i].expected_wall_s, p[i].safe_ttl_s, p[i].capped ? 1 : 0);
      if (with_outcome) {
        std::fputc(',', f);
        put_number(f, true, "%.1f", wall[r]);
        std::fputc(',', f);
        put_number(f, true, "%.1f", req[r]);
      }
      if (with_upper) {
        std::fputc(',', f);
        put_number(f, true, "%.3f", p[i].upper_s);
        std::fprintf(f, ",%d", p[i].cold ? 1 : 0);
      }
    } else {
      std::fputs("{\"job_id\":", f);
      put_number(f, false, "%.0f", ids[r]);
      std::fprintf(f, ",\"expected_wall_s\":%.1f,\"safe_ttl_s\":%.1f,\"capped\":%s", p[i].expected_wall_s,
                   p[i].safe_ttl_s, p[i].capped ? "true" : "false");
      if (with_outcome) {
        std::fputs(",\"wall_s\":", f);
        put_number(f, false, "%.1f", wall[r]);
        std::fputs(",\"requested_ttl_s\":", f);
        put_number(f, false, "%.1f", req[r]);
      }
      if (with_upper) {
        std::fputs(",\"upper_s\":", f);
        put_number(f, false, "%.3f", p[i].upper_s);
        std::fprintf(f, ",\"cold\":%s", p[i].cold ? "true" : "false");
      }
      std::fputc('}', f);
    }
    std::fputc('\n', f);
    if (std::ferror(f)) throw Error("cannot write predictions");
  }
}

}  // namespace ttlpred::cli
