// VocabularyIndex answers what the encoder's unordered_map answers: every value its index,
// every other string 0, on vocabularies of many sizes with values that share prefixes, differ
// in one byte past the 8-byte steps of the hash, or are prefixes of each other.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "features/vocabulary_index.hpp"

namespace ttlpred {
namespace {

TEST(VocabularyIndex, FindsEveryValueAndNothingElse) {
  std::mt19937 rng(5);
  for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 100u, 3000u}) {
    std::vector<std::string> vocabulary;
    std::unordered_map<std::string, std::uint32_t> truth;
    while (vocabulary.size() < n) {
      std::string v = "user-" + std::to_string(rng() % (4 * n + 10));
      v.append(rng() % 20, static_cast<char>('a' + rng() % 3));
      if (truth.emplace(v, static_cast<std::uint32_t>(vocabulary.size() + 1)).second) vocabulary.push_back(v);
    }
    const VocabularyIndex index(vocabulary);
    for (const auto& [v, i] : truth) ASSERT_EQ(index.find(v), i) << v;
    for (const auto& v : vocabulary) {
      for (const std::string& probe : {v + "x", v.substr(0, v.size() - 1), "x" + v, std::string(v.size(), 'u')}) {
        const auto it = truth.find(probe);
        ASSERT_EQ(index.find(probe), it == truth.end() ? 0u : it->second) << probe;
      }
      std::string flipped = v;
      flipped[v.size() - 1] ^= 1;  // past the last whole 8-byte step
      const auto it = truth.find(flipped);
      ASSERT_EQ(index.find(flipped), it == truth.end() ? 0u : it->second) << flipped;
    }
  }
  EXPECT_EQ(VocabularyIndex().find("anything"), 0u);
}

}  // namespace
}  // namespace ttlpred
