#!/usr/bin/env bash
# labels: noblas
# make install's layout (tools, man pages, library, headers, CMake package), and a consumer
# project that does find_package(attnkit) + target_link_libraries(app attnkit::attnkit).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
: "${ATTNKIT_BUILD:?}"
expect 0 cmake --install "$ATTNKIT_BUILD" --prefix "$T/prefix"
for f in bin/attn-score bin/posenc bin/tensor-info bin/tensor-convert bin/tensor-rand \
         share/man/man1/attn-score.1 share/man/man1/posenc.1 lib/libattnkit.a \
         include/attnkit/core/tensor.h include/attnkit/io/tensor_io.h \
         lib/cmake/attnkit/attnkitConfig.cmake lib/cmake/attnkit/attnkitTargets.cmake; do
  CHECKS=$((CHECKS + 1))
  [ -e "$T/prefix/$f" ] || fail "not installed: $f"
done
# Private headers (included only by the library's sources) are not installed.
CHECKS=$((CHECKS + 1))
stray=$(cd "$T/prefix/include" && find . -name 'detail.h' -o -name '*_detail.h')
[ -z "$stray" ] || fail "private headers installed: $stray"
for src in "$ATTNKIT_SRC"/tools/*.cpp; do
  t=$(basename "$src" .cpp)
  CHECKS=$((CHECKS + 1))
  [ -x "$T/prefix/bin/$t" ] && [ -f "$T/prefix/share/man/man1/$t.1" ] || fail "$t: tool or page not installed"
done
expect 0 "$T/prefix/bin/posenc" --length 2 --dim 2
check_eq "$(cat "$T/out" | tr '\n' ' ')" "0 1 0.84147096 0.5403023 " "installed posenc"
expect 0 cmake -S "$ATTNKIT_SRC/tests/consumer" -B "$T/consumer" -DCMAKE_PREFIX_PATH="$T/prefix"
expect 0 cmake --build "$T/consumer"
[ "$RC" = 0 ] || cat "$T/out" >&2
expect_out "$(printf '5 11\n11 25')" "$T/consumer/consumer"
finish
