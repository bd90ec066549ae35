#include "report/html_page.hpp"

#include "report/svg_writer.hpp"

namespace ttlpred::report {

// Appends piece by piece rather than with `"literal" + std::string`, where g++ 12 at -O3
// reports a false -Wrestrict overlap (GCC bug 105329).
void HtmlPage::add_heading(const std::string& text) {
  body_.append("<h2>").append(escape_xml(text)).append("</h2>\n");
}

void HtmlPage::add_paragraph(const std::string& text) { body_.append("<p>").append(escape_xml(text)).append("</p>\n"); }

void HtmlPage::add_facts(const std::vector<std::pair<std::string, std::string>>& rows) {
  body_ += "<table>";
  for (const auto& [k, v] : rows)
    body_.append("<tr><th>").append(escape_xml(k)).append("</th><td>").append(escape_xml(v)).append("</td></tr>");
  body_ += "</table>\n";
}

void HtmlPage::add_chart(const std::string& svg, const std::string& caption) {
  ++charts_;
  const std::string n = std::to_string(charts_);
  body_.append("<figure id=\"chart-").append(n).append("\">").append(svg).append("<figcaption>Figure ").append(n);
  body_.append(". ").append(escape_xml(caption)).append("</figcaption></figure>\n");
}

std::string HtmlPage::html() const {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>";
  out.append(escape_xml(title_));
  out += "</title>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<style>body{font-family:sans-serif;max-width:820px;margin:2em auto;padding:0 1em;color:#222}"
         "h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}"
         "figure{margin:1.5em 0}svg{max-width:100%;height:auto;border:1px solid #eee}"
         "figcaption{font-size:.9em;color:#444;margin-top:.3em}table{border-collapse:collapse}"
         "th,td{text-align:left;padding:.15em .8em .15em 0;font-size:.95em}th{color:#555;font-weight:normal}"
         "</style></head>\n<body>\n<h1>";
  out.append(escape_xml(title_)).append("</h1>\n").append(body_).append("</body></html>\n");
  return out;
}

}  // namespace ttlpred::report
