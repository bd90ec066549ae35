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
  const std::string st = policy_table_caption(0.01, o);
  EXPECT_NE(st.find("alpha 0.01 through the model's static calibration"), std::string::npos) << st;
  EXPECT_NE(st.find("`simulate --calibration static`"), std::string::npos) << st;
  o.calibration = "aci-cpu";
  const std::string on = policy_table_caption(0.005, o);
  EXPECT_NE(on.find("alpha 0.005 through the `aci-cpu` online calibration (gamma 0.002, target 0.75 alpha)"),
            std::string::npos)
      << on;
  o.calibration = "nope";
  EXPECT_THROW(policy_table_caption(0.01, o), Error);
}

TEST(PolicyTable, GapClosed) {
  EXPECT_DOUBLE_EQ(gap_closed(100, 75, 50), 0.5);
  EXPECT_TRUE(std::isnan(gap_closed(1, 2, 1)));
}

}  // namespace
}  // namespace ttlpred::sim
