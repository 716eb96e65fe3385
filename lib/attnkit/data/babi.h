// The bAbI question-answering tasks (Weston et al. 2015, "Towards AI-Complete Question
// Answering", data v1.2): the text format, its reader, and where a task's files live.
//
// Format: one line per statement or question, each starting with its ID (1, 2, 3, ...
// within a story; an ID of 1 starts a new story):
//   ID sentence                         a statement ("1 Mary moved to the bathroom.")
//   ID question<TAB>answer<TAB>supporting IDs     a question ("3 Where is Mary?\tbathroom\t1")
// Answers of several words are comma-separated ("n,w" in task 19, "apple,milk" in task 8).
// Supporting IDs are the IDs of earlier statements of the same story, separated by spaces.
// A line without a tab whose text ends in '?' is a question without an answer
// ("4 Where is John?"): an error unless the reader is told to accept it (a user's own
// questions for memn2n-answer); its answer is then empty.
//
// Words are lower-cased ASCII, split on spaces, with a final '.' or '?' removed; an answer is
// kept as one token as written ("n,w"), its parts in `answer_words`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnkit::data {

// One question with the story up to it (the statements before it, oldest first; questions
// are not statements).
// The statements of a story up to a question: a prefix of one vector that every question of
// the story shares (a story of S statements and Q questions takes O(S + Q) memory and time to
// read, not O(S Q)). Appending to a prefix that others share copies it first.
class StoryPrefix {
 public:
  using Sentence = std::vector<std::string>;
  StoryPrefix() = default;
  StoryPrefix(std::shared_ptr<std::vector<Sentence>> all, size_t n) : all_(std::move(all)), n_(n) {}
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const Sentence& operator[](size_t i) const { return (*all_)[i]; }
  std::vector<Sentence>::const_iterator begin() const {
    return all_ ? all_->cbegin() : none().cbegin();
  }
  std::vector<Sentence>::const_iterator end() const {
    return begin() + static_cast<std::ptrdiff_t>(n_);
  }
  // Whether both are prefixes of the same story (this one at most as long as `longer`).
  bool is_prefix_of(const StoryPrefix& longer) const {
    return all_ == longer.all_ && n_ <= longer.n_;
  }
  void push_back(Sentence s);

 private:
  static const std::vector<Sentence>& none();
  std::shared_ptr<std::vector<Sentence>> all_;
  size_t n_ = 0;
};

struct BabiExample {
  int task = 0;                           // 1..20 (from the file name), 0 unknown
  std::string file;                       // where it was read
  long line = 0;                          // the question's line in that file
  StoryPrefix story;                      // the statements' words, oldest first
  std::vector<int> story_ids;             // their IDs in the file
  std::vector<std::string> question;      // the question's words
  std::string answer;                     // "bathroom", "n,w"
  std::vector<std::string> answer_words;  // {"bathroom"}, {"n", "w"}
  std::vector<int> support;               // indexes into `story` of the supporting facts
};

// The words of one statement or question (see the header comment).
std::vector<std::string> babi_words(std::string_view text);

// Parses the text of a bAbI file. `name` names it in errors; `task` is stored in every
// example. A malformed line is a DataError with the file and line: a line without a leading
// ID, an ID that is neither 1 nor the previous ID + 1, a statement or question without words,
// a question without an answer (unless `unanswered_ok`) or with more than two tabs, a
// supporting ID that is not a number or names no earlier statement of the story. Blank
// lines are skipped.
std::vector<BabiExample> parse_babi(std::string_view text, const std::string& name, int task = 0,
                                    bool unanswered_ok = false);

// Reads a file (the task from its name, see babi_task_of). IoError when it cannot be read.
std::vector<BabiExample> read_babi(const std::string& path, bool unanswered_ok = false);

// The task number of a file name "…/qaN_anything" (N in 1..20), else 0.
int babi_task_of(const std::string& path);

// The file of task N and `split` ("train" or "test") in a bAbI directory (one of the data
// set's `en/`, `en-10k/`, ...): the single file qaN_*_<split>.txt. IoError naming the
// directory and the pattern when there is none.
std::string babi_task_file(const std::string& dir, int task, const std::string& split);

// A task list: "all" (1..20), "N", or comma-separated numbers and ranges "1,2,4-20".
// DataError quoting the text when it is not one, or names a task outside 1..20.
std::vector<int> parse_babi_tasks(const std::string& text);

}  // namespace attnkit::data
