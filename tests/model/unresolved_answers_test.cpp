// The batch guard's counts (model/unresolved_answers.hpp): per key, reset by an outcome, key 0
// never counted, keys sharing a slot adding up, and exact under concurrent answers.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "model/unresolved_answers.hpp"

namespace ttlpred {
namespace {

TEST(UnresolvedAnswers, CountsPerKeyUntilAnOutcome) {
  UnresolvedAnswers u;
  EXPECT_EQ(u.count(5), 0u);
  u.answered(5);
  u.answered(5);
  u.answered(6);
  EXPECT_EQ(u.count(5), 2u);
  EXPECT_EQ(u.count(6), 1u);
  u.resolved(5);
  EXPECT_EQ(u.count(5), 0u);
  EXPECT_EQ(u.count(6), 1u);
  // Key 0 is "no key".
  u.answered(0);
  EXPECT_EQ(u.count(0), 0u);
  // Keys with the same low 16 bits share a slot: their counts add up (a lower level, never a
  // higher one).
  u.answered(7 + UnresolvedAnswers::kSlots);
  EXPECT_EQ(u.count(7), 1u);
}

TEST(UnresolvedAnswers, CopiesCarryTheCounts) {
  UnresolvedAnswers u;
  u.answered(3);
  UnresolvedAnswers v = u;
  u.answered(3);
  EXPECT_EQ(v.count(3), 1u);
  EXPECT_EQ(u.count(3), 2u);
  v = u;
  EXPECT_EQ(v.count(3), 2u);
  UnresolvedAnswers moved = std::move(v);
  EXPECT_EQ(moved.count(3), 2u);
}

TEST(UnresolvedAnswers, ConcurrentAnswersAllCount) {
  UnresolvedAnswers u;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&u] {
      for (int i = 0; i < 10000; ++i) u.answered(11);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(u.count(11), 40000u);
}

}  // namespace
}  // namespace ttlpred
