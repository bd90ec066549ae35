#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "data/trace_readers.hpp"
#include "trace_test_files.hpp"

namespace ttlpred {
namespace {

// Fields: JobID SubmitTime WaitTime RunTime NProcs AverageCPUTimeUsed UsedMemory ReqNProcs
// ReqTime ReqMemory Status UserID GroupID ExecutableID QueueID PartitionID OrigSiteID
// LastRunSiteID JobStructure JobStructureParams UsedNetwork UsedLocalDiskSpace UsedResources
// ReqPlatform ReqNetwork ReqLocalDiskSpace ReqResources VOID ProjectID
std::string gwf_line(const std::string& head, const std::string& orig, const std::string& last) {
  return head + "\t" + orig + "\t" + last + "\tUNITARY\t-1\t-1\t-1\t-1\t-1\t-1\t-1\t-1\tvo1\t-1\n";
}

TEST(GwfReader, MapsFieldsAndSites) {
  const std::string text =
      "# GWF version 1.0\n"
      "#\n" +
      gwf_line("1\t1136070024\t5\t3600.5\t1\t3000\t20480\t1\t86400\t-1\t1\tuser_1\tgroup_2\tapp_3\tqueue_4\t-1", "site_a", "site_b") +
      gwf_line("2\t1136070100\t-1\t10\t2\t-1\t-1\t-1\t-1\t-1\t0\tuser_1\t-1\t-1\t-1\t-1", "site_a", "-1") +
      gwf_line("3\t1136070200\t0\t20\t1\t-1\t-1\t1\t-1\t2048\t5\tuser_9\t-1\t-1\t-1\tpart", "-1", "-1");
  ReadReport rep;
  const JobTable t = test::read_memory(read_gwf, text, rep);
  ASSERT_EQ(t.rows(), 3u);
  EXPECT_EQ(rep.comment_lines, 2u);
  EXPECT_TRUE(rep.all_lines_accounted());
  EXPECT_EQ(rep.format, "gwf");
  JobRecord r;
  t.record(0, r);
  EXPECT_EQ(r[Field::JobId], 1);
  EXPECT_EQ(r[Field::SubmitTime], 1136070024);  // GWF times are Unix seconds already
  EXPECT_EQ(r[Field::WaitTime], 5);
  EXPECT_EQ(r[Field::WallTime], 3600.5);
  EXPECT_EQ(r[Field::SlotCores], 1);
  EXPECT_EQ(r[Field::CpuTime], 3000);
  EXPECT_EQ(r[Field::MaxRss], 20);
  EXPECT_EQ(r[Field::CpuCores], 1);
  EXPECT_EQ(r[Field::RequestedTtl], 86400);
  EXPECT_TRUE(std::isnan(r[Field::MemoryMb]));
  EXPECT_EQ(r.text(Field::Status), "DONE");
  EXPECT_EQ(r.text(Field::User), "user_1");
  EXPECT_EQ(r.text(Field::Group), "group_2");
  EXPECT_EQ(r.text(Field::Executable), "app_3");
  EXPECT_EQ(r.text(Field::Queue), "queue_4");
  EXPECT_FALSE(r.known(Field::Partition));
  EXPECT_EQ(r.text(Field::Site), "site_b");  // where it ran
  t.record(1, r);
  EXPECT_EQ(r.text(Field::Site), "site_a");  // only the submitting site is known
  EXPECT_EQ(r.text(Field::Status), "FAILED");
  EXPECT_FALSE(r.known(Field::Group));
  t.record(2, r);
  EXPECT_FALSE(r.known(Field::Site));
  EXPECT_EQ(r[Field::MemoryMb], 2);
  EXPECT_EQ(r.text(Field::Partition), "part");
  EXPECT_EQ(r.text(Field::Status), "CANCELLED");
}

TEST(GwfReader, SkipsBadRowsWithLineNumbers) {
  const std::string text = "# header\n" +
                           gwf_line("1\t100\t5\tabc\t1\t3000\t-1\t1\t60\t-1\t1\tu\tg\te\tq\tp", "s", "s") +
                           "1\t100\t5\t10\n" +
                           gwf_line("1\t100\t5\t10\t1\t3000\t-1\t1\t60\t-1\t1\tu\xC3\tg\te\tq\tp", "s", "s") +
                           gwf_line("1\t100\t5\t10\t1\t3000\t-1\t1\t60\t-1\t1\tu\tg\te\tq\tp", "s", "s");
  ReadReport rep;
  const JobTable t = test::read_memory(read_gwf, text, rep, "x.gwf");
  EXPECT_EQ(t.rows(), 1u);
  EXPECT_EQ(rep.skipped_total(), 3u);
  EXPECT_TRUE(rep.all_lines_accounted());
  ASSERT_EQ(rep.examples.size(), 3u);
  EXPECT_EQ(rep.examples[0], "x.gwf:2: field RunTime (GWF field 4): not a number: \"abc\"");
  EXPECT_EQ(rep.examples[1], "x.gwf:3: 4 fields, GWF has 29");
  EXPECT_EQ(rep.examples[2], "x.gwf:4: field UserID (GWF field 12): not UTF-8: \"u\\xC3\"");
}

}  // namespace
}  // namespace ttlpred
