// The model folder's settings (pipeline/model_cache.hpp): a cached model is reused only when
// every training option that changes the model is the same, so each such option must change
// the settings text, and a default one must leave it as models cached before it existed had
// (the piecewise bins excepted: their default changed what a model is).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "pipeline/model_cache.hpp"

namespace ttlpred {
namespace {

TEST(ModelCache, EveryModelChoiceChangesTheSettings) {
  const FitOptions plain;
  const std::string base = fit_settings_json(plain);
  // The bins are on by default (kDefaultPiecewiseBins): a model cached without them differs.
  EXPECT_NE(base.find("\"piecewise_bins\":8"), std::string::npos) << base;
  EXPECT_EQ(base.find("request_key"), std::string::npos);
  struct Case {
    const char* name;
    std::function<void(FitOptions&)> set;
  };
  const Case cases[] = {
      {"residual", [](FitOptions& o) { o.residual = true; }},
      {"request_key", [](FitOptions& o) { o.request_key = true; }},
      {"system_key", [](FitOptions& o) { o.system_key = true; }},
      {"censored_rates", [](FitOptions& o) { o.censored_rates = true; }},
      {"piecewise_bins", [](FitOptions& o) { o.encoder.piecewise_bins = 0; }},
      {"censored", [](FitOptions& o) { o.censored = true; }},
      {"at", [](FitOptions& o) { o.at = PredictionTime::Match; }},
      {"quantiles", [](FitOptions& o) { o.train.quantile_levels = {0.5, 0.99}; }},
  };
  for (const Case& c : cases) {
    FitOptions o;
    c.set(o);
    EXPECT_NE(fit_settings_json(o), base) << c.name;
  }
}

}  // namespace
}  // namespace ttlpred
