#pragma once
// What Service's request handlers share (service.cpp, service_outcomes.cpp,
// service_state.cpp; nothing else includes it): error replies, the body parser, each server
// thread's job reader and scratch buffers, and the guard that turns an exception into its
// reply.
#include <cstddef>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/job_json.hpp"
#include "serve/recent_predictions.hpp"
#include "serve/service.hpp"
#include "util/error.hpp"

namespace ttlpred::serve::detail {

inline Reply error_reply(int status, std::string_view message, std::string_view field = {}, long index = -1) {
  return {status, error_body(message, field, index)};
}

inline nlohmann::json parse_body(std::string_view body) { return parse_json_body(body); }

// simdjson for valid request bodies; the nlohmann path (the reference) for the rest and for
// every error. One per server thread; its records' strings live until the thread's next read.
inline JobReader& reader() {
  thread_local JobReader r;
  return r;
}

// Per-thread buffers stay warm for bodies up to this size; past it they are freed after the
// request, so a few large bodies do not pin tens of MiB on every thread.
inline constexpr std::size_t kKeepBufferBytes = 1u << 20;
inline constexpr std::size_t kKeepRecords = 1024;


// Buffers reused by each server thread, so that a warm request does not allocate for them.
struct Scratch {
  std::vector<JobRecord> records;
  std::vector<Prediction> predictions;
  std::vector<std::size_t> order;
  std::vector<ServedPrediction> served;
  std::vector<RecentPredictions::Entry> entries;
};
inline Scratch& scratch(std::size_t n) {
  thread_local Scratch s;
  if (s.records.size() < n) s.records.resize(n);
  if (s.predictions.size() < n) s.predictions.resize(n);
  if (s.served.size() < n) s.served.resize(n);
  return s;
}

// After a large body the records go too: their strings (a 4 MiB user name) would otherwise
// stay until the thread's next request.
inline void release_buffers(std::size_t body_bytes) {
  reader().release_if_large(kKeepBufferBytes);
  Scratch& s = scratch(0);
  if (s.records.size() > kKeepRecords || body_bytes > kKeepBufferBytes) {
    std::vector<JobRecord>().swap(s.records);
    std::vector<Prediction>().swap(s.predictions);
    std::vector<std::size_t>().swap(s.order);
    std::vector<ServedPrediction>().swap(s.served);
    std::vector<RecentPredictions::Entry>().swap(s.entries);
  }
}

template <class F>
Reply guarded(F&& f) {
  try {
    return f();
  } catch (const RequestError& e) {
    return error_reply(e.status(), e.what(), e.field(), e.index());
  } catch (const Error& e) {
    return error_reply(500, e.what());
  } catch (const std::exception& e) {
    return error_reply(500, std::string("internal error: ") + e.what());
  }
}

}  // namespace ttlpred::serve::detail
