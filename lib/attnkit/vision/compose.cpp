#include "attnkit/vision/compose.h"

#include <algorithm>
#include <numeric>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"

namespace attnkit::vision {

const std::array<std::string, kClasses>& class_names() {
  static const std::array<std::string, kClasses> names = {
      "tshirt", "trouser", "pullover", "dress", "coat",
      "sandal", "shirt",   "sneaker",  "bag",   "boot"};
  return names;
}

ItemSet make_item_set(Tensor images, std::vector<int> labels, const std::string& name) {
  if (images.rank() != 3 || images.dim(1) != kItemSize || images.dim(2) != kItemSize ||
      images.dim(0) < 1)
    throw DataError(
        "items must be images [N,28,28] with N >= 1, found shape " + shape_str(images.shape()),
        name);
  if (static_cast<int64_t>(labels.size()) != images.dim(0))
    throw DataError(
        std::to_string(labels.size()) + " labels for " + std::to_string(images.dim(0)) + " images",
        name);
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < 0 || labels[i] >= kClasses)
      throw DataError("label of item " + std::to_string(i) + " is " + std::to_string(labels[i]) +
                          ", not a class 0-9",
                      name);
  for (int64_t i = 0; i < images.size(); ++i)
    if (!(images[i] >= 0.0f && images[i] <= 1.0f))
      throw DataError("pixel " + std::to_string(i) + " is outside [0,1]", name);
  ItemSet s;
  s.images = std::move(images);
  s.labels = std::move(labels);
  return s;
}

Task parse_task(const std::string& name) {
  return parse_choice<Task>("task", name,
                            {{"plain", Task::Plain},
                             {"translated", Task::Translated},
                             {"cluttered", Task::Cluttered},
                             {"pairs", Task::Pairs},
                             {"scenes", Task::Scenes}});
}

std::string task_name(Task t) {
  switch (t) {
    case Task::Plain:
      return "plain";
    case Task::Translated:
      return "translated";
    case Task::Cluttered:
      return "cluttered";
    case Task::Pairs:
      return "pairs";
    case Task::Scenes:
      return "scenes";
  }
  return "?";
}

int64_t ComposeOptions::canvas_size() const {
  if (canvas != 0) return canvas;
  switch (task) {
    case Task::Plain:
      return kItemSize;
    case Task::Translated:
    case Task::Cluttered:
      return 60;
    case Task::Pairs:
      return 64;
    case Task::Scenes:
      return 2 * kItemSize;
  }
  return 0;
}

void ComposeOptions::validate() const {
  if (count < 1) throw UsageError("count must be >= 1");
  if (count > 10000000) throw UsageError("count must be <= 10000000");
  const int64_t c = canvas_size();
  if (c > 4096) throw UsageError("canvas must be <= 4096");
  switch (task) {
    case Task::Plain:
      if (canvas != 0 && canvas != kItemSize)
        throw UsageError("canvas: plain items are 28x28 (leave canvas out)");
      break;
    case Task::Translated:
      if (c < kItemSize) throw UsageError("canvas must be >= 28 (an item's size)");
      break;
    case Task::Cluttered:
      if (clutter < 0 || clutter > 1000) throw UsageError("clutter must be in 0..1000");
      if (clutter_size < 1 || clutter_size > kItemSize)
        throw UsageError("clutter-size must be in 1..28");
      if (c < kItemSize + clutter_size)
        throw UsageError("canvas must be >= 28 + clutter-size (" +
                         std::to_string(kItemSize + clutter_size) +
                         ") so that clutter fits beside the item");
      break;
    case Task::Pairs:
      if (c < 2 * kItemSize) throw UsageError("canvas must be >= 56 (two items side by side)");
      break;
    case Task::Scenes:
      if (c != 2 * kItemSize) throw UsageError("canvas: scenes are 56x56 (leave canvas out)");
      break;
  }
}

namespace {

const float* item_ptr(const ItemSet& items, int64_t i) {
  return items.images.data() + i * kItemSize * kItemSize;
}

// Max-blends a w x h window (source row stride sstride) onto image `img` (canvas c) at
// (top, left).
void paste(float* img, int64_t c, const float* src, int64_t sstride, int64_t h, int64_t w,
           int64_t top, int64_t left) {
  for (int64_t r = 0; r < h; ++r) {
    float* d = img + (top + r) * c + left;
    const float* s = src + r * sstride;
    for (int64_t k = 0; k < w; ++k) d[k] = std::max(d[k], s[k]);
  }
}

struct Box {
  int64_t top = 0, left = 0, height = 0, width = 0;
};

// Tight box of an item's non-zero pixels, relative to its square.
Box tight_box(const float* p) {
  int64_t r0 = kItemSize, r1 = -1, c0 = kItemSize, c1 = -1;
  for (int64_t r = 0; r < kItemSize; ++r)
    for (int64_t k = 0; k < kItemSize; ++k)
      if (p[r * kItemSize + k] > 0.0f) {
        r0 = std::min(r0, r);
        r1 = std::max(r1, r);
        c0 = std::min(c0, k);
        c1 = std::max(c1, k);
      }
  if (r1 < 0) return {};
  return {r0, c0, r1 - r0 + 1, c1 - c0 + 1};
}

bool crop_empty(const float* p, int64_t top, int64_t left, int64_t s) {
  for (int64_t r = 0; r < s; ++r)
    for (int64_t k = 0; k < s; ++k)
      if (p[(top + r) * kItemSize + left + k] > 0.0f) return false;
  return true;
}

// Whether [a, a+n) and [b, b+m) intersect.
bool overlaps(int64_t a, int64_t n, int64_t b, int64_t m) { return a < b + m && b < a + n; }

int64_t draw(Rng& rng, int64_t n) {
  return static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
}

// Items of each class.
std::array<std::vector<int64_t>, kClasses> by_class(const ItemSet& items) {
  std::array<std::vector<int64_t>, kClasses> b;
  for (int64_t i = 0; i < items.size(); ++i) b[static_cast<size_t>(items.labels[i])].push_back(i);
  return b;
}

void compose_plain(const ItemSet& items, const ComposeOptions& o, Rng& rng, Composed& out) {
  const int64_t n = items.size(), px = kItemSize * kItemSize;
  if (o.count > n)
    throw UsageError("count " + std::to_string(o.count) + " is more than the " + std::to_string(n) +
                     " items of the split");
  std::vector<int64_t> pick(static_cast<size_t>(n));
  std::iota(pick.begin(), pick.end(), 0);
  if (o.sample)  // a partial Fisher-Yates shuffle: the first count are a uniform sample
    for (int64_t i = 0; i < o.count; ++i)
      std::swap(pick[static_cast<size_t>(i)], pick[static_cast<size_t>(i + draw(rng, n - i))]);
  for (int64_t i = 0; i < o.count; ++i) {
    const int64_t j = pick[static_cast<size_t>(i)];
    std::copy(item_ptr(items, j), item_ptr(items, j) + px, out.images.data() + i * px);
    out.labels[i] = static_cast<float>(items.labels[static_cast<size_t>(j)]);
  }
}

}  // namespace

Composed compose(const ItemSet& items, const ComposeOptions& o, Rng& rng,
                 const std::function<void(int64_t)>& progress) {
  o.validate();
  if (items.size() < 1) throw UsageError("no items to compose from");
  const int64_t n = o.count, c = o.canvas_size(), px = c * c;
  Composed out;
  out.images = Tensor({n, c, c}, 0.0f);
  if (o.task != Task::Scenes) out.labels = Tensor({n}, 0.0f);
  if (o.task == Task::Translated || o.task == Task::Cluttered) out.boxes = Tensor({n, 4}, 0.0f);
  if (o.task == Task::Scenes) out.cells = Tensor({n, 4}, -1.0f);
  constexpr int64_t kReport = 512;
  auto report = [&](int64_t done) {
    if (progress && (done % kReport == 0 || done == n)) progress(done);
  };
  if (o.task == Task::Plain) {
    compose_plain(items, o, rng, out);
    report(n);
    return out;
  }
  const auto classes = by_class(items);
  std::vector<int> present;  // classes with items
  for (int k = 0; k < kClasses; ++k)
    if (!classes[static_cast<size_t>(k)].empty()) present.push_back(k);

  std::vector<float> pair_labels;
  if (o.task == Task::Pairs) {
    if (present.size() < 2)
      throw UsageError("pairs need items of at least 2 classes (different-class pairs)");
    for (int k : present)
      if (classes[static_cast<size_t>(k)].size() < 2)
        throw UsageError("pairs need at least 2 items of every class present (class " +
                         class_names()[static_cast<size_t>(k)] + " has 1)");
    pair_labels.assign(static_cast<size_t>(n), 0.0f);
    for (int64_t i = 0; i < n / 2; ++i) pair_labels[static_cast<size_t>(i)] = 1.0f;
    for (int64_t i = n - 1; i > 0; --i)
      std::swap(pair_labels[static_cast<size_t>(i)],
                pair_labels[static_cast<size_t>(draw(rng, i + 1))]);
  }
  // Scenes: the classes allowed in each cell on the train side of the split.
  std::array<std::vector<int>, 4> allowed;
  if (o.task == Task::Scenes) {
    for (int cell = 0; cell < 4; ++cell) {
      for (int k : present)
        if (o.split == SceneSplit::Test || !is_held_out(k, cell))
          allowed[static_cast<size_t>(cell)].push_back(k);
      if (allowed[static_cast<size_t>(cell)].empty())
        throw UsageError("scenes: no items of a class allowed in cell " + std::to_string(cell));
    }
    if (o.split == SceneSplit::Test) {
      bool any = false;
      for (const auto& [k, cell] : held_out_pairs())
        any = any || !classes[static_cast<size_t>(k)].empty();
      if (!any) throw UsageError("scenes: the test split needs items of a held-out class");
    }
  }

  for (int64_t i = 0; i < n; ++i) {
    float* img = out.images.data() + i * px;
    switch (o.task) {
      case Task::Plain:
        break;
      case Task::Translated:
      case Task::Cluttered: {
        const int64_t j = draw(rng, items.size());
        const int64_t top = draw(rng, c - kItemSize + 1), left = draw(rng, c - kItemSize + 1);
        paste(img, c, item_ptr(items, j), kItemSize, kItemSize, kItemSize, top, left);
        Box b = tight_box(item_ptr(items, j));
        b.top += top;
        b.left += left;
        out.labels[i] = static_cast<float>(items.labels[static_cast<size_t>(j)]);
        out.boxes[i * 4 + 0] = static_cast<float>(b.top);
        out.boxes[i * 4 + 1] = static_cast<float>(b.left);
        out.boxes[i * 4 + 2] = static_cast<float>(b.height);
        out.boxes[i * 4 + 3] = static_cast<float>(b.width);
        if (o.task == Task::Translated) break;
        const int64_t s = o.clutter_size, span = c - s + 1;
        // Places whose square misses the box: rows or columns clear of it.
        std::vector<int32_t> places;
        for (int64_t r = 0; r < span; ++r)
          for (int64_t k = 0; k < span; ++k)
            if (!overlaps(r, s, b.top, b.height) || !overlaps(k, s, b.left, b.width))
              places.push_back(static_cast<int32_t>(r * span + k));
        for (int64_t q = 0; q < o.clutter; ++q) {
          int64_t src = draw(rng, items.size());
          if (items.size() > 1)
            while (src == j) src = draw(rng, items.size());
          int64_t ct = 0, cl = 0;
          for (int tries = 0; tries < 8; ++tries) {
            ct = draw(rng, kItemSize - s + 1);
            cl = draw(rng, kItemSize - s + 1);
            if (!crop_empty(item_ptr(items, src), ct, cl, s)) break;
          }
          const int64_t at =
              places[static_cast<size_t>(draw(rng, static_cast<int64_t>(places.size())))];
          paste(img, c, item_ptr(items, src) + ct * kItemSize + cl, kItemSize, s, s, at / span,
                at % span);
        }
        break;
      }
      case Task::Pairs: {
        const bool same = pair_labels[static_cast<size_t>(i)] > 0.5f;
        const int64_t np = static_cast<int64_t>(present.size());
        const int64_t ka = draw(rng, np);
        int64_t kb = ka;
        if (!same) {  // uniform over the other classes: skip a's place
          kb = draw(rng, np - 1);
          if (kb >= ka) ++kb;
        }
        const int a = present[static_cast<size_t>(ka)], b = present[static_cast<size_t>(kb)];
        const auto& ia = classes[static_cast<size_t>(a)];
        const auto& ib = classes[static_cast<size_t>(b)];
        const int64_t x = ia[static_cast<size_t>(draw(rng, static_cast<int64_t>(ia.size())))];
        int64_t y = ib[static_cast<size_t>(draw(rng, static_cast<int64_t>(ib.size())))];
        while (y == x) y = ib[static_cast<size_t>(draw(rng, static_cast<int64_t>(ib.size())))];
        const bool main_diagonal = draw(rng, 2) == 0;
        const int64_t far = c - kItemSize;
        if (main_diagonal) {
          paste(img, c, item_ptr(items, x), kItemSize, kItemSize, kItemSize, 0, 0);
          paste(img, c, item_ptr(items, y), kItemSize, kItemSize, kItemSize, far, far);
        } else {
          paste(img, c, item_ptr(items, x), kItemSize, kItemSize, kItemSize, 0, far);
          paste(img, c, item_ptr(items, y), kItemSize, kItemSize, kItemSize, far, 0);
        }
        out.labels[i] = same ? 1.0f : 0.0f;
        break;
      }
      case Task::Scenes: {
        std::array<int, 4> cells;
        for (;;) {
          cells = {-1, -1, -1, -1};
          const int64_t k = 2 + draw(rng, 2);
          std::array<int, 4> order = {0, 1, 2, 3};
          for (int64_t q = 0; q < k; ++q)  // the first k of a partial shuffle
            std::swap(order[static_cast<size_t>(q)],
                      order[static_cast<size_t>(q + draw(rng, 4 - q))]);
          bool held = false;
          for (int64_t q = 0; q < k; ++q) {
            const int cell = order[static_cast<size_t>(q)];
            const auto& al = allowed[static_cast<size_t>(cell)];
            const int cls = al[static_cast<size_t>(draw(rng, static_cast<int64_t>(al.size())))];
            cells[static_cast<size_t>(cell)] = cls;
            held = held || is_held_out(cls, cell);
          }
          if (o.split == SceneSplit::Train || held) break;
        }
        for (int cell = 0; cell < 4; ++cell) {
          const int cls = cells[static_cast<size_t>(cell)];
          out.cells[i * 4 + cell] = static_cast<float>(cls);
          if (cls < 0) continue;
          const auto& ic = classes[static_cast<size_t>(cls)];
          const int64_t j = ic[static_cast<size_t>(draw(rng, static_cast<int64_t>(ic.size())))];
          paste(img, c, item_ptr(items, j), kItemSize, kItemSize, kItemSize, (cell / 2) * kItemSize,
                (cell % 2) * kItemSize);
        }
        out.captions.emplace_back();
        out.token_cells.emplace_back();
        scene_caption(cells, &out.captions.back(), &out.token_cells.back());
        break;
      }
    }
    report(i + 1);
  }
  return out;
}

const std::vector<std::pair<int, int>>& held_out_pairs() {
  // (trouser, top-left), (bag, top-right), (sneaker, bottom-left), (dress, bottom-right)
  static const std::vector<std::pair<int, int>> pairs = {{1, 0}, {8, 1}, {7, 2}, {3, 3}};
  return pairs;
}

bool is_held_out(int cls, int cell) {
  for (const auto& [k, c] : held_out_pairs())
    if (k == cls && c == cell) return true;
  return false;
}

void scene_caption(const std::array<int, 4>& cells, std::vector<std::string>* tokens,
                   std::vector<int>* token_cells) {
  tokens->clear();
  token_cells->clear();
  std::vector<int> occupied;
  for (int cell = 0; cell < 4; ++cell) {
    const int k = cells[static_cast<size_t>(cell)];
    if (k >= kClasses || k < -1)
      throw ShapeError("scene cell " + std::to_string(cell) + " holds class " + std::to_string(k) +
                       ", not 0-9 or -1");
    if (k >= 0) occupied.push_back(cell);
  }
  if (occupied.size() < 2)
    throw ShapeError("a scene caption needs at least 2 items, found " +
                     std::to_string(occupied.size()));
  auto word = [&](const std::string& w, int cell) {
    tokens->push_back(w);
    token_cells->push_back(cell);
  };
  for (size_t q = 0; q < occupied.size(); ++q) {
    const int cell = occupied[q];
    if (q > 0) {
      const int prev = occupied[q - 1];
      if (prev / 2 == cell / 2) {
        word("left", -1);
        word("of", -1);
      } else if (prev % 2 == cell % 2) {
        word("above", -1);
      } else {
        word("above", -1);
        word("and", -1);
        word(prev % 2 == 0 ? "left" : "right", -1);
        word("of", -1);
      }
    }
    word("a", -1);
    word(class_names()[static_cast<size_t>(cells[static_cast<size_t>(cell)])], cell);
  }
}

std::string format_captions(const Composed& c) {
  std::string s;
  for (size_t i = 0; i < c.captions.size(); ++i) {
    for (size_t t = 0; t < c.captions[i].size(); ++t) s += (t ? " " : "") + c.captions[i][t];
    s += '\t';
    for (size_t t = 0; t < c.token_cells[i].size(); ++t)
      s += (t ? " " : "") + std::to_string(c.token_cells[i][t]);
    s += '\n';
  }
  return s;
}

}  // namespace attnkit::vision
