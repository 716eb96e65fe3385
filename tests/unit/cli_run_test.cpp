// The run tools' shared pieces: what the library's run functions ask of the command line
// (cli/tool_hooks.h: given, shard_range, progress, report), core/choice.h's option_value, and the
// small helpers the run functions share (data::answer_line, models' output-name checks).
#include <doctest/doctest.h>

#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/transduce.h"
#include "attnkit/data/vocab.h"
#include "attnkit/models/run_outputs.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_cli_run_test {

using namespace attnkit;
namespace po = boost::program_options;

namespace {

// An App of one tool with --bucket N and the shard option, parsed from `args`.
struct Parsed {
  std::vector<std::string> args;
  std::vector<char*> argv;
  std::unique_ptr<cli::App> app;
  int64_t bucket = 8;
  explicit Parsed(std::vector<std::string> a) : args(std::move(a)) {
    for (auto& s : args) argv.push_back(s.data());
    app = std::make_unique<cli::App>("tool", static_cast<int>(argv.size()), argv.data());
    app->options().add_options()("bucket", po::value(&bucket)->default_value(bucket), "N");
    app->shard_items("items");
    app->enable(cli::kQuiet);
    app->parse();
  }
};

}  // namespace

TEST_CASE("cli::given: an option given on the command line, not one left at its default") {
  Parsed p({"tool", "--bucket", "8"});
  const GivenOption given = cli::given(*p.app);
  CHECK(given("bucket"));  // given, even at the default's value
  CHECK_FALSE(given("shard"));
  Parsed q({"tool"});
  CHECK_FALSE(cli::given(*q.app)("bucket"));
}

TEST_CASE("cli::shard_range: null without --shard, Shard's slice with it") {
  Parsed p({"tool"});
  CHECK_FALSE(cli::shard_range(*p.app));
  Parsed q({"tool", "--shard", "2/3"});
  const ItemRange r = cli::shard_range(*q.app);
  REQUIRE(r);
  for (int64_t m : {0, 1, 7, 10}) {
    CHECK(r(m).first == q.app->shard().begin(m));
    CHECK(r(m).second == q.app->shard().end(m));
  }
  CHECK(r(10) == std::make_pair(int64_t{3}, int64_t{6}));
}

TEST_CASE("cli::report and progress write on stderr after the tool's name, nothing with --quiet") {
  std::ostringstream err;
  std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
  Parsed p({"tool", "--quiet"});
  const ProgressFn bar = cli::progress(*p.app);
  bar(0, 3);  // makes the (quiet) bar
  bar(3, 3);
  cli::report(*p.app, {"a line"});
  const std::string quiet = err.str();
  Parsed q({"tool"});
  cli::report(*q.app, {"one", "two"});
  const std::string lines = err.str();
  cli::progress (*q.app)(2, 2);
  const std::string last = err.str().substr(lines.size());
  std::cerr.rdbuf(old);
  CHECK(quiet.empty());
  CHECK(lines == "tool: one\ntool: two\n");
  CHECK(last.rfind("tool: ", 0) == 0);  // the last step is always shown
  CHECK(last.find("2/2") != std::string::npos);
}

TEST_CASE("tick reports to a ProgressFn, and skips a null one") {
  int calls = 0;
  tick(nullptr, 1, 2);
  tick([&](int64_t done, int64_t total) { calls += done == 1 && total == 2; }, 1, 2);
  CHECK(calls == 1);
}

TEST_CASE("option_value puts the option in front of a parser's error, as a UsageError") {
  CHECK(option_value("--x", [] { return 3; }) == 3);
  try {
    option_value("--kind", [] { return parse_choice<int>("kind", "c", {{"a", 1}, {"b", 2}}); });
    FAIL("no error");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()) == "--kind: unknown kind 'c' (choose a or b)");
  }
  CHECK_THROWS_AS(option_value("--n", []() -> int { throw DataError("bad"); }), UsageError);
}

TEST_CASE("data::answer_line: every id's symbol, reserved ones too, and a newline") {
  data::Vocab v;
  CHECK(data::answer_line(v, {}) == "\n");
  CHECK(data::answer_line(v, {data::Vocab::kBos, data::Vocab::kEos, data::Vocab::kPad}) ==
        v.token(data::Vocab::kBos) + " " + v.token(data::Vocab::kEos) + " " +
            v.token(data::Vocab::kPad) + "\n");
  CHECK_THROWS_AS(data::answer_line(v, {99}), DataError);
}

TEST_CASE("models' output checks: --draw names a .png, outputs named can be written") {
  CHECK(models::is_png_name("a.png"));
  CHECK_FALSE(models::is_png_name("png"));
  CHECK_FALSE(models::is_png_name("a.svg"));
  CHECK_NOTHROW(models::check_draw_name(""));
  CHECK_NOTHROW(models::check_draw_name("x/a.png"));
  CHECK_THROWS_WITH_AS(models::check_draw_name("a.pgm"), "--draw: the file must end in .png",
                       UsageError);
  const std::string none, out = "-";
  CHECK_NOTHROW(models::check_outputs_writable({&none, &out}));
  const std::string missing = "/nonexistent-folder-kit-runs/a.txt";
  CHECK_THROWS(models::check_outputs_writable({&none, &missing}));
}

}  // namespace attnkit_unit_cli_run_test
