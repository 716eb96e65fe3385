// The one boundary between the training layer and the processes of a data-parallel run, as
// core/blas.h is the one boundary to BLAS. Without mpirun (or srun) there is one process and
// nothing here touches MPI: no daemon or configuration is needed. Under `mpirun -np N` each
// process is a rank; MPI is started on first use (ranks()) and finished at exit.
//
// Exact sums: gradients are added in slice order across ranks by a chain (rank 0's partial
// sum goes to rank 1, which adds its slices in order, and so on; the last rank broadcasts),
// pipelined in chunks, so N ranks give the same bits as one process adding the same slices
// in the same order. See doc/scaling.md for its cost.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnkit::train::dist {

// This process's rank and the number of ranks (0 and 1 without MPI).
int rank();
int ranks();
// Whether this build can run under MPI (built with Open MPI), and whether MPI has been
// started in this process (active() never starts it).
bool available();
bool active();
// The rank the launcher (mpirun, srun) gave this process, from its environment, before MPI is
// started; -1 when not launched so. For messages: an error before MPI starts names its rank.
int launch_rank();

// The chain sum of a float vector over ranks in rank order: rank r receives the partial sum
// acc of the ranks before it (rank 0 starts from acc as given), calls add_mine(acc, begin,
// end) to add its own part to elements [begin, end), and passes it on; every rank ends with
// the last rank's result. One process: add_mine over all of acc.
void chain_sum(std::vector<float>& acc,
               const std::function<void(float* acc, int64_t begin, int64_t end)>& add_mine);

// Element-wise sum of doubles over ranks. Exact when each element is non-zero on one rank
// only (the way the training layer uses it: one rank owns each slice's entry).
void sum_exclusive(std::vector<double>& v);

// Rank 0's bytes on every rank.
void broadcast(std::string& bytes);

// Every rank waits for the others.
void barrier();

// After an error on this rank, once MPI has started: whether every rank met one too. Each
// failing rank calls it with its message; they meet on a communicator of their own (the
// others, still in a collective of the training, never join), waiting at most `wait_ms`. When
// every rank came, `messages` (on rank 0) holds each rank's message in rank order and the
// answer is true; else false, at once on a rank that is alone. Without MPI: false.
bool all_failed(const std::string& message, int wait_ms, std::vector<std::string>* messages);

// Ends the whole job after a failure on this rank (MPI_Abort with `status`); without MPI it
// returns and the caller exits as usual.
void abort_job(int status);

}  // namespace attnkit::train::dist
