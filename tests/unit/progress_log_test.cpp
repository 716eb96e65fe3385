// Progress reports (cli/progress) and the metrics TSV log (io/tsv_log).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "attnkit/cli/progress.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/io/tsv_log.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_progress_log_test {

using namespace attnkit;

namespace {
size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("progress: plain lines every N seconds, and always the last step") {
  std::ostringstream out;
  double now = 0;
  {
    cli::Progress p("train", 100, false, out, false, [&] { return now; });
    p.set_plain_interval(10.0);
    for (int s = 1; s <= 100; ++s) {
      now = s * 0.5;  // 2 steps a second: a line every 20 steps
      p.update(s, {{"loss", 1.0 / s}});
    }
  }
  const std::string text = out.str();
  CHECK(count(text, "\n") == 5);  // steps 20, 40, 60, 80, 100
  CHECK(text.find("train: step 20/100 (20%) 2/s ETA 0:40 loss=0.05\n") != std::string::npos);
  CHECK(text.find("train: step 100/100 (100%) 2/s in 0:50 loss=0.01\n") != std::string::npos);
  CHECK(text.find('\r') == std::string::npos);
}

TEST_CASE("progress: plain lines every K steps; finish() shows the last update once") {
  std::ostringstream out;
  double now = 0;
  cli::Progress p("t", 0, false, out, false, [&] { return now; });
  p.set_plain_interval(1e9, 3);
  for (int s = 1; s <= 7; ++s) p.update(s);
  p.finish();
  p.finish();
  CHECK(out.str() == "t: step 3\nt: step 6\nt: step 7\n");
}

TEST_CASE("progress: a terminal bar is redrawn in place, at most 10 times a second") {
  std::ostringstream out;
  double now = 0;
  {
    cli::Progress p("fit", 1000, false, out, true, [&] { return now; });
    for (int s = 1; s <= 1000; ++s) {
      now = s * 0.001;  // 1000 steps in one second
      p.update(s, {{"loss", 0.5}});
    }
  }
  const std::string text = out.str();
  CHECK(count(text, "\r") <= 11);
  CHECK(count(text, "\r") >= 9);
  CHECK(count(text, "\n") == 1);  // only the end
  CHECK(text.find("fit [####################] 1000/1000 100%") != std::string::npos);
  CHECK(text.back() == '\n');
}

TEST_CASE("progress: quiet prints nothing; a resumed run rates from its start") {
  std::ostringstream out;
  double now = 0;
  {
    cli::Progress p("q", 10, true, out, false, [&] { return now; });
    for (int s = 1; s <= 10; ++s) p.update(s);
  }
  CHECK(out.str().empty());
  cli::Progress p("r", 100, false, out, false, [&] { return now; });
  p.set_start(50);
  CHECK(p.line(60, {}, 5.0) == "r: step 60/100 (60%) 2/s ETA 0:20");
  // A line fits 80 columns: the metrics that fit, in order (bert-pretrain has eleven).
  cli::Metrics many;
  for (int i = 0; i < 11; ++i) many.push_back({"metric_" + std::to_string(i), 0.1234 * i});
  const std::string wide = p.line(60, many, 5.0);
  CHECK(wide.size() <= 80);
  CHECK(wide.rfind("r: step 60/100 (60%) 2/s ETA 0:20 metric_0=0 metric_1=0.1234", 0) == 0);
  CHECK(wide.find("metric_10") == std::string::npos);
  p.set_unit("problem");  // what is counted, named (ptrtask-gen's problems are no steps)
  CHECK(p.line(60, {}, 5.0) == "r: problem 60/100 (60%) 2/s ETA 0:20");
  CHECK(cli::format_duration(3725) == "1:02:05");
  CHECK(cli::format_metric(1234567) == "1.235e+06");
}

TEST_CASE("tsv log: header from the first row, fixed column order, flushed per row") {
  const std::string path = "/tmp/attnkit_log_" + std::to_string(getpid()) + ".tsv";
  {
    io::TsvLog log(path);
    log.row({{"step", 1}, {"loss", 2.5}, {"lr", 0.001}});
    CHECK(io::read_all(path) == "step\tloss\tlr\n1\t2.5\t0.001\n");  // already on disk
    log.row({{"lr", 0.002}, {"step", 2}, {"loss", 1.0 / 3}});        // any order
    CHECK_THROWS_AS(log.row({{"step", 3}, {"loss", 1}}), Error);
    CHECK_THROWS_AS(log.row({{"step", 3}, {"loss", 1}, {"acc", 1}}), Error);
  }
  CHECK(io::read_all(path) == "step\tloss\tlr\n1\t2.5\t0.001\n2\t0.3333333333333333\t0.002\n");
  {
    // a kill after step 3 (torn last line), resumed from a checkpoint at step 2
    std::ofstream(path, std::ios::app) << "3\t0.25\t0.003\n4\t0.2";
    io::TsvLog log(path, 2);
    log.row({{"step", 3}, {"loss", 0.5}, {"lr", std::numeric_limits<double>::infinity()}});
  }
  CHECK(io::read_all(path) ==
        "step\tloss\tlr\n1\t2.5\t0.001\n2\t0.3333333333333333\t0.002\n3\t0.5\tinf\n");
  std::remove(path.c_str());
  {
    io::TsvLog log(path, 7);  // resuming with no log yet starts one
    log.row({{"step", 8}, {"loss", 1}});
  }
  CHECK(io::read_all(path) == "step\tloss\n8\t1\n");
  std::remove(path.c_str());
  CHECK_THROWS_AS(io::TsvLog("/nonexistent/dir/log.tsv"), IoError);
}

TEST_CASE("tsv log: whole numbers in full, others as the shortest decimal that reads back") {
  CHECK(io::format_double(100000.0) == "100000");
  CHECK(io::format_double(1e15) == "1000000000000000");
  CHECK(io::format_double(-3.0) == "-3");
  CHECK(io::format_double(0.0) == "0");
  CHECK(io::format_double(0.1) == "0.1");
  CHECK(io::format_double(1e-4) == "1e-04");
  CHECK(io::format_double(2.5e20) == "2.5e+20");
  CHECK(io::format_double(std::nan("")) == "nan");
}

}  // namespace attnkit_unit_progress_log_test
