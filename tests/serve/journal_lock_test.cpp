// One journal folder, one writer, whatever happens to the files inside it: the lock is on
// the folder itself, so `rm DIR/lock` no longer lets a second server in (both used to
// acknowledge outcomes, and a restart found half of them), and a server whose folder was
// moved or replaced under it stops acknowledging instead of writing where no restart looks.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "serve/journal.hpp"
#include "serve_test_util.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

namespace fs = std::filesystem;

// The message of the Error `open` throws, or "" when it throws none.
template <class Open>
std::string refusal(Open open) {
  try {
    open();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST(ServeJournalLock, RemovingTheLockFileLetsNoSecondOwnerIn) {
  const std::string dir = test::temp_dir() + "/journal";
  {
    serve::OutcomeJournal first(dir);
    ASSERT_TRUE(fs::remove(dir + "/lock"));
    const std::string why = refusal([&] { serve::OutcomeJournal second(dir); });
    EXPECT_NE(why.find("journal folder " + dir + " is in use by another server"), std::string::npos) << why;
    first.append("{\"user\":\"a\",\"wall_s\":10}\n", 1);  // the owner goes on
  }
  // The lock goes with its owner.
  serve::OutcomeJournal again(dir);
  EXPECT_EQ(again.replay([](std::string_view, const std::string&, std::size_t) {}), 1u);
}

TEST(ServeJournalLock, AServerWhoseFolderWasReplacedStopsAcknowledging) {
  const std::string dir = test::temp_dir() + "/journal";
  serve::OutcomeJournal first(dir);
  first.append("{\"user\":\"a\",\"wall_s\":10}\n", 1);
  fs::rename(dir, dir + ".old");
  fs::create_directory(dir);
  serve::OutcomeJournal second(dir);  // a new folder: nobody holds it
  const std::string why = refusal([&] { first.append("{\"user\":\"a\",\"wall_s\":11}\n", 1); });
  EXPECT_NE(why.find("journal folder " + dir + " was moved, removed or replaced"), std::string::npos) << why;
  EXPECT_NE(refusal([&] { first.snapshot([](const std::string&) {}); }), "");
  second.append("{\"user\":\"b\",\"wall_s\":12}\n", 1);
}

TEST(ServeJournalLock, ARemovedJournalFileIsNotAppendedTo) {
  const std::string dir = test::temp_dir() + "/journal";
  serve::OutcomeJournal j(dir);
  j.append("{\"user\":\"a\",\"wall_s\":10}\n", 1);
  ASSERT_TRUE(fs::remove(dir + "/journal-1.jsonl"));
  const std::string why = refusal([&] { j.append("{\"user\":\"a\",\"wall_s\":11}\n", 1); });
  EXPECT_NE(why.find("was removed while this server wrote to it"), std::string::npos) << why;
}

// The attack as reported, on the real program: `rm J/lock` and a second `serve --journal J`.
TEST(ServeJournalLock, ASecondProgramIsRefusedAfterRmLockAndARestartFindsEveryOutcome) {
  if (!fs::exists(test::cli_binary())) GTEST_SKIP() << "build the ttlpred target first";
  const std::string dir = test::temp_dir() + "/journal";
  const std::string& model = test::shared_test_model();
  int acknowledged = 0;
  {
    test::ServeChild first(model, dir);
    auto http = first.client();
    auto post = [&](int i) {
      auto r = http.Post("/v1/outcomes", "{\"user\":\"u" + std::to_string(i) + "\",\"wall_s\":" + std::to_string(100 + i) + "}",
                         "application/json");
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << r->body;
      EXPECT_NE(r->body.find("\"durable\":true"), std::string::npos) << r->body;
      ++acknowledged;
    };
    for (int i = 0; i < 10; ++i) post(i);
    ASSERT_TRUE(fs::remove(dir + "/lock"));
    // Under `timeout`: a second server that is let in serves until stopped.
    const std::string cmd = "timeout 20 " + test::cli_binary() + " serve --model '" + model +
                            "' --listen 127.0.0.1:0 --open-outcomes --journal '" + dir + "' 2>&1";
    std::FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int second = pclose(p);
    EXPECT_TRUE(WIFEXITED(second) && WEXITSTATUS(second) == 1) << "exit status " << second << ": " << out;
    EXPECT_NE(out.find("is in use by another server"), std::string::npos) << out;
    for (int i = 10; i < 20; ++i) post(i);
    const int status = first.signal_and_wait(SIGTERM);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  serve::ServiceOptions o = test::options_for(model);
  o.journal_dir = dir;
  serve::Service restarted(o);
  EXPECT_EQ(restarted.replayed_outcomes(), static_cast<std::uint64_t>(acknowledged));
  EXPECT_EQ(acknowledged, 20);
}

}  // namespace
}  // namespace ttlpred
