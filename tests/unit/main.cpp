// doctest's implementation and main. Both macros: in a unity build (ATTNKIT_UNITY) another
// test file of the unit may have included doctest.h first, and only DOCTEST_CONFIG_IMPLEMENT
// is still read at a second inclusion.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
