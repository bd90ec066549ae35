// The chart library's contract: every chart carries its title, axis titles with units and
// a legend entry per series; ticks are readable numbers; text is escaped; the page holds no
// script and no external reference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "report/bar_chart.hpp"
#include "report/density_chart.hpp"
#include "report/html_page.hpp"
#include "report/line_chart.hpp"
#include "report/scale.hpp"
#include "report/svg_writer.hpp"

namespace ttlpred::report {
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(Scale, LinearTicksAreOneTwoFiveSteps) {
  const Scale s(0, 1, 0, 100, false);
  const auto t = s.ticks();
  ASSERT_EQ(t.size(), 6u);
  EXPECT_DOUBLE_EQ(t[1], 0.2);
  EXPECT_DOUBLE_EQ(s(0.5), 50);
}

TEST(Scale, LogTicksArePowersOfTen) {
  const Scale s(1, 1e5, 0, 500, true);
  EXPECT_EQ(s.ticks(), (std::vector<double>{1, 10, 100, 1e3, 1e4, 1e5}));
  EXPECT_NEAR(s(100), 200, 1e-9);
  EXPECT_EQ(tick_label(1e4, false), "10k");
  EXPECT_EQ(tick_label(0.01, true), "1%");
}

TEST(Svg, TextIsEscaped) {
  EXPECT_EQ(escape_xml("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
  SvgWriter w(10, 10, "t<");
  w.text(0, 0, "<script>");
  const std::string svg = w.finish();
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("<title>t&lt;</title>"), std::string::npos);
}

TEST(LineChart, HasTitleAxesWithUnitsAndLegend) {
  LineChart c;
  c.title = "Kill rate per week";
  c.x = Axis{"week", ""};
  c.y = Axis{"kill rate", "%", false, 0, Axis::kAuto, true};
  c.series.push_back({"safe TTL", {{1, 0.01}, {2, 0.012}, {3, 0.009}}});
  c.series.push_back({"static rule", {{1, 0.002}, {2, 0.003}}, true});
  const std::string svg = draw_line_chart(c);
  EXPECT_NE(svg.find(">Kill rate per week<"), std::string::npos);
  EXPECT_NE(svg.find(">kill rate (%)<"), std::string::npos);
  EXPECT_NE(svg.find(">week<"), std::string::npos);
  EXPECT_NE(svg.find(">safe TTL<"), std::string::npos);
  EXPECT_NE(svg.find(">static rule<"), std::string::npos);
  EXPECT_EQ(count(svg, "<polyline"), 2u);
}

TEST(BarChart, OneBarPerKnownValue) {
  BarChart c;
  c.title = "Latency";
  c.x = Axis{"variant", ""};
  c.y = Axis{"median latency", "us"};
  c.categories = {"fp32", "int8"};
  c.series.push_back({"1 job", {1.5, NAN}});
  const std::string svg = draw_bar_chart(c);
  EXPECT_NE(svg.find(">median latency (us)<"), std::string::npos);
  EXPECT_NE(svg.find(">1.50<"), std::string::npos);
  EXPECT_NE(svg.find(">int8<"), std::string::npos);
}

// Bars start at zero on a linear axis: two close values (ttlpred's RMSE next to the
// request's) draw bars whose heights stand in the values' ratio, not a zero-height bar
// next to a full one.
TEST(BarChart, BarsOfCloseValuesStartAtZero) {
  BarChart c;
  c.title = "Run-time error";
  c.x = Axis{"group", ""};
  c.y = Axis{"RMSE", "h"};
  c.categories = {"all jobs"};
  c.series.push_back({"ttlpred", {4.41}});
  c.series.push_back({"request", {4.49}});
  const std::string svg = draw_bar_chart(c);
  std::vector<double> heights;
  for (std::size_t p = svg.find("<rect "); p != std::string::npos; p = svg.find("<rect ", p + 1)) {
    const std::size_t h = svg.find("height=\"", p) + 8;
    heights.push_back(std::stod(svg.substr(h, svg.find('"', h) - h)));
  }
  bool found = false;
  for (double a : heights)
    for (double b : heights)
      if (a > 10 && b > a && std::abs(a / b - 4.41 / 4.49) < 0.01) found = true;
  EXPECT_TRUE(found) << svg;
}

// A target drawn across the bars: a dashed line in the legend, and an axis that reaches it
// even when every bar is below it (kill rates of 0.6 % under a 1 % budget).
TEST(BarChart, AReferenceLineIsDrawnAndTheAxisReachesIt) {
  BarChart c;
  c.title = "Kill rate";
  c.x = Axis{"group", ""};
  c.y = Axis{"kill rate", "% of jobs", false, 0, Axis::kAuto, true};
  c.categories = {"all jobs", "MC"};
  c.series.push_back({"safe TTL kill rate", {0.006, 0.004}});
  c.references = {{"target: alpha 1%", 0.01}};
  const std::string svg = draw_bar_chart(c);
  EXPECT_NE(svg.find(">target: alpha 1%<"), std::string::npos) << svg;
  EXPECT_EQ(count(svg, "stroke-dasharray=\"7,4\""), 1u) << "the line across the plot";
  EXPECT_EQ(count(svg, "stroke-dasharray=\"6,4\""), 1u) << "its legend entry";
  EXPECT_NE(svg.find(">1%<"), std::string::npos) << "a tick at or above the target";
}

TEST(DensityChart, CountsEveryPositivePoint) {
  DensityChart c;
  c.title = "Predicted vs actual";
  c.x = Axis{"actual", "s"};
  c.y = Axis{"predicted", "s"};
  c.xs = {10, 100, 1000, -1};
  c.ys = {12, 90, 0, 5};
  const std::string svg = draw_density_chart(c);
  EXPECT_NE(svg.find(">2 jobs drawn<"), std::string::npos);
  EXPECT_NE(svg.find(">2 without a positive value<"), std::string::npos);
  EXPECT_NE(svg.find(">perfect prediction<"), std::string::npos);
}

TEST(HtmlPage, SelfContained) {
  HtmlPage page("Report & more");
  page.add_paragraph("x < y");
  page.add_chart(SvgWriter(5, 5, "c").finish(), "caption");
  const std::string html = page.html();
  EXPECT_EQ(page.charts(), 1u);
  EXPECT_NE(html.find("<title>Report &amp; more</title>"), std::string::npos);
  EXPECT_NE(html.find("x &lt; y"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
}

}  // namespace
}  // namespace ttlpred::report
