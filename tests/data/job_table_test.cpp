#include <gtest/gtest.h>

#include "data/job_table.hpp"

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
