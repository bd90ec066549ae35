#pragma once
// Builds one SVG element as text: shapes, lines and text with escaped content and numbers
// written compactly. The charts write through it so that the markup (and its escaping) is
// in one place; the output is inline SVG for a page that must work without network or
// JavaScript.
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace ttlpred::report {

struct Point {
  double x = 0, y = 0;
};

// Text safe inside SVG/HTML content and attribute values.
std::string escape_xml(std::string_view s);
// A coordinate or value: at most 2 decimals, no trailing zeros ("12.5", "3").
std::string coord(double v);

class SvgWriter {
 public:
  // `title` becomes the SVG's <title>: what screen readers and tooltips say.
  SvgWriter(double width, double height, std::string_view title);

  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view extra = "");
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
            std::string_view dash = "");
  void polyline(const std::vector<Point>& points, std::string_view stroke, double width = 2, std::string_view dash = "");
  void circle(double x, double y, double r, std::string_view fill);
  // anchor: "start", "middle", "end"; rotate: degrees around (x, y).
  void text(double x, double y, std::string_view content, std::string_view anchor = "start", double size = 12,
            double rotate = 0, bool bold = false);
  // Raw markup, for what the helpers above do not cover.
  void raw(std::string_view markup) { body_.append(markup); }

  // The finished <svg> element.
  std::string finish() const;

 private:
  void append(std::initializer_list<std::string_view> pieces);

  double width_, height_;
  std::string title_, body_;
};

}  // namespace ttlpred::report
