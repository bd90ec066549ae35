#include "report/html_page.hpp"

#include "report/svg_writer.hpp"

namespace ttlpred::report {

void HtmlPage::add_heading(const std::string& text) { body_ += "<h2>" + escape_xml(text) + "</h2>\n"; }

void HtmlPage::add_paragraph(const std::string& text) { body_ += "<p>" + escape_xml(text) + "</p>\n"; }

void HtmlPage::add_facts(const std::vector<std::pair<std::string, std::string>>& rows) {
  body_ += "<table>";
  for (const auto& [k, v] : rows) body_ += "<tr><th>" + escape_xml(k) + "</th><td>" + escape_xml(v) + "</td></tr>";
  body_ += "</table>\n";
}

void HtmlPage::add_chart(const std::string& svg, const std::string& caption) {
  ++charts_;
  body_ += "<figure id=\"chart-" + std::to_string(charts_) + "\">" + svg + "<figcaption>Figure " + std::to_string(charts_) +
           ". " + escape_xml(caption) + "</figcaption></figure>\n";
}

std::string HtmlPage::html() const {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escape_xml(title_) +
         "</title>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<style>body{font-family:sans-serif;max-width:820px;margin:2em auto;padding:0 1em;color:#222}"
         "h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}"
         "figure{margin:1.5em 0}svg{max-width:100%;height:auto;border:1px solid #eee}"
         "figcaption{font-size:.9em;color:#444;margin-top:.3em}table{border-collapse:collapse}"
         "th,td{text-align:left;padding:.15em .8em .15em 0;font-size:.95em}th{color:#555;font-weight:normal}"
         "</style></head>\n<body>\n<h1>" +
         escape_xml(title_) + "</h1>\n" + body_ + "</body></html>\n";
}

}  // namespace ttlpred::report
