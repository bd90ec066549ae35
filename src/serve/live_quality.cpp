#include "serve/live_quality.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "model/online_calibration.hpp"

namespace ttlpred::serve {
namespace {

constexpr std::size_t kDayMinutes = 1440;
constexpr std::uint32_t kStateVersion = 1;

std::int64_t minute_of(double t) { return static_cast<std::int64_t>(std::floor(t / 60.0)); }

}  // namespace

void LiveQuality::Sums::add(const Sums& s) {
  n += s.n;
  kills += s.kills;
  covered += s.covered;
  sq_err_h += s.sq_err_h;
  log_err += s.log_err;
  safe_req += s.safe_req;
  req += s.req;
  n_req += s.n_req;
}

LiveQuality::LiveQuality() : ring_(kCountWindows.back()), minutes_(kDayMinutes) {}

LiveQuality::Sums LiveQuality::terms(const ScoredOutcome& o) {
  Sums s;
  s.n = 1;
  s.kills = killed_by(o.wall_s, o.safe_ttl_s, o.requested_s);
  s.covered = o.wall_s <= o.safe_ttl_s ? 1 : 0;
  const double err_h = (o.expected_s - o.wall_s) / 3600.0;
  s.sq_err_h = err_h * err_h;
  s.log_err = std::log(std::max(o.expected_s, 1.0)) - std::log(std::max(o.wall_s, 1.0));
  if (o.requested_s > 0) {
    s.safe_req = o.safe_ttl_s;
    s.req = o.requested_s;
    s.n_req = 1;
  }
  return s;
}

QualityFigures LiveQuality::figures(const Sums& s) {
  QualityFigures f;
  f.outcomes = static_cast<std::uint64_t>(s.n);
  f.safe_over_request = s.req > 0 ? s.safe_req / s.req : std::numeric_limits<double>::quiet_NaN();
  if (s.n == 0) {
    const double none = std::numeric_limits<double>::quiet_NaN();
    f.kill_rate = f.coverage = f.rmse_h = f.rmse_s = f.mean_log_error = none;
    return f;
  }
  f.kill_rate = s.kills / s.n;
  f.coverage = s.covered / s.n;
  f.rmse_h = std::sqrt(s.sq_err_h / s.n);
  f.rmse_s = 3600 * f.rmse_h;
  f.mean_log_error = s.log_err / s.n;
  return f;
}

void LiveQuality::add(const ScoredOutcome& o) {
  const Sums t = terms(o);
  ring_[next_] = t;
  next_ = (next_ + 1) % ring_.size();
  filled_ = std::min(filled_ + 1, ring_.size());
  if (!std::isfinite(o.received_at)) return;
  const std::int64_t m = minute_of(o.received_at);
  Minute& b = minutes_[static_cast<std::size_t>(((m % 1440) + 1440) % 1440)];
  if (b.minute > m) return;  // the clock stepped back over a day: no minute to put it in
  if (b.minute != m) b = Minute{m, {}};
  b.sums.add(t);
}

QualityFigures LiveQuality::last(std::size_t n) const {
  Sums s;
  const std::size_t k = std::min({n, filled_, ring_.size()});
  for (std::size_t i = 1; i <= k; ++i) s.add(ring_[(next_ + ring_.size() - i) % ring_.size()]);
  return figures(s);
}

QualityFigures LiveQuality::within(double now, double seconds) const {
  Sums s;
  const std::int64_t to = minute_of(now);
  const std::int64_t from = to - std::max<std::int64_t>(1, static_cast<std::int64_t>(seconds / 60.0)) + 1;
  for (const Minute& b : minutes_)
    if (b.minute >= from && b.minute <= to) s.add(b.sums);
  return figures(s);
}

void LiveQuality::write_state(BinaryWriter& w) const {
  w.put<std::uint32_t>(kStateVersion);
  auto put = [&](const Sums& s) {
    for (double v : {s.n, s.kills, s.covered, s.sq_err_h, s.log_err, s.safe_req, s.req, s.n_req}) w.put<double>(v);
  };
  // Oldest first, so that a restore adds them back in order.
  w.put<std::uint64_t>(filled_);
  for (std::size_t i = filled_; i >= 1; --i) put(ring_[(next_ + ring_.size() - i) % ring_.size()]);
  std::uint64_t used = 0;
  for (const Minute& b : minutes_) used += b.minute >= 0 ? 1 : 0;
  w.put<std::uint64_t>(used);
  for (const Minute& b : minutes_)
    if (b.minute >= 0) {
      w.put<std::int64_t>(b.minute);
      put(b.sums);
    }
}

void LiveQuality::read_state(BinaryReader& r) {
  if (r.get<std::uint32_t>() != kStateVersion) r.fail("live quality state has an unknown version");
  auto get = [&] {
    Sums s;
    for (double* v : {&s.n, &s.kills, &s.covered, &s.sq_err_h, &s.log_err, &s.safe_req, &s.req, &s.n_req}) {
      *v = r.get<double>();
      if (!std::isfinite(*v)) r.fail("live quality state holds a non-finite sum");
    }
    return s;
  };
  const auto filled = r.get<std::uint64_t>();
  if (filled > ring_.size()) r.fail("live quality state holds more outcomes than its window");
  std::vector<Sums> ring(ring_.size());
  for (std::size_t i = 0; i < filled; ++i) ring[i] = get();
  const auto used = r.get<std::uint64_t>();
  if (used > kDayMinutes) r.fail("live quality state holds more minutes than a day");
  std::vector<Minute> minutes(kDayMinutes);
  for (std::uint64_t i = 0; i < used; ++i) {
    const auto m = r.get<std::int64_t>();
    if (m < 0) r.fail("live quality state holds a negative minute");
    minutes[static_cast<std::size_t>(m % 1440)] = Minute{m, get()};
  }
  ring_ = std::move(ring);
  filled_ = static_cast<std::size_t>(filled);
  next_ = filled_ % ring_.size();
  minutes_ = std::move(minutes);
}

}  // namespace ttlpred::serve
