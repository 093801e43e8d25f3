#!/usr/bin/env python3
"""Writes the seed inputs of posenc's fuzz targets into fuzz/corpus/<target>/seed-*.

   /usr/bin/python3 fuzz/make_seeds.py [CORPUS_DIR]      (needs numpy for the .npy seeds)

fuzz_npy gets real .npy files from NumPy (every dtype posenc reads, big-endian, Fortran order,
versions 2.0 and 3.0, 0-d, empty, structured) and broken ones (truncated, absurd shapes, bad magic,
dicts NumPy would not write). The other targets read their parameters from a byte stream
(fuzz/fuzz.h): their seeds are a few deterministic random streams per operation (the first byte
picks the operation), from which libFuzzer grows the rest. What fuzzing finds is merged in with
libFuzzer's -merge=1 (fuzz/README.md)."""
import io
import os
import random
import sys

import numpy as np

# target: number of operations its first byte selects (fuzz_rope draws no operation byte)
BYTE_TARGETS = {"fuzz_tables": 8, "fuzz_rope": 1, "fuzz_embed": 3, "fuzz_bias": 8}


def npy_bytes(array, version=None, fortran=False):
    buf = io.BytesIO()
    if fortran:
        array = np.asfortranarray(array)
    if version is None:
        np.save(buf, array)
    else:
        np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def npy_seeds():
    grid = np.arange(12).reshape(3, 4)
    seeds = {}
    for dtype in ["<f4", "<f2", "<f8", "<i4", "<i8", "|u1", "|b1", "<u2"]:
        seeds["dtype-" + dtype[1:]] = npy_bytes((grid % 2 if dtype == "|b1" else grid).astype(dtype))
    seeds["positions-i4"] = npy_bytes(np.array([0, 5, 2147483647, -2147483647], dtype="<i4"))
    seeds["positions-i8-big"] = npy_bytes(np.array([1, 2**31, -2**40], dtype="<i8"))
    seeds["factors-f4"] = npy_bytes(np.array([1.0, 2.5, 0.0, np.inf, np.nan, 1e-45], dtype="<f4"))
    seeds["factors-f8"] = npy_bytes(np.array([1.0, 1e300, -1.0], dtype="<f8"))
    seeds["big-endian-f4"] = npy_bytes(grid.astype(">f4"))
    seeds["fortran"] = npy_bytes(grid.astype("<f4"), fortran=True)
    seeds["version2"] = npy_bytes(grid.astype("<f4"), version=(2, 0))
    seeds["version3"] = npy_bytes(grid.astype("<f4"), version=(3, 0))
    seeds["scalar"] = npy_bytes(np.array(1.5, dtype="<f4"))
    seeds["empty"] = npy_bytes(np.zeros((0, 7), dtype="<f4"))
    seeds["ndim4"] = npy_bytes(np.zeros((1, 2, 1, 3), dtype="<f2"))
    seeds["ndim5"] = npy_bytes(np.zeros((1, 1, 1, 1, 2), dtype="<f4"))
    seeds["structured"] = npy_bytes(np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
    seeds["unicode"] = npy_bytes(np.array(["ab"]))
    good = seeds["dtype-f4"]
    seeds["truncated-header"] = good[:40]
    seeds["truncated-data"] = good[:-5]
    seeds["trailing-data"] = good + b"\0" * 3
    seeds["bad-magic"] = b"\x93NUMPZ" + good[6:]
    seeds["version9"] = good[:6] + b"\x09\x00" + good[8:]
    header_len = int.from_bytes(good[8:10], "little")

    def with_dict(text):  # a v1 file whose header dict is text (padded as NumPy pads it)
        body = text.encode("latin1")
        pad = (64 - (10 + len(body) + 1) % 64) % 64
        return b"\x93NUMPY\x01\x00" + (len(body) + pad + 1).to_bytes(2, "little") + body + b" " * pad + b"\n"

    f4 = "{'descr': '<f4', 'fortran_order': False, "
    seeds["absurd-shape"] = with_dict(f4 + "'shape': (4294967296, 4294967296), }")
    seeds["huge-dim"] = with_dict(f4 + "'shape': (99999999999999999999999,), }")
    seeds["negative-dim"] = with_dict(f4 + "'shape': (-1, 3), }")
    seeds["leading-zero"] = with_dict(f4 + "'shape': (03,), }")
    seeds["no-tuple"] = with_dict(f4 + "'shape': 3, }")
    seeds["key-twice"] = with_dict("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}")
    seeds["key-missing"] = with_dict("{'descr': '<f4', 'shape': (1,)}")
    seeds["key-unknown"] = with_dict(f4 + "'shape': (1,), 'x': 1}")
    seeds["bool-odd"] = with_dict("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}")
    i4_quoted = '{"descr": "<i4", "fortran_order": False, "shape": (2, 2)}'
    seeds["double-quotes"] = with_dict(i4_quoted) + bytes(16)
    seeds["escape"] = with_dict("{'descr': '<f\\4', 'fortran_order': False, 'shape': (1,)}")
    seeds["header-len-lies"] = good[:8] + (header_len + 4000).to_bytes(2, "little") + good[10:]
    seeds["empty-file"] = b""
    return seeds


def byte_seeds(n_ops, per_op=6):
    rng = random.Random(20260907)
    seeds = {}
    for op in range(n_ops):
        for k in range(per_op):
            length = rng.choice([8, 24, 64, 160, 400])
            body = bytes(rng.randrange(256) for _ in range(length))
            seeds["op%d-%d" % (op, k)] = bytes([op]) + body if n_ops > 1 else body
    return seeds


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")
    sets = {name: byte_seeds(n) for name, n in BYTE_TARGETS.items()}
    sets["fuzz_npy"] = npy_seeds()
    for target, seeds in sets.items():
        os.makedirs(os.path.join(root, target), exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(root, target, "seed-" + name), "wb") as f:
                f.write(data)
        print("%s: %d seeds" % (target, len(seeds)))


if __name__ == "__main__":
    main()
