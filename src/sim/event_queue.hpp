#pragma once
// A discrete-event queue: events pop in time order, ties broken first by the event's kind
// (smaller first), then by insertion order. The tie rule is what makes a simulation
// deterministic and what the schedulers rely on: a job that ends at time t frees its
// processors before a job arriving at t is considered.
#include <cstdint>
#include <queue>
#include <vector>

namespace ttlpred::sim {

template <typename Payload>
class EventQueue {
 public:
  struct Event {
    double time;
    int kind;
    std::uint64_t seq;
    Payload payload;
  };

  void push(double time, int kind, const Payload& payload) { heap_.push(Event{time, kind, next_seq_++, payload}); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.top(); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      if (a.kind != b.kind) return a.kind > b.kind;
      return a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace ttlpred::sim
