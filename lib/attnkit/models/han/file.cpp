#include "attnkit/models/han/file.h"

#include "attnkit/core/error.h"
#include "attnkit/io/config.h"
#include "attnkit/train/load.h"

namespace attnkit::models::han {

LoadedHan load_han(const std::string& path) {
  LoadedHan m;
  m.file = nn::load_model_file(path, "han");
  train::in_file(path, [&] {
    train::read_config(m.file, m.config);
    io::check_stored([&] { m.config.validate(); }, path);
    m.vocab = data::Vocab::parse(m.file.text("vocab"), path + ": vocab");
    m.labels = m.file.string_list("labels");
    const int64_t vocab = m.file.arch("vocab", data::Vocab::kReserved, INT32_MAX);
    const int64_t classes = m.file.arch("classes", 2, 1 << 20);
    if (vocab != m.vocab.size() || classes != static_cast<int64_t>(m.labels.size()))
      throw DataError("the vocabulary or the labels do not match the stored sizes");
    m.model = train::build<HanNet>(m.file, m.params, m.config, vocab, classes);
  });
  return m;
}

}  // namespace attnkit::models::han
