// lib/attnkit/data/babi: the bAbI reader on every line type and each malformed case, task
// lists, file look-up, and the real data set when ../shared/data/babi is present.
#include <filesystem>
#include <string>

#include "attnkit/core/error.h"
#include "attnkit/data/babi.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_data_babi_test {

using namespace attnkit;

namespace {

// The message and line of the DataError that parsing `text` throws ("" if none).
std::string parse_error(const std::string& text, long* line = nullptr) {
  try {
    data::parse_babi(text, "f.txt");
  } catch (const DataError& e) {
    CHECK(e.file() == "f.txt");
    if (line) *line = e.line();
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("babi: statements, questions, stories, multi-word answers") {
  const std::string text =
      "1 Mary moved to the bathroom.\n"
      "2 John went to the hallway.\n"
      "3 Where is Mary? \tbathroom\t1\n"
      "4 Daniel went back to the hallway.\n"
      "\n"
      "5 Where is Daniel? \thallway\t4 2\r\n"
      "1 The kitchen is north of the garden.\n"
      "2 How do you go from the garden to the kitchen?\tn,w\t1\n"
      "3 Is it? \tyes\n";  // no supporting ids: allowed
  const auto ex = data::parse_babi(text, "qa19_x_train.txt", 19);
  REQUIRE(ex.size() == 4);
  CHECK(ex[0].task == 19);
  CHECK(ex[0].line == 3);
  CHECK(ex[0].story.size() == 2);
  CHECK(ex[0].story[0] == std::vector<std::string>{"mary", "moved", "to", "the", "bathroom"});
  CHECK(ex[0].question == std::vector<std::string>{"where", "is", "mary"});
  CHECK(ex[0].answer == "bathroom");
  CHECK(ex[0].support == std::vector<int>{0});
  // questions are not statements: story of the second question is lines 1, 2, 4
  CHECK(ex[1].line == 6);
  CHECK(ex[1].story.size() == 3);
  CHECK(ex[1].story_ids == std::vector<int>{1, 2, 4});
  CHECK(ex[1].support == std::vector<int>{2, 1});
  // a new story
  CHECK(ex[2].story.size() == 1);
  CHECK(ex[2].answer == "n,w");
  CHECK(ex[2].answer_words == std::vector<std::string>{"n", "w"});
  CHECK(ex[3].support.empty());
  CHECK(ex[3].story.size() == 1);
  // The questions of a story share its statements (reading is linear in the story, not
  // quadratic); another story does not.
  CHECK(ex[0].story.is_prefix_of(ex[1].story));
  CHECK(!ex[1].story.is_prefix_of(ex[2].story));
  CHECK(ex[2].story.is_prefix_of(ex[3].story));
  CHECK(ex[1].story[2] ==
        std::vector<std::string>{"daniel", "went", "back", "to", "the", "hallway"});
  // Appending to a shared prefix copies it: the others keep their own view.
  data::StoryPrefix mine = ex[0].story;
  mine.push_back({"extra"});
  CHECK(mine.size() == 3);
  CHECK(mine[2] == std::vector<std::string>{"extra"});
  CHECK(ex[1].story[2] ==
        std::vector<std::string>{"daniel", "went", "back", "to", "the", "hallway"});
  CHECK(!mine.is_prefix_of(ex[1].story));
}

TEST_CASE("babi: malformed lines name the file and line") {
  long line = 0;
  CHECK(parse_error("Mary went home.\n", &line).find("starting with its ID") != std::string::npos);
  CHECK(line == 1);
  CHECK(parse_error("1 a b.\n3 c d.\n", &line).find("ID 3 follows ID 1") != std::string::npos);
  CHECK(line == 2);
  CHECK(parse_error("2 a b.\n", &line).find("ID 2 follows ID 0") != std::string::npos);
  CHECK(parse_error("1 a b.\n2 \n", &line).find("statement 2 has no words") != std::string::npos);
  CHECK(line == 2);
  CHECK(parse_error("1 a b.\n2 Where?\t\t1\n").find("has no answer") != std::string::npos);
  CHECK(parse_error("1 a b.\n2 Where?\t\n").find("has no answer") != std::string::npos);
  CHECK(parse_error("1 a b.\n2 \tx\t1\n").find("question 2 has no words") != std::string::npos);
  CHECK(parse_error("1 a b.\n2 Where?\tx y\t1\n").find("several words") != std::string::npos);
  CHECK(parse_error("1 a b.\n2 Where?\tx\t1\textra\n").find("more than two tabs") !=
        std::string::npos);
  CHECK(parse_error("1 a b.\n2 Where?\tx\tone\n").find("'one' is not a number") !=
        std::string::npos);
  CHECK(parse_error("1 a b.\n2 Where?\tx\t2\n").find("supporting ID 2 is not an earlier") !=
        std::string::npos);
  CHECK(parse_error("1 a b.\n2 Where?\tx\t1\n3 Who?\ty\t2\n", &line)
            .find("supporting ID 2 is not an earlier") != std::string::npos);  // 2 is a question
  CHECK(line == 3);
  CHECK(parse_error("1 a b.\n2 Where?\tn,,w\t1\n").find("empty part") != std::string::npos);
  CHECK(parse_error("x1 a b.\n").find("starting with its ID") != std::string::npos);
  CHECK(parse_error("1 a\xff.\n").empty() == false);  // invalid UTF-8
}

TEST_CASE("babi: task numbers, task lists") {
  CHECK(data::babi_task_of("/x/en/qa19_path-finding_train.txt") == 19);
  CHECK(data::babi_task_of("qa1_single-supporting-fact_test.txt") == 1);
  CHECK(data::babi_task_of("qa21_x.txt") == 0);
  CHECK(data::babi_task_of("stories.txt") == 0);
  CHECK(data::babi_task_of("qa_1.txt") == 0);
  CHECK(data::parse_babi_tasks("all").size() == 20);
  CHECK(data::parse_babi_tasks("7") == std::vector<int>{7});
  CHECK(data::parse_babi_tasks("4-6,1,2") == std::vector<int>{1, 2, 4, 5, 6});
  CHECK(data::parse_babi_tasks("1,2,4-20").size() == 19);
  CHECK_THROWS_AS(data::parse_babi_tasks("0"), DataError);
  CHECK_THROWS_AS(data::parse_babi_tasks("21"), DataError);
  CHECK_THROWS_AS(data::parse_babi_tasks("3-1"), DataError);
  CHECK_THROWS_AS(data::parse_babi_tasks("1,,2"), DataError);
  CHECK_THROWS_AS(data::parse_babi_tasks("one"), DataError);
}

TEST_CASE("babi: task files in a directory; the fixtures") {
  const std::string dir = test::testdata("babi");
  CHECK(data::babi_task_of(data::babi_task_file(dir, 1, "train")) == 1);
  CHECK_THROWS_AS(data::babi_task_file(dir, 2, "train"), IoError);
  CHECK_THROWS_AS(data::babi_task_file(dir + "/none", 1, "train"), IoError);
  const auto ex = data::read_babi(data::babi_task_file(dir, 1, "train"));
  CHECK(ex.size() == 1000);
  CHECK(ex[0].task == 1);
}

TEST_CASE("babi: the real data set (skipped when ../shared/data/babi is absent)") {
  const std::string root = std::string(ATTNKIT_SHARED_DATA_DIR) + "/babi";
  if (!std::filesystem::is_directory(root + "/en")) {
    test::skip("no bAbI data in " + root + " (pipelines/fetch-babi.sh fetches it)");
    return;
  }
  for (int task : {1, 3, 8, 19}) {
    const auto train = data::read_babi(data::babi_task_file(root + "/en", task, "train"));
    const auto test = data::read_babi(data::babi_task_file(root + "/en", task, "test"));
    CHECK(train.size() == 1000);
    CHECK(test.size() == 1000);
    CHECK(train[0].task == task);
  }
  const auto t19 = data::read_babi(data::babi_task_file(root + "/en", 19, "train"));
  CHECK(t19[0].answer_words.size() == 2);
  // en-10k lacks qa3's training file: a clear IoError
  if (std::filesystem::is_directory(root + "/en-10k")) {
    try {
      data::babi_task_file(root + "/en-10k", 3, "train");
      FAIL("no error for the missing en-10k qa3 training file");
    } catch (const IoError& e) {
      CHECK(std::string(e.what()).find("qa3_*_train.txt") != std::string::npos);
    }
  }
}

TEST_CASE("parse_babi: a line ending in '?' without a tab is a question without an answer") {
  const std::string text =
      "1 Mary went home.\n2 Where is Mary? \n3 John left.\n4 Where is John?\tleft\t3\n";
  CHECK_THROWS_WITH_AS(data::parse_babi(text, "q.txt"),
                       doctest::Contains("question 2 has no answer"), DataError);
  const auto ex = data::parse_babi(text, "q.txt", 0, true);
  REQUIRE(ex.size() == 2);
  CHECK(ex[0].line == 2);
  CHECK(ex[0].answer.empty());
  CHECK(ex[0].answer_words.empty());
  CHECK(ex[0].question == std::vector<std::string>{"where", "is", "mary"});
  CHECK(ex[0].story.size() == 1);
  CHECK(ex[1].answer == "left");
  CHECK(ex[1].story.size() == 2);  // the unanswered question is not a statement
}

}  // namespace attnkit_unit_data_babi_test
