#pragma once
// How the HTTP server judges a request's framing before it serves it: the status for a read
// that failed, and the checks on a header that Boost.Beast leaves to us (request smuggling
// through Transfer-Encoding, duplicated credentials). Apart from the server so that the
// request fuzzer (fuzz/) runs the very rules the server applies to bytes off the network.
#include <string>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace ttlpred::serve {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;

// The status for a request that could not be read (408 timeout, 413 body, 431 header, 400
// malformed); 0 when there is nobody left to answer (end of stream, socket errors).
// `in_request`: some byte of a request had arrived.
int status_for_read_error(const boost::beast::error_code& ec, bool in_request);

// 0 when the header is acceptable, else the status (400, 501) with `why` in words.
int status_for_header(const HttpRequest& req, std::string& why);

}  // namespace ttlpred::serve
