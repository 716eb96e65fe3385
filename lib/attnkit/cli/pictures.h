// The tools that read pictures (PNG, PGM) offer --max-pixels N: App::enable(kPictures)
// before parse(); parse() sets io::set_max_pixels (io/binary.h) from it. (Apart from cli.h's
// flags so that the other tools do not depend on it.)
#pragma once

namespace attnkit::cli {

constexpr unsigned kPictures = 1u << 5;  // beside cli.h's Flags

}  // namespace attnkit::cli
