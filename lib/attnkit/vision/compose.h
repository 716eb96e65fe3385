// Images composed from Fashion-MNIST items (the image data contract, issue 17): the items
// themselves, one item translated on a larger canvas, the same with clutter, pairs of items in
// opposite corners (same class or not), and scenes of 2-3 items on a 2x2 grid with captions
// and a compositional split.
//
// Pixels are float32 in [0, 1] (an item's bytes / 255, 0 = background); where items overlap
// the brighter pixel wins (max). Everything is drawn from one Rng in a fixed order, so the
// same items, options and seed give the same images on every machine.
//
//   plain       [N,28,28]: the first N items, or (sample) N drawn without replacement.
//               labels [N].
//   translated  [N,C,C] (C = canvas, default 60): one item, its 28x28 square at a uniformly
//               random place inside the canvas. labels [N]; boxes [N,4] = top, left, height,
//               width of the item's non-zero pixels (its tight bounding box on the canvas; an
//               all-zero item has height and width 0 at its square's corner).
//   cluttered   as translated, then `clutter` crops of clutter_size x clutter_size from other
//               random items (a crop's place inside its item uniform, redrawn up to 8 times
//               while the crop is all zero), each at a uniformly random place among those
//               whose square does not intersect the item's box: the box holds exactly the
//               item's pixels, and the label is never ambiguous. Needs C >= 28 + clutter_size.
//   pairs       [N,C,C] (default 64, C >= 56): two items, one at each end of a random
//               diagonal (top-left and bottom-right, or top-right and bottom-left; 28x28
//               each, flush with the corners). labels [N]: 1 same class, 0 different; exactly
//               floor(N/2) of each before a shuffle (N odd: one more 0). Same-class pairs are
//               two different items of a uniformly drawn class; different-class pairs two
//               uniformly drawn distinct classes.
//   scenes      [N,56,56]: 2 or 3 items (each with probability 1/2) in a uniformly drawn set
//               of cells of the 2x2 grid of 28x28 cells. cells [N,4] = class id of the item in
//               cell 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right, -1 when empty.
//
// Scene captions: the items in reading order (cell 0, 1, 2, 3) joined by the relation of
// each to the next: "a X REL a Y [REL a Z]", REL one of
//   left of            same row
//   above              same column
//   above and left of  cell 0 to cell 3
//   above and right of cell 1 to cell 2
// e.g. "a bag left of a sneaker above and right of a coat". Every noun is a class name and
// names one item; token_cells holds, a token, the cell of the item a noun names and -1 for
// every other token.
//
// The compositional split: the held-out (class, cell) pairs (trouser, 0), (bag, 1),
// (sneaker, 2), (dress, 3). Train scenes never contain one (each cell's class is drawn from
// the 9 others); test scenes contain at least one (scenes drawn with all 10 classes until one
// does).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnkit/core/rng.h"
#include "attnkit/core/tensor.h"

namespace attnkit::vision {

constexpr int64_t kItemSize = 28;
constexpr int kClasses = 10;
// tshirt trouser pullover dress coat sandal shirt sneaker bag boot
const std::array<std::string, kClasses>& class_names();

// Items to compose from: images [N,28,28] in [0,1] and their classes 0-9.
struct ItemSet {
  Tensor images;
  std::vector<int> labels;
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
};
// Checks the layout (shape [N,28,28], N >= 1, labels 0-9 and as many as images, values in
// [0,1]); DataError naming `name` otherwise.
ItemSet make_item_set(Tensor images, std::vector<int> labels, const std::string& name);

enum class Task { Plain, Translated, Cluttered, Pairs, Scenes };
Task parse_task(const std::string& name);  // ChoiceError ("task") otherwise
std::string task_name(Task t);

// Which side of the compositional split scenes are drawn for.
enum class SceneSplit { Train, Test };

struct ComposeOptions {
  Task task = Task::Translated;
  int64_t count = 1000;
  int64_t canvas = 0;  // 0: the task's default (60 translated/cluttered, 64 pairs, 56 scenes)
  int64_t clutter = 4;
  int64_t clutter_size = 8;
  SceneSplit split = SceneSplit::Train;
  bool sample = false;  // plain: a seeded sample instead of the first N items

  int64_t canvas_size() const;  // canvas, or the task's default
  // UsageError naming the field (count, canvas, clutter, clutter-size) for values outside
  // what the task allows.
  void validate() const;
};

struct Composed {
  Tensor images;  // [N,C,C]
  Tensor labels;  // [N] (plain, translated, cluttered, pairs); empty otherwise
  Tensor boxes;   // [N,4] (translated, cluttered)
  Tensor cells;   // [N,4] (scenes)
  std::vector<std::vector<std::string>> captions;  // scenes: tokens of each caption
  std::vector<std::vector<int>> token_cells;       // scenes: one cell (or -1) a token
};

// Composes o.count images from `items`. `progress(done)` (when set) is called every few
// hundred images and at the end. UsageError when the options are invalid or ask more than the
// items hold (plain: count > items; pairs: a class with fewer than 2 items cannot make a
// same-class pair, so every class of `items` needs 2; scenes need, for each cell, an allowed
// class with items).
Composed compose(const ItemSet& items, const ComposeOptions& o, Rng& rng,
                 const std::function<void(int64_t)>& progress = {});

// The compositional split's held-out (class, cell) pairs, and whether a pair is one.
const std::vector<std::pair<int, int>>& held_out_pairs();
bool is_held_out(int cls, int cell);

// The caption of a scene (cells[k] = class in cell k or -1; at least 2 items): tokens and the
// cell each names (-1 for non-nouns). ShapeError for fewer than 2 items or a class outside 0-9.
void scene_caption(const std::array<int, 4>& cells, std::vector<std::string>* tokens,
                   std::vector<int>* token_cells);

// "TOKENS<TAB>CELLS\n" a scene, as image-gen --captions writes it.
std::string format_captions(const Composed& c);

}  // namespace attnkit::vision
