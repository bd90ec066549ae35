// The caption above the pipeline's broker table says how the model's TTLs were answered.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/policy_table.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {
namespace {

TEST(PolicyTable, CaptionNamesTheCalibrationAndAlpha) {
  GridOptions o;
  // The default: aci-capped at its own target, with the batch guard.
  const std::string def = policy_table_caption(0.01, {o});
  EXPECT_NE(def.find("alpha 0.01; model through the `aci-capped` online calibration at gamma 0.002, target 0.6 alpha, "
                     "batch guard on"),
            std::string::npos)
      << def;
  EXPECT_NE(def.find("(`simulate --calibration aci-capped --gamma 0.002 --batch-guard on`; `serve --calibration aci-capped "
                     "--gamma 0.002 --batch-guard on` answers with the same; the default)"),
            std::string::npos)
      << def;
  GridOptions fixed;
  fixed.calibration = "static";
  const std::string st = policy_table_caption(0.01, {fixed});
  EXPECT_NE(st.find("alpha 0.01; model through the model's static calibration (`simulate --calibration static`)"),
            std::string::npos)
      << st;
  const std::string both = policy_table_caption(0.005, {o, recommended_online_options()});
  EXPECT_NE(both.find("; and model (`aci-log`) through the `aci-log` online calibration at gamma 0.002, "
                      "target 0.35 alpha, batch guard on"),
            std::string::npos)
      << both;
  EXPECT_NE(both.find("(`simulate --calibration aci-log --gamma 0.002 --target-scale 0.35 --batch-guard on`; `serve "
                      "--calibration aci-log --gamma 0.002 --target-scale 0.35 --batch-guard on` answers with the same)"),
            std::string::npos)
      << both;
  // A CPU-weighted rule is the simulator's own: the caption names no serve command for it.
  GridOptions cpu;
  cpu.calibration = "aci-cpu-log";
  cpu.gamma = 0.0005;
  const std::string sim_only = policy_table_caption(0.01, {fixed, cpu});
  EXPECT_NE(sim_only.find("(`simulate --calibration aci-cpu-log --gamma 0.0005 --target-scale 0.75 --batch-guard on`)"),
            std::string::npos)
      << sim_only;
  EXPECT_EQ(sim_only.find("serve --calibration"), std::string::npos) << sim_only;
  o.calibration = "nope";
  EXPECT_THROW(policy_table_caption(0.01, {o}), Error);
}

// Two model rows are told apart by their calibration, in the table and in the gap lines.
TEST(PolicyTable, ModelRowsAreLabelledByCalibration) {
  GridMetrics s, m, a, o;
  s.jobs_completed_per_day = 100;
  m.jobs_completed_per_day = 150;
  a.jobs_completed_per_day = 175;
  o.jobs_completed_per_day = 200;
  s.wasted_core_hours_ttl = 10;
  s.mean_wait_s = 10;
  const std::string md =
      policy_table_markdown({{"static", s, ""}, {"model", m, "static"}, {"model", a, "aci-cpu-log"}, {"oracle", o, ""}});
  EXPECT_NE(md.find("| model (`aci-cpu-log`) | 175 |"), std::string::npos) << md;
  EXPECT_NE(md.find("gap closed by the model (`static`): 100% of slot core-hours wasted for TTL, 100% of the mean wait, 50% "
                    "of jobs completed per day"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("by the model (`aci-cpu-log`): 100% of slot core-hours wasted for TTL, 100% of the mean wait, 75%"),
            std::string::npos)
      << md;
  const std::string one = policy_table_markdown({{"static", s, ""}, {"model", m, "static"}, {"oracle", o, ""}});
  EXPECT_NE(one.find("| model | 150 |"), std::string::npos) << one;
  EXPECT_NE(one.find("gap closed by the model: "), std::string::npos) << one;
}

TEST(PolicyTable, GapClosed) {
  EXPECT_DOUBLE_EQ(gap_closed(100, 75, 50), 0.5);
  EXPECT_TRUE(std::isnan(gap_closed(1, 2, 1)));
}

}  // namespace
}  // namespace ttlpred::sim
