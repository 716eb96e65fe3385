#include "attnkit/data/babi.h"

#include <algorithm>
#include <filesystem>

#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::data {

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int to_int(std::string_view s) { return std::stoi(std::string(s)); }

std::string quote(std::string_view s) {
  std::string q = "'";
  q.append(s.substr(0, 40));
  if (s.size() > 40) q += "...";
  return q + "'";
}

}  // namespace

std::vector<std::string> babi_words(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    if (j > i) {
      std::string w(text.substr(i, j - i));
      while (!w.empty() && (w.back() == '.' || w.back() == '?')) w.pop_back();
      for (char& c : w)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (!w.empty()) out.push_back(std::move(w));
    }
    i = j;
  }
  return out;
}

const std::vector<StoryPrefix::Sentence>& StoryPrefix::none() {
  static const std::vector<Sentence> empty;
  return empty;
}

void StoryPrefix::push_back(Sentence s) {
  if (!all_ || all_.use_count() > 1 || all_->size() != n_)
    all_ = std::make_shared<std::vector<Sentence>>(begin(), end());
  all_->push_back(std::move(s));
  ++n_;
}

std::vector<BabiExample> parse_babi(std::string_view text, const std::string& name, int task,
                                    bool unanswered_ok) {
  std::vector<BabiExample> out;
  const std::vector<std::string_view> lines = split_lines(text, name);
  // The statements of the current story, shared by its questions (each sees a prefix).
  auto story = std::make_shared<std::vector<StoryPrefix::Sentence>>();
  std::vector<int> story_ids;
  int prev_id = 0;
  for (size_t n = 0; n < lines.size(); ++n) {
    const long lineno = static_cast<long>(n + 1);
    std::string_view line = lines[n];
    auto fail = [&](const std::string& what) { throw DataError(what, name, lineno); };
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const size_t sp = line.find(' ');
    const std::string_view id_text = line.substr(0, sp);
    if (!all_digits(id_text))
      fail("expected a line starting with its ID (a number), found " + quote(line));
    const int id = to_int(id_text);
    if (id == 1) {
      story = std::make_shared<std::vector<StoryPrefix::Sentence>>();
      story_ids.clear();
    } else if (id != prev_id + 1) {
      fail("ID " + std::to_string(id) + " follows ID " + std::to_string(prev_id) +
           " (a story counts 1, 2, 3, ...; 1 starts a new one)");
    }
    prev_id = id;
    const std::string_view rest = sp == std::string_view::npos ? "" : line.substr(sp + 1);
    const size_t tab = rest.find('\t');
    const size_t last = rest.find_last_not_of(" \r");
    const bool unanswered =
        tab == std::string_view::npos && last != std::string_view::npos && rest[last] == '?';
    if (unanswered && !unanswered_ok)
      fail("question " + std::to_string(id) +
           " has no answer (expected question<TAB>answer<TAB>"
           "supporting IDs)");
    if (tab == std::string_view::npos && !unanswered) {  // a statement
      std::vector<std::string> words = babi_words(rest);
      if (words.empty()) fail("statement " + std::to_string(id) + " has no words");
      story->push_back(std::move(words));
      story_ids.push_back(id);
      continue;
    }
    // a question: question<TAB>answer<TAB>supporting ids
    const std::string_view q = rest.substr(0, tab);
    const std::string_view after = unanswered ? std::string_view() : rest.substr(tab + 1);
    const size_t tab2 = after.find('\t');
    const std::string_view ans = after.substr(0, tab2);
    const std::string_view sup = tab2 == std::string_view::npos ? "" : after.substr(tab2 + 1);
    if (sup.find('\t') != std::string_view::npos)
      fail("question " + std::to_string(id) +
           " has more than two tabs (expected question<TAB>answer<TAB>supporting IDs)");
    BabiExample ex;
    ex.task = task;
    ex.file = name;
    ex.line = lineno;
    ex.question = babi_words(q);
    if (ex.question.empty()) fail("question " + std::to_string(id) + " has no words");
    const std::vector<std::string> answer = babi_words(ans);
    if (unanswered) {
      ex.story = StoryPrefix(story, story->size());
      ex.story_ids = story_ids;
      out.push_back(std::move(ex));
      continue;
    }
    if (answer.size() != 1)
      fail("question " + std::to_string(id) +
           (answer.empty() ? " has no answer"
                           : " has an answer of several words " + quote(ans) +
                                 " (parts are comma-separated)"));
    ex.answer = answer[0];
    size_t s = 0;
    while (s <= ex.answer.size()) {
      const size_t c = std::min(ex.answer.find(',', s), ex.answer.size());
      if (c == s) fail("question " + std::to_string(id) + ": empty part in answer " + quote(ans));
      ex.answer_words.push_back(ex.answer.substr(s, c - s));
      s = c + 1;
    }
    for (const std::string& w : babi_words(sup)) {
      if (!all_digits(w))
        fail("question " + std::to_string(id) + ": supporting ID " + quote(w) + " is not a number");
      const int sid = to_int(w);
      const auto it = std::find(story_ids.begin(), story_ids.end(), sid);
      if (it == story_ids.end())
        fail("question " + std::to_string(id) + ": supporting ID " + w +
             " is not an earlier statement of the story");
      ex.support.push_back(static_cast<int>(it - story_ids.begin()));
    }
    ex.story = StoryPrefix(story, story->size());
    ex.story_ids = story_ids;
    out.push_back(std::move(ex));
  }
  return out;
}

int babi_task_of(const std::string& path) {
  const std::string base = std::filesystem::path(path).filename().string();
  if (base.size() < 4 || base.compare(0, 2, "qa") != 0) return 0;
  size_t i = 2;
  int n = 0;
  while (i < base.size() && i < 4 && base[i] >= '0' && base[i] <= '9')
    n = n * 10 + (base[i++] - '0');
  if (i == 2 || i >= base.size() || base[i] != '_' || n < 1 || n > 20) return 0;
  return n;
}

std::vector<BabiExample> read_babi(const std::string& path, bool unanswered_ok) {
  const std::string text = io::read_text(path);
  return parse_babi(text, path, babi_task_of(path), unanswered_ok);
}

std::string babi_task_file(const std::string& dir, int task, const std::string& split) {
  namespace fs = std::filesystem;
  const std::string prefix = "qa" + std::to_string(task) + "_";
  const std::string suffix = "_" + split + ".txt";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw IoError("not a directory", dir);
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.size() > prefix.size() + suffix.size() && f.compare(0, prefix.size(), prefix) == 0 &&
        f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0)
      found.push_back(e.path().string());
  }
  if (ec) throw IoError("cannot list the directory: " + ec.message(), dir);
  if (found.empty())
    throw IoError("no " + prefix + "*" + suffix + " here (task " + std::to_string(task) + ", " +
                      split + " set, is missing)",
                  dir);
  if (found.size() > 1) throw IoError("several " + prefix + "*" + suffix + " files here", dir);
  return found[0];
}

std::vector<int> parse_babi_tasks(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return DataError("bad task list '" + text + "': " + why +
                     " (expected all, N, or numbers and ranges such as 1,2,4-20)");
  };
  if (text == "all") {
    std::vector<int> all;
    for (int t = 1; t <= 20; ++t) all.push_back(t);
    return all;
  }
  std::vector<int> out;
  size_t s = 0;
  while (s <= text.size()) {
    const size_t c = std::min(text.find(',', s), text.size());
    const std::string part = text.substr(s, c - s);
    const size_t dash = part.find('-');
    const std::string a = part.substr(0, dash);
    const std::string b = dash == std::string::npos ? a : part.substr(dash + 1);
    if (!all_digits(a) || !all_digits(b)) throw bad("'" + part + "' is not a task or a range");
    const int lo = to_int(a), hi = to_int(b);
    if (lo < 1 || hi > 20 || lo > hi) throw bad("tasks are 1 to 20");
    for (int t = lo; t <= hi; ++t)
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    s = c + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace attnkit::data
