#include "serve/http_server.hpp"

#include <httplib.h>

#include <chrono>

#include "serve/job_json.hpp"
#include "util/error.hpp"

namespace ttlpred::serve {
namespace {

using Clock = std::chrono::steady_clock;

Endpoint endpoint_of(const std::string& path) {
  if (path == "/v1/predict") return Endpoint::Predict;
  if (path == "/v1/match") return Endpoint::Match;
  if (path == "/v1/outcomes") return Endpoint::Outcomes;
  if (path == "/healthz") return Endpoint::Healthz;
  if (path == "/readyz") return Endpoint::Readyz;
  if (path == "/metrics") return Endpoint::Metrics;
  if (path == "/admin/reload") return Endpoint::Reload;
  return Endpoint::Other;
}

const char* default_message(int status) {
  switch (status) {
    case 400: return "bad request";
    case 404: return "no such endpoint";
    case 405: return "method not allowed";
    case 408: return "request timeout";
    case 413: return "request body too large (--max-body)";
    case 414: return "request URI too long";
    case 416: return "range not satisfiable";
    case 431: return "request headers too large";
    default: return status >= 500 ? "internal error" : "request refused";
  }
}

}  // namespace

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

struct HttpServer::Impl {
  Service& service;
  HttpOptions options;
  httplib::Server server;

  Impl(Service& s, HttpOptions o) : service(s), options(std::move(o)) {}

  void respond(httplib::Response& res, Endpoint e, Clock::time_point start, const Reply& reply) {
    res.status = reply.status;
    res.set_content(reply.body, reply.content_type);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    service.metrics().record(e, seconds, reply.status >= 400);
  }

  template <class F>
  httplib::Server::Handler timed(Endpoint e, F f) {
    return [this, e, f](const httplib::Request& req, httplib::Response& res) {
      const auto start = Clock::now();
      respond(res, e, start, f(req));
    };
  }

  Reply check_admin(const httplib::Request& req) const {
    if (options.admin_token.empty()) {
      if (is_loopback(options.host)) return {200, {}};
      return {403, error_body("admin endpoints need --admin-token when the service listens beyond loopback")};
    }
    const std::string want = "Bearer " + options.admin_token;
    if (req.get_header_value("Authorization") != want)
      return {401, error_body("missing or wrong admin token (send 'Authorization: Bearer <token>')", "Authorization")};
    return {200, {}};
  }

  void routes() {
    server.Post("/v1/predict", timed(Endpoint::Predict, [this](const httplib::Request& r) { return service.predict(r.body); }));
    server.Post("/v1/match", timed(Endpoint::Match, [this](const httplib::Request& r) { return service.match(r.body); }));
    server.Post("/v1/outcomes",
                timed(Endpoint::Outcomes, [this](const httplib::Request& r) { return service.outcomes(r.body); }));
    server.Get("/healthz", timed(Endpoint::Healthz, [this](const httplib::Request&) { return service.healthz(); }));
    server.Get("/readyz", timed(Endpoint::Readyz, [this](const httplib::Request&) { return service.readyz(); }));
    server.Get("/metrics", timed(Endpoint::Metrics, [this](const httplib::Request&) { return service.metrics_text(); }));
    server.Post("/admin/reload", timed(Endpoint::Reload, [this](const httplib::Request& r) {
                  Reply auth = check_admin(r);
                  return auth.status != 200 ? auth : service.reload(r.body);
                }));
    // Errors raised by the library itself (unknown path, body too large, bad request line)
    // come here with an empty body: give them the same JSON shape and count them.
    server.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      res.set_content(error_body(default_message(res.status)), "application/json");
      service.metrics().record(endpoint_of(req.path), 0.0, true);
      return httplib::Server::HandlerResponse::Handled;
    }));
    server.set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "internal error";
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what += ": ";
        what += e.what();
      } catch (...) {
      }
      res.status = 500;
      res.set_content(error_body(what), "application/json");
      service.metrics().record(endpoint_of(req.path), 0.0, true);
    });
  }
};

HttpServer::HttpServer(Service& service, HttpOptions options)
    : impl_(std::make_unique<Impl>(service, std::move(options))) {
  const HttpOptions& o = impl_->options;
  if (o.threads == 0) throw Error("--threads must be at least 1");
  if (o.max_body == 0) throw Error("--max-body must be at least 1 byte");
  httplib::Server& s = impl_->server;
  const std::size_t threads = o.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_tcp_nodelay(true);  // replies are small: do not let Nagle hold them back
  s.set_payload_max_length(o.max_body);
  s.set_read_timeout(o.read_timeout_s, 0);
  s.set_write_timeout(o.write_timeout_s, 0);
  s.set_keep_alive_timeout(o.keep_alive_timeout_s);
  s.set_keep_alive_max_count(o.keep_alive_max);
  impl_->routes();
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::bind() {
  httplib::Server& s = impl_->server;
  const std::string& host = impl_->options.host;
  if (impl_->options.port == 0) {
    port_ = s.bind_to_any_port(host);
    if (port_ <= 0) throw Error("cannot listen on " + host + ": no free port");
  } else {
    if (!s.bind_to_port(host, impl_->options.port))
      throw Error("cannot listen on " + host + ":" + std::to_string(impl_->options.port) +
                  " (address in use, or not an address of this host)");
    port_ = impl_->options.port;
  }
  return port_;
}

void HttpServer::run() { impl_->server.listen_after_bind(); }

void HttpServer::stop() {
  if (impl_ && impl_->server.is_running()) impl_->server.stop();
}

}  // namespace ttlpred::serve
