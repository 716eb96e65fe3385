#include "attnkit/data/seqtask.h"

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"

namespace attnkit::data {

SeqTask parse_seq_task(const std::string& name) {
  return parse_choice<SeqTask>("task", name,
                               {
                                   {"copy", SeqTask::Copy},
                                   {"repeat-copy", SeqTask::RepeatCopy},
                                   {"associative-recall", SeqTask::AssociativeRecall},
                               });
}

std::string seq_task_name(SeqTask task) {
  switch (task) {
    case SeqTask::Copy:
      return "copy";
    case SeqTask::RepeatCopy:
      return "repeat-copy";
    default:
      return "associative-recall";
  }
}

SeqTaskOptions SeqTaskOptions::defaults(SeqTask task) {
  SeqTaskOptions o;
  o.task = task;
  if (task == SeqTask::RepeatCopy) o.max_len = 10;
  if (task == SeqTask::AssociativeRecall) {
    o.width = 6;
    o.min_len = 2;
    o.max_len = 6;
  }
  return o;
}

void SeqTaskOptions::validate() const {
  if (width < 1) throw UsageError("width must be >= 1");
  const int64_t lo = task == SeqTask::AssociativeRecall ? 2 : 1;
  if (min_len < lo)
    throw UsageError("len-min must be >= " + std::to_string(lo) +
                     (lo == 2 ? " (items: one to query, one to recall)" : ""));
  if (max_len < min_len) throw UsageError("len-max must be >= len-min");
  if (task == SeqTask::RepeatCopy && (min_repeats < 1 || max_repeats < min_repeats))
    throw UsageError("repeats-min must be >= 1 and repeats-max >= repeats-min");
  if (item_len < 1) throw UsageError("item-len must be >= 1");
}

int64_t SeqTaskOptions::input_width() const {
  return task == SeqTask::Copy ? width + 1 : width + 2;
}

int64_t SeqTaskOptions::output_width() const {
  return task == SeqTask::RepeatCopy ? width + 1 : width;
}

int64_t SeqTaskOptions::steps(int64_t len, int64_t repeats) const {
  switch (task) {
    case SeqTask::Copy:
      return 2 * len + 1;
    case SeqTask::RepeatCopy:
      return len + 2 + repeats * len + 1;
    default:
      return len * (item_len + 1) + item_len + 2 + item_len;
  }
}

namespace {
int64_t draw(Rng& rng, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(rng.below(static_cast<uint64_t>(hi - lo + 1)));
}
void bits(Rng& rng, Tensor& t, int64_t row, int64_t width) {
  for (int64_t j = 0; j < width; ++j) t.at(row, j) = static_cast<float>(rng.next() >> 63);
}
}  // namespace

Episode make_episode(const SeqTaskOptions& opt, Rng& rng, int64_t len, int64_t repeats) {
  opt.validate();
  Episode e;
  e.len = len > 0 ? len : draw(rng, opt.min_len, opt.max_len);
  if (opt.task == SeqTask::RepeatCopy)
    e.repeats = repeats > 0 ? repeats : draw(rng, opt.min_repeats, opt.max_repeats);
  const int64_t w = opt.width, steps = opt.steps(e.len, e.repeats);
  e.input = Tensor({steps, opt.input_width()});
  e.target = Tensor({steps, opt.output_width()});
  e.mask = Tensor({steps});
  const int64_t L = e.len;
  switch (opt.task) {
    case SeqTask::Copy:
      for (int64_t i = 0; i < L; ++i) {
        bits(rng, e.input, i, w);
        for (int64_t j = 0; j < w; ++j) e.target.at(L + 1 + i, j) = e.input.at(i, j);
        e.mask[L + 1 + i] = 1;
      }
      e.input.at(L, w) = 1;
      break;
    case SeqTask::RepeatCopy: {
      for (int64_t i = 0; i < L; ++i) bits(rng, e.input, i, w);
      e.input.at(L, w) = 1;
      e.input.at(L + 1, w + 1) =
          static_cast<float>(static_cast<double>(e.repeats) / static_cast<double>(opt.max_repeats));
      const int64_t o = L + 2;
      for (int64_t k = 0; k < e.repeats * L; ++k)
        for (int64_t j = 0; j < w; ++j) e.target.at(o + k, j) = e.input.at(k % L, j);
      e.target.at(o + e.repeats * L, w) = 1;
      for (int64_t s = o; s < steps; ++s) e.mask[s] = 1;
      break;
    }
    case SeqTask::AssociativeRecall: {
      const int64_t il = opt.item_len;
      for (int64_t it = 0; it < L; ++it) {
        const int64_t at = it * (il + 1);
        e.input.at(at, w) = 1;
        for (int64_t v = 0; v < il; ++v) bits(rng, e.input, at + 1 + v, w);
      }
      const int64_t q = draw(rng, 0, L - 2), qa = L * (il + 1);
      e.input.at(qa, w + 1) = 1;
      for (int64_t v = 0; v < il; ++v)
        for (int64_t j = 0; j < w; ++j) {
          e.input.at(qa + 1 + v, j) = e.input.at(q * (il + 1) + 1 + v, j);
          e.target.at(qa + il + 2 + v, j) = e.input.at((q + 1) * (il + 1) + 1 + v, j);
        }
      e.input.at(qa + il + 1, w + 1) = 1;
      for (int64_t v = 0; v < il; ++v) e.mask[qa + il + 2 + v] = 1;
      break;
    }
  }
  return e;
}

}  // namespace attnkit::data
