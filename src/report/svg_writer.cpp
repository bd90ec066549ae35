#include "report/svg_writer.hpp"

#include <cmath>
#include <cstdio>

namespace ttlpred::report {

std::string escape_xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string coord(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s(buf);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

SvgWriter::SvgWriter(double width, double height, std::string_view title)
    : width_(width), height_(height), title_(title) {}

// Pieces are appended one by one: g++ 12 at -O3 reports a false -Wrestrict overlap inside
// `"literal" + std::string` (GCC bug 105329), which chains of operator+ are full of.
void SvgWriter::append(std::initializer_list<std::string_view> pieces) {
  for (std::string_view p : pieces) body_.append(p);
}

void SvgWriter::rect(double x, double y, double w, double h, std::string_view fill, std::string_view extra) {
  append({"<rect x=\"", coord(x), "\" y=\"", coord(y), "\" width=\"", coord(w), "\" height=\"", coord(h), "\" fill=\"",
          fill, "\""});
  if (!extra.empty()) append({" ", extra});
  append({"/>"});
}

void SvgWriter::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
                     std::string_view dash) {
  append({"<line x1=\"", coord(x1), "\" y1=\"", coord(y1), "\" x2=\"", coord(x2), "\" y2=\"", coord(y2), "\" stroke=\"",
          stroke, "\" stroke-width=\"", coord(width), "\""});
  if (!dash.empty()) append({" stroke-dasharray=\"", dash, "\""});
  append({"/>"});
}

void SvgWriter::polyline(const std::vector<Point>& points, std::string_view stroke, double width, std::string_view dash) {
  if (points.empty()) return;
  append({"<polyline fill=\"none\" stroke=\"", stroke, "\" stroke-width=\"", coord(width), "\""});
  if (!dash.empty()) append({" stroke-dasharray=\"", dash, "\""});
  append({" points=\""});
  for (const Point& p : points) append({coord(p.x), ",", coord(p.y), " "});
  append({"\"/>"});
}

void SvgWriter::circle(double x, double y, double r, std::string_view fill) {
  append({"<circle cx=\"", coord(x), "\" cy=\"", coord(y), "\" r=\"", coord(r), "\" fill=\"", fill, "\"/>"});
}

void SvgWriter::text(double x, double y, std::string_view content, std::string_view anchor, double size, double rotate,
                     bool bold) {
  append({"<text x=\"", coord(x), "\" y=\"", coord(y), "\" font-size=\"", coord(size), "\" text-anchor=\"", anchor, "\""});
  if (bold) append({" font-weight=\"bold\""});
  if (rotate != 0) append({" transform=\"rotate(", coord(rotate), " ", coord(x), " ", coord(y), ")\""});
  append({">", escape_xml(content), "</text>"});
}

std::string SvgWriter::finish() const {
  std::string out;
  // One call, so the temporary strings the views point to live until the appends are done.
  auto join = [&out](std::initializer_list<std::string_view> pieces) {
    for (std::string_view p : pieces) out.append(p);
  };
  join({"<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"", coord(width_), "\" height=\"", coord(height_),
        "\" viewBox=\"0 0 ", coord(width_), " ", coord(height_), "\" font-family=\"sans-serif\"><title>",
        escape_xml(title_), "</title>", body_, "</svg>"});
  return out;
}

}  // namespace ttlpred::report
