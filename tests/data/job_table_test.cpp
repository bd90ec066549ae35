#include <gtest/gtest.h>

#include "data/job_table.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace ttlpred {
namespace {

TEST(JobTable, AppendsAndReadsBackRows) {
  JobTable t;
  JobRecord r;
  r[Field::SubmitTime] = 20;
  r.text(Field::User) = "alice";
  t.append(r);
  r.clear();
  r[Field::SubmitTime] = 10;
  r.text(Field::User) = "bob";
  r[Field::WallTime] = 5;
  t.append(r);

  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.text(Field::User, 1), "bob");
  EXPECT_TRUE(std::isnan(t.num(Field::WallTime)[0]));
  EXPECT_TRUE(t.has_values(Field::WallTime));
  EXPECT_FALSE(t.has_values(Field::Site));

  const auto order = t.submit_order();
  EXPECT_EQ(order, (std::vector<std::size_t>{1, 0}));
  const JobTable s = t.select(order);
  EXPECT_EQ(s.text(Field::User, 0), "bob");
  JobRecord back;
  s.record(1, back);
  EXPECT_EQ(back.text(Field::User), "alice");
  EXPECT_EQ(back[Field::SubmitTime], 20);
}

// The same tables bit for bit: numbers compared as bytes (NaN payloads included), codes,
// and dictionaries in the same order.
void expect_identical(const JobTable& a, const JobTable& b) {
  ASSERT_EQ(a.rows(), b.rows());
  for (const FieldInfo& f : kFields) {
    if (f.kind == FieldKind::Number) {
      ASSERT_EQ(a.num(f.field).size(), b.num(f.field).size()) << f.name;
      EXPECT_EQ(std::memcmp(a.num(f.field).data(), b.num(f.field).data(), a.num(f.field).size_bytes()), 0) << f.name;
    } else {
      EXPECT_TRUE(std::equal(a.codes(f.field).begin(), a.codes(f.field).end(), b.codes(f.field).begin(),
                             b.codes(f.field).end()))
          << f.name;
      EXPECT_EQ(a.dict(f.field).values(), b.dict(f.field).values()) << f.name;
    }
  }
}

// Columns as a DataFrame hands them over: values not in first-appearance order, a
// duplicate value, an empty value (unknown), a value no row uses, code -1 and NaN rows.
struct ColumnData {
  std::vector<double> submit, wall;
  std::vector<std::int64_t> user_codes, site_codes;
  std::vector<std::string_view> users{"zed", "amy", "", "bob", "amy", "unused"};
  std::vector<std::string_view> sites{"cern", "fnal"};

  explicit ColumnData(std::size_t n) {
    std::mt19937 rng(7);
    for (std::size_t i = 0; i < n; ++i) {
      submit.push_back(i % 11 == 3 ? kMissingNumber : static_cast<double>(rng() % 100000) / 8.0);
      wall.push_back(i % 7 == 0 ? kMissingNumber : static_cast<double>(rng() % 5000));
      user_codes.push_back(static_cast<std::int64_t>(rng() % 6) - 1);  // -1 .. 4: never "unused"
      site_codes.push_back(static_cast<std::int64_t>(rng() % 2));
    }
  }
  void append_rows(JobTable& t) const {
    JobRecord r;
    for (std::size_t i = 0; i < submit.size(); ++i) {
      r.clear();
      r[Field::SubmitTime] = submit[i];
      r[Field::WallTime] = wall[i];
      if (user_codes[i] >= 0) r.text(Field::User) = users[static_cast<std::size_t>(user_codes[i])];
      r.text(Field::Site) = sites[static_cast<std::size_t>(site_codes[i])];
      t.append(r);
    }
  }
  void append_columns(JobTable& t) const {
    const std::vector<NumberColumnIn> numbers{{Field::SubmitTime, submit}, {Field::WallTime, wall}};
    const std::vector<CategoryColumnIn> categories{{Field::User, user_codes, users}, {Field::Site, site_codes, sites}};
    t.append_columns(numbers, categories);
  }
};

TEST(JobTableColumns, SameTableAsRowByRowBitForBit) {
  const ColumnData data(2000);
  JobTable by_row, by_column;
  data.append_rows(by_row);
  data.append_columns(by_column);
  expect_identical(by_row, by_column);
  // Dictionaries in first-appearance order, "" and the unused value never interned.
  EXPECT_EQ(by_column.dict(Field::User).size(), 3u);  // zed, amy, bob
  EXPECT_EQ(by_column.dict(Field::User).find(""), kMissingCode);
  EXPECT_EQ(by_column.dict(Field::User).find("unused"), kMissingCode);
  EXPECT_FALSE(by_column.has_values(Field::Partition));

  // Appended after rows already there, and rows appended after it, still the same table.
  data.append_rows(by_row);
  data.append_columns(by_column);
  JobRecord r;
  r.text(Field::User) = "carol";
  r[Field::WallTime] = 42;
  by_row.append(r);
  by_column.append(r);
  expect_identical(by_row, by_column);
  EXPECT_EQ(by_column.rows(), 4001u);
}

TEST(JobTableColumns, HandCheckedSmallTable) {
  const std::vector<double> wall{5, kMissingNumber, 7};
  const std::vector<std::int64_t> codes{1, -1, 0};
  const std::vector<std::string_view> values{"b", "a"};
  JobTable t;
  t.append_columns(std::vector<NumberColumnIn>{{Field::WallTime, wall}},
                   std::vector<CategoryColumnIn>{{Field::User, codes, values}});
  ASSERT_EQ(t.rows(), 3u);
  EXPECT_EQ(t.dict(Field::User).values(), (std::vector<std::string>{"a", "b"}));  // "a" comes first, in row 0
  EXPECT_EQ(t.text(Field::User, 0), "a");
  EXPECT_EQ(t.codes(Field::User)[1], kMissingCode);
  EXPECT_EQ(t.text(Field::User, 2), "b");
  EXPECT_EQ(t.num(Field::WallTime)[2], 7);
  EXPECT_TRUE(std::isnan(t.num(Field::WallTime)[1]));
  EXPECT_TRUE(std::isnan(t.num(Field::SubmitTime)[0]));
}

// The message of the Error append_columns throws; the table must be left as it was.
std::string refusal(const std::vector<NumberColumnIn>& numbers, const std::vector<CategoryColumnIn>& categories) {
  JobTable t;
  JobRecord r;
  r[Field::WallTime] = 1;
  t.append(r);
  try {
    t.append_columns(numbers, categories);
  } catch (const Error& e) {
    EXPECT_EQ(t.rows(), 1u);
    EXPECT_EQ(t.num(Field::WallTime).size(), 1u);
    EXPECT_EQ(t.codes(Field::User).size(), 1u);
    EXPECT_EQ(t.dict(Field::User).size(), 0u);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(JobTableColumns, BadColumnsAreRefusedNamingColumnAndRow) {
  const std::vector<double> good{1, 2, 3};
  const std::vector<double> inf{1, 2, std::numeric_limits<double>::infinity()};
  const std::vector<double> short_column{1, 2};
  const std::vector<std::int64_t> codes{0, 1, 2};
  const std::vector<std::string_view> two{"a", "b"};
  const std::vector<std::string_view> three{"a", "b", "c"};
  const std::vector<std::int64_t> negative{0, -2, 0};
  EXPECT_EQ(refusal({{Field::WallTime, inf}}, {}),
            "column 'wall_s': row 2 is infinite (NaN means unknown; inf is refused)");
  const std::vector<double> minus_four{1, -4, 1};
  EXPECT_EQ(refusal({{Field::CpuCores, minus_four}}, {}),
            "column 'cpu_cores': row 1 is negative (-4): the field is a count, amount or time (NaN means unknown)");
  const std::vector<double> huge{1, 1, 1e39};
  EXPECT_EQ(refusal({{Field::WallTime, huge}}, {}),
            "column 'wall_s': row 2 is above 3.4e38, the largest number the model stores");
  EXPECT_EQ(refusal({{Field::WallTime, good}}, {{Field::User, codes, two}}),
            "column 'user': row 2 has code 2 outside -1..1");
  EXPECT_EQ(refusal({}, {{Field::User, negative, two}}), "column 'user': row 1 has code -2 outside -1..1");
  EXPECT_EQ(refusal({{Field::WallTime, good}, {Field::SubmitTime, short_column}}, {}),
            "column 'submit_time': has 2 rows, the other columns 3");
  EXPECT_EQ(refusal({{Field::WallTime, good}, {Field::WallTime, good}}, {}), "column 'wall_s': given twice");
  EXPECT_EQ(refusal({{Field::User, good}}, {}), "column 'user': given as numbers, but the field is a category");
  EXPECT_EQ(refusal({}, {{Field::WallTime, codes, three}}),
            "column 'wall_s': given as categories, but the field is a number");
  // A good column before the bad one is not half appended either (checked in refusal()).
  EXPECT_EQ(refusal({{Field::WallTime, good}}, {{Field::User, codes, three}, {Field::Site, codes, two}}),
            "column 'site': row 2 has code 2 outside -1..1");
}

TEST(Schema, NamesAreUniqueAndFindable) {
  for (const auto& f : kFields) {
    auto found = field_by_name(f.name);
    ASSERT_TRUE(found.has_value()) << f.name;
    EXPECT_EQ(*found, f.field);
  }
  EXPECT_FALSE(field_by_name("no_such_field").has_value());
}

}  // namespace
}  // namespace ttlpred
