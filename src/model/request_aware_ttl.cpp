#include "model/request_aware_ttl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.hpp"

namespace ttlpred {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr std::size_t kCostSample = 512;  // rows per bin that price a bin's TTLs
constexpr std::size_t kLookahead = 8;     // kills per move: savings are not convex in k
constexpr std::size_t kFirstLookahead = 256;

double safe_at(double p, double requested, double q, double floor_s) {
  p = std::max(p, floor_s);
  if (!(requested > p) || q >= 1.0) return requested;
  return std::min(requested, p * std::exp(q * std::log(requested / p)));
}

// One bin of p / R: its finite scores (descending) with the weight a kill of each costs,
// and a sample pricing its TTLs.
struct Bin {
  std::vector<float> scores;
  std::vector<double> kill_weight;  // prefix sums: weight of the k highest scores at [k]
  std::vector<float> sample_p, sample_r;
  double weight = 0;  // rows in the bin per sampled row
  std::size_t k = 0;  // kills granted so far
  double cost_now = 0;
  double best_rank = 0;
  std::size_t best_j = 0;
  double min_ratio = 0;  // seconds of TTL a kill must free to be worth it

  // k = 0 grants no kill: the request itself. k >= 1: the (k+1)-th largest score, which at
  // most k calibration jobs exceed.
  double max_exponent = 0.9;
  // Exponents near 1 cut almost nothing off the request yet kill the jobs that run to their
  // limit, so anything above max_exponent is the request itself.
  double q_for(std::size_t kills) const {
    if (kills == 0 || scores[kills] > max_exponent) return 1.0;
    return static_cast<double>(scores[kills]);
  }
  double cost(std::size_t kills, double floor_s) const {
    const double q = q_for(kills);
    double s = 0;
    for (std::size_t i = 0; i < sample_p.size(); ++i) s += safe_at(sample_p[i], sample_r[i], q, floor_s);
    return s * weight;
  }
  double weight_of(std::size_t more) const { return kill_weight[k + more] - kill_weight[k]; }
  // The move of j more kills within both budgets that frees the most TTL per unit of the
  // scarcer resource (kills or weight, both in mean rows); each kill must free min_ratio.
  void find_best_move(std::size_t budget, double weight_budget, double floor_s) {
    best_rank = 0;
    best_j = 0;
    // Leaving the request may take many kills at once (every score above max_exponent).
    const std::size_t lookahead = q_for(k) >= 1.0 ? kFirstLookahead : kLookahead;
    for (std::size_t j = 1; j <= lookahead && j <= budget && k + j < scores.size(); ++j) {
      const double spent = weight_of(j);
      if (spent > weight_budget) break;  // prefix sums only grow
      const double saved = cost_now - cost(k + j, floor_s);
      if (!(saved / static_cast<double>(j) > min_ratio)) continue;
      const double rank = saved / std::max(static_cast<double>(j), spent);
      if (rank > best_rank) {
        best_rank = rank;
        best_j = j;
      }
    }
  }
};

}  // namespace

const char* kill_budget_name(KillBudget b) { return b == KillBudget::CpuTime ? "cpu-time" : "count"; }

KillBudget kill_budget_from_name(const std::string& name) {
  if (name == "count") return KillBudget::Count;
  if (name == "cpu-time") return KillBudget::CpuTime;
  throw Error("unknown kill budget '" + name + "' (expected count or cpu-time)");
}

const std::vector<double>& request_aware_alpha_grid() {
  static const std::vector<double> grid = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1};
  return grid;
}

double request_aware_score(double wall_s, double pred_s, double requested_s, double floor_s) {
  const double p = std::max(std::isfinite(pred_s) ? pred_s : floor_s, floor_s);
  const double w = std::max(std::isfinite(wall_s) ? wall_s : floor_s, floor_s);
  if (!(requested_s > p * (1 + 1e-9)) || w > requested_s) return kNegInf;
  return std::log(w / p) / std::log(requested_s / p);
}

std::size_t RequestAwareCalibration::bin_of(double ratio) const {
  return static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), ratio) - edges.begin());
}

double RequestAwareCalibration::exponent(double ratio, double alpha) const {
  const auto it = std::upper_bound(alphas.begin(), alphas.end(), alpha * (1 + 1e-9));
  if (it == alphas.begin()) return 1.0;
  return q[static_cast<std::size_t>(it - alphas.begin()) - 1][bin_of(ratio)];
}

double RequestAwareCalibration::safe_ttl(double pred_s, double requested_s, double alpha) const {
  if (!(alpha > 0.0 && alpha < 1.0)) throw Error("safe-TTL alpha must lie in (0, 1), got " + std::to_string(alpha));
  const double p = std::max(std::isfinite(pred_s) ? std::min(pred_s, requested_s) : floor_s, floor_s);
  return safe_at(p, requested_s, exponent(p / requested_s, alpha), floor_s);
}

void RequestAwareCalibration::write(BinaryWriter& w) const {
  w.put<double>(floor_s);
  w.put_vector(edges);
  w.put_vector(alphas);
  for (const auto& row : q) w.put_vector(row);
}

RequestAwareCalibration RequestAwareCalibration::read(BinaryReader& r) {
  RequestAwareCalibration c;
  c.floor_s = r.get<double>();
  if (!(c.floor_s > 0.0) || !std::isfinite(c.floor_s)) r.fail("request-aware safe-TTL floor must be a positive number");
  c.edges = r.get_vector<float>(1u << 16);
  for (std::size_t i = 0; i < c.edges.size(); ++i)
    if (!std::isfinite(c.edges[i]) || (i > 0 && c.edges[i] < c.edges[i - 1]))
      r.fail("request-aware safe-TTL bin edges are not finite and ascending");
  c.alphas = r.get_vector<double>(1u << 10);
  for (std::size_t i = 0; i < c.alphas.size(); ++i)
    if (!(c.alphas[i] > 0 && c.alphas[i] < 1) || (i > 0 && c.alphas[i] <= c.alphas[i - 1]))
      r.fail("request-aware safe-TTL alphas are not strictly ascending in (0, 1)");
  for (std::size_t a = 0; a < c.alphas.size(); ++a) {
    c.q.push_back(r.get_vector<float>(1u << 16));
    if (c.q.back().size() != c.edges.size() + 1) r.fail("request-aware safe-TTL table has the wrong number of bins");
    for (float v : c.q.back())
      if (!std::isfinite(v) || v > 1.0f) r.fail("request-aware safe-TTL exponent is not a finite number <= 1");
  }
  return c;
}

RequestAwareCalibration calibrate_request_aware(std::span<const float> wall_s, std::span<const float> pred_s,
                                                std::span<const float> requested_s,
                                                const RequestAwareOptions& options, std::span<const float> weight) {
  if (wall_s.size() != pred_s.size() || wall_s.size() != requested_s.size())
    throw Error("request-aware calibration: run times, predictions and requests differ in length");
  const bool weighted = options.budget == KillBudget::CpuTime;
  if (weighted && !weight.empty() && weight.size() != wall_s.size())
    throw Error("request-aware calibration: run times and kill weights differ in length");
  if (wall_s.empty()) throw Error("request-aware calibration needs at least one calibration row");
  if (!(options.alpha_scale > 0 && options.alpha_scale <= 1)) throw Error("safe-TTL alpha scale must be in (0, 1]");
  if (!(options.max_exponent > 0 && options.max_exponent <= 1)) throw Error("safe-TTL max exponent must be in (0, 1]");
  if (!(options.min_saving_per_kill >= 0)) throw Error("safe-TTL minimum saving per kill must be >= 0");
  const std::size_t n = wall_s.size();
  const double fl = options.floor_s;
  std::vector<double> ratio(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!(requested_s[i] > 0)) throw Error("request-aware calibration: row " + std::to_string(i) + " has no request");
    const double p = std::max(std::isfinite(pred_s[i]) ? std::min<double>(pred_s[i], requested_s[i]) : fl, fl);
    ratio[i] = p / requested_s[i];
  }
  // Kill weights in units of the mean row, so that both budgets count "rows": unweighted,
  // every row weighs 1 and the weight budget never binds before the count.
  std::vector<double> unit(n, 1.0);
  if (weighted) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double w = weight.empty() ? std::max<double>(std::isfinite(wall_s[i]) ? wall_s[i] : fl, fl) : weight[i];
      if (!(w > 0) || !std::isfinite(w))
        throw Error("request-aware calibration: row " + std::to_string(i) + " has kill weight " + std::to_string(w) +
                    " (must be a positive number)");
      unit[i] = w;
      sum += w;
    }
    for (double& u : unit) u *= static_cast<double>(n) / sum;
  }

  RequestAwareCalibration c;
  c.floor_s = fl;
  const std::size_t n_bins = std::clamp<std::size_t>(n / std::max<std::size_t>(options.min_bin_rows, 1), 1,
                                                     std::max<std::size_t>(options.max_bins, 1));
  std::vector<double> sorted = ratio;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t b = 1; b < n_bins; ++b) c.edges.push_back(static_cast<float>(sorted[b * n / n_bins]));

  std::vector<Bin> bins(n_bins);
  std::vector<std::vector<std::size_t>> members(n_bins);
  std::vector<std::vector<std::pair<float, double>>> scored(n_bins);  // (score, kill weight)
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t b = c.bin_of(ratio[i]);
    members[b].push_back(i);
    const double s = request_aware_score(wall_s[i], ratio[i] * requested_s[i], requested_s[i], fl);
    if (std::isfinite(s)) scored[b].emplace_back(static_cast<float>(s), unit[i]);
  }
  for (std::size_t b = 0; b < n_bins; ++b) {
    Bin& bin = bins[b];
    // Descending scores; among equal scores the lighter kill first (either is killed by the
    // same exponent, and the prefix sums then stay a lower bound of any order's).
    std::sort(scored[b].begin(), scored[b].end(),
              [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
    bin.kill_weight.assign(1, 0.0);
    for (const auto& [score, w] : scored[b]) {
      bin.scores.push_back(score);
      bin.kill_weight.push_back(bin.kill_weight.back() + w);
    }
    const auto& m = members[b];
    const std::size_t take = std::min(m.size(), kCostSample);
    for (std::size_t j = 0; j < take; ++j) {
      const std::size_t i = m[j * m.size() / take];
      bin.sample_p.push_back(static_cast<float>(ratio[i] * requested_s[i]));
      bin.sample_r.push_back(requested_s[i]);
    }
    bin.weight = take ? static_cast<double>(m.size()) / static_cast<double>(take) : 0.0;
    double sum_req = 0;
    for (std::size_t i : m) sum_req += requested_s[i];
    bin.max_exponent = options.max_exponent;
    bin.min_ratio = m.empty() ? 0.0 : options.min_saving_per_kill * sum_req / static_cast<double>(m.size());
    bin.cost_now = bin.cost(0, fl);
  }

  // One greedy pass with a growing budget: each alpha's table is the allocation reached when
  // its budget is spent (greedy allocations nest, so larger alphas never tighten less).
  std::size_t spent = 0;
  double spent_weight = 0;
  for (double alpha : request_aware_alpha_grid()) {
    const double scaled = alpha * options.alpha_scale * static_cast<double>(n);
    const auto budget = static_cast<std::size_t>(std::floor(scaled));
    const auto left = [&] { return budget - std::min(budget, spent); };
    const auto weight_left = [&] { return std::max(0.0, scaled - spent_weight); };
    for (auto& bin : bins) bin.find_best_move(left(), weight_left(), fl);
    while (spent < budget) {
      std::size_t best = n_bins;
      for (std::size_t b = 0; b < n_bins; ++b)
        if (bins[b].best_j > 0 && (best == n_bins || bins[b].best_rank > bins[best].best_rank)) best = b;
      if (best == n_bins) break;
      Bin& bin = bins[best];
      spent_weight += bin.weight_of(bin.best_j);
      bin.k += bin.best_j;
      spent += bin.best_j;
      bin.cost_now = bin.cost(bin.k, fl);
      for (auto& other : bins)
        if (&other == &bin || other.best_j > left() || other.weight_of(other.best_j) > weight_left())
          other.find_best_move(left(), weight_left(), fl);
    }
    c.alphas.push_back(alpha);
    std::vector<float> row(n_bins);
    for (std::size_t b = 0; b < n_bins; ++b) row[b] = static_cast<float>(bins[b].q_for(bins[b].k));
    c.q.push_back(std::move(row));
  }
  return c;
}

}  // namespace ttlpred
