#include "serve/http_routes.hpp"

#include <chrono>
#include <exception>
#include <string>

#include "serve/admin_token.hpp"
#include "serve/job_json.hpp"
#include "serve/openapi_document.hpp"

namespace ttlpred::serve {
namespace {

namespace http = boost::beast::http;
using Clock = std::chrono::steady_clock;

struct Route {
  std::string_view path;
  http::verb method;
  Endpoint endpoint;
};
constexpr Route kRoutes[] = {
    {"/v1/predict", http::verb::post, Endpoint::Predict}, {"/v1/match", http::verb::post, Endpoint::Match},
    {"/v1/outcomes", http::verb::post, Endpoint::Outcomes}, {"/healthz", http::verb::get, Endpoint::Healthz},
    {"/readyz", http::verb::get, Endpoint::Readyz},       {"/metrics", http::verb::get, Endpoint::Metrics},
    {"/admin/reload", http::verb::post, Endpoint::Reload}, {"/openapi.json", http::verb::get, Endpoint::OpenApi},
    {"/v1/started", http::verb::post, Endpoint::Started},
};

// Boost 1.74's Beast has its own string_view.
std::string_view std_view(boost::beast::string_view s) { return {s.data(), s.size()}; }

// "1000", "0.5": a rate as the options take it.
std::string format_rate(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

const Route* route_of(boost::beast::string_view target) {
  const std::string_view path = std_view(target).substr(0, std_view(target).find('?'));
  for (const Route& r : kRoutes)
    if (r.path == path) return &r;
  return nullptr;
}

}  // namespace

Router::Router(Service& service, const HttpOptions& options)
    : service_(service), options_(options), write_rate_(options.outcome_rate, options.outcome_burst) {
  if (!options_.access_log.empty()) access_log_ = std::make_unique<AccessLog>(options_.access_log);
}

const char* Router::default_message(int status) {
  switch (status) {
    case 400: return "bad request";
    case 404: return "no such endpoint";
    case 405: return "method not allowed";
    case 408: return "request timeout (--read-timeout)";
    case 413: return "request body too large (--max-body)";
    case 431: return "request headers too large";
    case 501: return "not implemented";
    default: return status >= 500 ? "internal error" : "request refused";
  }
}

void Router::record_refused(boost::beast::string_view target) {
  const Route* route = route_of(target);
  service_.metrics().record(route ? route->endpoint : Endpoint::Other, 0.0, true);
}

void Router::log_refused(const HttpRequest& req, Endpoint e, int status) {
  if (!access_log_) return;
  const std::string_view target = std_view(req.target());
  access_log_->write({endpoint_name(e), std_view(req.method_string()), target.substr(0, target.find('?')), status, 0.0, 0});
}

Reply Router::check_admin(const HttpRequest& req) const {
  if (options_.admin_token.empty()) {
    if (is_loopback(options_.host)) return {200, {}};
    return {403, error_body("admin endpoints need an admin token (--admin-token-file, " +
                            std::string(kAdminTokenEnv) + " or --admin-token) when the service listens beyond loopback")};
  }
  if (!authorization_matches(std_view(req[http::field::authorization]), options_.admin_token))
    return {401, error_body("missing or wrong admin token (send 'Authorization: Bearer <token>')", "Authorization")};
  return {200, {}};
}

Reply Router::check_writer(const HttpRequest& req) const {
  if (options_.admin_token.empty() && !(options_.open_outcomes && is_loopback(options_.host)))
    return {403, error_body("/v1/outcomes and /v1/started need an admin token (--admin-token-file, " +
                            std::string(kAdminTokenEnv) + " or --admin-token): an outcome moves every later TTL of "
                            "its keys; for a test setup on loopback, --open-outcomes")};
  return check_admin(req);
}

template <class Apply>
Reply Router::rate_limited(std::string_view peer, Apply&& apply) {
  const double now = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  if (!write_rate_.admit(peer, now)) {
    service_.metrics().add_rate_limited();
    return {429, error_body("too many outcomes from this client: at most " + format_rate(options_.outcome_rate) +
                            " a second, in bursts of " + format_rate(options_.outcome_burst) +
                            " (--outcome-rate, --outcome-burst); retry later")};
  }
  Reply r = apply();
  if (r.status == 200) write_rate_.charge(peer, static_cast<double>(r.items), now);
  return r;
}

Reply Router::call(Endpoint e, const HttpRequest& req, std::string_view peer) {
  const std::string_view body = req.body();
  switch (e) {
    case Endpoint::Predict: return service_.predict(body);
    case Endpoint::Match: return service_.match(body);
    case Endpoint::Outcomes: {
      // An outcome feeds every later prediction through the shared history keys: writers
      // are trusted like admins.
      Reply auth = check_writer(req);
      return auth.status != 200 ? auth : rate_limited(peer, [&] { return service_.outcomes(body); });
    }
    case Endpoint::Started: {
      // A start counts in every later match-time prediction of its keys: trusted like outcomes.
      Reply auth = check_writer(req);
      return auth.status != 200 ? auth : rate_limited(peer, [&] { return service_.started(body); });
    }
    case Endpoint::Healthz: return service_.healthz();
    case Endpoint::Readyz: return service_.readyz();
    case Endpoint::Metrics: return service_.metrics_text();
    case Endpoint::OpenApi: return {200, std::string(openapi_document())};
    case Endpoint::Reload: {
      Reply auth = check_admin(req);
      return auth.status != 200 ? auth : service_.reload(body);
    }
    case Endpoint::Other: break;
  }
  return {404, error_body(default_message(404))};
}

Reply Router::handle(const HttpRequest& req, const char*& allow, std::string_view peer) {
  const Route* route = route_of(req.target());
  if (!route) {
    service_.metrics().record(Endpoint::Other, 0.0, true);
    log_refused(req, Endpoint::Other, 404);
    return {404, error_body(default_message(404))};
  }
  if (req.method() != route->method) {
    service_.metrics().record(route->endpoint, 0.0, true);
    log_refused(req, route->endpoint, 405);
    allow = route->method == http::verb::get ? "GET" : "POST";
    return {405, error_body(default_message(405))};
  }
  const auto start = Clock::now();
  Reply reply;
  try {
    reply = call(route->endpoint, req, peer);
  } catch (const std::exception& e) {
    reply = {500, error_body(std::string("internal error: ") + e.what())};
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  service_.metrics().record(route->endpoint, seconds, reply.status >= 400);
  if (access_log_) {
    const std::string_view name = endpoint_name(route->endpoint);
    access_log_->write({name, std_view(req.method_string()), route->path, reply.status, seconds,
                        reply.status == 200 ? batch_size_of_reply(name, reply.body) : 0});
  }
  return reply;
}

}  // namespace ttlpred::serve
