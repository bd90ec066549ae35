#pragma once
// The report page: one self-contained HTML file (inline CSS and SVG, no scripts, no
// external fonts or images), so it opens from a mail attachment or an air-gapped cluster and
// prints as it shows. Sections hold paragraphs, key/value tables and figures in order.
#include <string>
#include <utility>
#include <vector>

namespace ttlpred::report {

class HtmlPage {
 public:
  explicit HtmlPage(std::string title) : title_(std::move(title)) {}

  void add_heading(const std::string& text);
  void add_paragraph(const std::string& text);  // plain text: escaped
  // A two-column table of facts ("trace", "KTH-SP2.swf").
  void add_facts(const std::vector<std::pair<std::string, std::string>>& rows);
  // An <svg> from the chart library, with a caption under it.
  void add_chart(const std::string& svg, const std::string& caption);
  std::size_t charts() const { return charts_; }

  std::string html() const;

 private:
  std::string title_, body_;
  std::size_t charts_ = 0;
};

}  // namespace ttlpred::report
