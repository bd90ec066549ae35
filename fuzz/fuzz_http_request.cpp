// Fuzz target: HTTP/1.1 requests as the server reads them: Boost.Beast's request parser with
// the server's default limits (16 KiB of header, 4 MiB of body), pipelined requests one
// after another from the same bytes, and the server's own framing rules
// (serve/request_framing.hpp) on every header. Each request must end as one of the answers
// the server can give (served, or refused with 400, 408, 413, 431 or 501, or the connection
// closed); anything else aborts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "serve/request_framing.hpp"

namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const char* at = reinterpret_cast<const char*>(data);
  std::size_t left = size;
  for (int request = 0; request < 64 && left > 0; ++request) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(16u << 10);
    parser.body_limit(4u << 20);
    parser.eager(true);
    boost::beast::error_code ec;
    bool header_checked = false;
    while (left > 0 && !parser.is_done()) {
      const std::size_t used = parser.put(boost::asio::buffer(at, left), ec);
      at += used;
      left -= used;
      if (ec == http::error::need_more) {
        ec = {};
        break;  // the rest of this request never comes: end of the input
      }
      if (ec) break;
      if (parser.is_header_done() && !header_checked) {
        header_checked = true;
        std::string why;
        const int status = ttlpred::serve::status_for_header(parser.get(), why);
        if (status != 0) {
          if ((status != 400 && status != 501) || why.empty()) std::abort();
          return 0;  // the server answers and closes
        }
      }
      if (used == 0) break;
    }
    if (ec) {
      const int status = ttlpred::serve::status_for_read_error(ec, true);
      if (status != 0 && status != 400 && status != 408 && status != 413 && status != 431) std::abort();
      return 0;  // answered with that status (or nobody to answer) and closed
    }
    if (!parser.is_done()) return 0;  // truncated: the server would wait, then time out
    // A complete request: its body is exactly what the framing said.
    const auto& req = parser.get();
    const auto length = req[http::field::content_length];
    if (!length.empty() && req.count(http::field::transfer_encoding) == 0 &&
        std::stoull(std::string(length.data(), length.size())) != req.body().size())
      std::abort();
  }
  return 0;
}
