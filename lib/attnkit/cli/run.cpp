// Running a tool: the BLAS kernel's set-up, and the one place where exceptions become exit
// statuses and `<tool>: <file>:<line>: <what>` messages (under MPI, with the rank).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>
#include <thread>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/cpus.h"
#include "attnkit/core/heap.h"
#include "attnkit/core/helpers.h"
#include "attnkit/io/binary.h"
#include "attnkit/train/dist.h"

#ifndef ATTNKIT_VERSION
#define ATTNKIT_VERSION "0.0.0"
#endif

namespace attnkit::cli {

namespace {

// OpenBLAS reads OPENBLAS_CORETYPE once, when it is loaded: to correct a mis-detected CPU
// the process starts again with the variable set. A user's own setting is never replaced,
// and the variable being set after the first start means this happens at most once.
void ensure_fast_blas(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  const std::string want = preferred_blas_core();
  if (!blas_core_is_weaker(blas_core(), want)) return;
  if (setenv("OPENBLAS_CORETYPE", want.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // exec failed (no /proc?): go on with the slower kernel rather than fail
}

std::string error_text(const std::string& tool, const Error& e) {
  std::string msg = tool + ": ";
  if (!e.file().empty()) {
    msg += (e.file() == "-" ? std::string("<stdin>") : e.file()) + ":";
    if (e.line() > 0) msg += std::to_string(e.line()) + ":";
    msg += " ";
  }
  msg += e.what();
  return io::printable(msg) + "\n";  // never a file's raw bytes
}

void print_error(const std::string& tool, const Error& e) { std::cerr << error_text(tool, e); }

// The tool's name in messages; under mpirun (or srun) with its rank, also before MPI starts.
std::string who(const char* name) {
  const int r = train::dist::launch_rank();
  if (r < 0) return name;
  return std::string(name) + " (rank " + std::to_string(r) + ")";
}

std::string first_word(const std::string& s) {
  const size_t n = s.find_first_of(" :");
  return s.substr(0, n);
}

}  // namespace

std::string version_line() {
  std::ostringstream s;
  const ThreadCount t = thread_setting();
  s << "attnkit " << ATTNKIT_VERSION << " (OpenBLAS core " << blas_core() << ", " << t.threads
    << (t.threads == 1 ? " thread" : " threads") << " from " << t.source;
  // OpenBLAS gets the same count; where it could not (beyond its build's limit), say so.
  if (blas_threads() != t.threads) s << "; OpenBLAS " << blas_threads();
  s << ")";
  return s.str();
}

bool stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

int run(const char* name, int argc, char** argv, const std::function<void(App&)>& body) {
  ensure_fast_blas(argv);
  keep_freed_memory();
  int status = 0;
  std::unique_ptr<App> app;
  // The message, printed after the catch; `shared`: an error of the input (options, data
  // files), which every rank of an MPI job meets alike before MPI starts.
  std::string message;
  bool shared = false;
  try {
    app = std::make_unique<App>(name, argc, argv);
    body(*app);
  } catch (const EarlyExit&) {
    status = 0;
  } catch (const UsageError& e) {
    // The library names fields ("beam must be >= 1"); where a field is one of this tool's
    // options, say it as the option.
    if (app && app->knows_option(first_word(e.what())))
      message = error_text(who(name), UsageError("--" + std::string(e.what()), e.file(), e.line()));
    else
      message = error_text(who(name), e);
    message += "Try '" + std::string(name) + " --help' for more information.\n";
    shared = true;
    status = 2;
  } catch (const Interrupted& e) {
    // Every rank stops at the same step, after rank 0 wrote the checkpoint (train::run waits
    // for it): one message, from rank 0, and no abort (which would kill the others).
    if (!train::dist::active() || train::dist::rank() == 0) print_error(name, e);
    // No rank ends before the message is out: the launcher stops the job (SIGTERM to the
    // ranks still running) as soon as one rank exits with a non-zero status.
    train::dist::barrier();
    status = e.exit_status();
  } catch (const Error& e) {
    message = error_text(who(name), e);
    shared = dynamic_cast<const DataError*>(&e) != nullptr;
    status = e.exit_status();
  } catch (const std::bad_alloc&) {
    message = who(name) + ": out of memory\n";
    status = 1;
  } catch (const std::exception& e) {
    message = who(name) + ": " + io::printable(e.what()) + "\n";
    status = 1;
  }
  bool abort = status != 0 && status != 130;
  if (!message.empty()) {
    const int r = train::dist::launch_rank();
    if (train::dist::active()) {
      // After MPI has started, the failing ranks meet (train::dist::all_failed). When every
      // rank failed (a NaN loss, an error in data every rank reads), rank 0 prints each
      // different message once, naming the first rank that met it, and every rank exits with
      // its status (no MPI_Abort, whose banners each rank would add). A rank that failed
      // alone prints its message, naming itself, and ends the job.
      const std::string mine = who(name);
      const std::string body = message.substr(mine.size());  // after "tool (rank N)"
      std::vector<std::string> all;
      if (train::dist::all_failed(body, 3000, &all)) {
        abort = false;
        for (size_t k = 0; k < all.size(); ++k)
          if (std::find(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all[k]) ==
              all.begin() + static_cast<std::ptrdiff_t>(k))
            std::cerr << name << " (rank " << k << ")" << all[k];
        std::cerr << std::flush;
      } else {
        std::cerr << message << std::flush;
      }
    } else if (shared && r > 0) {
      // Under mpirun an error of the input met before MPI starts (before any rank has done
      // anything another has not: they read the same options and files) is most often every
      // rank's: rank 0 prints it, and its exit has the launcher stop this rank (SIGTERM)
      // while it waits here. A rank still alive after the wait met it alone (its machine's
      // copy of a file differs): it prints its own.
      std::this_thread::sleep_for(std::chrono::seconds(2));
      std::cerr << message << std::flush;
    } else {
      std::cerr << message << std::flush;
    }
  }
  // Under MPI a rank that fails alone ends the whole job (the others would wait for it).
  if (abort) train::dist::abort_job(status);
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << name << ": write error\n";
    return 1;
  }
  return status;
}

}  // namespace attnkit::cli
