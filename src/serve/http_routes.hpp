#pragma once
// What the HTTP server does with a request once it has been read whole: the route table,
// the admin token check, the call into the Service, and the request's timing into the
// metrics and the access log. Apart from the connections (http_connection.hpp), which only
// move bytes, so that the rules of who may call what are read in one place.
//
// Thread-safe: the server's threads call handle() at once for different connections.
#include <memory>
#include <string_view>

#include <boost/beast/core/string.hpp>

#include "serve/access_log.hpp"
#include "serve/http_server.hpp"
#include "serve/request_framing.hpp"
#include "serve/service.hpp"
#include "serve/write_rate.hpp"

namespace ttlpred::serve {

class Router {
 public:
  // Opens the access log named in `options` (throws Error when it cannot).
  Router(Service& service, const HttpOptions& options);

  // Routes one request and times it into the metrics; an exception becomes a 500. A 405
  // sets `allow` to the method the path takes.
  // `peer`: the client's address, which the writers' rate limit is kept by.
  Reply handle(const HttpRequest& req, const char*& allow, std::string_view peer = {});

  // A request refused before it was read whole (framing, a limit, the read timeout): an
  // error of the endpoint its target names, Other when it named none.
  void record_refused(boost::beast::string_view target);

  // The error text of a status the server gives by itself (408: "request timeout ...").
  static const char* default_message(int status);

 private:
  // 200 when the request may use an admin endpoint (the token, or no token on loopback).
  Reply check_admin(const HttpRequest& req) const;
  // The same for /v1/outcomes and /v1/started: without a token, only with open_outcomes on loopback.
  Reply check_writer(const HttpRequest& req) const;
  Reply call(Endpoint e, const HttpRequest& req, std::string_view peer);
  // A writer's request through the rate limit: 429 while `peer` is over it, else `apply`
  // charged what it applied.
  template <class Apply>
  Reply rate_limited(std::string_view peer, Apply&& apply);
  void log_refused(const HttpRequest& req, Endpoint e, int status);

  Service& service_;
  const HttpOptions& options_;
  std::unique_ptr<AccessLog> access_log_;  // null: off (the default)
  WriteRateLimit write_rate_;
};

}  // namespace ttlpred::serve
