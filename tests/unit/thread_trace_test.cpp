// The training layer's per-step thread trace (train::set_thread_trace, core/thread_trace.h):
// its phases tile each step, every lane's busy and idle time add up to the phase's, the
// serial phases keep the other lanes idle, and tracing changes no bit of the model.
#include "attnkit/core/thread_trace.h"

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "attnkit/core/parallel.h"
#include "attnkit/memory/stackmem/model.h"
#include "attnkit/train/module.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_thread_trace_test {

using namespace attnkit;

namespace {

struct TraceRow {
  int64_t step = 0;
  std::string phase;
  int64_t lane = 0, wall = 0, busy = 0, idle = 0;
};

std::vector<TraceRow> read_trace(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  REQUIRE(std::getline(in, line));
  CHECK(line == "step\tphase\tlane\twall_ns\tbusy_ns\tidle_ns");
  std::vector<TraceRow> rows;
  while (std::getline(in, line)) {
    std::istringstream is(line);
    TraceRow r;
    REQUIRE(static_cast<bool>(is >> r.step >> r.phase >> r.lane >> r.wall >> r.busy >> r.idle));
    rows.push_back(r);
  }
  return rows;
}

// A small Stack-LSTM module (16 reversal pairs) trained `steps` steps in `slices` slices on
// `threads` threads; returns its parameters' bits.
std::vector<float> train_stack(int threads, int64_t slices, int steps) {
  set_max_threads(threads);
  data::TokenCounts counts;
  for (int s = 1; s <= 6; ++s) counts[std::to_string(s)] = 1;
  data::Vocab vocab = data::Vocab::build(counts, 1);
  Rng r(3);
  std::vector<memory::TransduceExample> data;
  for (int i = 0; i < 16; ++i) {
    memory::TransduceExample e;
    for (int k = 0; k < 5; ++k) e.source.push_back(vocab.id(std::to_string(1 + r.below(6))));
    e.target.assign(e.source.rbegin(), e.source.rend());
    data.push_back(std::move(e));
  }
  memory::StackLstmConfig c;
  c.embed = 8, c.hidden = 12, c.width = 4;
  memory::StackTrainOptions o;
  o.batch = 16;
  memory::StackTraining m(c, o, std::move(vocab), std::move(data), {}, 100, 0, 1, "");
  nn::TrainState s;
  const int64_t rows = m.begin_batch(s);
  train::Tapes tapes;
  for (int k = 0; k < steps; ++k) train::step(m, tapes, rows, 7, k, 5.0, false, slices);
  std::vector<float> bits;
  for (const ad::Parameter* p : m.params().params())
    bits.insert(bits.end(), p->value.data(), p->value.data() + p->value.size());
  set_max_threads(0);
  return bits;
}

}  // namespace

TEST_CASE("thread trace: the phases tile each step; busy and idle time add up, lane by lane") {
  test::TempDir dir;
  const std::string path = dir / "trace.tsv";
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    train::set_thread_trace(path);
    train_stack(threads, 2, 3);
    train::set_thread_trace("");
    const std::vector<TraceRow> rows = read_trace(path);
    // One row per step, phase and lane, in the order the step runs them, "step" last.
    const std::vector<std::string> order = {"forward", "exchange",  "backward", "grad_sum",
                                            "clip",    "optimiser", "step"};
    REQUIRE(rows.size() == static_cast<size_t>(3 * 7 * threads));
    std::map<std::pair<int64_t, int64_t>, int64_t> wall_sum, busy_sum;  // (step, lane)
    for (size_t i = 0; i < rows.size(); ++i) {
      const TraceRow& r = rows[i];
      CHECK(r.step == static_cast<int64_t>(i) / (7 * threads));
      CHECK(r.phase == order[(i / static_cast<size_t>(threads)) % 7]);
      CHECK(r.lane == static_cast<int64_t>(i) % threads);
      CHECK(r.busy >= 0);
      CHECK(r.busy <= r.wall);
      CHECK(r.busy + r.idle == r.wall);
      if (r.lane > 0) CHECK(r.wall == rows[i - 1].wall);  // one wall time a phase
      const auto key = std::make_pair(r.step, r.lane);
      if (r.phase != "step") {
        wall_sum[key] += r.wall, busy_sum[key] += r.busy;
      } else {  // the step's totals are its phases' sums, exactly (whole nanoseconds)
        CHECK(r.wall == wall_sum[key]);
        CHECK(r.busy == busy_sum[key]);
      }
      if (r.lane == 0 && r.phase == "forward") CHECK(r.busy > 0);
      // The clipping and the optimiser's step of a small model run on the caller alone.
      if (r.lane > 0 && (r.phase == "clip" || r.phase == "optimiser")) CHECK(r.busy == 0);
      // Two slices on two threads: lane 1 computes the second slice's passes.
      if (r.lane == 1 && (r.phase == "forward" || r.phase == "backward")) CHECK(r.busy > 0);
    }
  }
}

TEST_CASE("thread trace: off, nothing is written; on, the model has the same bits") {
  test::TempDir dir;
  const std::string path = dir / "trace.tsv";
  const std::vector<float> plain = train_stack(2, 2, 2);
  train::set_thread_trace(path);
  const std::vector<float> traced = train_stack(2, 2, 2);
  train::set_thread_trace("");
  REQUIRE(plain.size() == traced.size());
  CHECK(std::memcmp(plain.data(), traced.data(), plain.size() * sizeof(float)) == 0);
  CHECK(!trace::recording());
  train_stack(1, 1, 1);  // off again: the file is left as the traced run wrote it
  CHECK(read_trace(path).size() == static_cast<size_t>(2 * 7 * 2));
}

}  // namespace attnkit_unit_thread_trace_test
