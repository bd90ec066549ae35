#include "sim/host_classes.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "util/error.hpp"

namespace ttlpred::sim {

HostClasses find_host_classes(const JobTable& jobs, std::size_t first_row) {
  const auto model = jobs.codes(Field::CpuModel);
  const auto speed = jobs.num(Field::HostSpeed), mhz = jobs.num(Field::CpuMhz);
  HostClasses h;
  std::map<std::uint32_t, std::vector<std::size_t>> rows_of;  // cpu_model code -> simulated rows
  for (std::size_t r = first_row; r < jobs.rows(); ++r) {
    if (model[r] == kMissingCode || !(speed[r] > 0))
      throw Error("simulate --host-speed slot: job row " + std::to_string(r) +
                  " has no cpu_model or no positive host_speed (the host classes need both)");
    rows_of[model[r]].push_back(r);
  }
  // Each simulated row is predicted once per class and kept per class: the cost is rows x
  // classes, so a trace with a CPU model per host would take the memory of many traces.
  if (rows_of.size() > kMaxHostClasses)
    throw Error("simulate --host-speed slot: the simulated rows have " + std::to_string(rows_of.size()) +
                " distinct cpu_model values, more than the " + std::to_string(kMaxHostClasses) +
                " host classes it predicts every job on; use --host-speed trace");
  for (auto& [code, rows] : rows_of) {
    HostClass c;
    c.cpu_model_code = code;
    c.cpu_model = std::string(jobs.dict(Field::CpuModel).value(code));
    c.rows = rows.size();
    std::vector<double> s(rows.size());
    std::map<double, std::size_t> clock;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      s[i] = speed[rows[i]];
      if (!std::isnan(mhz[rows[i]])) ++clock[mhz[rows[i]]];
    }
    const std::size_t mid = s.size() / 2;
    std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(mid), s.end());
    c.speed = s[mid];
    std::size_t best = 0;
    c.cpu_mhz = std::nan("");
    for (const auto& [v, n] : clock)
      if (n > best) best = n, c.cpu_mhz = v;
    h.classes.push_back(std::move(c));
  }
  std::stable_sort(h.classes.begin(), h.classes.end(),
                   [](const HostClass& a, const HostClass& b) { return a.rows != b.rows ? a.rows > b.rows : a.cpu_model < b.cpu_model; });
  std::map<std::uint32_t, std::uint32_t> class_of;
  for (std::size_t k = 0; k < h.classes.size(); ++k) class_of[h.classes[k].cpu_model_code] = static_cast<std::uint32_t>(k);
  h.row_class.resize(jobs.rows() - first_row);
  h.row_speed.resize(jobs.rows() - first_row);
  for (std::size_t r = first_row; r < jobs.rows(); ++r) {
    h.row_class[r - first_row] = class_of[model[r]];
    h.row_speed[r - first_row] = speed[r];
  }
  return h;
}

namespace {

// `t` with rows [first_row, rows) moved onto host `hc`: a new table built column by column
// (JobTable::append_columns), every other value as it was, so that the history matrix of `t`
// still lines up with it row for row.
JobTable moved_to_host(const JobTable& t, std::size_t first_row, const HostClass& hc) {
  std::vector<NumberColumnIn> numbers;
  std::vector<CategoryColumnIn> categories;
  std::vector<double> speed(t.num(Field::HostSpeed).begin(), t.num(Field::HostSpeed).end());
  std::vector<double> mhz(t.num(Field::CpuMhz).begin(), t.num(Field::CpuMhz).end());
  std::fill(speed.begin() + static_cast<std::ptrdiff_t>(first_row), speed.end(), hc.speed);
  std::fill(mhz.begin() + static_cast<std::ptrdiff_t>(first_row), mhz.end(), hc.cpu_mhz);
  std::vector<std::vector<std::int64_t>> codes;
  std::vector<std::vector<std::string_view>> values;
  codes.reserve(kNumFields);
  values.reserve(kNumFields);
  for (const FieldInfo& f : kFields) {
    if (f.kind != FieldKind::Category) {
      const std::span<const double> v = f.field == Field::HostSpeed ? std::span<const double>(speed)
                                        : f.field == Field::CpuMhz  ? std::span<const double>(mhz)
                                                                    : t.num(f.field);
      numbers.push_back({f.field, v});
      continue;
    }
    const auto c = t.codes(f.field);
    auto& out = codes.emplace_back(c.size());
    for (std::size_t r = 0; r < c.size(); ++r) out[r] = c[r] == kMissingCode ? -1 : static_cast<std::int64_t>(c[r]);
    if (f.field == Field::CpuModel)
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(first_row), out.end(), static_cast<std::int64_t>(hc.cpu_model_code));
    auto& names = values.emplace_back();
    for (const std::string& v : t.dict(f.field).values()) names.push_back(v);
    categories.push_back({f.field, out, names});
  }
  JobTable moved;
  moved.append_columns(numbers, categories);
  return moved;
}

}  // namespace

void predict_on_host_classes(HostClasses& hosts, const ChronologicalSplit& split, std::size_t first_row,
                             const HistoryMatrix& history, const Predictor& predictor) {
  const std::size_t n = split.jobs.rows() - first_row, k = hosts.classes.size();
  std::vector<std::size_t> rows(n);
  std::iota(rows.begin(), rows.end(), first_row);
  hosts.predictions.assign(n * k, Prediction{});
  for (std::size_t c = 0; c < k; ++c) {
    // One moved copy of the table at a time.
    const std::vector<Prediction> p = predictor.predict_rows(moved_to_host(split.jobs, first_row, hosts.classes[c]), rows, history);
    for (std::size_t i = 0; i < n; ++i) hosts.predictions[i * k + c] = p[i];
  }
}

}  // namespace ttlpred::sim
