#include "serve/request_framing.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include <boost/beast/http/error.hpp>

namespace ttlpred::serve {

namespace http = boost::beast::http;

// The status for a request that could not be read; 0 when there is nobody left to answer.
int status_for_read_error(const boost::beast::error_code& ec, bool in_request) {
  if (ec == boost::beast::error::timeout) return in_request ? 408 : 0;
  if (ec == http::error::body_limit) return 413;
  if (ec == http::error::header_limit) return 431;
  if (ec == http::error::end_of_stream || ec == http::error::partial_message) return 0;
  if (ec.category() == make_error_code(http::error::bad_method).category()) return 400;  // a malformed message
  return 0;  // socket errors: reset, closed
}

// Framing and identity checks Beast leaves to us, made on the header before any body is
// read; 0 when the header is acceptable. RFC 9112 section 6.3: a request whose
// Transfer-Encoding does not end in `chunked` has no knowable length: 400, and the connection
// must close (Beast would read its body as the next request: request smuggling). A coding
// before `chunked` (gzip) is one we cannot undo: 501. Two Authorization headers leave it open
// which one is checked: 400.
int status_for_header(const HttpRequest& req, std::string& why) {
  if (req.count(http::field::authorization) > 1) {
    why = "more than one Authorization header";
    return 400;
  }
  if (req.count(http::field::transfer_encoding) == 0) return 0;
  std::vector<std::string> codings;
  const auto range = req.equal_range(http::field::transfer_encoding);
  for (auto it = range.first; it != range.second; ++it) {
    const std::string_view v = std::string_view(it->value().data(), it->value().size());
    std::size_t at = 0;
    while (at <= v.size()) {
      const std::size_t comma = std::min(v.find(',', at), v.size());
      std::string token(v.substr(at, comma - at));
      const auto first = token.find_first_not_of(" \t"), last = token.find_last_not_of(" \t");
      token = first == std::string::npos ? std::string() : token.substr(first, last - first + 1);
      for (char& c : token) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!token.empty()) codings.push_back(token);
      at = comma + 1;
    }
  }
  if (codings.empty() || codings.back() != "chunked") {
    why = "Transfer-Encoding must end in chunked (RFC 9112 section 6.3)";
    return 400;
  }
  if (codings.size() > 1) {
    why = "only Transfer-Encoding: chunked is supported";
    return codings[codings.size() - 2] == "chunked" ? 400 : 501;
  }
  return 0;
}

}  // namespace ttlpred::serve
