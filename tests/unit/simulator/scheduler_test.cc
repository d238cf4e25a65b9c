// List scheduler on hand-built graphs: dependency and one-task-per-stream rules, binding
// predecessors, critical path, and cycle detection.
#include "simulator/scheduler.h"

#include <gtest/gtest.h>

#include <boost/graph/topological_sort.hpp>

namespace dsplan::sim {
namespace {

Task on(int stream, double seconds, TaskKind kind = TaskKind::forward) {
  Task t;
  t.kind = kind;
  t.stream = stream;
  t.duration = Seconds(seconds);
  return t;
}

TEST(Scheduler, DependenciesAndStreamsFixStartTimes) {
  TaskGraph g;
  const int compute = g.add_stream(StreamKind::compute, 0);
  const int comm = g.add_stream(StreamKind::dp_comm, 0);
  const TaskId a = g.add_task(on(compute, 2));                        // [0, 2]
  const TaskId b = g.add_task(on(compute, 3));                        // [2, 5] after a
  const TaskId c = g.add_task(on(comm, 4, TaskKind::grad_reduce));    // [2, 6] after a
  g.add_dep(a, c);
  const TaskId d = g.add_task(on(compute, 1));                        // [max(5, 6), 7]
  g.add_dep(c, d);
  const TaskId e = g.add_task(on(comm, 0.5, TaskKind::grad_reduce));  // stream busy to 6
  const Schedule s = list_schedule(g);
  EXPECT_DOUBLE_EQ(s.start[b].v, 2.0);
  EXPECT_DOUBLE_EQ(s.start[c].v, 2.0);
  EXPECT_DOUBLE_EQ(s.start[d].v, 6.0);
  EXPECT_DOUBLE_EQ(s.start[e].v, 6.0);
  EXPECT_DOUBLE_EQ(s.makespan.v, 7.0);
  EXPECT_EQ(s.last, d);
  EXPECT_EQ(s.binding[d], c);  // the reduction, not b (finished at 5), held d back
  EXPECT_EQ(s.binding[a], kNoTask);
  EXPECT_EQ(critical_path(g, s), (std::vector<TaskId>{a, c, d}));
}

// Built in id order the graph schedules without a sort; a dependency from a later task to
// an earlier one (how pipeline stages are joined) takes the topological sort. Both give
// the schedule of the same dependencies: here b waits for the comm task c added after it.
//   compute: a [0, 2], b [max(2, 6), 7];  comm: c [0, 6]  -> makespan 7, b bound by c.
TEST(Scheduler, SameScheduleWithOrWithoutBackwardIds) {
  TaskGraph g;
  const int compute = g.add_stream(StreamKind::compute, 0);
  const int comm = g.add_stream(StreamKind::dp_comm, 0);
  const TaskId a = g.add_task(on(compute, 2));
  const TaskId b = g.add_task(on(compute, 1));
  EXPECT_TRUE(g.ids_are_topological());
  const TaskId c = g.add_task(on(comm, 6, TaskKind::grad_reduce));
  g.add_dep(c, b);
  EXPECT_FALSE(g.ids_are_topological());
  const Schedule s = list_schedule(g);
  EXPECT_DOUBLE_EQ(s.start[a].v, 0.0);
  EXPECT_DOUBLE_EQ(s.start[b].v, 6.0);
  EXPECT_DOUBLE_EQ(s.makespan.v, 7.0);
  EXPECT_EQ(s.binding[b], c);
}

TEST(Scheduler, ZeroLengthTasksAreLeftOffTheCriticalPath) {
  TaskGraph g;
  const int compute = g.add_stream(StreamKind::compute, 0);
  const TaskId a = g.add_task(on(compute, 1));
  Task barrier;
  barrier.kind = TaskKind::barrier;
  const TaskId join = g.add_task(barrier);
  g.add_dep(a, join);
  const TaskId b = g.add_task(on(compute, 2));
  g.add_dep(join, b);
  const Schedule s = list_schedule(g);
  EXPECT_DOUBLE_EQ(s.makespan.v, 3.0);
  EXPECT_EQ(critical_path(g, s), (std::vector<TaskId>{a, b}));
}

TEST(Scheduler, ACycleIsReported) {
  TaskGraph g;
  const int s0 = g.add_stream(StreamKind::compute, 0);
  const int s1 = g.add_stream(StreamKind::compute, 1);
  const TaskId a = g.add_task(on(s0, 1));
  const TaskId b = g.add_task(on(s1, 1));
  g.add_dep(a, b);
  g.add_dep(b, a);
  EXPECT_THROW(list_schedule(g), boost::not_a_dag);
}

// A dependency from a later task to an earlier one (as pipeline sends are added) makes the
// scheduler use TaskGraph::topological_order(), which is kept between schedules and must
// be recomputed when a dependency is added. Tasks: a (stream 1, 2 s), then b (1 s) and
// c (4 s) on stream 0, so b -> c by stream order.
TEST(Scheduler, TheKeptOrderFollowsANewDependency) {
  TaskGraph g;
  const int s0 = g.add_stream(StreamKind::compute, 0);
  const int s1 = g.add_stream(StreamKind::compute, 1);
  const TaskId a = g.add_task(on(s1, 2));
  const TaskId b = g.add_task(on(s0, 1));
  const TaskId c = g.add_task(on(s0, 4));
  g.add_dep(b, a);  // id 1 before id 0
  ASSERT_FALSE(g.ids_are_topological());
  // b 0-1, a 1-3 (after b), c 1-5 (after b on its stream): makespan 5, ending with c.
  Schedule s = list_schedule(g);
  EXPECT_DOUBLE_EQ(s.start[a].v, 1.0);
  EXPECT_DOUBLE_EQ(s.makespan.v, 5.0);
  EXPECT_EQ(s.last, c);
  // Now a also waits for c: a 5-7, makespan 7. Same task count, so only the new edge can
  // tell the kept order that it is stale.
  g.add_dep(c, a);
  s = list_schedule(g);
  EXPECT_DOUBLE_EQ(s.start[a].v, 5.0);
  EXPECT_DOUBLE_EQ(s.makespan.v, 7.0);
  EXPECT_EQ(s.binding[a], c);
}

TEST(Scheduler, TaskNamesCarryTheirLabels) {
  Task t = on(0, 1, TaskKind::backward_layer);
  t.rank = 3;
  t.micro_batch = 7;
  t.chunk = 1;
  t.layer = 2;
  EXPECT_EQ(task_name(t), "rank3/backward mb7 chunk1 layer2");
  EXPECT_EQ(stream_name(Stream{StreamKind::dp_comm, 5}), "rank5/dp_comm");
}

}  // namespace
}  // namespace dsplan::sim
