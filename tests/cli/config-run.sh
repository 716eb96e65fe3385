#!/usr/bin/env bash
# cost: 10
# A YAML file holds a whole run (issue 36 item 20): the data and output paths, the seed and
# the hyper-parameters as keys, one per option under its long name; `TRAINER --config
# run.yaml` alone gives the model the same command line gives. --dump-config prints the
# whole run, needs no data file, and fed back gives the same run. Each kind of option: a
# path (-i, --valid, -o, --log), a common option (--seed), a configuration key (--hidden),
# a switch (--read-out).
. "$ATTNKIT_SRC/tests/cli/lib.sh"
expect 0 transduce-gen --task reverse --len-min 2 --len-max 4 --symbols 5 --count 60 --seed 1 -o train.tsv
expect 0 transduce-gen --task reverse --len-min 2 --len-max 4 --symbols 5 --count 10 --seed 2 -o valid.tsv
expect 0 stackmem-train -i train.tsv --valid valid.tsv -o line.akm --log line.tsv --seed 7 \
  --hidden 12 --embed 6 --value-size 6 --read-out --epochs 2 -q
cat > run.yaml <<'YAML'
input: train.tsv
valid: valid.tsv
output: file.akm
log: file.tsv
seed: 7
hidden: 12
embed: 6
value-size: 6
read-out: true
epochs: 2
YAML
expect 0 stackmem-train --config run.yaml -q
CHECKS=$((CHECKS + 1))
cmp -s line.akm file.akm || fail "the run from run.yaml is not the command line's run"
check_eq "$(cut -f 1-4 file.tsv)" "$(cut -f 1-4 line.tsv)" "the log named in the file"
# The command line wins over the file, for paths as for keys.
expect 0 stackmem-train --config run.yaml -o other.akm --seed 8 -q
CHECKS=$((CHECKS + 1))
[ -s other.akm ] || fail "-o on the command line did not win over output: in the file"
cmp -s other.akm file.akm && fail "--seed on the command line did not win over seed: in the file"
# --dump-config: the whole run, without reading any data (the input need not exist).
expect 0 stackmem-train --config run.yaml -i missing.tsv --dump-config
cp "$T/out" dump.yaml
for line in 'input: "missing.tsv"' 'output: "file.akm"' 'log: "file.tsv"' 'seed: 7' 'hidden: 12' 'read-out: true'; do
  grep -qxF "$line" dump.yaml || fail "--dump-config lacks '$line': $(cat dump.yaml)"
done
CHECKS=$((CHECKS + 1))
expect 0 stackmem-train --dump-config
grep -qx 'hidden: 64' "$T/out" || fail "--dump-config without -i: $(cat "$T/err")"
# Fed back, the dump is the same run (its input set back to the real file).
sed 's/missing.tsv/train.tsv/; s/file.akm/dump.akm/' dump.yaml > dump2.yaml
expect 0 stackmem-train --config dump2.yaml -q
CHECKS=$((CHECKS + 1))
cmp -s dump.akm line.akm || fail "the dumped run fed back is not the same run"
# A misspelt key is refused, naming the file and the line, with the nearest option.
printf 'input: train.tsv\noutptu: x.akm\n' > bad.yaml
expect_err 2 "bad.yaml:2: unknown configuration key 'outptu' (did you mean 'output'?)" stackmem-train --config bad.yaml
finish
