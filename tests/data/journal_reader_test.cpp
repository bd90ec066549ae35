// A `serve --journal` folder read as a trace: the outcome records in generation order, the
// keys the service adds left out, a submit time inferred where the broker gave none, bad
// lines skipped and counted with file and line.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "data/trace_readers.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

TEST(JournalReader, ReadsOutcomeRecordsInGenerationOrder) {
  const std::string dir = test::temp_dir() + "/j";
  std::filesystem::create_directories(dir);
  // Generation 10 after 9 (by number, not by name), a snapshot and a lock ignored.
  std::ofstream(dir + "/journal-10.jsonl")
      << R"({"job_id":3,"user":"bob","submit_time":1000,"wall_s":60,"received_at":2000,"model_version":"0123456789abcdef","served":{"safe_ttl_s":90}})"
      << "\n"
      << R"({"job_id":4,"user":"bob","wait_s":40,"wall_s":100,"received_at":5000,"served":null})" << "\n"
      << "not json\n"
      << R"({"user":7,"wall_s":1})" << "\n";
  std::ofstream(dir + "/journal-9.jsonl") << R"({"job_id":"abc","user":"alice","submit_time":500,"wall_s":3600,"status":"DONE"})" << "\n\n";
  std::ofstream(dir + "/snapshot-9.hist") << "binary";
  std::ofstream(dir + "/lock") << "123\n";
  ReadReport rep;
  const JobTable t = read_trace(dir, rep);
  EXPECT_EQ(rep.format, "journal");
  ASSERT_EQ(t.rows(), 3u);
  EXPECT_EQ(rep.rows, 3u);
  EXPECT_EQ(rep.lines, 6u);
  EXPECT_EQ(rep.comment_lines, 1u);
  EXPECT_EQ(rep.skipped_count(SkipReason::MalformedRecord), 2u);
  EXPECT_TRUE(rep.all_lines_accounted());
  const auto submit = t.num(Field::SubmitTime), wall = t.num(Field::WallTime), id = t.num(Field::JobId);
  EXPECT_EQ(submit[0], 500);  // journal-9 first
  EXPECT_TRUE(std::isnan(id[0]));  // a string id has no number
  EXPECT_EQ(submit[1], 1000);
  EXPECT_EQ(id[1], 3);
  EXPECT_EQ(submit[2], 5000 - 40 - 100);  // received_at - wait_s - wall_s
  EXPECT_EQ(wall[2], 100);
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_NE(rep.notes[0].find("1 outcomes without submit_time"), std::string::npos);
  EXPECT_NE(rep.examples.at(0).find("journal-10.jsonl"), std::string::npos) << rep.examples.at(0);
  EXPECT_EQ(detect_format(dir), TraceFormat::Journal);
  EXPECT_EQ(format_by_name("journal"), TraceFormat::Journal);
}

// The service teaches a job's outcome once: a retrain reading its journal reads it once, the
// first of each job_id, and says how many repeats it passed over.
TEST(JournalReader, ARepeatedOutcomeOfOneJobIdIsReadOnce) {
  const std::string dir = test::temp_dir() + "/repeats";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/journal-1.jsonl") << R"({"job_id":7,"user":"a","submit_time":1,"wall_s":10})" << "\n"
                                          << R"({"job_id":7,"user":"a","submit_time":1,"wall_s":0})" << "\n"
                                          << R"({"job_id":"x","user":"a","submit_time":2,"wall_s":20})" << "\n"
                                          << R"({"user":"a","submit_time":3,"wall_s":30})" << "\n";
  std::ofstream(dir + "/journal-2.jsonl") << R"({"job_id":"x","user":"a","submit_time":2,"wall_s":1})" << "\n"
                                          << R"({"user":"a","submit_time":3,"wall_s":30})" << "\n";
  ReadReport rep;
  const JobTable t = read_trace(dir, rep);
  ASSERT_EQ(t.rows(), 4u);  // 7 and "x" once each, both outcomes without a job_id
  EXPECT_EQ(t.num(Field::WallTime)[0], 10);
  EXPECT_EQ(t.num(Field::WallTime)[1], 20);
  EXPECT_TRUE(rep.all_lines_accounted());
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_NE(rep.notes[0].find("2 repeated outcomes of a job_id read once"), std::string::npos) << rep.notes[0];
}

TEST(JournalReader, AFolderWithoutJournalsIsRefusedNamingIt) {
  const std::string dir = test::temp_dir() + "/empty";
  std::filesystem::create_directories(dir);
  ReadReport rep;
  try {
    read_trace(dir, rep);
    FAIL() << "an empty folder was read as a trace";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(dir), std::string::npos) << e.what();
  }
}

TEST(JournalReader, JournalIsOfAnyKindOfTrace) {
  EXPECT_FALSE(other_trace_formats("journal", "csv"));
  EXPECT_FALSE(other_trace_formats("swf", "journal"));
  EXPECT_FALSE(other_trace_formats("", "csv"));
  EXPECT_TRUE(other_trace_formats("swf", "csv"));
}

}  // namespace
}  // namespace ttlpred
