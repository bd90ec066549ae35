#include "model/unresolved_answers.hpp"

#include <limits>

namespace ttlpred {

UnresolvedAnswers::UnresolvedAnswers() : slots_(new std::atomic<std::uint32_t>[kSlots]) {
  for (std::uint32_t i = 0; i < kSlots; ++i) slots_[i].store(0, std::memory_order_relaxed);
}

UnresolvedAnswers::UnresolvedAnswers(const UnresolvedAnswers& other) : UnresolvedAnswers() { *this = other; }

UnresolvedAnswers& UnresolvedAnswers::operator=(const UnresolvedAnswers& other) {
  if (this == &other) return *this;
  if (!slots_) slots_.reset(new std::atomic<std::uint32_t>[kSlots]);
  for (std::uint32_t i = 0; i < kSlots; ++i)
    slots_[i].store(other.slots_ ? other.slots_[i].load(std::memory_order_relaxed) : 0, std::memory_order_relaxed);
  return *this;
}

std::atomic<std::uint32_t>* UnresolvedAnswers::slot(std::uint32_t key) const {
  return key == 0 || !slots_ ? nullptr : &slots_[key & (kSlots - 1)];
}

std::uint32_t UnresolvedAnswers::count(std::uint32_t key) const {
  const auto* s = slot(key);
  return s ? s->load(std::memory_order_relaxed) : 0;
}

void UnresolvedAnswers::answered(std::uint32_t key) {
  auto* s = slot(key);
  if (!s) return;
  // Saturates instead of wrapping: a key answered 4 billion times without an outcome stays
  // the most guarded key there is.
  std::uint32_t n = s->load(std::memory_order_relaxed);
  while (n < std::numeric_limits<std::uint32_t>::max() &&
         !s->compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) {
  }
}

void UnresolvedAnswers::resolved(std::uint32_t key) {
  if (auto* s = slot(key)) s->store(0, std::memory_order_relaxed);
}

}  // namespace ttlpred
