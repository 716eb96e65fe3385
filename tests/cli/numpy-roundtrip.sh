#!/usr/bin/env bash
# labels: noblas
# Real NumPy on both sides: NumPy writes arrays of many dtypes, byte orders and layouts
# (float64, float32, float16, int64, big-endian int16, uint8, bool, Fortran order, rank 0
# to 4, format 2.0, .npz stored and compressed); tensor-convert reads each and writes
# .npy, .npz and text, which NumPy reads back (np.load, np.loadtxt) and compares exactly
# with the original converted to float32. Our .npy must also be byte-identical to
# np.save's. Skipped (77) without NumPy.
. "$ATTNKIT_SRC/tests/cli/lib.sh"
PY=/usr/bin/python3
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "numpy not installed: skipped"
  exit 77
fi

mkdir -p in res
# 1. NumPy writes the inputs and the list of cases: id, input spec, rank.
"$PY" - <<'PY' || fail "numpy could not write the inputs"
import numpy as np
rng = np.random.default_rng(1)
cases = []
def save(name, a, **kw):
    np.save(f"in/{name}.npy", a, **kw)
    cases.append((name, f"in/{name}.npy", a.ndim))
save("f64", rng.normal(size=(3, 4)))
f32 = rng.normal(size=(5, 7)).astype(np.float32)
f32[0, 0], f32[1, 1], f32[2, 2] = np.nan, np.inf, -np.inf
f32[3, 3] = np.float32(1e-40)  # a denormal
save("f32", f32)
save("f16", rng.normal(size=(2, 3)).astype(np.float16))
save("f64be", rng.normal(size=(4,)).astype(">f8"))
save("i64", rng.integers(-2**40, 2**40, size=(3, 3)).astype(np.int64))
save("i16be", rng.integers(-30000, 30000, size=(2, 5)).astype(">i2"))
save("i8", np.array([-128, -1, 0, 1, 127], dtype=np.int8))
save("u8", rng.integers(0, 256, size=(4, 4)).astype(np.uint8))
save("u32", np.array([[0, 1, 4294967295]], dtype=np.uint32))
save("bool", np.array([[True, False], [False, True]]))
save("fortran2", np.asfortranarray(rng.normal(size=(3, 5)).astype(np.float32)))
save("fortran3", np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4)))
save("fortran4", np.asfortranarray(rng.normal(size=(2, 3, 2, 2))))
save("rank0", np.float32(2.5) * np.ones((), np.float32))
save("rank1", rng.normal(size=(6,)).astype(np.float32))
save("rank3", rng.normal(size=(2, 3, 4)).astype(np.float32))
save("rank4", rng.normal(size=(2, 1, 3, 2)).astype(np.float32))
a = rng.normal(size=(3, 2)).astype(np.float32)
with open("in/v2.npy", "wb") as f:
    np.lib.format.write_array(f, a, version=(2, 0))
cases.append(("v2", "in/v2.npy", 2))
with open("in/v3.npy", "wb") as f:
    np.lib.format.write_array(f, a, version=(3, 0))
cases.append(("v3", "in/v3.npy", 2))
w, b = rng.normal(size=(4, 3)), rng.normal(size=(3,)).astype(np.float32)
np.savez("in/stored.npz", w=w, b=b)
np.savez_compressed("in/compressed.npz", w=w, b=b)
np.savez_compressed("in/single.npz", only=a)
for z in ("stored", "compressed"):
    cases.append((z + "_w", f"in/{z}.npz:w", 2))
    cases.append((z + "_b", f"in/{z}.npz:b", 1))
cases.append(("single", "in/single.npz", 2))
with open("cases.tsv", "w") as f:
    for c in cases:
        f.write("\t".join(map(str, c)) + "\n")
PY

# 2. tensor-convert reads each and writes .npy (f32 and f64), .npz and text.
n=0
while IFS=$'\t' read -r id spec rank; do
  n=$((n + 1))
  expect 0 tensor-convert "$spec" "res/$id.npy"
  expect 0 tensor-convert --f64 "$spec" "res/$id.f64.npy"
  expect 0 tensor-convert "$spec" "res/$id.npz:x"
  if [ "$rank" -le 3 ]; then expect 0 tensor-convert "$spec" "res/$id.txt"; fi
done <cases.tsv
check_eq "$n" 24 "cases written by numpy"
# Standard input, an .npz on standard input, and two members into one file by hand.
run tensor-convert - res/stdin.npy <in/f64.npy
check_eq "$RC" 0 "npy on stdin"
run tensor-convert -i -:w res/stdin_w.npy <in/compressed.npz
check_eq "$RC" 0 "npz on stdin"
# tensor-info reports NumPy's dtype string.
expect 0 tensor-info --no-header in/i16be.npy in/u8.npy in/bool.npy in/f16.npy in/fortran2.npy in/stored.npz
check_eq "$(cut -f2,3 "$T/out" | tr '\t\n' ' ;')" \
  "npy >i2;npy |u1;npy |b1;npy <f2;npy,fortran <f4;npz:w <f8;npz:b <f4;" "tensor-info dtypes"
expect_err 1 "in/stored.npz: the archive holds 2 arrays (w, b)" tensor-convert in/stored.npz res/x.npy
no_file res/x.npy
expect_err 1 "no array 'nope' in the archive (it holds: w, b)" tensor-convert in/compressed.npz:nope res/x.npy
no_file res/x.npy

# 3. NumPy reads what tensor-convert wrote and compares exactly.
"$PY" - <<'PY' >py.log 2>&1 || fail "numpy found differences: $(cat py.log)"
import io, sys, zipfile
import numpy as np
bad = []
def same(got, want, what):
    if got.shape != want.shape or not np.array_equal(got, want, equal_nan=True):
        bad.append(f"{what}: got {got.shape} {got.ravel()[:6]}, want {want.shape} {want.ravel()[:6]}")
def load_spec(spec):
    if ".npz:" in spec:
        path, name = spec.rsplit(":", 1)
        return np.load(path)[name]
    if spec.endswith(".npz"):
        z = np.load(spec)
        return z[z.files[0]]
    return np.load(spec)
for line in open("cases.tsv"):
    cid, spec, rank = line.rstrip("\n").split("\t")
    want = load_spec(spec).astype(np.float32)
    got = np.load(f"res/{cid}.npy")
    if got.dtype != np.dtype("<f4"): bad.append(f"{cid}.npy: dtype {got.dtype.str}")
    if not got.flags.c_contiguous: bad.append(f"{cid}.npy: not C order")
    same(got, want, f"{cid}.npy")
    # byte-identical to np.save of the same float32 array
    buf = io.BytesIO()
    np.save(buf, want.copy(order="C"))  # (ascontiguousarray would make rank 0 rank 1)
    if open(f"res/{cid}.npy", "rb").read() != buf.getvalue():
        bad.append(f"{cid}.npy: bytes differ from np.save")
    got64 = np.load(f"res/{cid}.f64.npy")
    if got64.dtype != np.dtype("<f8"): bad.append(f"{cid}.f64.npy: dtype {got64.dtype.str}")
    same(got64, want.astype(np.float64), f"{cid}.f64.npy")
    z = np.load(f"res/{cid}.npz")
    if z.files != ["x"]: bad.append(f"{cid}.npz: members {z.files}")
    same(z["x"], want, f"{cid}.npz")
    with zipfile.ZipFile(f"res/{cid}.npz") as zf:
        if zf.testzip() is not None: bad.append(f"{cid}.npz: bad CRC")
        if zf.infolist()[0].compress_type != zipfile.ZIP_DEFLATED:
            bad.append(f"{cid}.npz: not deflated")
    if int(rank) <= 3:
        txt = np.loadtxt(f"res/{cid}.txt", dtype=np.float32, ndmin=2)
        same(txt.reshape(want.shape), want, f"{cid}.txt")
same(np.load("res/stdin.npy"), np.load("in/f64.npy").astype(np.float32), "stdin.npy")
same(np.load("res/stdin_w.npy"), np.load("in/compressed.npz")["w"].astype(np.float32), "stdin_w.npy")
# Hand checks of conversions NumPy would do the same way.
same(np.load("res/u32.npy"), np.array([[0, 1, 4294967296]], np.float32), "u32 values")
same(np.load("res/fortran3.npy"), np.arange(24, dtype=np.float32).reshape(2, 3, 4), "fortran3 values")
for b in bad: print(b)
sys.exit(1 if bad else 0)
PY
CHECKS=$((CHECKS + 1))

# 4. tensor-rand's .npy and .npz read by NumPy: shape, dtype, and the text is the same values.
expect 0 tensor-rand --shape 3,4,5 --seed 9 -o r.npy
expect 0 tensor-rand --shape 3,4,5 --seed 9 -o r.npz:r
expect 0 tensor-rand --shape 3,4,5 --seed 9 -o r.txt
"$PY" - <<'PY' >py2.log 2>&1 || fail "tensor-rand output in numpy: $(cat py2.log)"
import numpy as np
a = np.load("r.npy")
assert a.shape == (3, 4, 5) and a.dtype == np.float32, (a.shape, a.dtype)
assert np.array_equal(np.load("r.npz")["r"], a)
assert np.array_equal(np.loadtxt("r.txt", dtype=np.float32).reshape(3, 4, 5), a)
PY
CHECKS=$((CHECKS + 1))
finish
