// lib/attnkit/vision/compose: composed images from synthetic items (no data set needed):
// placement, boxes, clutter, pairs, scenes, captions and the compositional split, seeds.
#include <set>
#include <string>

#include "attnkit/core/error.h"
#include "attnkit/vision/compose.h"
#include "attnkit/vision/fmnist.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_vision_compose_test {

using namespace attnkit;
using namespace attnkit::vision;

namespace {

// n items; item i has class i % 10 and a filled rectangle of value (i + 1) / (n + 1) whose
// size and place vary with i (so every item is distinct and its tight box known).
ItemSet synthetic(int64_t n) {
  Tensor im({n, 28, 28}, 0.0f);
  std::vector<int> labels;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t top = i % 5, left = (i * 3) % 7, h = 10 + i % 11, w = 8 + (i * 7) % 13;
    const float v = static_cast<float>(i + 1) / static_cast<float>(n + 1);
    for (int64_t r = top; r < top + h; ++r)
      for (int64_t k = left; k < left + w; ++k) im.at(i, r, k) = v;
    labels.push_back(static_cast<int>(i % 10));
  }
  return make_item_set(std::move(im), std::move(labels), "synthetic");
}

// The item (by its unique value) an image's pixel belongs to.
int64_t item_of(float v, int64_t n) { return std::lround(v * static_cast<float>(n + 1)) - 1; }

}  // namespace

TEST_CASE("vision: translated items lie inside the canvas and their boxes hold exactly them") {
  const ItemSet items = synthetic(40);
  ComposeOptions o;
  o.task = Task::Translated;
  o.count = 200;
  o.canvas = 40;
  Rng rng(3);
  const Composed c = compose(items, o, rng);
  REQUIRE(c.images.shape() == Shape{200, 40, 40});
  REQUIRE(c.boxes.shape() == Shape{200, 4});
  std::set<int64_t> tops;
  for (int64_t i = 0; i < 200; ++i) {
    const int64_t t = static_cast<int64_t>(c.boxes[i * 4]),
                  l = static_cast<int64_t>(c.boxes[i * 4 + 1]);
    const int64_t h = static_cast<int64_t>(c.boxes[i * 4 + 2]),
                  w = static_cast<int64_t>(c.boxes[i * 4 + 3]);
    REQUIRE(t >= 0);
    REQUIRE(l >= 0);
    REQUIRE(t + h <= 40);
    REQUIRE(l + w <= 40);
    tops.insert(t);
    int64_t item = -1;
    for (int64_t r = 0; r < 40; ++r)
      for (int64_t k = 0; k < 40; ++k) {
        const float v = c.images.at(i, r, k);
        const bool inside = r >= t && r < t + h && k >= l && k < l + w;
        if (!inside) REQUIRE(v == 0.0f);
        if (inside) {  // a filled rectangle: every box pixel is the item's
          REQUIRE(v > 0.0f);
          if (item < 0) item = item_of(v, 40);
          REQUIRE(item_of(v, 40) == item);
        }
      }
    REQUIRE(c.labels[i] == static_cast<float>(items.labels[static_cast<size_t>(item)]));
    CHECK(h == 10 + item % 11);
    CHECK(w == 8 + (item * 7) % 13);
  }
  CHECK(tops.size() > 8);  // places vary
}

TEST_CASE("vision: clutter never intersects the item's box, and comes from other items") {
  const ItemSet items = synthetic(30);
  ComposeOptions o;
  o.task = Task::Cluttered;
  o.count = 100;
  o.clutter = 6;
  o.clutter_size = 8;
  Rng rng(5);
  const Composed c = compose(items, o, rng);
  REQUIRE(c.images.shape() == Shape{100, 60, 60});
  int64_t outside_pixels = 0;
  for (int64_t i = 0; i < 100; ++i) {
    const int64_t t = static_cast<int64_t>(c.boxes[i * 4]),
                  l = static_cast<int64_t>(c.boxes[i * 4 + 1]);
    const int64_t h = static_cast<int64_t>(c.boxes[i * 4 + 2]),
                  w = static_cast<int64_t>(c.boxes[i * 4 + 3]);
    const int64_t item = item_of(c.images.at(i, t, l), 30);
    REQUIRE(c.labels[i] == static_cast<float>(items.labels[static_cast<size_t>(item)]));
    for (int64_t r = 0; r < 60; ++r)
      for (int64_t k = 0; k < 60; ++k) {
        const float v = c.images.at(i, r, k);
        if (r >= t && r < t + h && k >= l && k < l + w) {
          REQUIRE(item_of(v, 30) == item);  // only the item inside its box
        } else if (v > 0.0f) {
          ++outside_pixels;
          REQUIRE(item_of(v, 30) != item);  // clutter is from other items
        }
      }
  }
  CHECK(outside_pixels > 100 * 64);  // crops are mostly non-empty
  o.clutter = 0;
  Rng r2(5);
  const Composed bare = compose(items, o, r2);
  float outside = 0.0f;  // no clutter: nothing outside the boxes
  for (int64_t i = 0; i < 100; ++i)
    for (int64_t r = 0; r < 60; ++r)
      for (int64_t k = 0; k < 60; ++k)
        if (r < bare.boxes[i * 4] || r >= bare.boxes[i * 4] + bare.boxes[i * 4 + 2] ||
            k < bare.boxes[i * 4 + 1] || k >= bare.boxes[i * 4 + 1] + bare.boxes[i * 4 + 3])
          outside += bare.images.at(i, r, k);
  CHECK(outside == 0.0f);
}

TEST_CASE("vision: pairs sit in opposite corners, labels balanced and true") {
  const ItemSet items = synthetic(50);
  ComposeOptions o;
  o.task = Task::Pairs;
  o.count = 301;
  Rng rng(7);
  const Composed c = compose(items, o, rng);
  REQUIRE(c.images.shape() == Shape{301, 64, 64});
  int64_t ones = 0, diag[2] = {0, 0};
  for (int64_t i = 0; i < 301; ++i) {
    // The item at each corner square (each synthetic item touches its square's top rows).
    auto item_in = [&](int64_t top, int64_t left) {
      int64_t found = -1;
      for (int64_t r = 0; r < 28; ++r)
        for (int64_t k = 0; k < 28; ++k) {
          const float v = c.images.at(i, top + r, left + k);
          if (v > 0.0f) {
            if (found < 0) found = item_of(v, 50);
            REQUIRE(item_of(v, 50) == found);
          }
        }
      return found;
    };
    const int64_t tl = item_in(0, 0), tr = item_in(0, 36), bl = item_in(36, 0),
                  br = item_in(36, 36);
    const bool main = tl >= 0;
    REQUIRE((main ? (br >= 0 && tr < 0 && bl < 0) : (tr >= 0 && bl >= 0 && br < 0)));
    ++diag[main ? 0 : 1];
    const int64_t a = main ? tl : tr, b = main ? br : bl;
    CHECK(a != b);
    const bool same = items.labels[static_cast<size_t>(a)] == items.labels[static_cast<size_t>(b)];
    REQUIRE(c.labels[i] == (same ? 1.0f : 0.0f));
    ones += same;
    // nothing between the corners
    for (int64_t r = 28; r < 36; ++r)
      for (int64_t k = 0; k < 64; ++k) REQUIRE(c.images.at(i, r, k) == 0.0f);
  }
  CHECK(ones == 150);
  CHECK(diag[0] > 100);
  CHECK(diag[1] > 100);
}

TEST_CASE("vision: scenes: cells match the pixels, captions name the cells, the split holds") {
  const ItemSet items = synthetic(60);
  for (const SceneSplit split : {SceneSplit::Train, SceneSplit::Test}) {
    ComposeOptions o;
    o.task = Task::Scenes;
    o.count = 400;
    o.split = split;
    Rng rng(11);
    const Composed c = compose(items, o, rng);
    REQUIRE(c.images.shape() == Shape{400, 56, 56});
    REQUIRE(c.cells.shape() == Shape{400, 4});
    REQUIRE(c.captions.size() == 400);
    int64_t three = 0;
    std::set<std::string> relations;
    for (int64_t i = 0; i < 400; ++i) {
      int items_in = 0;
      bool held = false;
      for (int cell = 0; cell < 4; ++cell) {
        const int cls = static_cast<int>(c.cells[i * 4 + cell]);
        int64_t found = -1;
        bool any = false;
        for (int64_t r = 0; r < 28; ++r)
          for (int64_t k = 0; k < 28; ++k) {
            const float v = c.images.at(i, (cell / 2) * 28 + r, (cell % 2) * 28 + k);
            if (v > 0.0f) {
              any = true;
              if (found < 0) found = item_of(v, 60);
              REQUIRE(item_of(v, 60) == found);
            }
          }
        REQUIRE(any == (cls >= 0));
        if (cls < 0) continue;
        ++items_in;
        REQUIRE(items.labels[static_cast<size_t>(found)] == cls);
        held = held || is_held_out(cls, cell);
      }
      REQUIRE(items_in >= 2);
      REQUIRE(items_in <= 3);
      three += items_in == 3;
      if (split == SceneSplit::Train) REQUIRE_FALSE(held);
      if (split == SceneSplit::Test) REQUIRE(held);
      // Captions: a noun a item, naming its cell and class; other tokens -1.
      const auto& tok = c.captions[static_cast<size_t>(i)];
      const auto& tc = c.token_cells[static_cast<size_t>(i)];
      REQUIRE(tok.size() == tc.size());
      int nouns = 0;
      std::string rel;
      for (size_t t = 0; t < tok.size(); ++t) {
        if (tc[t] >= 0) {
          ++nouns;
          REQUIRE(tok[t] == class_names()[static_cast<size_t>(c.cells[i * 4 + tc[t]])]);
          REQUIRE(t > 0);
          REQUIRE(tok[t - 1] == "a");
          if (!rel.empty()) relations.insert(rel);
          rel.clear();
        } else if (tok[t] != "a") {
          rel += (rel.empty() ? "" : " ") + tok[t];
        } else {
          for (const auto& name : class_names()) REQUIRE(tok[t] != name);
        }
      }
      REQUIRE(nouns == items_in);
    }
    CHECK(three > 120);
    CHECK(three < 280);
    CHECK(relations ==
          std::set<std::string>{"left of", "above", "above and left of", "above and right of"});
  }
}

TEST_CASE("vision: scene captions of fixed scenes; the TSV line") {
  std::vector<std::string> tok;
  std::vector<int> tc;
  scene_caption({8, 7, 4, -1}, &tok, &tc);
  std::string s;
  for (const auto& t : tok) s += (s.empty() ? "" : " ") + t;
  CHECK(s == "a bag left of a sneaker above and right of a coat");
  CHECK(tc == std::vector<int>{-1, 0, -1, -1, -1, 1, -1, -1, -1, -1, -1, 2});
  scene_caption({6, -1, -1, 4}, &tok, &tc);
  CHECK(tok == std::vector<std::string>{"a", "shirt", "above", "and", "left", "of", "a", "coat"});
  scene_caption({-1, 6, -1, 4}, &tok, &tc);
  CHECK(tok == std::vector<std::string>{"a", "shirt", "above", "a", "coat"});
  CHECK(tc == std::vector<int>{-1, 1, -1, -1, 3});
  CHECK_THROWS_AS(scene_caption({1, -1, -1, -1}, &tok, &tc), ShapeError);
  CHECK_THROWS_AS(scene_caption({1, 10, -1, -1}, &tok, &tc), ShapeError);
  Composed c;
  c.captions = {{"a", "bag", "above", "a", "boot"}};
  c.token_cells = {{-1, 1, -1, -1, 3}};
  CHECK(format_captions(c) == "a bag above a boot\t-1 1 -1 -1 3\n");
}

TEST_CASE("vision: plain, seeds reproducible, options and items checked") {
  const ItemSet items = synthetic(20);
  ComposeOptions o;
  o.task = Task::Plain;
  o.count = 5;
  Rng rng(1);
  const Composed first = compose(items, o, rng);
  REQUIRE(first.images.shape() == Shape{5, 28, 28});
  for (int64_t i = 0; i < 5 * 784; ++i) REQUIRE(first.images[i] == items.images[i]);
  o.sample = true;
  o.count = 20;
  Rng r1(2);
  const Composed s = compose(items, o, r1);
  std::set<int64_t> picked;
  for (int64_t i = 0; i < 20; ++i) picked.insert(item_of(s.images.at(i, 5, 8), 20));
  CHECK(picked.size() == 20);  // without replacement
  for (const Task t : {Task::Translated, Task::Cluttered, Task::Pairs, Task::Scenes}) {
    ComposeOptions q;
    q.task = t;
    q.count = 30;
    Rng a(9), b(9), d(10);
    const Composed x = compose(items, q, a), y = compose(items, q, b), z = compose(items, q, d);
    CHECK(x.images.values() == y.images.values());
    CHECK(x.images.values() != z.images.values());
  }
  ComposeOptions bad;
  bad.task = Task::Translated;
  bad.count = 0;
  CHECK_THROWS_AS(bad.validate(), UsageError);
  bad.count = 1;
  bad.canvas = 27;
  CHECK_THROWS_AS(bad.validate(), UsageError);
  bad.task = Task::Cluttered;
  bad.canvas = 35;  // < 28 + 8
  CHECK_THROWS_AS(bad.validate(), UsageError);
  bad.canvas = 0;
  bad.clutter_size = 29;
  CHECK_THROWS_AS(bad.validate(), UsageError);
  bad.task = Task::Pairs;
  bad.canvas = 55;
  CHECK_THROWS_AS(bad.validate(), UsageError);
  bad.task = Task::Scenes;
  bad.canvas = 60;
  CHECK_THROWS_AS(bad.validate(), UsageError);
  ComposeOptions many;
  many.task = Task::Plain;
  many.count = 21;
  Rng r3(1);
  CHECK_THROWS_AS(compose(items, many, r3), UsageError);
  CHECK_THROWS_AS(parse_task("scene"), UsageError);
  CHECK_THROWS_AS(make_item_set(Tensor({2, 28, 27}), {0, 1}, "x"), DataError);
  CHECK_THROWS_AS(make_item_set(Tensor({2, 28, 28}), {0}, "x"), DataError);
  CHECK_THROWS_AS(make_item_set(Tensor({2, 28, 28}), {0, 10}, "x"), DataError);
  CHECK_THROWS_AS(make_item_set(Tensor({1, 28, 28}, 1.5f), {0}, "x"), DataError);
  CHECK_THROWS_AS(fmnist_file("/nonexistent", "train", "images"), IoError);
  CHECK_THROWS_AS(fmnist_file("/nonexistent", "valid", "images"), UsageError);
}

}  // namespace attnkit_unit_vision_compose_test
