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

void SvgWriter::rect(double x, double y, double w, double h, std::string_view fill, std::string_view extra) {
  body_ += "<rect x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" width=\"" + coord(w) + "\" height=\"" + coord(h) +
           "\" fill=\"" + std::string(fill) + "\"";
  if (!extra.empty()) body_ += " " + std::string(extra);
  body_ += "/>";
}

void SvgWriter::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
                     std::string_view dash) {
  body_ += "<line x1=\"" + coord(x1) + "\" y1=\"" + coord(y1) + "\" x2=\"" + coord(x2) + "\" y2=\"" + coord(y2) +
           "\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + coord(width) + "\"";
  if (!dash.empty()) body_ += " stroke-dasharray=\"" + std::string(dash) + "\"";
  body_ += "/>";
}

void SvgWriter::polyline(const std::vector<Point>& points, std::string_view stroke, double width, std::string_view dash) {
  if (points.empty()) return;
  body_ += "<polyline fill=\"none\" stroke=\"" + std::string(stroke) + "\" stroke-width=\"" + coord(width) + "\"";
  if (!dash.empty()) body_ += " stroke-dasharray=\"" + std::string(dash) + "\"";
  body_ += " points=\"";
  for (const Point& p : points) body_ += coord(p.x) + "," + coord(p.y) + " ";
  body_ += "\"/>";
}

void SvgWriter::circle(double x, double y, double r, std::string_view fill) {
  body_ += "<circle cx=\"" + coord(x) + "\" cy=\"" + coord(y) + "\" r=\"" + coord(r) + "\" fill=\"" +
           std::string(fill) + "\"/>";
}

void SvgWriter::text(double x, double y, std::string_view content, std::string_view anchor, double size, double rotate,
                     bool bold) {
  body_ += "<text x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" font-size=\"" + coord(size) + "\" text-anchor=\"" +
           std::string(anchor) + "\"";
  if (bold) body_ += " font-weight=\"bold\"";
  if (rotate != 0) body_ += " transform=\"rotate(" + coord(rotate) + " " + coord(x) + " " + coord(y) + ")\"";
  body_ += ">" + escape_xml(content) + "</text>";
}

std::string SvgWriter::finish() const {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"" + coord(width_) + "\" height=\"" +
         coord(height_) + "\" viewBox=\"0 0 " + coord(width_) + " " + coord(height_) +
         "\" font-family=\"sans-serif\"><title>" + escape_xml(title_) + "</title>" + body_ + "</svg>";
}

}  // namespace ttlpred::report
