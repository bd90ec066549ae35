#pragma once
// The drift alarm the service runs: Page-Hinkley tests (drift_alarm.hpp) on the log residuals
// of matched outcomes, one over all of them (scope "all") or one per job type / queue group
// (scope "group", live_groups.hpp; the default). Why per group: the residual mean differs
// between job types (a model is better on MC than on reconstruction), so a test over all
// outcomes reads every change of the job mix as a shift of its mean; each group's own test
// is centered on that group's running mean, so a mix change moves nothing, while a drift of
// one group's run times moves that group's residuals at full size instead of diluted by the
// others (docs/ACCURACY.md, "Tuning the drift alarm", measures both). A model without groups
// has one group, "": the same as scope "all".
//
// The alarm fires when any group's test passes the threshold; that test restarts, the others
// go on. The test over all outcomes runs in either scope, for the gauges and the snapshot.
#include <cstdint>
#include <string>

#include "serve/drift_alarm.hpp"
#include "serve/live_groups.hpp"
#include "util/binary_io.hpp"

namespace ttlpred::serve {

class DriftTest {
 public:
  explicit DriftTest(DriftOptions options = {});
  // Every test from nothing: a newly swapped-in model's residuals have their own means.
  void reset();
  // One outcome's residual in group `group` ("": ungrouped); true when it raised the alarm.
  bool add(const std::string& group, double residual);

  struct Alarm {
    std::string group;  // the group whose test fired ("" for scope all or an ungrouped model)
    PageHinkley::Alarm test;
  };
  const Alarm& last_alarm() const { return last_alarm_; }
  const DriftOptions& options() const { return options_; }
  // The statistics the alarm compares with the threshold: the largest over the groups' tests
  // (scope group), or the test over all outcomes (scope all).
  double up() const;
  double down() const;
  const PageHinkley& all() const { return all_; }
  const GroupTable<PageHinkley>& groups() const { return groups_; }

  // The test over all outcomes (the snapshot's first format) and then the groups' tests.
  void write_all_state(BinaryWriter& w) const { all_.write_state(w); }
  void read_all_state(BinaryReader& r) { all_.read_state(r); }
  void write_group_state(BinaryWriter& w) const { groups_.write_state(w); }
  void read_group_state(BinaryReader& r) { groups_.read_state(r); }

 private:
  DriftOptions options_;
  PageHinkley all_;
  GroupTable<PageHinkley> groups_;
  Alarm last_alarm_;
};

}  // namespace ttlpred::serve
