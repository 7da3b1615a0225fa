// The jobs actor over the executor and a fake operation (tests/support/fake_operation.hpp),
// under CAF's deterministic test coordinator: a job's life, async answers, reads, streams,
// cancel, ownership, the output limit, eviction and the records a restart finds.

#include <gtest/gtest.h>

#include <mutex>

#include "../store/temp_home.hpp"
#include "../support/fake_operation.hpp"
#include "actors/executor_actor.hpp"
#include "actors/jobs_actor.hpp"
#include "actors/store_actor.hpp"
#include "coordinated_system.hpp"
#include "store/database.hpp"

namespace {

using namespace cws;
using namespace cws::actors;
using namespace cws::api;

struct answer {
  int calls = 0;
  api_result result;
};

done_ptr into(std::shared_ptr<answer> a) {
  return std::make_shared<done_fn>([a](api_result r) {
    ++a->calls;
    a->result = std::move(r);
  });
}

struct collecting_sink : node_sink {
  void push(base::node_result node) override {
    std::lock_guard<std::mutex> guard{mutex};
    got.push_back(std::move(node));
  }
  std::mutex mutex;
  std::vector<base::node_result> got;
};

authorization as(const std::string& user) {
  authorization a;
  a.user = user;
  return a;
}

struct jobs_fixture : ::testing::Test, test::coordinated_system {
  jobs_fixture() {
    store_config sc;
    sc.detached_writer = false;
    sc.commit_wait = {};
    st = spawn_store(sys, db, sc);
    executor_config ec;
    ec.bind = std::make_shared<bind_fn>(
      [b = fake](const store::database& d, const api_call& call, const authorization& auth,
                 const store::noderange_options& opts,
                 node_operation_ptr& out) { return (*b)(d, call, auth, opts, out); });
    ex = spawn_executor(sys, st, ec);
    spawn_jobs_actor();
  }

  void spawn_jobs_actor() {
    jobs_config jc;
    jc.db = db;
    jc.detached_writer = false;
    jc.output_max_bytes = max_bytes;
    jc.keep_max = keep_max;
    jc.keep = std::chrono::seconds(100);
    jc.now_ms = [this] {
      return now;
    };
    jc.on_power = [this](const std::string& node, const std::string& state) {
      power.push_back(node + " " + state);
    };
    jc.on_event = [this](const job_info& j, const char* what) {
      events.push_back(j.id + " " + what + " " + job_state_name(j.state));
    };
    jobs = spawn_jobs(sys, ex, jc);
    sched.run();
  }

  ~jobs_fixture() override {
    self->send_exit(jobs, caf::exit_reason::user_shutdown);
    self->send_exit(ex, caf::exit_reason::user_shutdown);
    self->send_exit(st, caf::exit_reason::user_shutdown);
    sched.run();
  }

  std::shared_ptr<answer> send(std::shared_ptr<api_call> c, const std::string& user = "alice") {
    auto a = std::make_shared<answer>();
    self->send(jobs, run_atom::value, api_call_ptr{std::move(c)}, as(user), into(a));
    sched.run();
    return a;
  }

  static std::shared_ptr<api_call> shell(std::string target, bool async = false) {
    auto c = std::make_shared<api_call>();
    c->op = operation::nodeshell;
    c->target = std::move(target);
    c->async = async;
    return c;
  }

  static std::shared_ptr<api_call> job_call(operation op, std::string id = {}) {
    auto c = std::make_shared<api_call>();
    c->op = op;
    c->target = std::move(id);
    return c;
  }

  /// GET /jobs/{id} as `user`.
  api_result show(const std::string& id, const std::string& user = "alice") {
    return send(job_call(operation::job_show, id), user)->result;
  }

  test::temp_dir dir;
  std::shared_ptr<store::database> db = std::make_shared<store::database>(dir.path / "db");
  std::shared_ptr<test::fake_binder> fake = std::make_shared<test::fake_binder>();
  size_t max_bytes = 1 << 20;
  size_t keep_max = 100;
  int64_t now = 1000;
  std::vector<std::string> events;
  std::vector<std::string> power;
  store_actor st;
  executor_actor ex;
  jobs_actor jobs;
};

TEST_F(jobs_fixture, an_async_call_is_answered_at_once_and_read_back_until_done) {
  auto a = send(shell("n1,n2", true));
  ASSERT_EQ(a->calls, 1);
  ASSERT_TRUE(a->result.accepted);
  auto id = a->result.job_id;
  EXPECT_EQ(id.size(), 16u);
  auto op = fake->ops().at(0);
  op->finish(1, 0, "two\n");
  sched.run();
  auto r = show(id);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.jobs->size(), 1u);
  auto j = r.jobs->front();
  EXPECT_EQ(j.state, job_state::running);
  EXPECT_EQ(j.targets, 2u);
  EXPECT_EQ(j.finished, 1u);
  ASSERT_EQ(j.nodes.size(), 1u);
  EXPECT_EQ(j.nodes[0].name, "n2");
  EXPECT_EQ(j.nodes[0].out, "two\n");
  op->finish(0, 3, "one\n");
  sched.run();
  j = show(id).jobs->front();
  EXPECT_EQ(j.state, job_state::done);
  EXPECT_EQ(j.failed, 1u);
  EXPECT_EQ(j.nodes.size(), 2u);
  EXPECT_EQ(j.ended_ms, 1000);
  EXPECT_EQ(events.front(), id + " created running");
  EXPECT_EQ(events.back(), id + " ended done");
}

TEST_F(jobs_fixture, a_synchronous_call_is_a_job_its_caller_awaits_with_every_byte) {
  max_bytes = 4; // the job keeps 4 bytes; its caller gets all
  self->send_exit(jobs, caf::exit_reason::user_shutdown);
  spawn_jobs_actor();
  auto a = send(shell("n1,n2"));
  EXPECT_EQ(a->calls, 0);
  auto op = fake->ops().at(0);
  op->finish(1, 0, "second\n");
  op->finish(0, 0, "first\n");
  sched.run();
  ASSERT_EQ(a->calls, 1);
  ASSERT_EQ(a->result.nodes.size(), 2u);
  EXPECT_EQ(a->result.nodes[0].out, "first\n") << "noderange order, whole";
  EXPECT_EQ(a->result.nodes[1].out, "second\n");
  auto list = send(job_call(operation::job_list))->result;
  ASSERT_EQ(list.jobs->size(), 1u);
  auto j = show(list.jobs->front().id).jobs->front();
  EXPECT_EQ(j.truncated, 2u);
  EXPECT_EQ(j.nodes[0].out, "seco");
  EXPECT_TRUE(j.nodes[0].truncated);
  EXPECT_EQ(j.nodes[1].out, "");
}

TEST_F(jobs_fixture, an_async_job_keeps_its_output_within_the_limit_and_counts_what_it_cut) {
  max_bytes = 10;
  self->send_exit(jobs, caf::exit_reason::user_shutdown);
  spawn_jobs_actor();
  auto id = send(shell("n1,n2,n3", true))->result.job_id;
  auto op = fake->ops().at(0);
  op->finish(0, 0, "12345");
  op->finish(1, 0, "1234567890");
  op->finish(2, 0, "x");
  sched.run();
  auto j = show(id).jobs->front();
  EXPECT_EQ(j.nodes[0].out, "12345");
  EXPECT_FALSE(j.nodes[0].truncated);
  EXPECT_EQ(j.nodes[1].out, "12345");
  EXPECT_TRUE(j.nodes[1].truncated);
  EXPECT_EQ(j.nodes[2].out, "");
  EXPECT_EQ(j.truncated, 2u);
}

TEST_F(jobs_fixture, another_users_job_is_not_found_and_root_sees_every_job) {
  auto id = send(shell("n1", true), "alice")->result.job_id;
  EXPECT_EQ(show(id, "bob").error, errc::not_found);
  EXPECT_EQ(send(job_call(operation::job_cancel, id), "bob")->result.error, errc::not_found);
  EXPECT_FALSE(fake->ops().at(0)->cancelled());
  EXPECT_TRUE(send(job_call(operation::job_list), "bob")->result.jobs->empty());
  EXPECT_EQ(send(job_call(operation::job_list), "root")->result.jobs->size(), 1u);
  EXPECT_TRUE(show(id, "root").ok());
  EXPECT_EQ(show("0123456789abcdef", "alice").error, errc::not_found);
}

TEST_F(jobs_fixture, a_cancel_ends_the_running_nodes_and_the_job_reads_cancelled) {
  auto id = send(shell("n1,n2", true))->result.job_id;
  auto op = fake->ops().at(0);
  op->finish(0, 0);
  sched.run();
  auto r = send(job_call(operation::job_cancel, id))->result;
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(op->cancelled());
  auto j = show(id).jobs->front();
  EXPECT_EQ(j.state, job_state::cancelled);
  ASSERT_EQ(j.nodes.size(), 2u);
  EXPECT_EQ(j.nodes[1].error, "cancelled");
  EXPECT_NE(j.nodes[1].message.find("Cancelled by alice"), std::string::npos);
}

TEST_F(jobs_fixture, a_stream_reader_gets_the_nodes_so_far_then_the_rest_live_then_the_end) {
  auto id = send(shell("n1,n2", true))->result.job_id;
  auto op = fake->ops().at(0);
  op->finish(1, 0, "b");
  sched.run();
  auto c = job_call(operation::job_show, id);
  auto sink = std::make_shared<collecting_sink>();
  c->sink = sink;
  auto a = send(c);
  EXPECT_EQ(a->calls, 0);
  ASSERT_EQ(sink->got.size(), 1u);
  op->finish(0, 0, "a");
  sched.run();
  ASSERT_EQ(sink->got.size(), 2u);
  EXPECT_EQ(sink->got[1].out, "a");
  ASSERT_EQ(a->calls, 1);
  EXPECT_TRUE(a->result.created);
  EXPECT_EQ(a->result.nodes.size(), 2u);
}

TEST_F(jobs_fixture, a_caller_that_leaves_leaves_the_job_running_and_its_timeout_ends_it) {
  auto c = shell("n1");
  c->cancel = std::make_shared<call_cancel>();
  auto a = send(c);
  // the client left: nothing happens to the job (the session no longer cancels then)
  auto list = send(job_call(operation::job_list))->result;
  ASSERT_EQ(list.jobs->size(), 1u);
  EXPECT_EQ(list.jobs->front().state, job_state::running);
  // its call_timeout passes: the job ends as a timeout ends it
  c->cancel->cancel("Not finished within call_timeout (1 seconds); ended.");
  sched.run();
  ASSERT_EQ(a->calls, 1);
  EXPECT_EQ(a->result.nodes.at(0).error, "cancelled");
  EXPECT_EQ(show(list.jobs->front().id).jobs->front().state, job_state::cancelled);
}

TEST_F(jobs_fixture, an_async_call_whose_plan_fails_gets_the_failure_and_leaves_no_job) {
  fake->refuse_with = api_result::failure(errc::failed, "ghost: no such node");
  auto a = send(shell("ghost", true));
  ASSERT_EQ(a->calls, 1);
  EXPECT_FALSE(a->result.accepted);
  ASSERT_FALSE(a->result.messages.empty());
  EXPECT_EQ(a->result.messages.front(), "ghost: no such node");
  EXPECT_TRUE(send(job_call(operation::job_list))->result.jobs->empty());
  EXPECT_TRUE(db->read().meta_with_prefix(job_record_prefix).empty());
}

TEST_F(jobs_fixture, a_stale_authorization_goes_back_to_the_caller_and_leaves_no_job) {
  // the dispatcher authorizes again on fresh data and starts a new job
  fake->refuse_with = api_result::failure(errc::stale, "");
  auto a = send(shell("n1"));
  ASSERT_EQ(a->calls, 1);
  EXPECT_EQ(a->result.error, errc::stale);
  EXPECT_TRUE(send(job_call(operation::job_list))->result.jobs->empty());
}

TEST_F(jobs_fixture, a_synchronous_call_whose_plan_fails_keeps_a_failed_job_with_the_reason) {
  fake->refuse_with = api_result::failure(errc::failed, "ghost: no such node");
  auto a = send(shell("ghost"));
  ASSERT_EQ(a->calls, 1);
  EXPECT_FALSE(a->result.ok());
  auto list = send(job_call(operation::job_list))->result;
  ASSERT_EQ(list.jobs->size(), 1u);
  auto j = show(list.jobs->front().id).jobs->front();
  EXPECT_EQ(j.state, job_state::failed);
  ASSERT_FALSE(j.messages.empty());
  EXPECT_EQ(j.messages.front(), "ghost: no such node");
}

TEST_F(jobs_fixture, finished_jobs_are_forgotten_past_jobs_keep_max_and_after_jobs_keep_s) {
  keep_max = 2;
  self->send_exit(jobs, caf::exit_reason::user_shutdown);
  spawn_jobs_actor();
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    now += 1;
    ids.push_back(send(shell("n1", true))->result.job_id);
    fake->ops().back()->finish(0, 0);
    sched.run();
  }
  EXPECT_EQ(show(ids[0]).error, errc::not_found) << "the oldest went first";
  EXPECT_TRUE(show(ids[1]).ok());
  EXPECT_TRUE(show(ids[2]).ok());
  EXPECT_EQ(db->read().meta_with_prefix(job_record_prefix).size(), 2u);
  now += 101 * 1000; // past jobs_keep_s
  EXPECT_TRUE(send(job_call(operation::job_list))->result.jobs->empty());
  EXPECT_TRUE(db->read().meta_with_prefix(job_record_prefix).empty());
}

TEST_F(jobs_fixture, after_a_restart_a_job_that_was_running_reads_interrupted) {
  auto running = send(shell("n1", true))->result.job_id;
  auto done = send(shell("n2", true))->result.job_id;
  fake->ops().at(1)->finish(0, 0);
  sched.run();
  self->send_exit(jobs, caf::exit_reason::user_shutdown);
  sched.run();
  spawn_jobs_actor(); // a new daemon over the same store
  auto j = show(running).jobs->front();
  EXPECT_EQ(j.state, job_state::interrupted);
  EXPECT_EQ(j.user, "alice");
  EXPECT_EQ(j.operation, "nodeshell");
  EXPECT_EQ(j.targets, 1u);
  EXPECT_EQ(show(done).jobs->front().state, job_state::done);
  EXPECT_EQ(show(running, "bob").error, errc::not_found);
}

TEST_F(jobs_fixture, a_power_result_that_changes_a_nodes_state_is_told_once) {
  for (const char* states : {"on,on", "on,off"}) {
    auto c = shell("n1,n2", true);
    c->op = operation::power;
    send(c);
    auto op = fake->ops().back();
    std::string both = states;
    op->finish(0, 0, both.substr(0, 2));
    op->finish(1, 0, both.substr(3));
    sched.run();
  }
  // n1 on, n2 on; then n1 on again (no change) and n2 off
  EXPECT_EQ(power, (std::vector<std::string>{"n1 on", "n2 on", "n2 off"}));
}

TEST(job_record, a_record_reads_back_as_written_and_a_damaged_one_is_refused) {
  job_info j;
  j.id = "00ff00ff00ff00ff";
  j.user = "alice";
  j.operation = "power";
  j.op = operation::power;
  j.state = job_state::cancelled;
  j.targets = 7;
  j.created_ms = 1;
  j.started_ms = 2;
  j.ended_ms = 3;
  j.finished = 5;
  j.failed = 2;
  j.truncated = 1;
  job_info back;
  ASSERT_TRUE(decode_job_record(encode_job_record(j), back));
  EXPECT_EQ(back.finished, 5u); // a restart still tells how the job went
  EXPECT_EQ(back.failed, 2u);
  EXPECT_EQ(back.truncated, 1u);
  EXPECT_EQ(back.id, j.id);
  EXPECT_EQ(back.op, operation::power);
  EXPECT_EQ(back.state, job_state::cancelled);
  EXPECT_EQ(back.targets, 7u);
  EXPECT_EQ(back.ended_ms, 3);
  EXPECT_FALSE(decode_job_record("garbage", back));
  EXPECT_FALSE(decode_job_record("", back));
}

} // namespace
