// YAML configuration in the command-line layer (cli/cli.h): precedence, strict keys, types,
// --dump-config and stored configurations.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/fields.h"
#include "attnkit/cli/training.h"
#include "attnkit/core/error.h"
#include "attnkit/io/config.h"
#include "attnkit/models/imgclass/model.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_cli_config_test {

using namespace attnkit;
namespace po = boost::program_options;

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/attnkit_cfg_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

struct Cfg {
  int hidden = 0;
  double lr = 0;
  std::string cell;
  bool tied = false;
  std::vector<int> layers;
  std::string out;
};

// Builds an App over `args` with the keys of a typical training tool and parses it.
struct Harness {
  std::vector<std::string> args;
  std::vector<char*> argv;
  Cfg c;
  std::unique_ptr<cli::App> app;
  explicit Harness(std::vector<std::string> a) : args(std::move(a)) {
    args.insert(args.begin(), "tool");
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    app = std::make_unique<cli::App>("tool", static_cast<int>(args.size()), argv.data());
    app->options().add_options()("output,o", po::value(&c.out)->default_value("m"), "model");
    app->config_options().add_options()("hidden", po::value(&c.hidden)->default_value(8),
                                        "hidden units")(
        "lr", po::value(&c.lr)->default_value(0.001), "learning rate")(
        "cell", po::value(&c.cell)->default_value("lstm"), "cell type")(
        "tied", po::bool_switch(&c.tied), "tie embeddings")(
        "layers", po::value(&c.layers)->multitoken(), "layer sizes");
  }
  void parse() { app->parse(); }
};

template <class E>
E error_of(Harness& h) {
  try {
    h.parse();
  } catch (const E& e) {
    return e;
  }
  FAIL("no error");
  return E("");
}

}  // namespace

TEST_CASE("config: defaults < first file < later file < command line") {
  const std::string f1 = write_temp("a.yaml", "hidden: 16\nlr: 0.5\ncell: gru\n");
  const std::string f2 = write_temp("b.yaml", "# later file\nlr: 0.25\n");
  {
    Harness h({});
    h.parse();
    CHECK(h.c.hidden == 8);
    CHECK(h.c.lr == 0.001);
    CHECK(h.c.cell == "lstm");
  }
  {
    Harness h({"--config", f1});
    h.parse();
    CHECK(h.c.hidden == 16);
    CHECK(h.c.lr == 0.5);
    CHECK(h.c.cell == "gru");
    CHECK(h.app->given("hidden"));
  }
  {
    Harness h({"-c", f1, "--config", f2});
    h.parse();
    CHECK(h.c.hidden == 16);
    CHECK(h.c.lr == 0.25);
  }
  {
    Harness h({"--config", f2, "--config", f1});  // order matters
    h.parse();
    CHECK(h.c.lr == 0.5);
  }
  {
    Harness h({"--hidden", "32", "--config", f1, "--config", f2, "--lr=0.125"});
    h.parse();
    CHECK(h.c.hidden == 32);
    CHECK(h.c.lr == 0.125);
    CHECK(h.c.cell == "gru");
  }
  std::remove(f1.c_str());
  std::remove(f2.c_str());
}

TEST_CASE("options: a repeated single-valued option, the last wins; lists keep every value") {
  const std::string f1 = write_temp("r1.yaml", "lr: 0.5\n");
  const std::string f2 = write_temp("r2.yaml", "cell: gru\n");
  Harness h({"--hidden", "3",        "-o",   "a",    "--hidden=5", "--tied", "--output", "b",
             "--tied",   "--layers", "1",    "2",    "--layers",   "3",      "-c",       f1,
             "--config", f2,         "--lr", "0.25", "--lr",       "0.125"});
  h.parse();
  CHECK(h.c.hidden == 5);
  CHECK(h.c.out == "b");
  CHECK(h.c.tied);
  CHECK(h.c.lr == 0.125);                           // the command line's last
  CHECK(h.c.cell == "gru");                         // both files were read
  CHECK(h.c.layers == std::vector<int>{1, 2, 3});   // a list: every value, in order
  CHECK(h.app->occurrences("hidden").size() == 2);  // what was typed, both
  std::remove(f1.c_str());
  std::remove(f2.c_str());
}

TEST_CASE("config: booleans and lists from YAML") {
  const std::string f = write_temp("c.yaml", "tied: true\nlayers: [4, 5, 6]\n");
  Harness h({"--config", f});
  h.parse();
  CHECK(h.c.tied);
  CHECK(h.c.layers == std::vector<int>{4, 5, 6});
  std::remove(f.c_str());
}

TEST_CASE("config: unknown key, wrong type and bad YAML are usage errors with file and line") {
  const std::string f = write_temp("d.yaml", "hidden: 16\n\nhiden: 3\n");
  {
    Harness h({"--config", f});
    const UsageError e = error_of<UsageError>(h);
    CHECK(e.file() == f);
    CHECK(e.line() == 3);
    CHECK(std::string(e.what()).find("unknown configuration key 'hiden'") != std::string::npos);
    CHECK(std::string(e.what()).find("did you mean 'hidden'") != std::string::npos);
  }
  const std::string g = write_temp("e.yaml", "lr: 0.1\nhidden: lots\n");
  {
    Harness h({"--config", g});
    const UsageError e = error_of<UsageError>(h);
    CHECK(e.file() == g);
    CHECK(e.line() == 2);
    CHECK(std::string(e.what()).find("hidden") != std::string::npos);
    CHECK(e.exit_status() == 2);
  }
  const std::string k = write_temp("f.yaml", "outptu: x\n");  // a tool option, misspelt
  {
    Harness h({"--config", k});
    const UsageError e = error_of<UsageError>(h);
    CHECK(std::string(e.what()).find("unknown configuration key 'outptu' (did you mean "
                                     "'output'?)") != std::string::npos);
  }
  const std::string y = write_temp("g.yaml", "hidden: [1, 2\n");
  {
    Harness h({"--config", y});
    const UsageError e = error_of<UsageError>(h);
    CHECK(e.file() == y);
    CHECK(std::string(e.what()).find("bad YAML") != std::string::npos);
  }
  const std::string l = write_temp("h.yaml", "- hidden\n- 3\n");
  {
    Harness h({"--config", l});
    CHECK(std::string(error_of<UsageError>(h).what()).find("mapping") != std::string::npos);
  }
  {
    Harness h({"--config", "/nonexistent/x.yaml"});
    CHECK(error_of<UsageError>(h).file() == "/nonexistent/x.yaml");
  }
  for (const auto& p : {f, g, k, y, l}) std::remove(p.c_str());
}

TEST_CASE("config: --dump-config prints every key; fed back it gives the same dump") {
  const std::string f = write_temp("i.yaml", "cell: \"a: b # c\"\nlr: 0.1\n");
  std::string dump;
  {
    Harness h({"--config", f, "--hidden", "5", "--tied", "--dump-config"});
    std::ostringstream captured;
    std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
    CHECK_THROWS_AS(h.parse(), cli::EarlyExit);
    std::cout.rdbuf(old);
    dump = captured.str();
    CHECK(dump.rfind(h.app->config_yaml(), 0) == 0);  // the keys, then what else was given
  }
  CHECK(dump.find("hidden: 5\n") != std::string::npos);
  CHECK(dump.find("lr: 0.1\n") != std::string::npos);
  CHECK(dump.find("tied: true\n") != std::string::npos);
  CHECK(dump.find("layers: ~\n") != std::string::npos);
  const std::string d = write_temp("dump.yaml", dump);
  Harness h2({"--config", d});
  h2.parse();
  CHECK(dump.rfind(h2.app->config_yaml(), 0) == 0);
  CHECK(h2.c.cell == "a: b # c");
  CHECK(h2.c.hidden == 5);
  CHECK(h2.c.tied);
  std::remove(f.c_str());
  std::remove(d.c_str());
}

TEST_CASE("config: a file holds a whole run: paths and the seed too; --dump-config says it all") {
  const std::string f = write_temp("run.yaml", "hidden: 16\noutput: model.akm\nseed: 7\n");
  std::string dump;
  {
    Harness h({"--config", f});
    h.app->enable(cli::kSeed);
    h.parse();
    CHECK(h.c.hidden == 16);
    CHECK(h.c.out == "model.akm");
    CHECK(h.app->common().seed == 7);
    CHECK(h.app->given("output"));
  }
  {
    Harness h({"--config", f, "-o", "other.akm", "--seed", "9", "--dump-config"});  // line wins
    h.app->enable(cli::kSeed);
    std::ostringstream captured;
    std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
    CHECK_THROWS_AS(h.parse(), cli::EarlyExit);
    std::cout.rdbuf(old);
    dump = captured.str();
  }
  CHECK(dump.find("hidden: 16\n") != std::string::npos);
  CHECK(dump.find("output: \"other.akm\"\n") != std::string::npos);
  CHECK(dump.find("seed: 9\n") != std::string::npos);
  const std::string d = write_temp("run-dump.yaml", dump);
  {
    Harness h({"--config", d});
    h.app->enable(cli::kSeed);
    h.parse();
    CHECK(h.c.out == "other.akm");
    CHECK(h.app->common().seed == 9);
  }
  // --dump-config needs no required option and reads no data: the run's data may not exist.
  {
    std::vector<std::string> args = {"tool", "--dump-config"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::string in;
    int hidden = 0;
    cli::App app("tool", 2, argv.data());
    app.options().add_options()("input,i", po::value(&in)->required(), "data");
    app.config_options().add_options()("hidden", po::value(&hidden)->default_value(4), "units");
    std::ostringstream captured;
    std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
    CHECK_THROWS_AS(app.parse(), cli::EarlyExit);
    std::cout.rdbuf(old);
    CHECK(captured.str() == "hidden: 4\n");
  }
  std::remove(f.c_str());
  std::remove(d.c_str());
}

TEST_CASE("config: stored configuration reads back; fallback fills keys not given") {
  Harness h({"--hidden", "12", "--lr", "0.3", "--layers", "1", "2"});
  h.parse();
  const std::string yaml = h.app->config_yaml();
  io::StoredConfig s(yaml, "M.akm");
  CHECK(s.get<int>("hidden") == 12);
  CHECK(s.get<double>("lr") == 0.3);
  CHECK(s.get<std::string>("cell") == "lstm");
  CHECK(s.get<std::vector<int>>("layers") == std::vector<int>{1, 2});
  CHECK(s.get<int>("missing", 7) == 7);
  CHECK_THROWS_AS(s.get<int>("missing"), DataError);
  CHECK_THROWS_AS(s.get<int>("cell"), DataError);
  CHECK_THROWS_AS(io::StoredConfig("[1, 2", "M.akm"), DataError);

  // resume: the command line keeps --lr, the stored configuration gives the rest
  Harness r({"--lr", "0.9"});
  r.parse();
  r.app->apply_config_fallback(yaml + "from_a_newer_tool: 1\n", "M.akm");
  CHECK(r.c.hidden == 12);
  CHECK(r.c.lr == 0.9);
  CHECK(r.c.layers == std::vector<int>{1, 2});
}

TEST_CASE("config: --help lists the configuration keys") {
  Harness h({"--help"});
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  CHECK_THROWS_AS(h.parse(), cli::EarlyExit);
  std::cout.rdbuf(old);
  const std::string help = captured.str();
  CHECK(help.find("Configuration") != std::string::npos);
  CHECK(help.find("--hidden") != std::string::npos);
  CHECK(help.find("--dump-config") != std::string::npos);
  CHECK(help.find("--config") != std::string::npos);
}

TEST_CASE("config: a renamed key keeps its stored name in model files") {
  // --hidden was once --width: model files store it as "width", --dump-config and --config
  // know "hidden" only, and a stored configuration's "width" fills --hidden.
  auto make = [](std::vector<std::string> a) {
    auto h = std::make_unique<Harness>(std::move(a));
    h->app->stored_key("hidden", "width");
    return h;
  };
  auto h = make({"--hidden", "12", "--dump-config"});
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  CHECK_THROWS_AS(h->parse(), cli::EarlyExit);
  std::cout.rdbuf(old);
  const std::string dump = captured.str();
  CHECK(dump.find("hidden: 12\n") != std::string::npos);
  CHECK(dump.find("width:") == std::string::npos);
  const std::string stored = h->app->config_yaml();
  CHECK(stored.find("width: 12\n") != std::string::npos);
  CHECK(stored.find("hidden:") == std::string::npos);
  // the same keys in the same order, only the name differs
  CHECK(stored.substr(stored.find("lr:")) == dump.substr(dump.find("lr:")));
  auto r = make({"--lr", "0.9"});
  r->parse();
  r->app->apply_config_fallback(stored, "M.akm");
  CHECK(r->c.hidden == 12);
  CHECK(r->c.lr == 0.9);
  // a --config file is the user's: the option's name only
  const std::string f = write_temp("old.yaml", "width: 3\n");
  auto u = make({"--config", f});
  CHECK_THROWS_AS(u->parse(), UsageError);
  std::remove(f.c_str());
}

TEST_CASE("training flags: one vocabulary, configuration keys") {
  const std::string f = write_temp("tr.yaml", "checkpoint-every: 50\nlr: 0.5\n");
  std::vector<std::string> args = {"tool",         "--config", f,    "--log", "m.tsv",
                                   "--batch-size", "7",        "-o", "m.akm"};
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  cli::App app("tool", static_cast<int>(argv.size()), argv.data());
  cli::TrainingFlags tf;
  std::string out;
  app.options().add_options()("output,o", po::value(&out), "model");
  cli::add_training_options(app, tf);
  app.parse();
  const train::TrainOptions o = cli::resolve_training(app, tf, "seq2seq", out);
  CHECK(o.checkpoint_every == 50);
  CHECK(!o.resume);
  CHECK(o.checkpoint_path.empty());
  CHECK(o.model_path == "m.akm");
  CHECK(o.log_path == "m.tsv");
  CHECK(tf.lr == 0.5);
  CHECK(tf.batch_size == 7);
  const std::string yaml = app.config_yaml();
  CHECK(yaml.find("batch-size: 7\n") != std::string::npos);
  CHECK(yaml.find("checkpoint-every: 50\n") != std::string::npos);
  std::remove(f.c_str());
}

// A Config's field list (core/fields.h) declared once: the same list makes the options and
// reads the stored YAML back.
namespace {
struct FieldCfg {
  std::string kind = "gru";
  int64_t hidden = 16;
  double rate = 0.1;
  bool mask = true, wide = false;
  int64_t added = 7;  // a later field: older stored configurations lack it
  template <class V>
  void fields(V& v) {
    v(kind, {"kind", "KIND", "the cell"});
    v(hidden, {"hidden", "N", "units"});
    v(rate, {"rate", "R", "a rate", "old-rate"});
    v(fields::negated(mask), {"no-mask", "", "no mask"});
    v(wide, {"wide", "", "wide"});
    v(added, {"added", "N", "added later", nullptr, true});
  }
};

template <class Cfg = FieldCfg>
Cfg fields_from(std::vector<std::string> args, std::string* yaml) {
  args.insert(args.begin(), "tool");
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  Cfg c;
  cli::App app("tool", static_cast<int>(args.size()), argv.data());
  cli::add_fields(app, c);
  app.parse();
  *yaml = app.config_yaml();
  return c;
}
}  // namespace

TEST_CASE("fields: one list gives the options, the stored YAML and the loader") {
  std::string yaml;
  FieldCfg c = fields_from({"--hidden", "32", "--no-mask", "--rate", "0.25"}, &yaml);
  CHECK(c.hidden == 32);
  CHECK(c.mask == false);
  CHECK(c.rate == 0.25);
  CHECK(c.wide == false);
  // In the list's order, the renamed field under its stored name.
  CHECK(yaml ==
        "kind: \"gru\"\nhidden: 32\nold-rate: 0.25\nno-mask: true\nwide: false\nadded: 7\n");
  FieldCfg back;
  io::read_fields(io::StoredConfig(yaml, "m.akm"), back);
  CHECK(back.kind == "gru");
  CHECK(back.hidden == 32);
  CHECK(back.rate == 0.25);
  CHECK(back.mask == false);
  CHECK(back.wide == false);
  CHECK(back.added == 7);

  // Defaults: the switches are off, the negated member keeps its default.
  c = fields_from({"--wide"}, &yaml);
  CHECK(c.mask == true);
  CHECK(c.wide == true);
  FieldCfg d;
  io::read_fields(io::StoredConfig(yaml, "m.akm"), d);
  CHECK(d.mask == true);
  CHECK(d.wide == true);
}

TEST_CASE("fields: a stored configuration missing a required field or of a wrong type is refused") {
  FieldCfg c;
  // 'added' is optional: an older file without it loads with the default.
  io::read_fields(io::StoredConfig("kind: lstm\nhidden: 4\nold-rate: 1\n", "m.akm"), c);
  CHECK(c.kind == "lstm");
  CHECK(c.added == 7);
  CHECK(c.mask == true);
  FieldCfg e;
  CHECK_THROWS_WITH_AS(io::read_fields(io::StoredConfig("kind: lstm\nold-rate: 1\n", "m.akm"), e),
                       doctest::Contains("hidden"), DataError);
  CHECK_THROWS_WITH_AS(
      io::read_fields(io::StoredConfig("kind: lstm\nhidden: big\nold-rate: 1\n", "m.akm"), e),
      doctest::Contains("wrong type"), DataError);
}

TEST_CASE("fields: the keys a stored configuration has, and writing fields into a YAML map") {
  // Reading only what is there: no key is required, the others keep their values.
  FieldCfg c;
  io::read_present_fields(io::StoredConfig("kind: lstm\nold-rate: 0.5\n", "m.akm"), c);
  CHECK(c.kind == "lstm");
  CHECK(c.hidden == 16);
  CHECK(c.rate == 0.5);
  CHECK(c.added == 7);
  // Writing: a key already holding the field's value keeps its place and its text ("0.50"),
  // one holding another value is rewritten in place, a missing one goes last in the list's
  // order, under its stored name; other keys stay.
  YAML::Node y = YAML::Load("lr: 0.001\nold-rate: 0.50\nkind: gru\nhidden: 16\n");
  io::write_fields(y, c);
  YAML::Emitter e;
  e << y;
  CHECK(std::string(e.c_str()) ==
        "lr: 0.001\nold-rate: 0.50\nkind: lstm\nhidden: 16\nno-mask: false\nwide: false\n"
        "added: 7");
  // A floating value that differs is written with 9 significant digits (a float's).
  c.rate = static_cast<float>(0.1);
  c.mask = false;
  io::write_fields(y, c);
  FieldCfg back;
  io::read_fields(io::StoredConfig(YAML::Dump(y), "m.akm"), back);
  CHECK(YAML::Dump(y).find("old-rate: 0.100000001\n") != std::string::npos);
  CHECK(static_cast<float>(back.rate) == static_cast<float>(0.1));
  CHECK(back.mask == false);
  CHECK(back.kind == "lstm");
}

// The other kinds of field: a switch that sets a member whose default is on, a value given and
// stored as text but held parsed (img-train's lists of sizes), a value with no default.
namespace {
struct KindsCfg {
  bool coords = true;
  std::vector<int64_t> sizes = {16, 32};
  std::string task;
  template <class V>
  void fields(V& v) {
    v(fields::negated(coords), {"no-coords", "", "no coordinates"});
    v(fields::sets(coords), {"coords", "", "coordinates (the default)"});
    v(fields::text(sizes, models::parse_sizes, fields::join_sizes),
      {"sizes", "N,N", "sizes", nullptr, true});
    v(fields::unset(task), {"task", "TASK", "a task"});
  }
};
}  // namespace

TEST_CASE("fields: set switches, text values held parsed, values with no default") {
  std::string yaml;
  KindsCfg c = fields_from<KindsCfg>({}, &yaml);
  CHECK(c.coords == true);
  CHECK(c.sizes == std::vector<int64_t>{16, 32});
  CHECK(c.task.empty());
  CHECK(yaml == "no-coords: false\ncoords: false\nsizes: \"16,32\"\ntask: ~\n");
  KindsCfg back;
  back.coords = false;  // a loader's default: absent switches leave it
  io::read_fields(io::StoredConfig(yaml, "m.akm"), back);
  CHECK(back.coords == false);
  CHECK(back.sizes == std::vector<int64_t>{16, 32});
  CHECK(back.task.empty());

  c = fields_from<KindsCfg>({"--no-coords", "--sizes", "4,5,6", "--task", "copy"}, &yaml);
  CHECK(c.coords == false);
  CHECK(c.sizes == std::vector<int64_t>{4, 5, 6});
  CHECK(c.task == "copy");
  CHECK(yaml == "no-coords: true\ncoords: false\nsizes: \"4,5,6\"\ntask: \"copy\"\n");
  KindsCfg r;
  io::read_fields(io::StoredConfig(yaml, "m.akm"), r);
  CHECK(r.coords == false);
  CHECK(r.sizes == std::vector<int64_t>{4, 5, 6});
  CHECK(r.task == "copy");

  c = fields_from<KindsCfg>({"--coords"}, &yaml);
  CHECK(c.coords == true);
  KindsCfg on;
  on.coords = false;
  io::read_fields(io::StoredConfig(yaml, "m.akm"), on);
  CHECK(on.coords == true);

  // A bad text names the option on the command line and the key in a stored configuration;
  // an optional text field absent from the file keeps its default.
  CHECK_THROWS_WITH_AS(fields_from<KindsCfg>({"--sizes", "4,x"}, &yaml),
                       doctest::Contains("--sizes: '4,x' is not a list of sizes"), UsageError);
  KindsCfg bad;
  CHECK_THROWS_WITH_AS(io::read_fields(io::StoredConfig("sizes: \"4,x\"\n", "m.akm"), bad),
                       doctest::Contains("stored configuration: sizes: '4,x' is not a list"),
                       DataError);
  KindsCfg old;
  io::read_fields(io::StoredConfig("task: copy\n", "m.akm"), old);
  CHECK(old.sizes == std::vector<int64_t>{16, 32});
  CHECK(old.task == "copy");
}

// A retired switch: no option, stored as false where it stood; a file's true sets the member.
namespace {
struct RetiredCfg {
  bool coords = false;
  int64_t hidden = 8;
  template <class V>
  void fields(V& v) {
    v(fields::retired(), {"pe", "", ""});
    v(hidden, {"hidden", "N", "units"});
    v(fields::retired(coords, true), {"coords", "", ""});
  }
};
}  // namespace

TEST_CASE("fields: a retired switch is stored as false, not offered, and read from old files") {
  std::string yaml;
  RetiredCfg c = fields_from<RetiredCfg>({"--hidden", "4"}, &yaml);
  CHECK(yaml == "pe: false\nhidden: 4\ncoords: false\n");
  CHECK_THROWS_AS(fields_from<RetiredCfg>({"--coords"}, &yaml), UsageError);
  RetiredCfg now, old;
  io::read_fields(io::StoredConfig(yaml, "m.akm"), now);
  CHECK(now.coords == false);
  io::read_fields(io::StoredConfig("pe: true\nhidden: 4\ncoords: true\n", "m.akm"), old);
  CHECK(old.coords == true);
  CHECK(old.hidden == 4);
  YAML::Node y = YAML::Load("hidden: 4\n");
  io::write_fields(y, c);
  CHECK(YAML::Dump(y) == "hidden: 4\npe: false\ncoords: false");
}

}  // namespace attnkit_unit_cli_config_test
