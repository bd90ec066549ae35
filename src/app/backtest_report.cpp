#include "app/backtest_report.hpp"

#include <algorithm>
#include <cmath>

#include "app/eval_report.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/percent_text.hpp"

namespace ttlpred::app {
namespace {

bool flagged(double kill_rate, double alpha) { return kill_rate > kKillFlagFactor * alpha; }

struct Summary {
  double mean_kill = 0, worst_kill = 0, mean_ttl_h = 0, worst_split = 0;
};

Summary summarize(const Backtest& b, OnlineMethod m, double alpha) {
  Summary s;
  std::size_t n = 0;
  for (const auto& sp : b.splits) {
    const MethodScore* ms = sp.find(m, alpha);
    if (!ms) continue;
    s.mean_kill += ms->kill_rate;
    s.mean_ttl_h += ms->mean_safe_ttl_hours;
    if (n == 0 || ms->kill_rate > s.worst_kill) {
      s.worst_kill = ms->kill_rate;
      s.worst_split = sp.split;
    }
    ++n;
  }
  if (n) {
    s.mean_kill /= static_cast<double>(n);
    s.mean_ttl_h /= static_cast<double>(n);
  }
  return s;
}

struct WindowSummary {
  std::size_t windows = 0, within = 0, above_double = 0;
  double worst = 0;
};

// Windows with at least min_window_rows jobs, merged across splits, of one method.
WindowSummary summarize_windows(const Backtest& b, OnlineMethod m) {
  WindowSummary w;
  const double a = b.options.alpha;
  for (const auto& win : merged_windows(b, m)) {
    if (win.rows < b.options.min_window_rows) continue;
    ++w.windows;
    if (win.kill_rate <= kKillFlagFactor * a) ++w.within;
    if (win.kill_rate > 2 * kKillFlagFactor * a) ++w.above_double;
    w.worst = std::max(w.worst, win.kill_rate);
  }
  return w;
}

std::string pct(double v) { return percent_text(v, 2); }

}  // namespace

nlohmann::json backtest_json(const Backtest& b, const std::string& data) {
  const auto& o = b.options;
  nlohmann::json j;
  j["data"] = data;
  j["scored_until"] = "next split (the last split: the end of the trace)";
  j["alpha"] = o.alpha;
  j["alphas"] = o.alphas;
  j["default_method"] = std::string(online_method_name(o.default_method));
  j["online"] = {{"gamma", o.online.gamma},
                 {"target_scale", o.online.target_scale},
                 {"capped_target_scale", o.online.capped_target_scale},
                 {"level_cap", o.online.level_cap},
                 {"log_step", o.online.log_level}};
  j["splits"] = nlohmann::json::array();
  for (const auto& s : b.splits) {
    nlohmann::json js = {{"split", s.split},
                         {"end", s.end},
                         {"train_rows", s.train_rows},
                         {"rows_scored", s.scored_rows},
                         {"rmse_hours", number_or_null(s.rmse_hours)},
                         {"rmse_to_end_hours", number_or_null(s.rmse_to_end_hours)},
                         {"baseline_rmse_hours", number_or_null(s.baseline_rmse_hours)},
                         {"mean_requested_ttl_hours", number_or_null(s.mean_requested_ttl_hours)},
                         {"fit_seconds", s.fit_seconds},
                         {"model_reused", s.model_reused}};
    js["scores"] = nlohmann::json::array();
    for (const auto& ms : s.scores) {
      nlohmann::json jm = {{"method", std::string(online_method_name(ms.method))},
                           {"alpha", ms.alpha},
                           {"killed", ms.killed},
                           {"kill_rate", ms.kill_rate},
                           {"mean_safe_ttl_hours", ms.mean_safe_ttl_hours},
                           {"kill_rate_above_1_5_alpha", flagged(ms.kill_rate, ms.alpha)}};
      js["scores"].push_back(std::move(jm));
    }
    js["simple_rule"] = nlohmann::json::array();
    for (const auto& r : s.simple_rule)
      js["simple_rule"].push_back({{"margin", r.margin}, {"kill_rate", r.kill_rate}, {"mean_ttl_hours", r.mean_ttl_hours}});
    if (const auto& r = s.simple_rule_deployed)
      js["simple_rule_deployed"] = {{"margin", r->margin > 0 ? nlohmann::json(r->margin) : nlohmann::json(nullptr)},
                                    {"chosen_on", "calibration tail, kill rate <= alpha (margin null: the request)"},
                                    {"kill_rate", r->kill_rate},
                                    {"mean_ttl_hours", r->mean_ttl_hours},
                                    {"kill_rate_above_1_5_alpha", flagged(r->kill_rate, o.alpha)}};
    j["splits"].push_back(std::move(js));
  }
  j["summary"] = nlohmann::json::array();
  for (OnlineMethod m : o.methods)
    for (double a : o.alphas) {
      const Summary s = summarize(b, m, a);
      nlohmann::json js = {{"method", std::string(online_method_name(m))},
                           {"alpha", a},
                           {"mean_kill_rate", s.mean_kill},
                           {"worst_kill_rate", s.worst_kill},
                           {"worst_split", s.worst_split},
                           {"mean_safe_ttl_hours", s.mean_ttl_h}};
      if (a == o.alpha) {
        const WindowSummary w = summarize_windows(b, m);
        js["windows"] = {{"days", o.window_days},     {"min_rows", o.min_window_rows},
                         {"count", w.windows},        {"within_1_5_alpha", w.within},
                         {"above_3_alpha", w.above_double}, {"worst_kill_rate", w.worst}};
        js["windows"]["list"] = nlohmann::json::array();
        for (const auto& win : merged_windows(b, m))
          js["windows"]["list"].push_back({{"start_s", win.start_s}, {"rows", win.rows}, {"killed", win.killed},
                                           {"kill_rate", number_or_null(win.kill_rate)}});
      }
      j["summary"].push_back(std::move(js));
    }
  return j;
}

void write_backtest_jobs(const Backtest& b, const std::string& path) {
  const auto& o = b.options;
  if (!o.keep_jobs) throw Error("write_backtest_jobs: the backtest did not keep its scored jobs");
  write_file_atomic_stream(path, [&](std::FILE* out) {
    std::fprintf(out, "split,submit_s,wait_s,wall_s,requested_s,user_q99_s,pred_s");
    for (OnlineMethod m : o.methods) std::fprintf(out, ",ttl_%s", std::string(online_method_name(m)).c_str());
    for (double level : o.job_levels) std::fprintf(out, ",static_ttl_%g", level);
    std::fprintf(out, ",upper_s,cold\n");
    for (const auto& s : b.splits) {
      const ScoredJobs& j = s.jobs;
      for (std::size_t i = 0; i < j.submit_s.size(); ++i) {
        std::fprintf(out, "%g,%.17g,%.17g,%.17g,%.17g,", s.split, j.submit_s[i], j.wait_s[i], j.wall_s[i], j.requested_s[i]);
        if (!std::isnan(j.user_q99_s[i])) std::fprintf(out, "%.17g", j.user_q99_s[i]);
        std::fprintf(out, ",%.17g", j.pred_s[i]);
        for (const auto& ttl : j.method_ttl_s) std::fprintf(out, ",%.17g", ttl[i]);
        for (const auto& ttl : j.static_ttl_s) std::fprintf(out, ",%.17g", ttl[i]);
        std::fprintf(out, ",");
        if (!std::isnan(j.upper_s[i])) std::fprintf(out, "%.17g", j.upper_s[i]);
        std::fprintf(out, ",%d\n", static_cast<int>(j.cold[i]));
      }
    }
  });
}

void print_backtest(std::FILE* out, const Backtest& b, const std::string& data, bool windows) {
  const auto& o = b.options;
  const double a = o.alpha;
  std::fprintf(out, "backtest of %s: each split's model scores the jobs up to the next split (the last: to the end)\n",
               data.c_str());
  std::fprintf(out, "\n%-6s %-6s %9s %8s %8s %13s %12s %9s %7s\n", "split", "end", "train", "scored", "RMSE h",
               "RMSE to end h", "request RMSE", "req TTL h", "fit s");
  for (const auto& s : b.splits)
    std::fprintf(out, "%-6.2f %-6.2f %9zu %8zu %8.3f %13.3f %12s %9s %7.1f\n", s.split, s.end, s.train_rows,
                 s.scored_rows, s.rmse_hours, s.rmse_to_end_hours, hours_text(s.baseline_rmse_hours).c_str(),
                 hours_text(s.mean_requested_ttl_hours).c_str(), s.fit_seconds);

  std::fprintf(out, "\nkill rate / mean safe TTL (h) at alpha %s; '!' marks a kill rate above %.1f x alpha\n",
               pct(a).c_str(), kKillFlagFactor);
  std::fprintf(out, "online levels: gamma %g, target %g x alpha (aci-capped %g, held at or below %g x alpha)%s\n",
               o.online.gamma, o.online.target_scale, o.online.capped_target_scale, o.online.level_cap,
               o.online.log_level ? ", stepped in log space (--log-step)" : "");
  std::fprintf(out, "%-6s", "split");
  for (OnlineMethod m : o.methods) std::fprintf(out, " %20s", std::string(online_method_name(m)).c_str());
  const bool rule = !b.splits.empty() && !b.splits.front().simple_rule.empty();
  if (rule)
    std::fprintf(out, "   simple rule: %-22s   %s", ("tightest m, kill <= " + pct(kKillFlagFactor * a)).c_str(),
                 "m chosen on the calibration tail");
  std::fprintf(out, "\n");
  std::vector<std::string> warnings;
  for (const auto& s : b.splits) {
    std::fprintf(out, "%-6.2f", s.split);
    for (OnlineMethod m : o.methods) {
      const MethodScore* ms = s.find(m, a);
      const bool f = ms && flagged(ms->kill_rate, a);
      char cell[64];
      std::snprintf(cell, sizeof cell, "%s%s %.3f", ms ? pct(ms->kill_rate).c_str() : "-", f ? "!" : "",
                    ms ? ms->mean_safe_ttl_hours : 0.0);
      std::fprintf(out, " %20s", cell);
    }
    char hindsight[64] = "";
    if (const SimpleRuleScore* r = tightest_simple_rule(s, kKillFlagFactor * a))
      std::snprintf(hindsight, sizeof hindsight, "x%-4g %s %.3f", r->margin, pct(r->kill_rate).c_str(), r->mean_ttl_hours);
    else if (!s.simple_rule.empty())
      std::snprintf(hindsight, sizeof hindsight, "(no margin within %s)", pct(kKillFlagFactor * a).c_str());
    if (rule) std::fprintf(out, "                %-22s", hindsight);
    if (const auto& r = s.simple_rule_deployed) {
      char margin[16] = "request";
      if (r->margin > 0) std::snprintf(margin, sizeof margin, "x%g", r->margin);
      std::fprintf(out, "   %-7s %s%s %.3f", margin, pct(r->kill_rate).c_str(), flagged(r->kill_rate, a) ? "!" : "",
                   r->mean_ttl_hours);
    }
    std::fprintf(out, "\n");
  }
  for (const auto& s : b.splits)
    for (const auto& ms : s.scores)
      if (flagged(ms.kill_rate, ms.alpha)) {
        char line[200];
        std::snprintf(line, sizeof line, "WARNING: split %.2f, %s at alpha %s: kill rate %s is above %.1f x alpha",
                      s.split, std::string(online_method_name(ms.method)).c_str(), pct(ms.alpha).c_str(),
                      pct(ms.kill_rate).c_str(), kKillFlagFactor);
        warnings.push_back(line);
      }

  std::fprintf(out, "\nkill rate vs tightness over the splits: mean kill / worst kill (split) / mean safe TTL h\n");
  std::fprintf(out, "%-10s", "method");
  for (double al : o.alphas) std::fprintf(out, " %30s", ("alpha " + pct(al)).c_str());
  std::fprintf(out, "\n");
  for (OnlineMethod m : o.methods) {
    std::fprintf(out, "%-10s", std::string(online_method_name(m)).c_str());
    for (double al : o.alphas) {
      const Summary s = summarize(b, m, al);
      char cell[96];
      std::snprintf(cell, sizeof cell, "%s / %s%s (%.2f) / %.3f", pct(s.mean_kill).c_str(), pct(s.worst_kill).c_str(),
                    flagged(s.worst_kill, al) ? "!" : "", s.worst_split, s.mean_ttl_h);
      std::fprintf(out, " %30s", cell);
    }
    std::fprintf(out, "\n");
  }

  std::fprintf(out, "\n%g-day windows of >= %zu scored jobs at alpha %s: windows, share <= %.1f x alpha, above 3 x alpha, worst\n",
               o.window_days, o.min_window_rows, pct(a).c_str(), kKillFlagFactor);
  for (OnlineMethod m : o.methods) {
    const WindowSummary w = summarize_windows(b, m);
    std::fprintf(out, "%-10s %5zu  %s  %zu  %s\n", std::string(online_method_name(m)).c_str(), w.windows,
                 w.windows ? pct(static_cast<double>(w.within) / static_cast<double>(w.windows)).c_str() : "-",
                 w.above_double, pct(w.worst).c_str());
  }
  if (windows) {
    std::fprintf(out, "\nper window (%s, alpha %s): day since the first scored job, jobs, kill rate\n",
                 std::string(online_method_name(o.default_method)).c_str(), pct(a).c_str());
    for (const auto& w : merged_windows(b, o.default_method))
      std::fprintf(out, "%8.1f %7zu %s%s\n", (w.start_s - b.window_origin_s) / 86400.0, w.rows,
                   pct(w.kill_rate).c_str(), flagged(w.kill_rate, a) ? "!" : "");
  }
  if (!warnings.empty()) std::fprintf(out, "\n");
  for (const auto& w : warnings) std::fprintf(out, "%s\n", w.c_str());
}

}  // namespace ttlpred::app
