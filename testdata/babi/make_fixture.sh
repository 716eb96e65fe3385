#!/bin/sh
# Makes the tiny bAbI-format fixtures of the memory-network tests (deterministic: a fixed
# linear congruential generator in awk, no randomness from the system):
#   qa1_tiny_{train,test}.txt  "Where is X?"  answer: the place of X's only move in the story
#   qa6_tiny_{train,test}.txt  "Is X in the P?"  answer: yes or no
# Stories have 2 to 4 statements, each person moves at most once per story.
# Run from this directory: sh make_fixture.sh
gen() {  # task questions seed
  awk -v task="$1" -v nq="$2" -v seed="$3" 'BEGIN {
    split("mary john sandra daniel", who, " "); split("kitchen garden office hallway bathroom", where, " ")
    split("moved went travelled journeyed", verb, " ")
    s = seed; q = 0
    while (q < nq) {
      n = 2 + rnd(3); id = 0
      for (i = 1; i <= 4; i++) used[i] = 0
      for (i = 1; i <= n; i++) {
        do p = 1 + rnd(4); while (used[p]); used[p] = 1; per[i] = p; loc[i] = 1 + rnd(5)
        id++; printf "%d %s %s to the %s.\n", id, cap(who[p]), verb[1 + rnd(4)], where[loc[i]]
      }
      k = 1 + rnd(n); id++
      if (task == 1) printf "%d Where is %s? \t%s\t%d\n", id, cap(who[per[k]]), where[loc[k]], k
      else { l = rnd(2) ? loc[k] : 1 + rnd(5)
             printf "%d Is %s in the %s? \t%s\t%d\n", id, cap(who[per[k]]), where[l], (l == loc[k] ? "yes" : "no"), k }
      q++
    } }
    function rnd(m) { s = (s * 1103515245 + 12345) % 2147483648; return int(s / 65536) % m }
    function cap(w) { return toupper(substr(w, 1, 1)) substr(w, 2) }'
}
gen 1 1000 11 > qa1_tiny_train.txt
gen 1 100 12 > qa1_tiny_test.txt
gen 6 1000 13 > qa6_tiny_train.txt
gen 6 100 14 > qa6_tiny_test.txt
