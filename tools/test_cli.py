#!/usr/bin/env python3
"""Black-box tests of the posenc command-line tool.

Usage: test_cli.py PATH/TO/posenc

Runs the binary and checks its output against an independent float64 NumPy computation, the
.npy / raw / C-header formats against each other (the header is compiled as C99 and C++11 and
its XXH3 checked), ISA independence, and that every bad argument fails with one line on stderr
without leaving any output file behind. CC and CXX override the compilers (default cc, c++).

The rope commands are checked against formulas written here from formulas.md (float64 and
longdouble), HF's float32 recipe re-done op for op in NumPy (--hf-compat), a NumPy float32
rotation (bit for bit), and hostile .npy inputs. Lines starting "figure:" report measured
agreement figures.

A Windows build of the tool (posenc.exe, run under Wine through MESON_EXE_WRAPPER) skips what
Windows cannot do or does differently, each named in a "figure: not run" line: POSIX file kinds
(FIFOs, symbolic links) and permission bits, arguments longer than Windows' 32,767-character
command line, and the limits set with setrlimit.
POSENC_TEST_WRAPPER runs the tool under a command (valgrind; POSENC_TEST_WRAPPER_CASES, below),
and POSENC_TEST_SHARD=I/N runs every Nth case (under POSENC_TEST_WRAPPER_CASES, every Nth check),
from the Ith (0-based), so that N processes share them.
The last line is "N passed, M failed"; the exit status is non-zero if anything failed, or if
nothing ran.
"""
import ast
import ctypes
import ctypes.util
import hashlib
import io
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests'))
from check_baked import regenerate_command  # noqa: E402  (the meson test's own parser)
# What each x86 backend needs, as Linux's /proc/cpuinfo names the features: the detection test's table
from check_detection import X86_FLAGS as X86_BACKEND_FLAGS  # noqa: E402
from wine_retry import wine_failure  # noqa: E402  (what Wine's own failures look like)

POSENC = ''   # the binary under test (set in main)
WORKDIR = ''  # scratch directory for this run
# POSENC_TEST_WRAPPER (e.g. "valgrind -q --error-exitcode=99"): every run of the tool goes through
# this command, so that the CLI processes, not python, run under valgrind (meson setup valgrindcli).
# Without it, a cross build's exe wrapper (Wine for Windows), which meson passes in MESON_EXE_WRAPPER.
WRAPPER = shlex.split(os.environ.get('POSENC_TEST_WRAPPER') or os.environ.get('MESON_EXE_WRAPPER', ''))
# POSENC_TEST_WRAPPER_CASES=K (meson setup valgrindcli: 1): only the first K cases of each check
# function run, under POSENC_TEST_WRAPPER; the plain and ASan builds' runs of this suite run them
# all. Within such a case, a run of the tool goes under the wrapper only if its command line differs
# from the case's runs before it in more than its values (command_shape: its words, the heads of
# the files it names, its environment); the rest repeat a path memcheck has seen with other values
# (ALiBi's 64 head counts, one after another) and run without it, in the same case. Every kind of
# run is memchecked, in a fifth of the processes (memcheck starts in about 0.6 s; the 268
# usage-error cases go through one parser). (The cases left out cannot run without the wrapper
# instead: valgrind's CPU has no AVX-512, and the ISA cases' expectations come from it.)
WRAPPED_CASES = int(os.environ.get('POSENC_TEST_WRAPPER_CASES') or 0) if os.environ.get('POSENC_TEST_WRAPPER') else 0
# POSENC_TEST_SHARD=I/N (tools/meson.build): only the cases (under POSENC_TEST_WRAPPER_CASES, the
# checks) whose place in the run's order is I modulo N, so that N processes share them (CI's two
# cores); the check for leftover temporary files runs in every shard (each has its own directory).
def parse_shard(text):
    match = re.fullmatch(r'(\d+)/(\d+)', text or '0/1')
    if not match or not int(match.group(1)) < int(match.group(2)):
        sys.exit(f'POSENC_TEST_SHARD={text!r}: expected I/N with 0 <= I < N')
    return int(match.group(1)), int(match.group(2))


SHARD = parse_shard(os.environ.get('POSENC_TEST_SHARD'))
RUNS = [0, 0]  # runs of the tool, and of those under the wrapper
CASE_SHAPES = None  # within a wrapped case: the command shapes run under the wrapper so far
WINDOWS_TOOL = False  # the tool is a Windows program (set in main)


def host_env():
    """The environment for this machine's programs (cc, c++, what they build). For a Windows
    tool, meson puts MinGW's directories first in PATH, where cc would find MinGW's assembler:
    they are taken out."""
    env = dict(os.environ)
    if WINDOWS_TOOL:
        env['PATH'] = os.pathsep.join(p for p in env.get('PATH', '').split(os.pathsep) if 'mingw32' not in p)
    return env


def windows_skip(what, why):
    """For a Windows tool: records that what was not run, and why; returns the case's detail."""
    note = f'{what}: the tool is a Windows program ({why})'
    if note not in NOTES:
        NOTES.append(note)
    return 'not run: Windows program'

# ---- running the tool ----------------------------------------------------------------------


WINE_RETRIES = []  # runs of a Windows tool that Wine failed, run again (listed at the end)


def wine_failed(proc):
    """A run of a Windows tool that Wine failed, not the tool, which reports every failure on
    stderr (tests/wine_retry.py's wine_failure: a nonzero status with nothing on stderr, or glibc's
    dl-fini assertion as Wine exits; 2 of about 7,500 runs here). Such a run is run once more;
    a failure of the tool's own fails again."""
    return WINDOWS_TOOL and wine_failure(proc.returncode, not proc.stderr, proc.stderr or b'') is not None


def file_head(path):
    """A file a command line names, as far as its contents can choose the tool's path: a digest of
    its first 256 bytes (a .npy file's header: version, dtype, shape), 'other' for what is not a
    regular file (a FIFO is not opened), 'none' where nothing is."""
    if os.path.isfile(path):
        try:
            with open(path, 'rb') as f:
                return hashlib.sha1(f.read(256)).hexdigest()[:12]
        except OSError:
            return 'unreadable'
    return 'other' if os.path.lexists(path) else 'none'


def command_shape(args, env):
    """What chooses a run's path through the tool: its words (subcommands, options, '-', and values
    such as 'split' or 'f16'), in any order ('--isa=avx2' as '--isa avx2'); each file it names, by
    its head (file_head) and by which of the command's files it is (an output named as the input);
    any other value (a number, a name) as '_'; and its environment."""
    words, files = [], []
    for arg in args:
        for w in arg.split('=', 1) if arg.startswith('--') else [arg]:
            if w in ('-', '--') or re.fullmatch(r'-{0,2}[a-z][a-z0-9-]*', w):
                words.append(w)
            elif os.sep in w or (os.altsep and os.altsep in w):  # a file's name, there or not
                if w not in files:
                    files.append(w)
                words.append(f'file{files.index(w)}:{file_head(w)}')
            else:
                words.append('_')
    return tuple(sorted(words)), tuple(sorted((env or {}).items()))


def wrapper_for(args, env):
    """WRAPPER, or nothing for a run that repeats the shape of one before it in this case."""
    if CASE_SHAPES is None:
        return WRAPPER
    shape = command_shape(args, env)
    if shape in CASE_SHAPES:
        return []
    CASE_SHAPES.add(shape)
    return WRAPPER


def run(args, env=None, stdout=subprocess.PIPE, preexec_fn=None):
    full_env = dict(os.environ)
    full_env.pop('POSENC_ISA', None)  # tests set it explicitly when they need it
    full_env.update(env or {})
    wrapper = wrapper_for(args, env)
    RUNS[0] += 1
    RUNS[1] += bool(wrapper)
    for attempt in (1, 2):
        proc = subprocess.run(wrapper + [POSENC] + list(args), stdout=stdout, stderr=subprocess.PIPE,
                              env=full_env, timeout=120, preexec_fn=preexec_fn)
        if attempt == 2 or not wine_failed(proc):
            return proc
        WINE_RETRIES.append(f'{shlex.join(args)[:100]}: exit {proc.returncode}, stderr {proc.stderr[-120:]!r}')
    return proc


def run_ok(args, env=None):
    proc = run(args, env)
    assert proc.returncode == 0, f'{args}: exit {proc.returncode}: {proc.stderr.decode()!r}'
    assert proc.stderr == b'', f'{args}: unexpected stderr {proc.stderr.decode()!r}'
    return proc.stdout


def table_args(n, d, base=None, start=None, layout=None, dtype=None, fmt=None, extra=()):
    args = ['table', 'sinusoidal', '--positions', str(n), '--dim', str(d)]
    for opt, value in (('--base', base), ('--start', start), ('--layout', layout),
                       ('--dtype', dtype), ('--format', fmt)):
        if value is not None:
            args += [opt, str(value)]
    return args + list(extra)


def npy_payload(data):
    """Checks the .npy 1.0 framing by hand and returns (header dict, payload bytes)."""
    assert data[:8] == b'\x93NUMPY\x01\x00', f'bad magic/version {data[:8]!r}'
    header_len = data[8] | data[9] << 8
    start = 10 + header_len
    assert start % 64 == 0, f'data starts at {start}, not a multiple of 64'
    header = data[10:start].decode('latin1')
    assert header.endswith('\n'), 'header does not end with a newline'
    return ast.literal_eval(header.strip()), data[start:]


def load_npy(data):
    return np.load(io.BytesIO(data), allow_pickle=False)


# ---- the independent reference ---------------------------------------------------------------

EPS = 2.0 ** -52


def reference(n, d, base=10000.0, start=0, layout='interleaved'):
    """float64 sin(p * base**(-2i/d)) laid out like posenc, and a bound on its own error."""
    p = np.arange(start, start + n, dtype=np.float64)[:, None]
    nfreq = (d + 1) // 2 if layout == 'interleaved' else d // 2
    i = np.arange(nfreq, dtype=np.float64)
    expo = -2.0 * i / d
    angle = p * base ** expo
    # pow, the rounded exponent and the product each cost about an ulp of the angle (none for
    # i = 0, where omega is exactly 1); sin/cos add about an ulp of the result.
    angle_err = np.abs(angle) * EPS * (np.abs(np.log(base) * expo) + 2) * (i > 0) + 2 * EPS
    out, err = np.zeros((n, d)), np.zeros((n, d))
    if layout == 'interleaved':
        out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)[:, :d // 2]
        err[:, 0::2], err[:, 1::2] = angle_err, angle_err[:, :d // 2]
    else:
        h = d // 2
        out[:, :h], out[:, h:2 * h] = np.sin(angle[:, :h]), np.cos(angle[:, :h])
        err[:, :h], err[:, h:2 * h] = angle_err[:, :h], angle_err[:, :h]
    return out, err


def assert_within(got, ref, tol, what):
    diff = np.abs(got.astype(np.float64) - ref)
    bad = np.argwhere(diff > tol)
    if len(bad):
        r, c = bad[0]
        raise AssertionError(f'{what}: {len(bad)} values off, first [{r},{c}]: got {got[r, c]!r}, '
                             f'reference {ref[r, c]!r}, diff {diff[r, c]:.3g} > {tol[r, c]:.3g}')
    return diff.max()


def f32_tolerance(ref, err):
    """posenc's contract: 0.5 ulp(f32) of the exact value + 1e-12, plus the reference's error."""
    return np.spacing((np.abs(ref) + err).astype(np.float32)).astype(np.float64) / 2 + err + 1e-12


def bf16_from_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def bf16_round(f32):
    """bfloat16 bits of float32 values, round to nearest even (no NaN here)."""
    u = f32.view(np.uint32).astype(np.uint64)
    return ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_half_ulp(x):
    _, e = np.frexp(x)  # x in [2^(e-1), 2^e): ulp 2^(e-1-7)
    return np.ldexp(1.0, e - 9)


# ---- accuracy and formats ----------------------------------------------------------------------

F32_CASES = [  # (n, d, base, start, layout)
    (64, 64, 10000.0, 0, 'interleaved'),
    (50, 33, 10000.0, 7, 'interleaved'),
    (64, 64, 10000.0, 0, 'split'),
    (40, 33, 10000.0, 1000, 'split'),
    (300, 48, 10000.0, 16777000, 'interleaved'),
    (300, 47, 10000.0, 16777000, 'split'),
    (100, 16, 500000.0, -50, 'interleaved'),
    (20, 10, 2.5, 3, 'interleaved'),
    (5, 1, 10000.0, 2147483643, 'interleaved'),
    (10, 8, 1e8, 0, 'split'),
]


def test_f32_accuracy(n, d, base, start, layout):
    data = run_ok(table_args(n, d, base, start, layout))
    header, _ = npy_payload(data)
    assert header == {'descr': '<f4', 'fortran_order': False, 'shape': (n, d)}, header
    got = load_npy(data)
    assert got.dtype == np.float32 and got.shape == (n, d), (got.dtype, got.shape)
    ref, err = reference(n, d, base, start, layout)
    worst = assert_within(got, ref, f32_tolerance(ref, err), 'f32')
    if layout == 'split' and d % 2:
        assert not got[:, -1].any(), 'odd split: the last column must be zero'
    return f'max |diff| {worst:.3g}'


def test_half_precision(dtype, n, d, base, start, layout):
    """f16/bf16 are the round-to-nearest-even of posenc's own f32 values, and within their
    rounding of the reference."""
    f32 = load_npy(run_ok(table_args(n, d, base, start, layout)))
    data = run_ok(table_args(n, d, base, start, layout, dtype=dtype))
    header, _ = npy_payload(data)
    got = load_npy(data)
    ref, err = reference(n, d, base, start, layout)
    tol32 = f32_tolerance(ref, err)
    if dtype == 'f16':
        assert header['descr'] == '<f2' and got.dtype == np.float16, header
        assert np.array_equal(got.view(np.uint16), f32.astype(np.float16).view(np.uint16)), \
            'f16 is not the rounded f32 table'
        values = got.astype(np.float32)
        tol = np.spacing((np.abs(ref) + tol32).astype(np.float16)).astype(np.float64) / 2 + tol32
    else:
        assert header['descr'] == '<u2' and got.dtype == np.uint16, header
        assert np.array_equal(got, bf16_round(f32)), 'bf16 is not the rounded f32 table'
        values = bf16_from_bits(got)
        tol = bf16_half_ulp(np.abs(ref) + tol32) + tol32
    assert got.shape == (n, d), got.shape
    return f'max |diff| {assert_within(values, ref, tol, dtype):.3g}'


def test_raw_equals_npy(dtype, layout):
    args = table_args(37, 21, start=123, layout=layout, dtype=dtype)
    _, payload = npy_payload(run_ok(args))
    raw = run_ok(args + ['--format', 'raw'])
    assert raw == payload, f'raw ({len(raw)} bytes) differs from the npy payload ({len(payload)})'


def test_file_equals_stdout(fmt):
    args = table_args(9, 12, start=5, fmt=fmt)
    path = os.path.join(WORKDIR, f'same.{fmt}')
    with open(path, 'wb') as f:
        f.write(b'old contents to be replaced')
    run_ok(args + ['-o', path])
    with open(path, 'rb') as f:
        in_file = f.read()
    assert in_file == run_ok(args), '-o FILE and stdout differ'
    assert in_file == run_ok(args + ['-o', '-']), '-o - and stdout differ'
    mask = os.umask(0)
    os.umask(mask)
    mode = os.stat(path).st_mode & 0o777
    assert mode == 0o666 & ~mask, f'file mode {mode:o}, expected {0o666 & ~mask:o}'


def test_options_spelling():
    a = run_ok(['table', 'sinusoidal', '--positions', '6', '--dim', '10', '--layout', 'split'])
    b = run_ok(['table', 'sinusoidal', '--positions=6', '--dim=10', '--layout=split'])
    c = run_ok(['table', '--dim', '10', 'sinusoidal', '--layout', 'split', '--positions', '6'])
    assert a == b == c, '--opt VALUE, --opt=VALUE and option order must not matter'


# ---- the C header --------------------------------------------------------------------------------

def compiler(var, default):
    return shlex.split(os.environ.get(var, default))


HASH_PROGRAM = r'''
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <stdio.h>
#include "%(header)s"
int main(int argc, char **argv) {
  FILE *f;
  if (argc != 2 || !(f = fopen(argv[1], "wb"))) return 2;
  if (fwrite(%(name)s, 1, sizeof %(name)s, f) != sizeof %(name)s || fclose(f) != 0) return 3;
  printf("%%lu %%lu %%016llx %%016llx\n", (unsigned long)%(name)s_ROWS,
         (unsigned long)%(name)s_COLS,
         (unsigned long long)XXH3_64bits(%(name)s, sizeof %(name)s),
         (unsigned long long)%(name)s_XXH3);
  return 0;
}
'''

USE_HEADER = '#include "%(header)s"\nint first(void);\nint first(void) { return (int)%(name)s[0][0]; }\n'


def compile_or_fail(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300, env=host_env())
    assert proc.returncode == 0, f'{" ".join(cmd)} failed:\n{proc.stdout.decode()[-3000:]}'


def xxh3_64(data):
    """XXH3-64 (seed 0) by the system's libxxhash: independent of the tool and of the header."""
    global LIBXXHASH
    if LIBXXHASH is None:
        path = ctypes.util.find_library('xxhash')
        assert path, 'libxxhash not found (install libxxhash-dev)'
        LIBXXHASH = ctypes.CDLL(path)
        LIBXXHASH.XXH3_64bits.restype = ctypes.c_uint64
        LIBXXHASH.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return LIBXXHASH.XXH3_64bits(data, len(data))


LIBXXHASH = None


def check_compiled_header(header, name, expected):
    """The header compiles as strict C99 and C++11, its array holds exactly expected's bits (an
    array as the .npy output holds it), ROWS/COLS are its shape, and NAME_XXH3 is the XXH3-64 of
    its little-endian bytes, computed here and in C."""
    text = open(header).read()
    m = re.search(r'^#define %s_XXH3 0x([0-9a-f]{16})ULL$' % re.escape(name), text, re.M)
    assert m, f'no {name}_XXH3 macro'
    le = expected.astype(expected.dtype.newbyteorder('<')).tobytes()
    assert int(m.group(1), 16) == xxh3_64(le), f'{name}_XXH3 is not libxxhash\'s XXH3 of the table bytes'
    tag = os.path.splitext(os.path.basename(header))[0]
    subst = {'header': os.path.basename(header), 'name': name}
    strict = ['-Wall', '-Wextra', '-Wpedantic', '-Werror', '-I', os.path.dirname(header)]
    for tool, std, ext in (('CC', '-std=c99', 'c'), ('CXX', '-std=c++11', 'cpp')):
        src = os.path.join(WORKDIR, f'use_{tag}.{ext}')
        with open(src, 'w') as f:
            f.write(USE_HEADER % subst)
        compile_or_fail(compiler(tool, 'cc' if tool == 'CC' else 'c++') +
                        [std] + strict + ['-c', src, '-o', src + '.o'])
    src, exe = os.path.join(WORKDIR, f'hash_{tag}.c'), os.path.join(WORKDIR, f'hash_{tag}')
    with open(src, 'w') as f:
        f.write(HASH_PROGRAM % subst)
    compile_or_fail(compiler('CC', 'cc') + ['-std=c99', '-I', os.path.dirname(header), src, '-o', exe])
    dump = os.path.join(WORKDIR, f'{tag}.bin')
    out = subprocess.run([exe, dump], stdout=subprocess.PIPE, check=True, timeout=60, env=host_env())
    rows, cols, computed, embedded = out.stdout.decode().split()
    assert (int(rows), int(cols)) == expected.shape, f'ROWS/COLS {rows}x{cols}, expected {expected.shape}'
    if sys.byteorder == 'little':  # the macro hashes little-endian bytes
        assert computed == embedded, f'XXH3 of the array {computed} != {name}_XXH3 {embedded}'
    bits = np.dtype(f'u{expected.dtype.itemsize}')
    got = np.fromfile(dump, dtype=bits.newbyteorder('=')).reshape(expected.shape)
    assert np.array_equal(got, expected.view(bits.newbyteorder(expected.dtype.byteorder))), \
        'the compiled array differs bitwise from the npy output'


def test_c_header(dtype, layout, n, d, base, start, name):
    base_args = table_args(n, d, base=base, start=start, layout=layout, dtype=dtype)
    npy = load_npy(run_ok(base_args))
    header = os.path.join(WORKDIR, f'{name}_{dtype}_{layout}_{d}.h')
    run_ok(base_args + ['--format', 'c', '--name', name, '-o', header])
    text = open(header).read()
    assert f'posenc table sinusoidal --positions {n} --dim {d}' in text, 'no provenance comment'
    assert f'#define {name}_ROWS {n}\n' in text and f'#define {name}_COLS {d}\n' in text, \
        'ROWS/COLS macros missing'
    check_compiled_header(header, name, npy)
    assert_regenerates(header)


def assert_regenerates(header):
    """The header's "regenerate with" command remakes it byte for byte."""
    with open(header, 'rb') as f:
        image = f.read()
    command = regenerate_command(image.decode('ascii'))
    assert command is not None, 'no "regenerate with" line'
    assert run_ok(command) == image, f'posenc {shlex.join(command)} does not remake the header'


def test_table_kinds_regenerate(args):
    """Every table kind's header names a command that works and remakes it (defaults included)."""
    header = os.path.join(WORKDIR, 'kind.h')
    run_ok(args + ['--format', 'c', '-o', header])
    assert_regenerates(header)


# ---- ISAs -----------------------------------------------------------------------------------------

def isa_facts():
    info = run_ok(['info']).decode()
    facts = dict(re.findall(r'^isa (\w+ \w+): (yes|no)$', info, re.M))
    names = sorted({key.split()[0] for key in facts})
    available = [n for n in names if facts[f'{n} compiled'] == 'yes' and facts[f'{n} supported'] == 'yes']
    return names, available, info


ISA_CASES = [table_args(100, 33, start=5), table_args(70, 64, start=16777100, layout='split'),
             table_args(40, 130, dtype='f16'), table_args(40, 7, dtype='bf16', layout='split'),
             table_args(8, 16, fmt='c')]


def test_isa_identical(isa):
    for args in ISA_CASES:
        default = run_ok(args)
        for forced in (['--isa', isa] + args, args + ['--isa', isa], args + [f'--isa={isa}']):
            assert run_ok(forced) == default, f'{" ".join(forced)} differs from the default ISA'
        assert run_ok(args, env={'POSENC_ISA': isa}) == default, f'POSENC_ISA={isa} differs'


def test_isa_unavailable(isa):
    proc = run(['--isa', isa] + table_args(4, 4, extra=['-o', os.path.join(WORKDIR, 'no.npy')]))
    assert proc.returncode == 1, f'exit {proc.returncode}'
    assert_one_error_line(proc.stderr, isa)
    assert not os.path.exists(os.path.join(WORKDIR, 'no.npy')), 'output file created'
    return proc.stderr.decode().strip()


def test_info():
    names, available, info = isa_facts()
    # every backend of posenc.h's ISA table, compiled in or not: the same list as --help's
    help_line = re.search(r'best available\): ([a-z0-9, ]+)$', run_ok(['--help']).decode(), re.M)
    assert help_line, '--help has no --isa line listing the backends'
    listed = help_line.group(1).replace(' or auto', '').replace(',', ' ').split()
    assert names == sorted(listed) and 'scalar' in names, f'ISA lines: {names}, --help: {listed}'
    assert 'scalar' in available, 'scalar must always be available'
    assert re.search(r'^active isa: (\w+)$', info, re.M), 'no active isa line'
    active = re.search(r'^active isa: (\w+)$', info, re.M).group(1)
    assert active in available, f'active isa {active} is not available'
    assert re.search(r'^selftest: \S', info, re.M), 'no selftest line'
    assert re.search(r'^version: \d+\.\d+\.\d+$', info, re.M), 'no version line'
    assert re.search(r'^POSENC_ISA: unset$', info, re.M), 'POSENC_ISA should read unset'
    return info.splitlines()[-1]


def test_detection_matches_cpuinfo():
    """posenc's CPUID/XCR0 detection says what the kernel says, backend by backend."""
    try:
        with open('/proc/cpuinfo') as f:
            flags = set(re.search(r'^flags\s*:(.*)$', f.read(), re.M).group(1).split())
    except (OSError, AttributeError):
        return 'no /proc/cpuinfo flags here: not checked'
    if any('valgrind' in os.path.basename(word) for word in WRAPPER):
        return 'run under valgrind (it shows its own CPU, without AVX-512): not checked'
    names, available, info = isa_facts()
    if 'isa sse2 compiled: yes' not in info or platform.machine() not in ('x86_64', 'AMD64'):
        return 'not an x86 build on an x86-64 host: not checked'
    unlisted = [n for n in names if n != 'scalar' and n not in X86_BACKEND_FLAGS and f'isa {n} compiled: yes' in info]
    assert not unlisted, f'compiled, but X86_BACKEND_FLAGS has no /proc/cpuinfo flags for: {", ".join(unlisted)}'
    seen = []
    for name, need in X86_BACKEND_FLAGS.items():
        if name not in names:
            continue
        want = all(flag in flags for flag in need)
        got = re.search(rf'^isa {name} supported: (yes|no)$', info, re.M).group(1) == 'yes'
        assert got == want, f'{name}: posenc says supported={got}, /proc/cpuinfo flags say {want}'
        seen.append(f'{name} {"yes" if got else "no"}')
    return 'supported, as /proc/cpuinfo says: ' + ', '.join(seen)

def test_info_env(env_value, expect_active, expect_text):
    info = run_ok(['info'], env={'POSENC_ISA': env_value}).decode()
    active = re.search(r'^active isa: (\w+)$', info, re.M).group(1)
    assert active == expect_active, f'POSENC_ISA={env_value}: active {active}, expected {expect_active}'
    assert expect_text in info, f'POSENC_ISA={env_value}: {expect_text!r} missing from\n{info}'


def test_info_forced():
    info = run_ok(['info', '--isa', 'scalar'], env={'POSENC_ISA': 'bogus'}).decode()
    assert re.search(r'^active isa: scalar$', info, re.M), info
    assert 'selftest' in info


# ---- help and version ------------------------------------------------------------------------

def test_help(args, must_contain):
    text = run_ok(args).decode()
    for needle in must_contain:
        assert needle in text, f'{args}: {needle!r} missing from help'


def test_version():
    text = run_ok(['--version']).decode()
    version = re.search(r'^version: (\S+)$', run_ok(['info']).decode(), re.M).group(1)
    assert text == f'posenc {version}\n', repr(text)


# ---- errors -------------------------------------------------------------------------------------

def assert_one_error_line(stderr, must_contain):
    text = stderr.decode(errors='replace')
    assert text.endswith('\n') and text.count('\n') == 1, f'stderr is not one line: {text!r}'
    assert text.startswith('posenc: '), f'stderr lacks the "posenc: " prefix: {text!r}'
    assert must_contain in text, f'stderr does not mention {must_contain!r}: {text!r}'


T = ['table', 'sinusoidal']
P4D8 = ['--positions', '4', '--dim', '8']
USAGE_ERRORS = [  # (argv, text the message must contain)
    ([], 'missing command'),
    (['frobnicate'], 'frobnicate'),
    (['table'] + P4D8, 'kind'),
    (['table', 'rope'] + P4D8, 'rope'),
    (T + ['--dim', '8'], '--positions'),
    (T + ['--positions', '4'], '--dim'),
    (T + ['--positions', '0', '--dim', '8'], '--positions'),
    (T + ['--positions', '4', '--dim', '0'], '--dim'),
    (T + ['--positions', '-5', '--dim', '8'], '--positions'),
    (T + ['--positions', '4', '--dim', '-1'], '--dim'),
    (T + ['--positions', 'abc', '--dim', '8'], '--positions'),
    (T + ['--positions', '12abc', '--dim', '8'], '--positions'),
    (T + ['--positions', ' 12', '--dim', '8'], '--positions'),
    (T + ['--positions', '+12', '--dim', '8'], '--positions'),
    (T + ['--positions', '1e3', '--dim', '8'], '--positions'),
    (T + ['--positions', '', '--dim', '8'], '--positions'),
    (T + ['--positions', '4', '--dim', '99999999999999999999999'], '--dim'),
    (T + ['--positions', '4', '--dim', '0x10'], '--dim'),
    (T + P4D8 + ['--base', 'abc'], '--base'),
    (T + P4D8 + ['--base', 'inf'], '--base'),
    (T + P4D8 + ['--base', 'nan'], '--base'),
    (T + P4D8 + ['--base', '1e999'], '--base'),
    (T + P4D8 + ['--base', '1e-400'], '--base'),
    (T + P4D8 + ['--base', '0'], '--base'),
    (T + P4D8 + ['--base', '-10000'], '--base'),
    (T + P4D8 + ['--base', '1e31'], '--base'),
    (T + P4D8 + ['--base', '1e-31'], '--base'),
    (T + P4D8 + ['--base', '10000x'], '--base'),
    (T + ['--positions', '2', '--dim', '3', '--base', '1e-30'], '--start'),
    (T + P4D8 + ['--start', 'x'], '--start'),
    (T + P4D8 + ['--start', '1.5'], '--start'),
    (T + P4D8 + ['--start', '2147483648'], '--start'),
    (T + P4D8 + ['--start', '-2147483648'], '--start'),
    (T + ['--positions', '1000', '--dim', '8', '--start', '2147483000'], '--start'),
    (T + ['--positions', '2147483649', '--dim', '8'], '--positions'),
    (T + ['--positions', '2147483647', '--dim', '9223372036854775807'], '--dim'),
    (T + P4D8 + ['--layout', 'diagonal'], '--layout'),
    (T + P4D8 + ['--dtype', 'f64'], '--dtype'),
    (T + P4D8 + ['--format', 'json'], '--format'),
    (T + P4D8 + ['--format', 'c', '--name', '1abc'], '--name'),
    (T + P4D8 + ['--format', 'c', '--name', 'with-dash'], '--name'),
    (T + P4D8 + ['--format', 'c', '--name', 'int'], '--name'),
    (T + P4D8 + ['--format', 'c', '--name', 'class'], '--name'),
    (T + P4D8 + ['--format', 'c', '--name', '_Reserved'], '--name'),
    (T + P4D8 + ['--format', 'c', '--name', 'a__b'], '--name'),
    (T + P4D8 + ['--format', 'c', '--name', ''], '--name'),
    (T + P4D8 + ['--name', 'pe'], '--name'),
    (T + P4D8 + ['--bogus'], '--bogus'),
    (T + P4D8 + ['-x'], '-x'),
    (T + P4D8 + ['--dim', '16'], '--dim'),
    (T + ['--positions', '4', '--dim'], '--dim'),
    (T + ['--dim', '--positions', '4'], '--dim'),
    (['--dim', '8'] + T + ['--positions', '4'], '--dim'),
    (['info', '--dim', '8'], '--dim'),
    (['info', 'extra'], 'extra'),
    (T + ['extra'] + P4D8, 'extra'),
    (T + P4D8 + ['--help=yes'], '--help'),
    (T + P4D8 + ['--isa', 'foo'], '--isa'),
    (['--isa', 'foo', 'info'], '--isa'),
    (['--isa'], '--isa'),
    (T + P4D8 + ['-o', ''], '-o'),
]


def file_args(args, path):
    """args with -o path, placed where it cannot be read as another option's value."""
    if args[:2] == T:
        return T + ['-o', path] + args[2:]
    return args + ['-o', path]


def listing():
    return sorted(os.listdir(WORKDIR))


def test_bad_args(args, must_contain, expected_rc, mode):
    """mode: 'stdout', 'new' (-o FILE that does not exist) or 'existing' (-o FILE that does)."""
    path = os.path.join(WORKDIR, 'target.out')
    if mode == 'existing':
        with open(path, 'wb') as f:
            f.write(b'precious')
    before = listing()
    proc = run(args if mode == 'stdout' else file_args(args, path))
    assert proc.returncode == expected_rc, f'exit {proc.returncode}, expected {expected_rc}: ' \
                                           f'{proc.stderr.decode()!r}'
    assert proc.stdout == b'', f'stdout not empty: {proc.stdout[:80]!r}'
    assert_one_error_line(proc.stderr, must_contain)
    assert listing() == before, f'directory changed: {before} -> {listing()}'
    if mode == 'existing':
        with open(path, 'rb') as f:
            assert f.read() == b'precious', 'a pre-existing FILE was modified'
        os.remove(path)
    return proc.stderr.decode().strip()


def test_missing_directory():
    path = os.path.join(WORKDIR, 'no-such-dir', 'x.npy')
    proc = run(table_args(4, 8) + ['-o', path])
    assert proc.returncode == 1, f'exit {proc.returncode}'
    assert_one_error_line(proc.stderr, path)
    return proc.stderr.decode().strip()


def test_output_is_directory():
    path = os.path.join(WORKDIR, 'a-directory')
    os.makedirs(path, exist_ok=True)
    before = listing()
    proc = run(table_args(4, 8) + ['-o', path])
    assert proc.returncode == 1, f'exit {proc.returncode}'
    assert_one_error_line(proc.stderr, path)
    assert os.path.isdir(path) and not os.listdir(path), 'the directory was changed'
    assert listing() == before, 'a temporary file was left behind'
    return proc.stderr.decode().strip()


def test_out_of_memory():
    """A 2 GB table under a 1 GiB address-space limit: exit 1, one line, no file. A learned table,
    which is computed whole (a sinusoidal one is streamed, and would be written)."""
    import resource
    if WINDOWS_TOOL:
        return windows_skip('out of memory', 'Wine reserves its address space at start-up: it cannot start under RLIMIT_AS')
    limit = 1 << 30
    path = os.path.join(WORKDIR, 'oom.npy')
    before = listing()
    proc = run(['table', 'learned', '--rows', str(1 << 20), '--dim', '512', '--seed', '1', '-o', path],
               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert proc.returncode == 1, f'exit {proc.returncode}: {proc.stderr!r}'
    assert_one_error_line(proc.stderr, 'out of memory')
    assert listing() == before, 'a file was left behind'
    return proc.stderr.decode().strip()


# ---- streaming: tables written a chunk of rows at a time ------------------------------------------

CHUNK_BYTES = 256 * 1024  # CLI_CHUNK_BYTES in cli_stream.h


def stream_cases():
    """(name, args, row_bytes, rows): one table, cache and bias block each, every one several
    default chunks with a partial last one (the bias chunks also cross heads)."""
    t5 = save_npy('stream_t5.npy', np.random.RandomState(5).randn(32, 3).astype(np.float32))
    return [
        ('table', table_args(2500, 64, start=-3), 64 * 4, 2500),
        ('table f16 split', table_args(4100, 65, dtype='f16', layout='split'), 65 * 2, 4100),
        ('rope cache', ['rope', 'table', '--head-dim', '64', '--rows', '3001', '--start', '9'], 64 * 4, 3001),
        ('rope cache full bf16', ['rope', 'table', '--head-dim', '128', '--rows', '1300', '--layout', 'full',
                                  '--dtype', 'bf16', '--scaling', 'llama3', '--factor', '8',
                                  '--original-max-pos', '8192'], 256 * 2, 1300),
        ('alibi bias', ['alibi', 'bias', '--heads', '3', '--queries', '700', '--keys', '100', '--causal',
                        '--q-pos', '5'], 100 * 4, 2100),
        ('t5 bias f16', ['t5', 'bias', '--table', t5, '--queries', '900', '--keys', '200', '--window', '40',
                         '--dtype', 'f16'], 200 * 2, 2700),
    ]


def test_stream_chunks(args, row_bytes, rows):
    """The same bytes in many chunks (default, and 7 rows at a time) as in one library call
    (a chunk as big as the table), to a file and to stdout."""
    assert rows * row_bytes > 2 * CHUNK_BYTES and rows % (CHUNK_BYTES // row_bytes) != 0, 'not a multi-chunk case'
    path = os.path.join(WORKDIR, 'stream.npy')
    whole = run_ok(args, env={'POSENC_CLI_CHUNK_BYTES': str(1 << 40)})
    for env in ({}, {'POSENC_CLI_CHUNK_BYTES': str(7 * row_bytes + 1)}):
        assert run_ok(args, env=env) == whole, f'stdout in chunks ({env}) differs from one call'
        run_ok(args + ['-o', path], env=env)
        with open(path, 'rb') as f:
            assert f.read() == whole, f'-o FILE in chunks ({env}) differs from one call'
    os.remove(path)
    _, payload = npy_payload(whole)
    assert len(payload) == rows * row_bytes


# Runs argv[1:] and prints its peak RSS in KiB. A child's ru_maxrss includes the memory of the
# process it was forked from (this test's python: tens of MiB), so the tool is forked from this
# small fresh interpreter (started with -S -I: about 8 MiB) instead.
PEAK_RSS_RUNNER = (
    'import os, sys\n'
    'pid = os.fork()\n'
    'if pid == 0:\n'
    '    fd = os.open(os.devnull, os.O_WRONLY)\n'
    '    os.dup2(fd, 1)\n'
    '    os.execv(sys.argv[1], sys.argv[1:])\n'
    '_, status, usage = os.wait4(pid, 0)\n'
    'print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n')


def peak_rss_kib(args):
    """Runs the tool and returns its peak RSS (KiB)."""
    proc = subprocess.run([sys.executable, '-S', '-I', '-c', PEAK_RSS_RUNNER, POSENC] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    rc, rss = (int(v) for v in proc.stdout.split())
    assert rc == 0, f'{args}: exit {rc}: {proc.stderr!r}'
    return rss


def test_stream_peak_memory(args, table_bytes):
    """A 64 MiB output written to a file: peak RSS stays far below it (it was the whole table)."""
    path = os.path.join(WORKDIR, 'big.npy')
    rss = peak_rss_kib(args + ['-o', path])
    size = os.path.getsize(path)
    os.remove(path)
    assert size > table_bytes, f'{size} bytes written'
    assert rss < 16 * 1024, f'peak RSS {rss} KiB for a {table_bytes >> 20} MiB output'
    return f'peak RSS {rss} KiB for {table_bytes >> 20} MiB'


def test_stream_error_midway(args):
    """A write that fails after several chunks (RLIMIT_FSIZE of 1 MiB, EFBIG) leaves the old file
    as it was and no temporary: exit 1, one line naming the path."""
    import resource
    import signal
    path = os.path.join(WORKDIR, 'precious.npy')
    with open(path, 'wb') as f:
        f.write(b'precious')
    before = listing()

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    proc = run(args + ['-o', path], preexec_fn=limit_file_size)
    assert proc.returncode == 1, f'exit {proc.returncode}: {proc.stderr!r}'
    assert_one_error_line(proc.stderr, path)
    with open(path, 'rb') as f:
        assert f.read() == b'precious', 'the old file was changed'
    assert listing() == before, f'directory changed: {before} -> {listing()}'
    os.remove(path)
    return proc.stderr.decode().strip()


BIG_STREAMS = [  # (name, args, output bytes): 64 MiB each
    ('table 131072x128', table_args(131072, 128), 64 << 20),
    ('rope cache 131072 x head dim 128', ['rope', 'table', '--head-dim', '128', '--rows', '131072'], 64 << 20),
    ('alibi bias 8x2048x1024', ['alibi', 'bias', '--heads', '8', '--queries', '2048', '--keys', '1024',
                                '--causal'], 64 << 20),
]


def test_signal_removes_temporary(signame, ignored=None):
    """A command killed by a signal while it streams into its temporary (Ctrl-C, kill, a closed
    terminal, a closed pipe) removes the temporary and dies of that signal; the output is not
    created. The block is a terabyte: it is still streaming when the signal comes. ignored: a
    signal the command starts with ignored (nohup's SIGHUP), sent first: it must stay ignored."""
    import signal
    import time
    sig = getattr(signal, signame)
    path = os.path.join(WORKDIR, 'interrupted.npy')
    before = listing()

    def default_signals():  # as from a terminal: the signal not ignored (a test runner may)
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, sig):
            signal.signal(s, signal.SIG_DFL)
        if ignored:
            signal.signal(getattr(signal, ignored), signal.SIG_IGN)
    proc = subprocess.Popen([POSENC, 'alibi', 'bias', '--heads', '64', '--queries', '65536', '--keys', '65536',
                             '-o', path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=default_signals)
    try:
        deadline, grown = time.monotonic() + 20, False
        while time.monotonic() < deadline and not grown and proc.poll() is None:
            time.sleep(0.02)
            grown = any(n.startswith('.posenc-') and os.path.getsize(os.path.join(WORKDIR, n)) > (1 << 20)
                        for n in os.listdir(WORKDIR))
        assert grown, f'no temporary grew past 1 MiB (exit {proc.poll()})'
        if ignored:
            proc.send_signal(getattr(signal, ignored))
            time.sleep(0.3)
            assert proc.poll() is None, f'{ignored}, which it started with ignored, ended it: exit {proc.returncode}'
        proc.send_signal(sig)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -sig, f'exit {proc.returncode}, want death by {signame}: {proc.stderr.read()!r}'
    proc.stderr.close()
    assert listing() == before, f'left behind: {sorted(set(listing()) - set(before))}'
    return f'{signame}: the temporary removed'


def run_stream_cases(results, sanitized):
    for name, args, row_bytes, rows in stream_cases():
        results.case(f'chunked == one call: {name}', test_stream_chunks, args, row_bytes, rows)
    for name, args, size in BIG_STREAMS:
        # peak RSS means nothing under valgrind or ASan (shadow memory)
        if not WRAPPER and not sanitized and hasattr(os, 'wait4'):
            results.case(f'streamed, peak RSS bounded: {name}', test_stream_peak_memory, args, size)
        if sys.platform.startswith('linux'):
            results.case(f'write error midway keeps the old file: {name}', test_stream_error_midway, args)
    if os.name == 'posix' and not WRAPPER:  # the signals go to the tool itself, not to a wrapper
        for signame in ('SIGINT', 'SIGTERM', 'SIGHUP', 'SIGPIPE', 'SIGXCPU', 'SIGUSR1'):
            results.case(f'killed by {signame} while streaming: no temporary left', test_signal_removes_temporary,
                         signame)
        results.case('SIGHUP ignored from the start stays ignored, then SIGTERM', test_signal_removes_temporary,
                     'SIGTERM', 'SIGHUP')


def test_stdout_full():
    with open('/dev/full', 'wb') as full:
        proc = run(table_args(64, 64), stdout=full)
    assert proc.returncode == 1, f'exit {proc.returncode}'
    assert_one_error_line(proc.stderr, 'standard output')
    return proc.stderr.decode().strip()


def test_text_stdout_full():
    """Text through stdio (info, help, analyze): the flush's error is reported, with its reason
    where the C library gives one (Wine's msvcrt leaves errno 0 for /dev/full)."""
    table = save_npy('full_analyze.npy', np.eye(4, dtype=np.float32))
    for argv in (['info'], ['--help'], ['analyze', table]):
        with open('/dev/full', 'wb') as full:
            proc = run(argv, stdout=full)
        assert proc.returncode == 1, f'{argv}: exit {proc.returncode}'
        assert_one_error_line(proc.stderr, 'cannot write to standard output' + ('' if WINDOWS_TOOL else ': '))
    os.remove(table)
    return proc.stderr.decode().strip()


def test_no_leftovers():
    leftovers = [name for name in os.listdir(WORKDIR) if name.startswith('.posenc-')]
    assert not leftovers, f'temporary files left behind: {leftovers}'


def test_help_wins():
    """--help prints help even when other values are wrong (they are not converted)."""
    text = run_ok(T + ['--dim', 'abc', '--help']).decode()
    assert 'Usage: posenc table' in text


# ---- RoPE: helpers ---------------------------------------------------------------------------------

LD = np.longdouble
LD_EPS = float(np.finfo(np.longdouble).eps)
LD_PI = np.arctan(LD(1)) * 4


def save_npy(name, array):
    path = os.path.join(WORKDIR, name)
    np.save(path, array)
    return path


def rope_freqs(args):
    """(attention factor, inv_freq float64, HF float32 inv_freq or None) from the text output."""
    lines = run_ok(['rope', 'freqs'] + list(args)).decode().splitlines()
    m = re.match(r'^# attention_factor (\S+)$', lines[0])
    assert m, f'first line {lines[0]!r}'
    hf = '--hf-compat' in args
    assert lines[1] == '# pair inv_freq' + (' inv_freq_f32' if hf else ''), lines[1]
    rows = [line.split() for line in lines[2:]]
    assert [int(r[0]) for r in rows] == list(range(len(rows))), 'pair indices'
    assert all(len(r) == (3 if hf else 2) for r in rows), 'columns'
    inv = np.array([float(r[1]) for r in rows])
    f32 = np.array([float(r[2]) for r in rows]).astype(np.float32) if hf else None
    return float(m.group(1)), inv, f32


def rope_table(args):
    data = run_ok(['rope', 'table'] + list(args))
    header, _ = npy_payload(data)
    return header, load_npy(data)


def ulp_distance(a, b):
    """|a - b| in float32 ulps (on the ordered integer line, so across zero too)."""
    def ordered(x):
        i = x.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7fffffff), i)
    return np.abs(ordered(a) - ordered(b))


# ---- RoPE: the independent reference (formulas.md §1, §2.3) -----------------------------------------

def yarn_range(d, base, L, beta_fast=32.0, beta_slow=1.0, truncate=True):
    """HF find_correction_range, in Python doubles."""
    def corr(r):
        return d * math.log(L / (r * 2 * math.pi)) / (2 * math.log(base))
    low, high = corr(beta_fast), corr(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    return (low, high + 0.001) if low == high else (low, high)


def yarn_mscale(s, m=1.0):
    return 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0


def ref_rope(d, base=10000.0, scaling='none', factor=1.0, L=0, seq_len=0, qwen=False,
             beta_fast=32.0, beta_slow=1.0, truncate=True, mscale=0.0, mscale_all_dim=0.0,
             low_ff=1.0, high_ff=4.0, short=None, long=None, ff=None, attention=0.0, dt=np.float64):
    """omega_i (pair i < d/2) and the attention factor of a variant, in dt (float64 or longdouble)."""
    i = np.arange(d // 2).astype(dt)
    b, ex = dt(base), dt(d) / dt(d - 2)
    if scaling == 'ntk':
        b = b * dt(factor) ** ex
    elif scaling == 'dynamic':
        S = max(seq_len or L, L)
        if qwen:
            pw = 1
            while L * pw < S:
                pw *= 2
            b = b * dt(2 * pw - 1 if S > L else 1) ** ex
        else:
            b = b * (dt(factor) * dt(S) / dt(L) - (dt(factor) - 1)) ** ex
    inv = b ** (-2 * i / dt(d))
    A = 1.0
    if scaling == 'linear':
        inv = inv / dt(factor)
    elif scaling == 'yarn':
        low, high = yarn_range(d, base, L, beta_fast, beta_slow, truncate)
        ramp = np.clip((i - dt(low)) / (dt(high) - dt(low)), 0, 1)
        inv = inv / dt(factor) * ramp + inv * (1 - ramp)
        A = (yarn_mscale(factor, mscale) / yarn_mscale(factor, mscale_all_dim) if mscale and mscale_all_dim
             else yarn_mscale(factor))
    elif scaling == 'llama3':
        pi = LD_PI if dt is LD else dt(math.pi)
        wl = 2 * pi / inv
        sm = (dt(L) / wl - dt(low_ff)) / (dt(high_ff) - dt(low_ff))
        inv = np.where(wl > dt(L) / dt(low_ff), inv / dt(factor),
                       np.where(wl < dt(L) / dt(high_ff), inv, (1 - sm) * inv / dt(factor) + sm * inv))
    elif scaling == 'longrope':
        inv = inv / (long if seq_len > L else short).astype(dt)
        A = math.sqrt(1 + math.log(factor) / math.log(L)) if factor > 1 else 1.0
    if ff is not None:
        inv = inv / ff.astype(dt)
    return inv, (attention or A)


def variant_args(d=None, base=None, scaling=None, factor=None, L=None, seq_len=None, extra=()):
    args = []
    for opt, value in (('--head-dim', d), ('--base', base), ('--scaling', scaling), ('--factor', factor),
                       ('--original-max-pos', L), ('--seq-len', seq_len)):
        if value is not None:
            args += [opt, repr(value) if isinstance(value, float) else str(value)]
    return args + list(extra)


# ---- rope freqs ------------------------------------------------------------------------------------

def check_freqs(d, opts, ref_kwargs, extra=()):
    """posenc's inv_freq within 1e-14 relative of the float64 formula, and the attention factor."""
    A, inv, _ = rope_freqs(variant_args(d=d, **opts, extra=extra))
    ref, ref_A = ref_rope(d, **ref_kwargs)
    assert inv.shape == ref.shape, (inv.shape, ref.shape)
    rel = np.abs(inv - ref) / ref
    assert rel.max() <= 1e-14, f'inv_freq off by {rel.max():.3g} relative at pair {rel.argmax()}'
    assert abs(A - ref_A) <= 1e-15 * ref_A, f'attention factor {A!r}, expected {ref_A!r}'
    npy = load_npy(run_ok(['rope', 'freqs', '--format', 'npy'] + variant_args(d=d, **opts, extra=extra)))
    assert npy.dtype == np.float64 and npy.shape == (d // 2,), (npy.dtype, npy.shape)
    assert np.array_equal(npy, inv), 'the npy freqs differ from the text ones'
    return f'max rel diff {rel.max():.2g}, A {A:.10g}'


def freqs_cases():
    rng = np.random.default_rng(7)
    short = rng.uniform(1.0, 3.0, 48).astype(np.float32)
    long = rng.uniform(1.0, 60.0, 48).astype(np.float32)
    ff = rng.uniform(0.5, 8.0, 32).astype(np.float32)
    paths = {'short': save_npy('short.npy', short), 'long': save_npy('long64.npy', long.astype(np.float64)),
             'ff': save_npy('ff.npy', ff)}
    yield 'default d=128', 128, {}, {}, ()
    yield 'default d=64 base 5e5', 64, {'base': 500000.0}, {'base': 500000.0}, ()
    yield 'linear 4', 128, {'scaling': 'linear', 'factor': 4.0}, {'scaling': 'linear', 'factor': 4.0}, ()
    yield 'ntk 2', 128, {'scaling': 'ntk', 'factor': 2.0}, {'scaling': 'ntk', 'factor': 2.0}, ()
    for seq in (1000, 8192):
        yield (f'dynamic 2 L 2048 seq {seq}', 128,
               {'scaling': 'dynamic', 'factor': 2.0, 'L': 2048, 'seq_len': seq},
               {'scaling': 'dynamic', 'factor': 2.0, 'L': 2048, 'seq_len': seq}, ())
    yield ('dynamic qwen alpha seq 10000 L 2048', 128, {'scaling': 'dynamic', 'L': 2048, 'seq_len': 10000},
           {'scaling': 'dynamic', 'L': 2048, 'seq_len': 10000, 'qwen': True}, ('--qwen-alpha',))
    for d, base, L, s in ((128, 10000.0, 4096, 4.0), (128, 1e6, 32768, 8.0), (128, 10000.0, 4096, 40.0)):
        yarn = {'base': base, 'scaling': 'yarn', 'factor': s, 'L': L}
        yield f'yarn d={d} base {base:g} L {L} s {s:g}', d, yarn, yarn, ()
    yield ('yarn gpt-oss no-truncate', 64, {'base': 150000.0, 'scaling': 'yarn', 'factor': 32.0, 'L': 4096},
           {'base': 150000.0, 'scaling': 'yarn', 'factor': 32.0, 'L': 4096, 'truncate': False}, ('--no-truncate',))
    yield ('yarn betas 16/2, DeepSeek mscale 0.707/1', 64,
           {'scaling': 'yarn', 'factor': 40.0, 'L': 4096},
           {'scaling': 'yarn', 'factor': 40.0, 'L': 4096, 'beta_fast': 16.0, 'beta_slow': 2.0,
            'mscale': 0.707, 'mscale_all_dim': 1.0},
           ('--beta-fast', '16', '--beta-slow', '2', '--mscale', '0.707', '--mscale-all-dim', '1'))
    yield ('llama3 8 L 8192 base 5e5', 128, {'base': 500000.0, 'scaling': 'llama3', 'factor': 8.0, 'L': 8192},
           {'base': 500000.0, 'scaling': 'llama3', 'factor': 8.0, 'L': 8192}, ())
    yield ('llama3 32, factors 2/8', 64, {'base': 500000.0, 'scaling': 'llama3', 'factor': 32.0, 'L': 8192},
           {'base': 500000.0, 'scaling': 'llama3', 'factor': 32.0, 'L': 8192, 'low_ff': 2.0, 'high_ff': 8.0},
           ('--low-freq-factor', '2', '--high-freq-factor', '8'))
    for seq in (4096, 4097):
        opts = {'scaling': 'longrope', 'factor': 32.0, 'L': 4096, 'seq_len': seq}
        yield (f'longrope 32 L 4096 seq {seq}', 96, opts, dict(opts, short=short, long=long),
               ('--short-factor', paths['short'], '--long-factor', paths['long']))
    yield ('freq-factors (ggml rope_freqs)', 64, {}, {'ff': ff}, ('--freq-factors', paths['ff']))
    yield ('attention factor 0.5, gptj', 64, {}, {'attention': 0.5},
           ('--attention-factor', '0.5', '--style', 'gptj'))


def test_freqs_rotary_partial():
    """--rotary-dim d: the frequencies are those of d, not of the head dim."""
    _, inv, _ = rope_freqs(['--head-dim', '64', '--rotary-dim', '32'])
    ref, _ = ref_rope(32)
    assert inv.shape == (16,) and np.allclose(inv, ref, rtol=1e-14, atol=0), 'rotary-dim frequencies'


def test_yarn_reference_ranges():
    """formulas.md §1.5: the correction ranges, and posenc's ramp ends exactly there."""
    table = ((128, 1e4, 4096, (20.944482, 45.026881), (20, 46), True),
             (128, 1e6, 32768, (23.595948, 39.650881), (23, 40), True),
             (64, 150000.0, 4096, (8.092779, 17.398025), None, False))
    for d, base, L, raw, truncated, trunc in table:
        low, high = yarn_range(d, base, L, truncate=False)
        assert abs(low - raw[0]) < 1e-6 and abs(high - raw[1]) < 1e-6, f'raw range {low}, {high} != {raw}'
        low, high = yarn_range(d, base, L, truncate=trunc)
        if truncated:
            assert (low, high) == truncated, (low, high)
        s = 4.0
        _, inv, _ = rope_freqs(variant_args(d=d, base=base, scaling='yarn', factor=s, L=L,
                                            extra=() if trunc else ('--no-truncate',)))
        plain, _ = ref_rope(d, base=base)
        i = np.arange(d // 2)
        extrap, interp = i <= low, i >= high
        assert np.allclose(inv[extrap], plain[extrap], rtol=1e-15, atol=0), 'pairs <= low must be unscaled'
        assert np.allclose(inv[interp], plain[interp] / s, rtol=1e-15, atol=0), 'pairs >= high must be /factor'
        mid = ~extrap & ~interp
        ratio = inv[mid] / plain[mid]
        assert np.all((ratio < 1) & (ratio > 1 / s)), 'the ramp must blend strictly between'
    for s, expect in ((4.0, 1.138629436), (8.0, 1.207944154), (40.0, 1.368887945)):
        A, _, _ = rope_freqs(variant_args(d=64, scaling='yarn', factor=s, L=4096))
        assert abs(A - expect) < 1e-9, f'yarn mscale s={s}: {A}, expected {expect}'
    A, _, _ = rope_freqs(variant_args(d=64, scaling='yarn', factor=40.0, L=4096,
                                      extra=('--mscale', '1', '--mscale-all-dim', '1')))
    assert A == 1.0, f'DeepSeek-V3 mscale == mscale_all_dim must give A = 1 exactly, got {A!r}'
    A, _, _ = rope_freqs(variant_args(d=64, scaling='yarn', factor=40.0, L=4096, extra=('--mscale', '1')))
    assert abs(A - 1.368887945) < 1e-9, '--mscale alone is ignored, as in HF'


def test_llama3_reference_values():
    """formulas.md §1.7: theta 500000, dim 128: i=29 and i=32 (medium band 29..34)."""
    _, inv, _ = rope_freqs(variant_args(d=128, base=500000.0, scaling='llama3', factor=8.0, L=8192))
    plain, _ = ref_rope(128, base=500000.0)
    for i, before, after in ((29, 2.616099253e-3, 2.166570764e-3), (32, 1.414213562e-3, 5.248461610e-4)):
        assert abs(plain[i] - before) < 1e-12, f'reference inv[{i}] {plain[i]}'
        assert abs(inv[i] - after) < 1e-12, f'llama3 inv[{i}] = {inv[i]!r}, expected {after}'
    ratio = inv / plain
    assert np.all(ratio[:29] == 1) or np.allclose(ratio[:29], 1, rtol=1e-15), 'high band unscaled'
    assert np.allclose(ratio[35:], 1 / 8, rtol=1e-15), 'low band / factor'
    assert np.all((ratio[29:35] < 1) & (ratio[29:35] > 1 / 8)), 'medium band 29..34 blends'


def test_longrope_attention():
    """formulas.md §1.6: 131072/4096 = 32 gives attention factor 1.190238071."""
    path = save_npy('ones48.npy', np.ones(48, dtype=np.float32))
    A, _, _ = rope_freqs(variant_args(d=96, scaling='longrope', factor=32.0, L=4096,
                                      extra=('--short-factor', path, '--long-factor', path)))
    assert abs(A - 1.190238071) < 1e-9, A


# ---- rope table: accuracy ----------------------------------------------------------------------------

def exact_cache(positions, d, layout, **kwargs):
    """The exact cos/sin (longdouble) of a variant at positions, laid out, and its own error bound."""
    inv, A = ref_rope(d, dt=LD, **kwargs)
    ang = positions.astype(LD)[:, None] * inv[None, :]
    c, s = np.cos(ang) * LD(A), np.sin(ang) * LD(A)
    # omega is a longdouble pow (error ~ |ln(omega)| + a few ops), times p, then cosl
    err = (np.abs(ang) * 64 * LD_EPS + 8 * LD_EPS) * A
    if layout == 'half':
        return np.concatenate([c, s], 1), np.concatenate([err, err], 1)
    if layout == 'full':
        return np.concatenate([c, c, s, s], 1), np.concatenate([err] * 4, 1)
    return np.stack([c, s], 2).reshape(len(positions), -1), np.stack([err, err], 2).reshape(len(positions), -1)


def check_cache_accuracy(got, ref, err, what):
    """|got - exact| <= 0.5 ulp(f32) + 1e-12 (+ the longdouble reference's own bound).
    Returns the largest error in units of 0.5 ulp + 1e-12."""
    ref64 = ref.astype(np.float64)
    bound = np.spacing(np.abs(ref64).astype(np.float32)).astype(np.float64) / 2 + 1e-12
    diff = np.abs(got.astype(LD) - ref).astype(np.float64)
    tol = bound + err.astype(np.float64)
    bad = np.argwhere(diff > tol)
    if len(bad):
        r, c = bad[0]
        raise AssertionError(f'{what}: {len(bad)} values off, first [{r},{c}]: got {got[r, c]!r}, exact '
                             f'{float(ref[r, c])!r}, diff {diff[r, c]:.3g} > {tol[r, c]:.3g}')
    return ((diff - err.astype(np.float64)).clip(0) / bound).max()


TABLE_CASES = [  # (name, head dim, variant options, reference kwargs, extra flags)
    ('default d=64', 64, {}, {}, ()),
    ('default d=128 base 1e6', 128, {'base': 1e6}, {'base': 1e6}, ()),
    ('linear 4', 64, {'scaling': 'linear', 'factor': 4.0}, {'scaling': 'linear', 'factor': 4.0}, ()),
    ('linear 3', 64, {'scaling': 'linear', 'factor': 3.0}, {'scaling': 'linear', 'factor': 3.0}, ()),
    ('ntk 3', 64, {'scaling': 'ntk', 'factor': 3.0}, {'scaling': 'ntk', 'factor': 3.0}, ()),
    ('dynamic 2 L 512 seq 4096', 64, {'scaling': 'dynamic', 'factor': 2.0, 'L': 512, 'seq_len': 4096},
     {'scaling': 'dynamic', 'factor': 2.0, 'L': 512, 'seq_len': 4096}, ()),
    ('yarn 8 L 4096 (A = 1.208)', 128, {'scaling': 'yarn', 'factor': 8.0, 'L': 4096},
     {'scaling': 'yarn', 'factor': 8.0, 'L': 4096}, ()),
    ('llama3 8 L 8192 base 5e5', 128, {'base': 500000.0, 'scaling': 'llama3', 'factor': 8.0, 'L': 8192},
     {'base': 500000.0, 'scaling': 'llama3', 'factor': 8.0, 'L': 8192}, ()),
    ('attention factor 0.75', 32, {}, {'attention': 0.75}, ('--attention-factor', '0.75')),
]


def test_table_accuracy(d, opts, ref_kwargs, extra, layout, max_p):
    """Positions: random below max_p, both ends, and a few negative ones."""
    rng = np.random.default_rng(d * 7 + len(layout) + max_p % 97)
    p = np.concatenate([rng.integers(0, max_p, 120), [0, 1, 15, 16, 17, max_p - 1, max_p - 16],
                        -rng.integers(1, max_p, 5)])
    path = save_npy('tpos.npy', p.astype(np.int64))
    header, got = rope_table(['--positions', path, '--layout', layout] + variant_args(d=d, **opts, extra=extra))
    width = 2 * d if layout == 'full' else d
    assert header == {'descr': '<f4', 'fortran_order': False, 'shape': (len(p), width)}, header
    ref, err = exact_cache(p, d, layout, **ref_kwargs)
    worst = check_cache_accuracy(got, ref, err, f'{layout} p<{max_p}')
    return f'max error {worst:.3f} x (0.5 ulp + 1e-12)'


def test_table_linear3_point():
    """Linear factor 3 at p = 13702237, pair 0: cos(13702237/3) = 6.98215408319463505e-05 (60-digit
    decimal arithmetic); the float32 nearest it. (Rounding 1/3 to double first gives 6.9821794e-05.)"""
    path = save_npy('lin3.npy', np.array([13702237]))
    _, got = rope_table(['--positions', path] + variant_args(d=64, scaling='linear', factor=3.0))
    assert got[0, 0] == np.float32(6.98215408319463505e-05), f'{got[0, 0]!r}'


def test_table_range_equals_list():
    """--rows/--start and the same positions as a list give the same bits; layouts agree."""
    args = variant_args(d=48, scaling='yarn', factor=4.0, L=1024)
    _, ranged = rope_table(['--rows', '300', '--start', '16777000'] + args)
    path = save_npy('rpos.npy', np.arange(16777000, 16777300, dtype=np.int32))
    _, listed = rope_table(['--positions', path] + args)
    assert np.array_equal(ranged.view(np.uint32), listed.view(np.uint32)), 'range != list'
    h = 24
    c, s = listed[:, :h], listed[:, h:]
    _, full = rope_table(['--positions', path, '--layout', 'full'] + args)
    _, inter = rope_table(['--positions', path, '--layout', 'interleaved'] + args)
    assert np.array_equal(full, np.concatenate([c, c, s, s], 1)), 'full layout'
    assert np.array_equal(inter, np.stack([c, s], 2).reshape(300, -1)), 'interleaved layout'
    _, gptj = rope_table(['--positions', path, '--style', 'gptj'] + args)
    assert np.array_equal(gptj, listed), 'the cache does not depend on the rotation style'


def test_table_equals_sinusoidal():
    """An unscaled half cache is the split sinusoidal table with its halves swapped."""
    _, rope = rope_table(['--head-dim', '64', '--rows', '500', '--start', '-7'])
    sin = load_npy(run_ok(table_args(500, 64, start=-7, layout='split')))
    assert np.array_equal(rope[:, :32], sin[:, 32:]) and np.array_equal(rope[:, 32:], sin[:, :32])


def test_table_half_precision(dtype):
    args = ['--rows', '200', '--start', '1000'] + variant_args(d=40, scaling='yarn', factor=4.0, L=512)
    _, f32 = rope_table(args)
    header, got = rope_table(args + ['--dtype', dtype])
    assert got.shape == f32.shape
    if dtype == 'f16':
        assert header['descr'] == '<f2'
        assert np.array_equal(got.view(np.uint16), f32.astype(np.float16).view(np.uint16)), 'f16 rounding'
    else:
        assert header['descr'] == '<u2' and np.array_equal(got, bf16_round(f32)), 'bf16 must be <u2 of rounded f32'


def rope_c_header_cases():
    """(label, variant options, dtype, layout, rows, start, name): every option the regenerate
    command has to spell out."""
    pairs = np.linspace(1.0, 3.0, 8).astype(np.float32)
    short, long_ = save_npy('c_short.npy', pairs), save_npy('c_long.npy', pairs[::-1] * 2)
    ff = save_npy('c_ff.npy', np.linspace(1.0, 8.0, 8).astype(np.float32))
    return [
        ('default', ['--head-dim', '32'], 'f32', 'half', 6, 0, 'rope_cache'),
        ('gptj rotary 24', ['--head-dim', '32', '--rotary-dim', '24', '--style', 'gptj', '--base', '500000'],
         'f16', 'full', 5, -3, 'rope_gptj'),
        ('yarn', ['--head-dim', '64', '--scaling', 'yarn', '--factor', '4', '--original-max-pos', '64',
                  '--beta-fast', '16', '--beta-slow', '2', '--no-truncate', '--mscale', '0.707',
                  '--mscale-all-dim', '1'], 'bf16', 'interleaved', 4, 100, 'rope_yarn'),
        ('dynamic qwen', ['--head-dim', '16', '--scaling', 'dynamic', '--qwen-alpha', '--original-max-pos', '32',
                          '--seq-len', '300'], 'f32', 'half', 3, 250, 'rope_qwen'),
        ('dynamic, seq-len from rows', ['--head-dim', '16', '--scaling', 'dynamic', '--factor', '2',
                                        '--original-max-pos', '8'], 'f32', 'half', 20, 0, 'rope_dyn'),
        ('llama3', ['--head-dim', '32', '--base', '500000', '--scaling', 'llama3', '--factor', '8',
                    '--original-max-pos', '64', '--low-freq-factor', '2', '--high-freq-factor', '3'],
         'f16', 'half', 7, 0, 'rope_llama3'),
        ('longrope', ['--head-dim', '16', '--scaling', 'longrope', '--factor', '4', '--original-max-pos', '16',
                      '--short-factor', short, '--long-factor', long_, '--attention-factor', '1.25'],
         'f32', 'interleaved', 40, 0, 'rope_longrope'),
        ('ntk, freq-factors', ['--head-dim', '16', '--scaling', 'ntk', '--factor', '2', '--freq-factors', ff],
         'f32', 'full', 3, 9, 'rope_ntk'),
        ('linear hf-compat', ['--head-dim', '32', '--scaling', 'linear', '--factor', '4', '--hf-compat'],
         'f32', 'half', 4, 1000, 'rope_hf'),
        ('mrope, 17-digit values', ['--head-dim', '32', '--mrope-section', '4,6,6', '--mrope-interleaved',
                                    '--base', '10000.000000000002', '--attention-factor', '0.30000000000000004'],
         'f16', 'half', 3, 0, 'rope_mrope'),
    ]


def test_rope_c_header(opts, dtype, layout, rows, start, name):
    """--format c holds the .npy's bits, compiles, carries the right XXH3, and its "regenerate
    with" command (every option spelled out) remakes it byte for byte."""
    args = ['rope', 'table'] + opts + ['--rows', str(rows), '--start', str(start), '--layout', layout,
                                       '--dtype', dtype]
    npy_file = run_ok(args)
    npy = load_npy(npy_file)
    assert run_ok(args + ['--format', 'raw']) == npy_payload(npy_file)[1], 'raw != the .npy payload'
    assert run_ok(args + ['--format', 'npy']) == npy_file, '--format npy != the default'
    header = os.path.join(WORKDIR, f'{name}.h')
    run_ok(args + ['--format', 'c', '--name', name, '-o', header])
    with open(header) as f:
        text = f.read()
    assert text.startswith('/* RoPE cos/sin cache generated by posenc'), 'title'
    assert f' * Row r holds position {start} + r.\n' in text, 'first position'
    assert f' * Layout {layout}, h = ' in text and ' * Attention factor A = ' in text, 'layout/attention notes'
    assert f'#define {name}_ROWS {rows}\n' in text and f'#define {name}_COLS {npy.shape[1]}\n' in text
    check_compiled_header(header, name, npy)
    assert_regenerates(header)


def test_baked_example_fails_on_wrong_table():
    """check_baked.py (the meson test that keeps examples/baked/ true) fails on a header whose
    values or checksum were changed, and passes the fresh one."""
    header = os.path.join(WORKDIR, 'stale.h')
    run_ok(['rope', 'table', '--head-dim', '8', '--rows', '3', '--format', 'c', '--name', 'stale', '-o', header])
    checker = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'check_baked.py'), POSENC]
    assert subprocess.run(checker + [header], stdout=subprocess.PIPE, timeout=120).returncode == 0, 'fresh header'
    with open(header) as f:
        text = f.read()
    for old, new in (('0.540302277f', '0.540302336f'), ('_XXH3 0x', '_XXH3 0x1')):
        assert old in text, old
        with open(header, 'w') as f:
            f.write(text.replace(old, new, 1))
        proc = subprocess.run(checker + [header], stdout=subprocess.PIPE, timeout=120)
        assert proc.returncode == 1 and b'FAIL' in proc.stdout, f'{old} -> {new} not caught'


def test_table_stdout_equals_file():
    args = ['rope', 'table', '--head-dim', '16', '--rows', '9']
    path = os.path.join(WORKDIR, 'rt.npy')
    run_ok(args + ['-o', path])
    with open(path, 'rb') as f:
        assert f.read() == run_ok(args) == run_ok(args + ['-o', '-'])


def test_rope_isa_identical(isa):
    path = save_npy('ipos.npy', np.array([5, 0, 2 ** 24 - 1, -3, 131071], dtype=np.int64))
    for args in (['rope', 'table', '--head-dim', '128', '--rows', '100', '--start', '16777000'],
                 ['rope', 'table', '--positions', path, '--layout', 'interleaved', '--dtype', 'f16'] +
                 variant_args(d=96, scaling='yarn', factor=8.0, L=4096),
                 ['rope', 'table', '--head-dim', '64', '--rows', '64', '--hf-compat']):
        assert run_ok(['--isa', isa] + args) == run_ok(args), f'{" ".join(args)} differs under --isa {isa}'
    x = save_npy('ix.npy', np.random.default_rng(3).standard_normal((5, 3, 64)).astype(np.float32))
    apply = ['rope', 'apply', '--in', x, '--positions', path]
    w = save_npy('iw.npy', np.random.default_rng(4).standard_normal(64).astype(np.float32))
    for extra in ([], ['--out-dtype', 'bf16'], ['--out-dtype', 'f16', '--style', 'gptj'],
                  ['--qk-norm', w], ['--qk-norm', w, '--qk-norm-offset', '--out-dtype', 'bf16', '--rotary-dim', '24']):
        assert run_ok(['--isa', isa] + apply + extra) == run_ok(apply + extra), \
            f'rope apply {shlex.join(extra)} differs under --isa {isa}'


# ---- --hf-compat --------------------------------------------------------------------------------------

def hf_inv_freq(d, base, pow_fn, scaling='none', factor=1.0, L=0, low_ff=1.0, high_ff=4.0):
    """transformers' float32 inv_freq (formulas.md §1.1, §1.3, §1.5, §1.7), op for op in numpy
    float32. pow_fn(float32 base, float32 exponents) -> float32 is the one op left open."""
    f32 = np.float32
    e = np.arange(0, d, 2).astype(np.float32) / f32(d)          # int64 arange -> float32 / dim
    pos_freqs = pow_fn(f32(base), e)
    inv = f32(1.0) / pos_freqs
    if scaling == 'linear':
        inv = inv / f32(factor)
    elif scaling == 'yarn':
        low, high = yarn_range(d, base, L)
        inv_interp = f32(1.0) / (f32(factor) * pos_freqs)
        ramp = np.clip((np.arange(d // 2, dtype=np.float32) - f32(low)) / f32(high - low), f32(0), f32(1))
        extrap_w = f32(1) - ramp
        inv = inv_interp * (f32(1) - extrap_w) + inv * extrap_w
    elif scaling == 'llama3':
        low_wl, high_wl = L / low_ff, L / high_ff                 # Python doubles
        wavelen = (f32(1) / inv) * f32(2 * math.pi)               # torch: scalar / t = t.reciprocal() * scalar
        llama = np.where(wavelen > f32(low_wl), inv / f32(factor), inv)
        smooth = ((f32(1) / wavelen) * f32(L) - f32(low_ff)) / f32(high_ff - low_ff)
        smoothed = (f32(1) - smooth) * llama / f32(factor) + smooth * llama
        medium = ~(wavelen < f32(high_wl)) & ~(wavelen > f32(low_wl))
        inv = np.where(medium, smoothed, llama)
    return inv.astype(np.float32)


def numpy_pow(base, e):
    return base ** e                                             # numpy's own float32 pow


def correctly_rounded_pow(base, e):
    return (LD(base) ** e.astype(LD)).astype(np.float32)         # what posenc (and its docs) model


HF_VARIANTS = [  # (scaling, factor, L)
    ('none', None, None), ('linear', 4.0, None), ('llama3', 8.0, 8192), ('yarn', 4.0, 4096)]


def hf_args(d, base, scaling, factor, L):
    return variant_args(d=d, base=base, scaling=None if scaling == 'none' else scaling, factor=factor, L=L,
                        extra=('--hf-compat',))


def test_hf_inv_freq(d, base):
    """posenc's float32 inv_freq is transformers' recipe bit for bit, with pow correctly rounded.
    With numpy's own float32 pow (not correctly rounded) it differs where that pow does."""
    report = []
    for scaling, factor, L in HF_VARIANTS:
        _, _, f32 = rope_freqs(hf_args(d, base, scaling, factor, L))
        kw = {'scaling': scaling, 'factor': factor or 1.0, 'L': L or 0}
        ref = hf_inv_freq(d, base, correctly_rounded_pow, **kw)
        mismatch = np.nonzero(f32.view(np.uint32) != ref.view(np.uint32))[0]
        assert len(mismatch) == 0, \
            f'{scaling}: pairs {mismatch[:8]} differ: {f32[mismatch[:4]]} vs {ref[mismatch[:4]]}'
        np_ref = hf_inv_freq(d, base, numpy_pow, **kw)
        u = ulp_distance(f32, np_ref)
        report.append(f'{scaling} {100 * (u == 0).mean():.0f}%/{u.max()}')
    return 'vs numpy-pow: identical %/max ulp: ' + ', '.join(report)


def hf_numpy_cache(inv, positions):
    """HF's forward in numpy float32: freqs = fl32(p) * inv_freq, then float32 cos/sin."""
    freqs = positions.astype(np.float32)[:, None] * inv[None, :]
    return np.cos(freqs), np.sin(freqs), freqs


def test_hf_cache(d, base, scaling, factor, L, n):
    """The --hf-compat cache against numpy's float32 HF forward on the same float32 angles:
    bit-identical to the correctly rounded cos/sin of the angle, within 1 ulp of numpy's float32
    np.cos/np.sin (which are not correctly rounded)."""
    A, _, f32 = rope_freqs(hf_args(d, base, scaling, factor, L))
    _, got = rope_table(['--rows', str(n)] + hf_args(d, base, scaling, factor, L))
    inv = hf_inv_freq(d, base, correctly_rounded_pow, scaling=scaling, factor=factor or 1.0, L=L or 0)
    assert np.array_equal(inv.view(np.uint32), f32.view(np.uint32))
    c, s, freqs = hf_numpy_cache(inv, np.arange(n))
    af = np.float32(A)
    if af != 1:
        c, s = c * af, s * af
    ref = np.concatenate([c, s], 1)
    # the correctly rounded cos/sin of the float angle (longdouble, then one rounding), times fl32(A)
    exact_c, exact_s = np.cos(freqs.astype(LD)).astype(np.float32), np.sin(freqs.astype(LD)).astype(np.float32)
    if af != 1:
        exact_c, exact_s = exact_c * af, exact_s * af
    cr = np.concatenate([exact_c, exact_s], 1)
    u_np, u_cr = ulp_distance(got, ref), ulp_distance(got, cr)
    assert u_cr.max() == 0, f'{(u_cr > 0).sum()} values are not the correctly rounded cos/sin of the float angle'
    # numpy's float32 cos/sin are within 1 ulp of the correctly rounded ones; an attention factor
    # A != 1 (fl32(cos) * fl32(A)) can stretch that to 2 ulp of the product
    assert u_np.max() <= (1 if af == 1 else 2), f'max {u_np.max()} ulp from numpy float32 cos/sin (A = {A})'
    assert got.shape == (n, d)
    HF_FIGURES.append((d, base, scaling, n, 100 * (u_np == 0).mean(), int(u_np.max())))
    return f'vs numpy float32 cos/sin: {100 * (u_np == 0).mean():.2f}% bit-identical, max {u_np.max()} ulp'


HF_FIGURES = []


def test_hf_numpy_pow_agreement(d, base):
    """What a plain numpy port of HF (numpy's float32 pow included) gives against --hf-compat:
    reported, not asserted (numpy's pow is not PyTorch's either)."""
    n = 131072
    _, got = rope_table(['--rows', str(n)] + hf_args(d, base, 'none', None, None))
    c, s, _ = hf_numpy_cache(hf_inv_freq(d, base, numpy_pow), np.arange(n))
    ref = np.concatenate([c, s], 1)
    same = (got.view(np.uint32) == ref.view(np.uint32)).mean()
    return f'{100 * same:.2f}% bit-identical, max |diff| {np.abs(got - ref).max():.3g}'


def test_hf_vs_exact_contrast(d, base):
    """Why the default mode exists: the float32 HF recipe against the exact values, p < 131072."""
    n = 131072
    p = np.arange(n)
    c, s, _ = hf_numpy_cache(hf_inv_freq(d, base, numpy_pow), p)
    hf = np.concatenate([c, s], 1)
    _, hfc = rope_table(['--rows', str(n)] + hf_args(d, base, 'none', None, None))
    _, exact_mode = rope_table(['--rows', str(n), '--head-dim', str(d), '--base', repr(base)])
    ref, _ = exact_cache(p, d, 'half', base=base)
    ref = ref.astype(np.float64)
    e_hf, e_hfc, e_ex = (np.abs(a.astype(np.float64) - ref).max() for a in (hf, hfc, exact_mode))
    assert e_ex < 3.0e-8, f'default mode max error {e_ex:.3g}'
    assert e_hf > 1e-4, f'expected the float32 recipe to err visibly, got {e_hf:.3g}'
    CONTRAST.append((d, base, e_hf, e_hfc, e_ex))
    return (f'max |error| vs exact: numpy float32 HF {e_hf:.3g}, posenc --hf-compat {e_hfc:.3g}, '
            f'posenc default {e_ex:.3g}')


CONTRAST = []


# ---- rope apply ------------------------------------------------------------------------------------

def mrope_axis(j, sections, interleaved):
    if interleaved:
        if j % 3 == 1 and j < 3 * sections[1]:
            return 1
        if j % 3 == 2 and j < 3 * sections[2]:
            return 2
        return 0
    return 0 if j < sections[0] else (1 if j < sections[0] + sections[1] else 2)


def cos_sin_for(positions, d, args):
    """cos, sin (float32, [..., h]) for an array of positions, from 'posenc rope table'."""
    flat = np.asarray(positions, dtype=np.int64).reshape(-1)
    path = save_npy('cs_pos.npy', flat)
    _, cache = rope_table(['--positions', path] + args)
    h = d // 2
    shape = np.shape(positions) + (h,)
    return cache[:, :h].reshape(shape), cache[:, h:].reshape(shape)


def rope_pairs(d, style):
    """The element indices (i0, i1) of the rotated pairs."""
    h = d // 2
    i0 = np.arange(h) if style == 'neox' else 2 * np.arange(h)
    return i0, (i0 + h if style == 'neox' else i0 + 1)


def rotate_reference(x, c, s, d, style='neox', inverse=False, work=np.float32):
    """The rotation in numpy float32 (IEEE single ops, as in C): c, s [..., T, h] broadcast over heads.
    work=np.float64: in float64 instead (products of float32 values exact)."""
    xf = x.astype(work)
    out = xf.copy()
    c, s = c[..., None, :], s[..., None, :]
    if inverse:
        s = -s
    i0, i1 = rope_pairs(d, style)
    x0, x1 = xf[..., i0], xf[..., i1]
    out[..., i0] = x0 * c - x1 * s
    out[..., i1] = x1 * c + x0 * s
    return out.astype(x.dtype)


def apply(x_path, args, k_path=None):
    out = os.path.join(WORKDIR, 'y.npy')
    extra = []
    if k_path:
        extra = ['--k', k_path, '--k-out', os.path.join(WORKDIR, 'k_out.npy')]
    run_ok(['rope', 'apply', '--in', x_path, '-o', out] + extra + list(args))
    y = np.load(out)
    return (y, np.load(os.path.join(WORKDIR, 'k_out.npy'))) if k_path else y


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def test_apply_basic(style, dtype, head, rotary, variant):
    rng = np.random.default_rng(head + rotary)
    T, H = 37, 3
    x = (rng.standard_normal((T, H, head)) * 3).astype(dtype)
    p = rng.integers(0, 20000, T)
    x_path, p_path = save_npy('x.npy', x), save_npy('p.npy', p.astype(np.int64))
    vargs = list(variant) + ['--style', style] + (['--rotary-dim', str(rotary)] if rotary != head else [])
    y = apply(x_path, ['--positions', p_path] + vargs)
    c, s = cos_sin_for(p, rotary, ['--head-dim', str(head)] + vargs)
    ref = rotate_reference(x, c, s, rotary, style)
    assert same_bits(y, ref), f'{(y != ref).sum()} values differ from the numpy rotation'
    assert np.array_equal(y[..., rotary:], x[..., rotary:]), 'pass-through dims changed'
    # inverse: undoes it (to rounding), and is itself the numpy rotation by -angle
    y_path = save_npy('y_in.npy', y)
    z = apply(y_path, ['--positions', p_path, '--inverse'] + vargs)
    assert same_bits(z, rotate_reference(y, c, s, rotary, style, inverse=True)), 'inverse rotation bits'
    if dtype == np.float32 and '--attention-factor' not in variant and 'yarn' not in variant:
        rel = np.abs(z.astype(np.float64) - x) .max() / np.abs(x).max()
        assert rel <= 1e-6, f'inverse(apply(x)) off by {rel:.3g} relative'
    # the cache path gives the same bits, in every layout
    for layout in ('half', 'full', 'interleaved'):
        cache = ['--cache-rows', str(int(p.max()) + 1), '--layout', layout]
        yc = apply(x_path, ['--positions', p_path] + cache + vargs)
        assert same_bits(yc, y), f'--cache-rows (layout {layout}) differs from on the fly'
    return f'{T}x{H}x{head} {np.dtype(dtype).name}'


def test_apply_large_positions():
    """Positions across the whole int32 range, negative too, on the fly."""
    rng = np.random.default_rng(18)
    p = np.array([0, 1, -1, 2 ** 24 - 1, 2 ** 24 + 1, 131071, 2 ** 31 - 1, -(2 ** 31 - 1), 123456789, -77])
    x = rng.standard_normal((len(p), 2, 64)).astype(np.float32)
    xp, pp = save_npy('xl.npy', x), save_npy('pl.npy', p)
    for args in ([], variant_args(scaling='linear', factor=16.0, extra=('--style', 'gptj'))):
        y = apply(xp, ['--positions', pp] + args)
        c, s = cos_sin_for(p, 64, ['--head-dim', '64'] + args)
        assert same_bits(y, rotate_reference(x, c, s, 64, 'gptj' if args else 'neox')), f'{args}'


def test_apply_runs():
    """Runs of consecutive positions (the library's range recurrence) between jumps (its list
    path), across anchors (multiples of 32) and 2^24; the widest rotary dim; f16."""
    rng = np.random.default_rng(19)
    p = np.concatenate([np.arange(30, 70), [1000, 1001, 1002, 5], np.arange(16777200, 16777260)])
    x = rng.standard_normal((len(p), 2, 512)).astype(np.float16)
    xp, pp = save_npy('xr.npy', x), save_npy('pr.npy', p)
    for style in ('neox', 'gptj'):
        y = apply(xp, ['--positions', pp, '--style', style])
        c, s = cos_sin_for(p, 512, ['--head-dim', '512'])
        assert same_bits(y, rotate_reference(x, c, s, 512, style)), style


def test_apply_start_and_stdout():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((20, 2, 32)).astype(np.float32)
    x_path = save_npy('xs.npy', x)
    y = apply(x_path, ['--start', '1000'])
    c, s = cos_sin_for(np.arange(1000, 1020), 32, ['--head-dim', '32'])
    assert same_bits(y, rotate_reference(x, c, s, 32)), '--start'
    data = run_ok(['rope', 'apply', '--in', x_path, '--start', '1000'])
    assert same_bits(load_npy(data), y), 'stdout output'
    y0 = apply(x_path, [])
    c0, s0 = cos_sin_for(np.arange(20), 32, ['--head-dim', '32'])
    assert same_bits(y0, rotate_reference(x, c0, s0, 32)), 'default start 0'


def test_apply_gqa():
    rng = np.random.default_rng(12)
    T, D = 25, 64
    q = rng.standard_normal((T, 8, D)).astype(np.float32)
    k = rng.standard_normal((T, 2, D)).astype(np.float16)
    p = rng.integers(0, 5000, T)
    qp, kp, pp = save_npy('q.npy', q), save_npy('k.npy', k), save_npy('pg.npy', p)
    y, ky = apply(qp, ['--positions', pp], k_path=kp)
    c, s = cos_sin_for(p, D, ['--head-dim', str(D)])
    assert same_bits(y, rotate_reference(q, c, s, D)), 'Q'
    assert same_bits(ky, rotate_reference(k, c, s, D)), 'K (GQA, f16)'
    y_alone = apply(qp, ['--positions', pp])
    assert same_bits(y, y_alone), 'Q with and without K'


def test_apply_batch(per_batch_positions):
    rng = np.random.default_rng(13)
    B, T, H, D = 3, 17, 2, 48
    x = rng.standard_normal((B, T, H, D)).astype(np.float32)
    p = rng.integers(0, 100000, (B, T)) if per_batch_positions else rng.integers(0, 100000, T)
    xp, pp = save_npy('xb.npy', x), save_npy('pb.npy', p.astype(np.int32))
    args = variant_args(scaling='dynamic', factor=2.0, L=1024, extra=('--style', 'gptj'))
    y = apply(xp, ['--positions', pp] + args)
    full = p if per_batch_positions else np.broadcast_to(p, (B, T))
    # dynamic NTK reads the sequence length HF's way: max(position) + 1, the same for the table
    c, s = cos_sin_for(full, D, ['--head-dim', str(D), '--seq-len', str(int(p.max()) + 1)] + args)
    assert same_bits(y, rotate_reference(x, c, s, D, 'gptj')), 'batch rotation'
    yc = apply(xp, ['--positions', pp, '--cache-rows', '100000'] + args)
    assert same_bits(yc, y), 'batch: cache != on the fly'
    y2 = apply(xp, ['--positions', pp, '--seq-len', str(int(p.max()) + 1)] + args)
    assert same_bits(y2, y), 'the default --seq-len is the largest position + 1'


def test_apply_mrope(interleaved, batched):
    rng = np.random.default_rng(14 + interleaved)
    B, T, H, D = (2 if batched else 1), 19, 2, 64
    sections = (8, 12, 12) if not interleaved else (12, 10, 10)
    x = rng.standard_normal((B, T, H, D) if batched else (T, H, D)).astype(np.float32)
    p = rng.integers(0, 3000, (3, B, T) if batched else (3, T))
    xp, pp = save_npy('xm.npy', x), save_npy('pm.npy', p.astype(np.int64))
    args = ['--base', '1000000', '--mrope-section', ','.join(map(str, sections))] + \
           (['--mrope-interleaved'] if interleaved else [])
    y = apply(xp, ['--positions', pp] + args)
    c3, s3 = cos_sin_for(p, D, ['--head-dim', str(D)] + args)  # [3, (B,) T, h]
    axes = np.array([mrope_axis(j, sections, interleaved) for j in range(D // 2)])
    cols = np.arange(D // 2)
    c, s = c3[axes, ..., cols], s3[axes, ..., cols]   # [h, (B,) T] by fancy indexing
    c, s = np.moveaxis(c, 0, -1), np.moveaxis(s, 0, -1)
    assert same_bits(y, rotate_reference(x, c, s, D)), 'M-RoPE rotation'
    yc = apply(xp, ['--positions', pp, '--cache-rows', '3000'] + args)
    assert same_bits(yc, y), 'M-RoPE: cache != on the fly'
    if not batched:  # text tokens: t = h = w = p gives plain RoPE
        same = np.stack([p[0]] * 3)
        ps = save_npy('pm_text.npy', same)
        plain_p = save_npy('pm_plain.npy', p[0])
        plain = apply(xp, ['--positions', plain_p, '--base', '1000000'])
        assert same_bits(apply(xp, ['--positions', ps] + args), plain), 'M-RoPE with t = h = w != plain RoPE'


def test_apply_hf_compat():
    rng = np.random.default_rng(15)
    x = rng.standard_normal((30, 4, 128)).astype(np.float32)
    p = rng.integers(0, 40000, 30)
    xp, pp = save_npy('xh.npy', x), save_npy('ph.npy', p)
    args = variant_args(base=500000.0, scaling='llama3', factor=8.0, L=8192, extra=('--hf-compat',))
    y = apply(xp, ['--positions', pp] + args)
    c, s = cos_sin_for(p, 128, ['--head-dim', '128'] + args)
    assert same_bits(y, rotate_reference(x, c, s, 128)), 'hf-compat rotation'
    yc = apply(xp, ['--positions', pp, '--cache-rows', '40000'] + args)
    assert same_bits(yc, y), 'hf-compat: cache != on the fly'


def test_apply_npy_versions():
    """Versions 2.0 and 3.0 and NumPy-legal header spellings read like 1.0."""
    x = np.random.default_rng(16).standard_normal((4, 2, 8)).astype(np.float32)
    reference = apply(save_npy('xv.npy', x), ['--start', '3'])
    headers = [None, "{'shape': (4, 2, 8), 'descr': '<f4', 'fortran_order': False}",
               '{"descr":"<f4","fortran_order":False,"shape":(4,2,8,)}',
               "{ 'descr' : '<f4' ,\n 'fortran_order' : False , 'shape' : ( 4 , 2 , 8 ) , }"]
    for version in ((1, 0), (2, 0), (3, 0)):
        for header in headers:
            path = os.path.join(WORKDIR, 'xv2.npy')
            with open(path, 'wb') as f:
                f.write(npy_image(x, version, header))
            assert same_bits(apply(path, ['--start', '3']), reference), f'version {version} header {header!r}'


def to_dtype(y32, out):
    """float32 values as --out-dtype writes them: <f4, <f2, or bf16 bits in <u2 (nearest even)."""
    return {'f32': y32, 'f16': y32.astype(np.float16), 'bf16': bf16_round(y32)}[out]


def test_apply_out_dtype(in_dtype, style):
    """--out-dtype: X (and K, of the other dtype) converted to float32, rotated in float32 and rounded
    once to the output dtype; from float32 the bits of the float32 output converted; pass-through
    dims (rotary 48 of 80) converted too; the cache path and --inverse alike."""
    rng = np.random.default_rng(20 + (in_dtype == np.float16))
    T, D, rotary = 29, 80, 48
    other = np.float16 if in_dtype == np.float32 else np.float32
    x = (rng.standard_normal((T, 4, D)) * 3).astype(in_dtype)
    k = (rng.standard_normal((T, 2, D)) * 3).astype(other)
    p = rng.integers(0, 30000, T)
    xp, kp, pp = save_npy('xo.npy', x), save_npy('ko.npy', k), save_npy('po.npy', p)
    vargs = ['--style', style, '--rotary-dim', str(rotary)]
    c, s = cos_sin_for(p, rotary, ['--head-dim', str(D)] + vargs)
    in_place, k_in_place = apply(xp, ['--positions', pp] + vargs, k_path=kp)
    for out in ('f32', 'f16', 'bf16'):
        y, ky = apply(xp, ['--positions', pp, '--out-dtype', out] + vargs, k_path=kp)
        for got, t, what in ((y, x, 'X'), (ky, k, 'K')):
            ref = to_dtype(rotate_reference(t.astype(np.float32), c, s, rotary, style), out)
            assert same_bits(got, ref), f'{what} {t.dtype} -> {out}: {(got != ref).sum()} values differ'
            if t.dtype == np.float32:  # out of place from f32: the in-place bits, converted
                done = in_place if what == 'X' else k_in_place
                assert same_bits(got, to_dtype(done, out)), f'{what} -> {out} != in place, converted'
        if out == 'f32' and in_dtype == np.float16:  # rounded once: not the f16 rotation widened
            assert not np.array_equal(y, y.astype(np.float16).astype(np.float32)), 'f16 -> f32 was rounded to f16'
        yc = apply(xp, ['--positions', pp, '--out-dtype', out, '--cache-rows', str(int(p.max()) + 1)] + vargs)
        assert same_bits(yc, y), f'-> {out}: --cache-rows differs from on the fly'
        yi = apply(xp, ['--positions', pp, '--out-dtype', out, '--inverse'] + vargs)
        ref = to_dtype(rotate_reference(x.astype(np.float32), c, s, rotary, style, inverse=True), out)
        assert same_bits(yi, ref), f'-> {out} --inverse'
    # the dtype the output already has: exactly today's output
    same = {np.dtype(np.float32): 'f32', np.dtype(np.float16): 'f16'}[x.dtype]
    assert same_bits(apply(xp, ['--positions', pp, '--out-dtype', same] + vargs), in_place), '--out-dtype = input'
    data = run_ok(['rope', 'apply', '--in', xp, '--positions', pp, '--out-dtype', 'bf16'] + vargs)
    assert npy_payload(data)[0]['descr'] == '<u2', 'bf16 output: raw bits in <u2'


# ---- rope apply --qk-norm -----------------------------------------------------------------------------

def rms_norm_posenc(x, w, eps, offset):
    """posenc_rope_norm's definition (posenc.h) op for op: per head, float64 sums of the squares of
    the elements e = k (mod 8) in increasing e, combined in its order; r = fl32(1/sqrt(ss/D + eps));
    then fl32(fl32(x r) w), w = fl32(1 + weight) with the offset. (posenc takes the root by Newton
    steps: the same float32 r unless 1/sqrt lies within 2^-50 of a float32 rounding boundary.)"""
    xf = x.astype(np.float32)
    xd = xf.astype(np.float64)
    D = x.shape[-1]
    a = [np.cumsum(xd[..., k::8] ** 2, axis=-1)[..., -1] if k < D else np.zeros(x.shape[:-1]) for k in range(8)]
    ss = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
    r = (1.0 / np.sqrt(ss * (1.0 / D) + float(np.float32(eps)))).astype(np.float32)
    wf = np.float32(1) + w if offset else w
    return (xf * r[..., None]) * wf


def rms_norm_f64(x, w, eps, offset):
    """RMSNorm in float64: x w / sqrt(mean(x^2) + eps), w the float32 weight (1 + w rounded to
    float32 with the offset: posenc's w_e)."""
    xd = x.astype(np.float64)
    wd = (np.float32(1) + w if offset else w).astype(np.float64)
    return xd * wd / np.sqrt(np.mean(xd ** 2, axis=-1, keepdims=True) + float(np.float32(eps)))


def rope_magnitude(n, c, s, d, style):
    """|n0 c| + |n1 s| (|n1 c| + |n0 s|) per rotated element, |n| past d: what its error scales with."""
    m = np.abs(n)
    c, s = np.abs(c[..., None, :]).astype(np.float64), np.abs(s[..., None, :]).astype(np.float64)
    i0, i1 = rope_pairs(d, style)
    out = m.copy()
    out[..., i0] = m[..., i0] * c + m[..., i1] * s
    out[..., i1] = m[..., i1] * c + m[..., i0] * s
    return out


def norm_weight(rng, D, offset):
    """Qwen3's weights lie around 1; Gemma's (1 + w) around 0."""
    return (rng.standard_normal(D) * 0.3 + (0.0 if offset else 1.0)).astype(np.float32)


def scaled_heads(rng, shape, dtype, decades):
    """Normal values, each head (the last axis) scaled by 10^u, |u| <= decades; one head all zeros."""
    x = rng.standard_normal(shape) * 10.0 ** rng.uniform(-decades, decades, shape[:-1] + (1,))
    x[(0,) * (len(shape) - 1)] = 0.0
    return x.astype(dtype)


QK_NORM_CASES = [  # (name, D, rotary, style, batch, Q dtype, K dtype or None, options, weight file, out-dtype)
    ('Qwen3: 128, q_norm and k_norm, GQA 8:2', 128, 128, 'neox', 0, np.float32, np.float16,
     ['--base', '1000000'], 'f32', None),
    ('Gemma 3: 256, 1 + w, bf16 weight bits, batch, bf16 out', 256, 256, 'neox', 2, np.float32, None,
     ['--base', '10000', '--qk-norm-offset', '--qk-norm-eps', '1e-6'], 'bf16', 'bf16'),
    ('partial rotary 48 of 80, gptj, f16 in, eps 1e-5, f16 weight, K f32', 80, 48, 'gptj', 0, np.float16,
     np.float32, ['--rotary-dim', '48', '--qk-norm-eps', '1e-5'], 'f16', 'f16'),
]


def save_weight(name, w, kind):
    """w (float32 values that kind holds exactly) saved as kind: <f4, <f2, or bf16 bits in <u2."""
    return save_npy(name, {'f32': w, 'f16': w.astype(np.float16), 'bf16': bf16_round(w)}[kind])


def test_apply_qk_norm(D, rotary, style, batch, q_dtype, k_dtype, opts, wkind, out):
    """--qk-norm (and --k-norm): bit for bit posenc_rope_norm's definition in NumPy float32 then the
    float32 rotation; within the rounding bound of a float64 RMSNorm + RoPE; --out-dtype T the float32
    output rounded once; the cache path alike."""
    rng = np.random.default_rng(D + rotary)
    T = 23
    lead = (batch, T) if batch else (T,)
    offset = '--qk-norm-offset' in opts
    eps = float(opts[opts.index('--qk-norm-eps') + 1]) if '--qk-norm-eps' in opts else 1e-6
    decades = 3 if q_dtype == np.float32 else 1
    x = scaled_heads(rng, lead + (8,) + (D,), q_dtype, decades)
    qw, kw = norm_weight(rng, D, offset), norm_weight(rng, D, offset)
    if wkind == 'f16':
        qw, kw = qw.astype(np.float16).astype(np.float32), kw.astype(np.float16).astype(np.float32)
    elif wkind == 'bf16':
        qw, kw = bf16_from_bits(bf16_round(qw)), bf16_from_bits(bf16_round(kw))
    p = rng.integers(0, 40000, lead)
    xp, pp = save_npy('xn.npy', x), save_npy('pn.npy', p)
    args = ['--positions', pp, '--style', style, '--qk-norm', save_weight('qw.npy', qw, wkind)] + opts
    tensors = [('X', x, qw)]
    k_path = None
    if k_dtype is not None:
        k = scaled_heads(rng, lead + (2, D), k_dtype, decades)
        k_path = save_npy('kn.npy', k)
        args += ['--k-norm', save_weight('kw.npy', kw, wkind)]
        tensors.append(('K', k, kw))
    vargs = [a for a in opts if a in ('--base', '--rotary-dim')]
    vargs = sum(([a, opts[opts.index(a) + 1]] for a in vargs), [])
    c, s = cos_sin_for(p, rotary, ['--head-dim', str(D), '--style', style] + vargs)
    got = apply(xp, args + ['--out-dtype', 'f32'], k_path=k_path)
    got = list(got) if k_path else [got]
    worst = 0.0
    for y, (what, t, w) in zip(got, tensors):
        ref = rotate_reference(rms_norm_posenc(t, w, eps, offset), c, s, rotary, style)
        assert same_bits(y, ref), f'{what}: {(y != ref).sum()} of {y.size} values differ from the NumPy float32 ' \
                                  f'posenc_rope_norm + rotation'
        n64 = rms_norm_f64(t, w, eps, offset)
        exact = rotate_reference(n64, c, s, rotary, style, work=np.float64)
        # n_e within 3 ulp, two products and a sum rounded: 8 * 2^-24 of |n0 c| + |n1 s|
        bound = 2.0 ** -21 * rope_magnitude(n64, c, s, rotary, style) + 1e-37
        err = np.abs(y - exact)
        assert (err <= bound).all(), f'{what}: {(err > bound).sum()} values beyond the float64 bound, ' \
                                     f'worst {(err / bound).max():.3g}x'
        worst = max(worst, float((err / bound).max()))
        assert not y[(0,) * (y.ndim - 1)].any(), f'{what}: a zero head must stay zero'
    if out:
        y_out = apply(xp, args + ['--out-dtype', out], k_path=k_path)
        y_out = list(y_out) if k_path else [y_out]
        for y, y32, (what, _, _) in zip(y_out, got, tensors):
            assert same_bits(y, to_dtype(y32, out)), f'{what} --out-dtype {out}: not the float32 output rounded once'
    yc = apply(xp, args + ['--out-dtype', 'f32', '--cache-rows', str(int(p.max()) + 1)], k_path=k_path)
    for y, y32 in zip(list(yc) if k_path else [yc], got):
        assert same_bits(y, y32), '--cache-rows differs from on the fly'
    return f'worst error {worst:.3f} of the float64 bound'


def test_apply_qk_norm_exact():
    """Identities that hold bit for bit: --qk-norm-offset with w is --qk-norm with fl32(1 + w); f16
    and bf16 weight files are their float32 values; Q and K normalised together are each
    normalised alone; in place (-o = --in) too."""
    rng = np.random.default_rng(31)
    T, D = 17, 64
    x = scaled_heads(rng, (T, 4, D), np.float32, 2)
    k = scaled_heads(rng, (T, 2, D), np.float16, 1)
    w, kw = norm_weight(rng, D, True), norm_weight(rng, D, True)
    xp, kp = save_npy('xe.npy', x), save_npy('ke.npy', k)
    base = ['--start', '300', '--style', 'gptj']
    one = apply(xp, base + ['--qk-norm', save_npy('we.npy', w), '--qk-norm-offset',
                            '--k-norm', save_npy('kwe.npy', kw)], k_path=kp)
    plus = apply(xp, base + ['--qk-norm', save_npy('we1.npy', np.float32(1) + w),
                             '--k-norm', save_npy('kwe1.npy', np.float32(1) + kw)], k_path=kp)
    assert same_bits(one[0], plus[0]) and same_bits(one[1], plus[1]), '--qk-norm-offset != weight fl32(1 + w)'
    alone_q = apply(xp, base + ['--qk-norm', save_npy('we1.npy', np.float32(1) + w)])
    alone_k = apply(kp, base + ['--qk-norm', save_npy('kwe1.npy', np.float32(1) + kw)])
    assert same_bits(plus[0], alone_q) and same_bits(plus[1], alone_k), 'Q and K together != each alone'
    for kind, exact in (('f16', w.astype(np.float16).astype(np.float32)), ('bf16', bf16_from_bits(bf16_round(w)))):
        got = apply(xp, base + ['--qk-norm', save_weight('wk.npy', exact, kind)])
        assert same_bits(got, apply(xp, base + ['--qk-norm', save_npy('wk32.npy', exact)])), \
            f'a {kind} weight file != its float32 values'
    xin = save_npy('xe_in.npy', x)
    run_ok(['rope', 'apply', '--in', xin, '-o', xin, '--qk-norm', save_npy('we1.npy', np.float32(1) + w)] + base)
    assert same_bits(np.load(xin), alone_q), 'in place (-o = --in)'


# ---- .npy input errors --------------------------------------------------------------------------

def npy_image(array, version=(1, 0), header=None, data=None):
    """A .npy file written by hand (any header text), padded as NumPy pads it."""
    if header is None:
        header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (array.dtype.str, array.shape)
    text = header.encode('latin1')
    prefix = 10 if version[0] == 1 else 12
    text += b' ' * ((-(prefix + len(text) + 1)) % 64) + b'\n'
    size = len(text).to_bytes(2 if version[0] == 1 else 4, 'little')
    return b'\x93NUMPY' + bytes(version) + size + text + (array.tobytes() if data is None else data)


def bad_npy_cases():
    x = np.arange(64, dtype=np.float32).reshape(4, 2, 8)
    good = npy_image(x)
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }"
    return [
        ('empty file', b'', 'magic'),
        ('7 bytes', good[:7], 'truncated'),
        ('header cut', good[:40], 'truncated'),
        ('data cut', good[:-3], 'truncated'),
        ('bad magic', b'\x93NUMPX' + good[6:], 'magic'),
        ('not npy at all', b'hello world, this is not a numpy file at all' * 3, 'magic'),
        ('version 4.0', good[:6] + b'\x04\x00' + good[8:], 'version'),
        ('version 1.1', good[:6] + b'\x01\x01' + good[8:], 'version'),
        ('header length past the end', good[:8] + b'\xff\xff' + good[10:], 'truncated'),
        ('fortran order', npy_image(x, header=hdr.replace('False', 'True') % '(4, 2, 8)'), 'Fortran'),
        ('big-endian', npy_image(x.astype('>f4')), 'big-endian'),
        ('extra data', good + b'\0\0\0\0', 'after the array'),
        ('shape larger than data', npy_image(x, header=hdr % '(5, 2, 8)'), 'truncated'),
        ('huge shape (2**62,)', npy_image(x, header=hdr % '(%d,)' % 2 ** 62), 'too large'),
        ('huge shape (2**40, 2**40, 8)', npy_image(x, header=hdr % f'({2 ** 40}, {2 ** 40}, 8)'), 'too large'),
        ('shape (2**64,)', npy_image(x, header=hdr % '(%d,)' % 2 ** 64), 'too large'),
        ('shape (2**40, 2, 8)', npy_image(x, header=hdr % '(%d, 2, 8)' % 2 ** 40), 'truncated'),
        ('missing shape', npy_image(x, header="{'descr': '<f4', 'fortran_order': False, }"), 'shape'),
        ('extra key', npy_image(x, header="{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2, 8), 'x': 1}"),
         'key'),
        ('duplicate key', npy_image(x, header="{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                                              "'shape': (4, 2, 8)}"), 'twice'),
        ('shape (64) is not a tuple', npy_image(x.reshape(64), header=hdr % '(64)'), 'tuple'),
        ('negative dim', npy_image(x, header=hdr % '(4, -2, 8)'), 'header'),
        ('leading zero', npy_image(x, header=hdr % '(04, 2, 8)'), 'header'),
        ('unquoted descr', npy_image(x, header="{'descr': f4, 'fortran_order': False, 'shape': (4, 2, 8)}"),
         'header'),
        ('no closing brace', npy_image(x, header="{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2, 8)"),
         'header'),
        ('text after the dict', npy_image(x, header=(hdr % '(4, 2, 8)') + ' x'), 'header'),
        ('fortran_order 0', npy_image(x, header="{'descr': '<f4', 'fortran_order': 0, 'shape': (4, 2, 8)}"),
         'fortran_order'),
        ('escape in a string',
         npy_image(x, header="{'descr': '<f\\x34', 'fortran_order': False, 'shape': (4, 2, 8)}"), 'header'),
        ('structured dtype', npy_image(x, header="{'descr': [('a', '<f4')], 'fortran_order': False, "
                                                 "'shape': (4, 2, 8)}"), 'structured'),
        ('33 dimensions', npy_image(x, header=hdr % ('(' + '1, ' * 33 + ')')), 'dimensions'),
        ('dtype <c8', npy_image(x, header=hdr.replace('<f4', '<c8') % '(4, 2, 4)'), 'dtype'),
        ('dtype |u1', npy_image(x.view(np.uint8), header=hdr.replace('<f4', '|u1') % '(4, 2, 32)'), 'dtype'),
        ('dtype <f8 for --in', npy_image(x.astype(np.float64)), 'dtype'),
        ('int32 tensor', npy_image(x.astype(np.int32)), 'dtype'),
        ('2-D tensor', npy_image(x.reshape(8, 8)), 'shape'),
        ('empty axis', npy_image(np.zeros((0, 2, 8), np.float32)), 'empty'),
        ('0-d array', npy_image(np.float32(1.0).reshape(())), 'shape'),
    ]


def test_bad_input_file(image, needle, sanitized_detail=False):
    path = os.path.join(WORKDIR, 'bad_in.npy')
    with open(path, 'wb') as f:
        f.write(image)
    out = os.path.join(WORKDIR, 'bad_out.npy')
    before = listing()
    proc = run(['rope', 'apply', '--in', path, '-o', out])
    assert proc.returncode == 1, f'exit {proc.returncode}: {proc.stderr.decode(errors="replace")!r}'
    assert proc.stdout == b''
    assert_one_error_line(proc.stderr, needle)
    assert '--in' in proc.stderr.decode(), 'the message must name the option'
    assert listing() == before, f'directory changed: {before} -> {listing()}'
    os.remove(path)
    return proc.stderr.decode().strip()


def bad_data_cases():
    """(what, argv builder, text the message must contain): input files that are valid .npy but wrong."""
    def x():
        return ['--in', save_npy('dx.npy', np.zeros((5, 2, 8), np.float32))]

    def npy(name, values, dtype=None):
        return save_npy(name, np.asarray(values, dtype=dtype))

    def k_out():
        return ['--k-out', os.path.join(WORKDIR, 'dk_out.npy')]

    longrope = ['--scaling', 'longrope', '--factor', '4', '--original-max-pos', '16']
    return [
        ('int64 position past int32', lambda: x() + ['--positions', npy('dp.npy', [0, 1, 2 ** 31, 3, 4])],
         '2147483648'),
        ('int64 position below -int32 max',
         lambda: x() + ['--positions', npy('dp.npy', [0, -2 ** 31, 1, 2, 3])], 'position'),
        ('float positions', lambda: x() + ['--positions', npy('dp.npy', np.zeros(5), np.float32)], 'dtype'),
        ('positions shape', lambda: x() + ['--positions', npy('dp.npy', np.zeros(4), np.int32)], 'shape'),
        ('positions batch mismatch', lambda: x() + ['--positions', npy('dp.npy', np.zeros((2, 5)), np.int32)],
         'shape'),
        ('M-RoPE positions not (3, T)',
         lambda: x() + ['--mrope-section', '2,1,1', '--positions', npy('dp.npy', np.zeros(5), np.int32)],
         '(3, 5)'),
        ('position outside --cache-rows',
         lambda: x() + ['--cache-rows', '10', '--positions', npy('dp.npy', [0, 1, 10, 2, 3])], 'cache'),
        ('negative position with --cache-rows',
         lambda: x() + ['--cache-rows', '10', '--positions', npy('dp.npy', [0, -1, 1, 2, 3])], 'cache'),
        ('K head dim mismatch', lambda: x() + ['--k', npy('dk.npy', np.zeros((5, 1, 6)), np.float32)] + k_out(),
         'head dim'),
        ('K tokens mismatch', lambda: x() + ['--k', npy('dk.npy', np.zeros((4, 1, 8)), np.float32)] + k_out(),
         'tokens'),
        ('missing --in file', lambda: ['--in', os.path.join(WORKDIR, 'no-such.npy')], 'no-such.npy'),
        ('--in is a directory', lambda: ['--in', WORKDIR], WORKDIR),
        ('factor list too short', lambda: x() + ['--freq-factors', npy('df.npy', np.ones(3), np.float32)], '(4,)'),
        ('factor list 2-D', lambda: x() + ['--freq-factors', npy('df.npy', np.ones((1, 4)), np.float32)], 'shape'),
        ('factor zero', lambda: x() + ['--freq-factors', npy('df.npy', [1, 0, 1, 1], np.float32)],
         'greater than 0'),
        ('factor NaN', lambda: x() + ['--freq-factors', npy('df.npy', [1, np.nan, 1, 1], np.float32)], 'finite'),
        ('factor f8 overflowing f32', lambda: x() + ['--freq-factors', npy('df.npy', [1, 1e300, 1, 1])], 'finite'),
        ('longrope short list bad',
         lambda: x() + longrope + ['--short-factor', npy('df.npy', np.ones(5), np.float32),
                                   '--long-factor', npy('df2.npy', np.ones(4), np.float32)], '--short-factor'),
        ('int positions for table',
         lambda: ['table', '--head-dim', '8', '--positions', npy('dp.npy', np.zeros((2, 2)), np.int32)], 'shape'),
        ('table --rows vs --positions',
         lambda: ['table', '--head-dim', '8', '--rows', '3', '--positions', npy('dp.npy', np.zeros(4), np.int32)],
         '--rows'),
        ('norm weight too short', lambda: x() + ['--qk-norm', npy('dw.npy', np.ones(7), np.float32)], '(8,)'),
        ('norm weight 2-D', lambda: x() + ['--qk-norm', npy('dw.npy', np.ones((1, 8)), np.float32)], 'shape'),
        ('norm weight float64', lambda: x() + ['--qk-norm', npy('dw.npy', np.ones(8))], 'astype(np.float32)'),
        ('norm weight int32', lambda: x() + ['--qk-norm', npy('dw.npy', np.ones(8), np.int32)], 'dtype'),
        ('norm weight NaN', lambda: x() + ['--qk-norm', npy('dw.npy', [1, 1, np.nan, 1, 1, 1, 1, 1], np.float32)],
         'finite'),
        ('norm weight inf (f16)', lambda: x() + ['--qk-norm', npy('dw.npy', [1] * 7 + [np.inf], np.float16)],
         'finite'),
        ('norm weight inf (bf16 bits)', lambda: x() + ['--qk-norm', npy('dw.npy', [0x3f80] * 7 + [0x7f80], np.uint16)],
         'finite'),
        ('K norm weight shape',
         lambda: x() + ['--k', npy('dk.npy', np.zeros((5, 1, 8)), np.float32)] + k_out() +
         ['--qk-norm', npy('dw.npy', np.ones(8), np.float32), '--k-norm', npy('dw2.npy', np.ones(4), np.float32)],
         '--k-norm'),
        ('missing norm weight file', lambda: x() + ['--qk-norm', os.path.join(WORKDIR, 'no-such-w.npy')],
         'no-such-w.npy'),
        ('table empty positions',
         lambda: ['table', '--head-dim', '8', '--positions', npy('dp.npy', np.zeros(0), np.int32)], 'non-empty'),
    ]


def test_bad_data(build, needle):
    args = build()
    if args[0] != 'table':
        args = ['apply'] + args
    out = os.path.join(WORKDIR, 'bad_out.npy')
    before = listing()
    proc = run(['rope'] + args + ['-o', out])
    assert proc.returncode == 1, f'exit {proc.returncode}: {proc.stderr.decode(errors="replace")!r}'
    assert proc.stdout == b''
    assert_one_error_line(proc.stderr, needle)
    assert listing() == before, f'directory changed: {before} -> {listing()}'
    return proc.stderr.decode().strip()


# ---- rope usage errors --------------------------------------------------------------------------------

R = ['rope']
FQ = ['rope', 'freqs', '--head-dim', '64']
TB = ['rope', 'table', '--head-dim', '64', '--rows', '4']
ROPE_USAGE_ERRORS = [  # (argv, text the message must contain); run with -o FILE and on stdout
    (R, 'missing the rope command'),
    (R + ['spin'], 'spin'),
    (['rope', 'freqs'], '--head-dim'),
    (['rope', 'table', '--head-dim', '64'], '--rows'),
    (['rope', 'apply'], '--in'),
    (FQ + ['--rows', '4'], '--rows'),
    (FQ + ['--layout', 'half'], '--layout'),
    (FQ + ['--dtype', 'f16'], '--dtype'),
    (FQ + ['--format', 'c'], '--format'),
    (TB + ['--format', 'text'], '--format'),
    (TB + ['--name', 'cache'], '--format c'),
    (FQ + ['--name', 'cache'], '--name'),
    (TB + ['--format', 'c', '--name', '1abc'], '--name'),
    (TB + ['--format', 'c', '--name', 'static'], '--name'),
    (TB + ['--format', 'c', '--name', 'a__b'], '--name'),
    (TB + ['--format', 'c', '--name', ''], '--name'),
    (['rope', 'table', '--head-dim', '64', '--positions', 'p.npy', '--format', 'c'], '--positions'),
    (TB + ['--format', 'c', '--freq-factors', 'a b.npy'], '--freq-factors'),
    (TB + ['--format', 'c', '--freq-factors', 'x*/y.npy'], '--freq-factors'),
    (['rope', 'apply', '--in', 'x.npy', '--dtype', 'f16'], '--dtype'),
    (['rope', 'apply', '--in', 'x.npy', '--rows', '3'], '--rows'),
    (['table', 'sinusoidal', '--positions', '4', '--dim', '8', '--head-dim', '8'], '--head-dim'),
    (['--head-dim', '8', 'rope', 'freqs'], '--head-dim'),
    (['--layout', 'half', 'rope', 'table', '--head-dim', '8', '--rows', '2'], '--layout'),
    (['rope', 'freqs', '--head-dim', '1'], "--head-dim '1': must be at least 2"),
    (['rope', 'freqs', '--head-dim', '0'], "--head-dim '0': must be at least 2"),
    (['rope', 'freqs', '--head-dim', 'x'], '--head-dim'),
    (['rope', 'freqs', '--head-dim', '7'], 'even'),
    (['rope', 'freqs', '--head-dim', '1024'], '512'),
    (FQ + ['--rotary-dim', '65'], '--rotary-dim'),
    (FQ + ['--rotary-dim', '128'], '--rotary-dim'),
    (FQ + ['--rotary-dim', '31'], 'even'),
    (FQ + ['--base', '0'], '--base'),
    (FQ + ['--base', '-1'], '--base'),
    (FQ + ['--base', '1e31'], '--base'),
    (FQ + ['--base', 'nan'], '--base'),
    (FQ + ['--style', 'half'], '--style'),
    (FQ + ['--style', 'interleaved'], '--style'),
    (FQ + ['--scaling', 'su'], '--scaling'),
    (FQ + ['--scaling', 'linear'], '--factor'),
    (FQ + ['--scaling', 'linear', '--factor', '0'], '--factor'),
    (FQ + ['--scaling', 'linear', '--factor', '-2'], '--factor'),
    (FQ + ['--scaling', 'linear', '--factor', 'inf'], '--factor'),
    (FQ + ['--factor', '2'], '--factor'),
    (FQ + ['--scaling', 'yarn', '--factor', '4'], '--original-max-pos'),
    (FQ + ['--scaling', 'yarn', '--factor', '4', '--original-max-pos', '0'], '--original-max-pos'),
    (FQ + ['--scaling', 'yarn', '--factor', '4', '--original-max-pos', '4294967296'], '--original-max-pos'),
    (FQ + ['--scaling', 'linear', '--factor', '4', '--beta-fast', '8'], 'yarn'),
    (FQ + ['--scaling', 'yarn', '--factor', '4', '--original-max-pos', '64', '--beta-fast', '-1'], '--beta-fast'),
    (FQ + ['--scaling', 'yarn', '--factor', '4', '--original-max-pos', '64', '--mscale', '-1'], '--mscale'),
    # derived values: ln(base) = 0 for YaRN's correction range; an attention factor of 1.2e299
    (FQ + ['--scaling', 'yarn', '--factor', '4', '--original-max-pos', '64', '--base', '1'], 'range'),
    (FQ + ['--scaling', 'yarn', '--factor', '4', '--original-max-pos', '64', '--mscale', '1e300',
           '--mscale-all-dim', '1'], 'range'),
    (FQ + ['--low-freq-factor', '2'], 'llama3'),
    (FQ + ['--scaling', 'llama3', '--factor', '8', '--original-max-pos', '8192', '--low-freq-factor', '4'],
     '--high-freq-factor'),
    (FQ + ['--scaling', 'llama3', '--factor', '8', '--original-max-pos', '8192', '--high-freq-factor', '0'],
     '--high-freq-factor'),
    (FQ + ['--seq-len', '100'], 'dynamic or longrope'),
    (FQ + ['--scaling', 'dynamic', '--factor', '2', '--original-max-pos', '64', '--seq-len', '0'], '--seq-len'),
    (FQ + ['--qwen-alpha'], 'dynamic'),
    (FQ + ['--scaling', 'dynamic', '--original-max-pos', '64', '--qwen-alpha', '--factor', '2'], '--factor'),
    (FQ + ['--scaling', 'dynamic', '--original-max-pos', '64', '--qwen-alpha=yes'], '--qwen-alpha'),
    (['rope', 'freqs', '--head-dim', '2', '--scaling', 'ntk', '--factor', '2'], 'at least 4'),
    (FQ + ['--scaling', 'longrope', '--factor', '4', '--original-max-pos', '64'], '--short-factor'),
    (FQ + ['--short-factor', 'f.npy'], 'longrope'),
    (FQ + ['--attention-factor', '0'], '--attention-factor'),
    (FQ + ['--attention-factor', '1e31'], '--attention-factor'),
    (FQ + ['--scaling', 'linear', '--factor', '1e301'], '--factor'),
    (FQ + ['--scaling', 'longrope', '--factor', '4', '--original-max-pos', '1', '--short-factor', 'f.npy',
           '--long-factor', 'f.npy'], '--original-max-pos'),
    (FQ + ['--mrope-section', '10,10,10'], '--mrope-section'),
    (FQ + ['--mrope-section', '16,16'], '--mrope-section'),
    (FQ + ['--mrope-section', '16,16,0,0'], '--mrope-section'),
    (FQ + ['--mrope-section', '16,,16'], '--mrope-section'),
    (FQ + ['--mrope-section', '-1,17,16'], '--mrope-section'),
    (FQ + ['--mrope-interleaved'], '--mrope-section'),
    (FQ + ['--freq-factors', 'f.npy', '--hf-compat'], '--hf-compat'),
    (FQ + ['--hf-compat', '--hf-compat'], 'twice'),
    (TB + ['--start', '1', '--positions', 'p.npy'], '--positions'),
    (TB + ['--start', '2147483645'], '--start'),
    (TB + ['--start', '-2147483648'], '--start'),
    (TB + ['--layout', 'split'], '--layout'),
    (TB + ['--dtype', 'f64'], '--dtype'),
    (['rope', 'table', '--head-dim', '64', '--rows', '0'], '--rows'),
    (['rope', 'table', '--head-dim', '64', '--rows', '2147483649'], '--rows'),
    (TB + ['--base', '1e-30'], '--start'),
    (['rope', 'apply', '--in', ''], '--in'),
    (['rope', 'apply', '--in', 'x.npy', '--k', 'k.npy'], '--k-out'),
    (['rope', 'apply', '--in', 'x.npy', '--k-out', 'k.npy'], '--k'),
    (['rope', 'apply', '--in', 'x.npy', '--layout', 'full'], '--cache-rows'),
    (['rope', 'apply', '--in', 'x.npy', '--cache-rows', '0'], '--cache-rows'),
    (['rope', 'apply', '--in', 'x.npy', '--start', '0', '--positions', 'p.npy'], '--positions'),
    (['rope', 'apply', '--in', 'x.npy', '--inverse=1'], '--inverse'),
    (['rope', 'apply', '--in', 'x.npy', '--out-dtype', 'f64'], '--out-dtype'),
    (['rope', 'apply', '--in', 'x.npy', '--out-dtype', ''], '--out-dtype'),
    (TB + ['--out-dtype', 'f16'], '--out-dtype'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', ''], '--qk-norm'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--qk-norm-eps', '0'], 'greater than 0'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--qk-norm-eps', '-1e-6'], '--qk-norm-eps'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--qk-norm-eps', 'nan'], '--qk-norm-eps'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--qk-norm-eps', 'inf'], '--qk-norm-eps'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--qk-norm-eps', '1e39'], '--qk-norm-eps'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--qk-norm-eps', '1e-50'], 'rounds to 0'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--qk-norm-eps', ''], '--qk-norm-eps'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm-eps', '1e-6'], '--qk-norm'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm-offset'], '--qk-norm'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--qk-norm-offset=1'], '--qk-norm-offset'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--inverse'], '--inverse'),
    (['rope', 'apply', '--in', 'x.npy', '--k-norm', 'w.npy'], '--qk-norm'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--k-norm', 'w.npy'], '--k'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--k-norm', ''], '--k-norm'),
    (['rope', 'apply', '--in', 'x.npy', '--qk-norm', 'w.npy', '--k', 'k.npy', '--k-out', 'ko.npy'], '--k-norm'),
    (TB + ['--qk-norm', 'w.npy'], '--qk-norm'),
]


def rope_file_args(args, path):
    """args with -o path right after the rope command word, where it cannot be taken as a value."""
    if args[:1] == ['rope'] and len(args) >= 2 and not args[1].startswith('-'):
        return args[:2] + ['-o', path] + args[2:]
    return args + ['-o', path]


def test_rope_bad_args(args, needle, mode):
    path = os.path.join(WORKDIR, 'target.out')
    before = listing()
    proc = run(args if mode == 'stdout' else rope_file_args(args, path))
    assert proc.returncode == 2, f'exit {proc.returncode}, expected 2: {proc.stderr.decode()!r}'
    assert proc.stdout == b'', f'stdout not empty: {proc.stdout[:80]!r}'
    assert_one_error_line(proc.stderr, needle)
    assert listing() == before, f'directory changed: {before} -> {listing()}'
    return proc.stderr.decode().strip()


def test_rope_usage_from_input():
    """Options that disagree with --in are usage errors too (exit 2), and nothing is written."""
    xp = save_npy('ux.npy', np.zeros((3, 1, 16), np.float32))
    out = os.path.join(WORKDIR, 'uy.npy')
    for args, needle in ((['--head-dim', '32'], '--head-dim'), (['--rotary-dim', '18'], '--rotary-dim'),
                         (['--mrope-section', '2,2,2'], '--mrope-section'),
                         (['--start', '2147483647'], '--start'),
                         (['--cache-rows', '4', '--start', '2'], '--cache-rows'),
                         (['--k', xp, '--k-out', out], 'same file'),
                         (['--k', xp, '--k-out', '-'], 'standard output')):
        before = listing()
        proc = run(['rope', 'apply', '--in', xp] + ([] if args[-1] == '-' else ['-o', out]) + args)
        assert proc.returncode == 2, f'{args}: exit {proc.returncode}: {proc.stderr!r}'
        assert_one_error_line(proc.stderr, needle)
        assert listing() == before, f'{args}: directory changed'


def test_rope_outputs_one_file_two_names():
    """-o and --k-out naming one file in two ways (./name, a hard link, a symbolic link) fail before
    anything is written: otherwise both are written and the last rename wins."""
    xp = save_npy('nx.npy', np.ones((3, 1, 8), np.float32))
    q_out = os.path.join(WORKDIR, 'nq.npy')
    hard, soft = os.path.join(WORKDIR, 'nh.npy'), os.path.join(WORKDIR, 'ns.npy')
    for k_out in (os.path.join(WORKDIR, '.', 'nq.npy'), os.path.join(WORKDIR, 'sub', '..', 'nq.npy')):
        os.makedirs(os.path.join(WORKDIR, 'sub'), exist_ok=True)
        before = listing()
        proc = run(['rope', 'apply', '--in', xp, '--k', xp, '--k-out', k_out, '-o', q_out])
        assert proc.returncode == 1, f'{k_out}: exit {proc.returncode}: {proc.stderr!r}'
        assert_one_error_line(proc.stderr, 'same file')
        assert listing() == before, f'{k_out}: directory changed: {before} -> {listing()}'
        os.rmdir(os.path.join(WORKDIR, 'sub'))
    with open(q_out, 'wb') as f:
        f.write(b'precious')
    os.link(q_out, hard)
    os.symlink(q_out, soft)
    for k_out in (hard, soft):
        proc = run(['rope', 'apply', '--in', xp, '--k', xp, '--k-out', k_out, '-o', q_out])
        assert proc.returncode == 1, f'{k_out}: exit {proc.returncode}: {proc.stderr!r}'
        assert_one_error_line(proc.stderr, 'same file')
        with open(q_out, 'rb') as f:
            assert f.read() == b'precious', f'{k_out}: output replaced'
    # two different files still work
    proc = run(['rope', 'apply', '--in', xp, '--k', xp, '--k-out', os.path.join(WORKDIR, 'nk.npy'), '-o', q_out])
    assert proc.returncode == 0, proc.stderr
    for path in (q_out, hard, soft, os.path.join(WORKDIR, 'nk.npy')):
        os.remove(path)


def test_rope_outputs_all_or_nothing():
    """-o and --k-out: when K's output cannot be written, Q's file is not created either."""
    xp = save_npy('ax.npy', np.ones((3, 1, 8), np.float32))
    q_out = os.path.join(WORKDIR, 'aq.npy')
    k_out = os.path.join(WORKDIR, 'no-such-dir', 'ak.npy')
    before = listing()
    proc = run(['rope', 'apply', '--in', xp, '--k', xp, '--k-out', k_out, '-o', q_out])
    assert proc.returncode == 1, f'exit {proc.returncode}'
    assert_one_error_line(proc.stderr, k_out)
    assert listing() == before, f'directory changed: {before} -> {listing()}'
    with open(q_out, 'wb') as f:
        f.write(b'precious')
    proc = run(['rope', 'apply', '--in', xp, '--k', xp, '--k-out', k_out, '-o', q_out])
    assert proc.returncode == 1
    with open(q_out, 'rb') as f:
        assert f.read() == b'precious', 'Q output replaced although K failed'
    os.remove(q_out)
    # and --in may be its own output: read whole before anything is written
    y = apply(xp, ['--start', '5'])
    run_ok(['rope', 'apply', '--in', xp, '-o', xp, '--start', '5'])
    assert same_bits(np.load(xp), y), 'in-place (-o = --in)'


def test_rope_help():
    text = run_ok(['rope', '--help']).decode()
    for needle in ('rope freqs', 'rope table', 'rope apply', '--style', '--scaling', '--hf-compat', '<u2',
                   '--cache-rows', '--mrope-section', '--positions', '--k-out', 'Exit status'):
        assert needle in text, f'{needle!r} missing from rope --help'
    for sub, needle in (('freqs', 'float64'), ('table', '--rows'), ('table', '--name IDENT'),
                        ('apply', '--inverse'), ('apply', '--out-dtype'), ('apply', '--qk-norm W.npy'),
                        ('apply', '--k-norm KW.npy'), ('apply', '--qk-norm-eps E'), ('apply', '--qk-norm-offset')):
        t = run_ok(['rope', sub, '--help']).decode()
        assert t.startswith(f'Usage: posenc rope {sub}') and needle in t and '--scaling' in t, sub
    assert 'rope' in run_ok(['--help']).decode()


# ---- driver -----------------------------------------------------------------------------------------

def run_rope_cases(results, available_isas):
    for name, d, opts, ref_kwargs, extra in freqs_cases():
        results.case(f'rope freqs {name}', check_freqs, d, opts, ref_kwargs, extra)
    results.case('rope freqs --rotary-dim', test_freqs_rotary_partial)
    results.case('rope freqs yarn: formulas.md ranges and mscale', test_yarn_reference_ranges)
    results.case('rope freqs llama3: formulas.md values', test_llama3_reference_values)
    results.case('rope freqs longrope: formulas.md attention factor', test_longrope_attention)
    for name, d, opts, ref_kwargs, extra in TABLE_CASES:
        for max_p in (1 << 20, 1 << 24):
            results.case(f'rope table accuracy {name} half p<2^{max_p.bit_length() - 1}', test_table_accuracy,
                         d, opts, ref_kwargs, extra, 'half', max_p)
    for layout in ('full', 'interleaved'):
        results.case(f'rope table accuracy default {layout}', test_table_accuracy, 64, {}, {}, (), layout, 1 << 24)
    results.case('rope table linear 3 at p = 13702237', test_table_linear3_point)
    results.case('rope table: range == list, layouts, styles', test_table_range_equals_list)
    results.case('rope table == split sinusoidal table', test_table_equals_sinusoidal)
    for dtype in ('f16', 'bf16'):
        results.case(f'rope table --dtype {dtype}', test_table_half_precision, dtype)
    results.case('rope table -o FILE == stdout', test_table_stdout_equals_file)
    for label, opts, dtype, layout, rows, start, name in rope_c_header_cases():
        results.case(f'rope table --format c: {label} {dtype} {layout}', test_rope_c_header,
                     opts, dtype, layout, rows, start, name)
    results.case('check_baked.py catches a stale header', test_baked_example_fails_on_wrong_table)
    for isa in available_isas:
        results.case(f'rope --isa {isa} identical', test_rope_isa_identical, isa)
    for d in (64, 128):
        for base in (10000.0, 500000.0, 1e6):
            results.case(f'hf-compat inv_freq d={d} base {base:g}', test_hf_inv_freq, d, base)
    for d, base, scaling, factor, L, n in ((128, 10000.0, 'none', None, None, 131072),
                                           (64, 1e6, 'none', None, None, 131072),
                                           (128, 500000.0, 'llama3', 8.0, 8192, 32768),
                                           (128, 10000.0, 'yarn', 4.0, 4096, 32768),
                                           (64, 10000.0, 'linear', 4.0, None, 32768)):
        results.case(f'hf-compat cache d={d} base {base:g} {scaling} p<{n}', test_hf_cache,
                     d, base, scaling, factor, L, n)
    for d, base in ((128, 10000.0), (64, 1e6)):
        results.case(f'hf-compat vs plain numpy port (numpy pow) d={d} base {base:g}',
                     test_hf_numpy_pow_agreement, d, base)
    for d, base in ((128, 10000.0), (128, 500000.0)):
        results.case(f'contrast: float32 HF vs exact d={d} base {base:g}', test_hf_vs_exact_contrast, d, base)
    yarn = variant_args(scaling='yarn', factor=8.0, L=1024)
    llama3 = variant_args(base=500000.0, scaling='llama3', factor=8.0, L=8192)
    for style, dtype, head, rotary, variant in (('neox', np.float32, 64, 64, ()), ('gptj', np.float32, 64, 64, ()),
                                                ('neox', np.float32, 80, 48, ()), ('gptj', np.float16, 64, 32, ()),
                                                ('neox', np.float16, 128, 128, yarn),
                                                ('neox', np.float32, 128, 128, llama3),
                                                ('gptj', np.float32, 96, 96, ('--attention-factor', '0.5'))):
        results.case(f'rope apply {style} {np.dtype(dtype).name} head {head} rotary {rotary} {" ".join(variant)}',
                     test_apply_basic, style, dtype, head, rotary, variant)
    results.case('rope apply large and negative positions', test_apply_large_positions)
    results.case('rope apply runs of consecutive positions, d=512, f16', test_apply_runs)
    results.case('rope apply --start, stdout', test_apply_start_and_stdout)
    results.case('rope apply GQA --k', test_apply_gqa)
    results.case('rope apply batch, (tokens,) positions', test_apply_batch, False)
    results.case('rope apply batch, (batch, tokens) positions', test_apply_batch, True)
    for interleaved in (False, True):
        for batched in (False, True):
            results.case(f'rope apply M-RoPE interleaved={interleaved} batched={batched}', test_apply_mrope,
                         interleaved, batched)
    results.case('rope apply --hf-compat', test_apply_hf_compat)
    results.case('rope apply .npy versions 2.0/3.0 and header spellings', test_apply_npy_versions)
    for in_dtype, style in ((np.float32, 'neox'), (np.float16, 'gptj')):
        results.case(f'rope apply --out-dtype from {np.dtype(in_dtype).name} ({style})', test_apply_out_dtype,
                     in_dtype, style)
    for case in QK_NORM_CASES:
        results.case(f'rope apply --qk-norm {case[0]}', test_apply_qk_norm, *case[1:])
    results.case('rope apply --qk-norm: exact identities (offset, weight dtypes, Q/K alone, in place)',
                 test_apply_qk_norm_exact)
    for name, image, needle in bad_npy_cases():
        results.case(f'bad .npy --in: {name}', test_bad_input_file, image, needle)
    for name, build, needle in bad_data_cases():
        results.case(f'bad input data: {name}', test_bad_data, build, needle)
    for args, needle in ROPE_USAGE_ERRORS:
        for mode in ('stdout', 'new'):
            results.case(f'rope usage error ({mode}): {shlex.join(args)}', test_rope_bad_args, args, needle, mode)
    results.case('rope apply: options vs --in are usage errors', test_rope_usage_from_input)
    results.case('rope apply: outputs all-or-nothing, in place', test_rope_outputs_all_or_nothing)
    results.case('rope apply: -o and --k-out naming one file twice', test_rope_outputs_one_file_two_names)
    results.case('rope help', test_rope_help)
    for d, base, scaling, n, same, worst in HF_FIGURES:
        print(f'figure: hf-compat d={d} base {base:g} {scaling} p<{n}: {same:.2f}% bit-identical with numpy '
              f'float32 cos/sin, max {worst} ulp; 100% with the correctly rounded cos/sin of the float angle')
    for d, base, e_hf, e_hfc, e_ex in CONTRAST:
        print(f'figure: p<131072 d={d} base {base:g}: max |error| vs exact: numpy float32 HF {e_hf:.3g}, '
              f'posenc --hf-compat {e_hfc:.3g}, posenc default {e_ex:.3g}')



# ---- issue 4: table --freqs / learned / sincos2d, embed, analyze ---------------------------------

def table_npy(args):
    return load_npy(run_ok(['table'] + args))


def test_table_freq_rule(rule, n, d, base, min_ts):
    """fairseq: w_i = base^(-i/(h-1)); t2t: w_i = m (base/m)^(-i/(h-1)); split [sin | cos] tables
    within f32 rounding of a float64 reference (positions < 200: the reference is exact enough)."""
    extra = ['--freqs', rule, '--layout', 'split'] + (['--min-timescale', str(min_ts)] if min_ts else [])
    got = table_npy(['sinusoidal', '--positions', str(n), '--dim', str(d), '--base', str(base)] + extra)
    h = d // 2
    m = min_ts or 1.0
    i = np.arange(h, dtype=np.float64)
    omega = base ** (-i / (h - 1)) if rule == 'fairseq' else m * (base / m) ** (-i / max(h - 1, 1))
    ang = np.arange(n, dtype=np.float64)[:, None] * omega[None, :]
    ref = np.zeros((n, d))
    ref[:, :h], ref[:, h:2 * h] = np.sin(ang), np.cos(ang)
    err = np.abs(got.astype(np.float64) - ref).max()
    assert got.shape == (n, d) and got.dtype == np.float32
    assert err <= 6e-8, f'max error {err:.3g}'
    if rule == 'fairseq':  # the last frequency is exactly 1/base: row 1's last sin is sin(1/base)
        assert abs(float(got[1, h - 1]) - math.sin(1.0 / base)) <= 3e-8 * max(1.0, abs(math.sin(1.0 / base)))
    return f'max error {err:.2g}'


def test_table_freqs_default_and_header():
    base = run_ok(table_args(9, 10))
    assert run_ok(table_args(9, 10, extra=['--freqs', 'vaswani'])) == base, '--freqs vaswani is the default'
    assert run_ok(table_args(9, 10, extra=['--freqs', 'fairseq'])) != base
    text = run_ok(table_args(3, 8, fmt='c', extra=['--freqs', 't2t', '--min-timescale', '2'])).decode()
    assert '--freqs t2t --min-timescale 2' in text, 'provenance lacks the frequency rule'


def test_table_learned():
    a = table_npy(['learned', '--rows', '4096', '--dim', '64', '--seed', '7'])
    assert a.shape == (4096, 64) and a.dtype == np.float32
    std = math.sqrt(1 / 64)
    assert np.abs(a).max() <= 2 * std * (1 + 1e-6), 'a value beyond 2 std'
    # truncated at +-2 sigma: std 0.8796 sigma, mean 0
    assert abs(a.std() / std - 0.8796) < 0.01, f'std ratio {a.std() / std:.4f}'
    assert abs(a.mean()) < 0.005 * std * 10, f'mean {a.mean():.3g}'
    again = table_npy(['learned', '--rows', '4096', '--dim', '64', '--seed', '7'])
    assert same_bits(a, again), 'not deterministic'
    fewer = table_npy(['learned', '--rows', '10', '--dim', '64', '--seed', '7'])
    assert same_bits(fewer, a[:10]), 'a shorter table is not a prefix'
    other = table_npy(['learned', '--rows', '10', '--dim', '64', '--seed', '8'])
    assert not np.array_equal(other, fewer), 'the seed is ignored'
    wide = table_npy(['learned', '--rows', '2000', '--dim', '8', '--seed', '7', '--std', '0.02'])
    assert np.abs(wide).max() <= 0.04 * (1 + 1e-6) and abs(wide.std() / 0.02 - 0.8796) < 0.02, '--std'
    bf = table_npy(['learned', '--rows', '10', '--dim', '64', '--seed', '7', '--dtype', 'bf16'])
    assert bf.dtype == np.uint16
    assert np.abs(bf16_from_bits(bf) - fewer).max() <= np.abs(fewer).max() * 2.0 ** -8, 'bf16 != rounded f32'


def mae_2d(d, gh, gw, cls):
    """MAE's get_2d_sincos_pos_embed, in float64."""
    def one_d(dim, pos):
        omega = 1.0 / 10000 ** (np.arange(dim // 2, dtype=np.float64) / (dim / 2.0))
        out = np.einsum('m,d->md', pos.reshape(-1), omega)
        return np.concatenate([np.sin(out), np.cos(out)], axis=1)
    grid = np.meshgrid(np.arange(gw, dtype=np.float64), np.arange(gh, dtype=np.float64))  # w first
    grid = np.stack(grid, axis=0).reshape([2, 1, gh, gw])
    emb = np.concatenate([one_d(d // 2, grid[0]), one_d(d // 2, grid[1])], axis=1)
    return np.concatenate([np.zeros([1, d]), emb], axis=0) if cls else emb


def test_table_sincos2d(d, gh, gw, cls):
    got = table_npy(['sincos2d', '--dim', str(d), '--grid', f'{gh}x{gw}'] + (['--cls-token'] if cls else []))
    ref = mae_2d(d, gh, gw, cls)
    assert got.shape == ref.shape, f'shape {got.shape} != {ref.shape}'
    err = np.abs(got - ref).max()
    assert err <= 6e-8, f'max error {err:.3g}'
    if cls:
        assert not got[0].any(), 'cls row not zero'
    return f'max error {err:.2g}'


TL = ['table', 'learned']
TG = ['table', 'sincos2d']
ISSUE4_USAGE_ERRORS = [
    (T + P4D8 + ['--freqs', 'bogus'], '--freqs'),
    (T + P4D8 + ['--min-timescale', '2'], '--min-timescale'),
    (T + P4D8 + ['--freqs', 't2t', '--min-timescale', '0'], '--min-timescale'),
    (T + ['--positions', '4', '--dim', '2', '--freqs', 'fairseq'], '--dim'),
    (TL + ['--dim', '8', '--seed', '1'], '--rows'),
    (TL + ['--rows', '4', '--seed', '1'], '--dim'),
    (TL + ['--rows', '4', '--dim', '8'], '--seed'),
    (TL + ['--rows', '4', '--dim', '8', '--seed', '-1'], '--seed'),
    (TL + ['--rows', '4', '--dim', '8', '--seed', '18446744073709551616'], '--seed'),
    (TL + ['--rows', '4', '--dim', '8', '--seed', '1', '--init', 'xavier'], '--init'),
    (TL + ['--rows', '4', '--dim', '8', '--seed', '1', '--std', '-1'], '--std'),
    (TL + ['--rows', '4', '--dim', '8', '--seed', '1', '--positions', '4'], '--positions'),
    (TG + ['--dim', '8'], '--grid'),
    (TG + ['--dim', '6', '--grid', '2x2'], '--dim'),
    (TG + ['--dim', '8', '--grid', '2x'], '--grid'),
    (TG + ['--dim', '8', '--grid', '0x3'], '--grid'),
    (TG + ['--dim', '8', '--grid', '2*3'], '--grid'),
    (TG + ['--dim', '8', '--grid', '2x2', '--start', '1'], '--start'),
    (['analyze'], 'missing the table file'),
    (['analyze', 'a.npy', 'b.npy'], 'b.npy'),
    (['analyze', 'a.npy', '--top', '0'], '--top'),
]


def test_issue4_usage(args, needle):
    before = listing()
    proc = run(args)
    assert proc.returncode == 2, f'exit {proc.returncode}: {proc.stderr.decode()!r}'
    assert proc.stdout == b''
    assert_one_error_line(proc.stderr, needle)
    assert listing() == before


# -- embed

def embed_run(args, out_name='ey.npy'):
    out = os.path.join(WORKDIR, out_name)
    run_ok(['embed'] + args + ['-o', out])
    y = np.load(out)
    os.remove(out)
    return y


def embed_reference(x, P, pos, pad, scale):
    """y = fl32(fl32(x * scale) + P[pos]); padding rows +0.0 (numpy float32: two roundings)."""
    y = (x.astype(np.float32) * np.float32(scale)).astype(np.float32) + P[pos].astype(np.float32)
    y[pad] = 0.0
    return y


def embed_inputs(B, T, D, n_rows, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((B, T, D)).astype(np.float32)
    P = rng.standard_normal((n_rows, D)).astype(np.float32)
    ids = rng.integers(2, 50, size=(B, T)).astype(np.int64)
    ids[0, -2:] = 1                      # right padding
    if B > 1:
        ids[1, :3] = 1                   # left padding
    return x, P, ids


def test_embed_modes(mode):
    B, T, D, N, pad_id = 3, 7, 16, 40, 1
    x, P, ids = embed_inputs(B, T, D, N, 11)
    xp, pp, ip = save_npy('ex.npy', x), save_npy('eP.npy', P), save_npy('eids.npy', ids)
    real = ids != pad_id
    args = ['--in', xp, '--ids', ip, '--padding-id', str(pad_id), '--table', pp, '--positions', mode]
    if mode == 'range':
        pos = np.broadcast_to(np.arange(T) + 5, (B, T)); args += ['--start', '5']
    elif mode == 'cumsum':
        pos = np.where(real, 2 + np.cumsum(real, axis=1) - 1, 0); args += ['--start', '2']
    elif mode == 'fairseq':
        pos = np.where(real, np.cumsum(real, axis=1) + pad_id, pad_id)
    else:
        pos = np.random.default_rng(3).integers(0, N, size=(B, T)).astype(np.int32)
        args += ['--pos-ids', save_npy('epos.npy', pos)]
    y = embed_run(args + ['--scale', '1.5'])
    ref = embed_reference(x, P, pos, ~real, 1.5)
    assert same_bits(y, ref), f'max diff {np.abs(y - ref).max():.3g}'
    assert not y[~real].any() and not np.signbit(y[~real]).any(), 'padding rows must be +0.0'
    default = embed_run(args)  # scale fl32(sqrt(D))
    assert same_bits(default, embed_reference(x, P, pos, ~real, np.float32(math.sqrt(D)))), 'default scale'


def test_embed_mask_sinusoidal_2d():
    """(T, D) input with a boolean mask and on-the-fly sinusoidal rows == the table posenc writes."""
    T, D = 9, 12
    x = np.random.default_rng(5).standard_normal((T, D)).astype(np.float32)
    mask = np.ones(T, bool)
    mask[[0, 4]] = False
    sin_table = load_npy(run_ok(table_args(T, D)))
    y = embed_run(['--in', save_npy('ex2.npy', x), '--mask', save_npy('em.npy', mask), '--sinusoidal',
                   '--scale', '1'])
    ref = embed_reference(x, sin_table, np.arange(T), ~mask, 1.0)
    assert y.shape == (T, D) and same_bits(y, ref), f'max diff {np.abs(y - ref).max():.3g}'
    # an int mask reads the same
    y2 = embed_run(['--in', save_npy('ex2.npy', x), '--mask', save_npy('em2.npy', mask.astype(np.int32)),
                    '--sinusoidal', '--scale', '1'])
    assert same_bits(y, y2)


def test_embed_oob():
    B, T, D, N = 2, 6, 8, 4
    x, P, ids = embed_inputs(B, T, D, N, 21)
    ids[:] = 5  # no padding
    base = ['--in', save_npy('ox.npy', x), '--ids', save_npy('oi.npy', ids), '--padding-id', '0',
            '--table', save_npy('oP.npy', P), '--scale', '1']
    pos = np.broadcast_to(np.arange(T), (B, T))
    none = np.zeros((B, T), bool)
    y = embed_run(base + ['--oob', 'clamp'])
    assert same_bits(y, embed_reference(x, P, np.minimum(pos, N - 1), none, 1.0)), 'clamp'
    y = embed_run(base + ['--oob', 'sinusoidal'])
    sin_rows = load_npy(run_ok(table_args(T, D)))
    mixed = np.concatenate([P, sin_rows[N:]])
    assert same_bits(y, embed_reference(x, mixed, pos, none, 1.0)), 'sinusoidal fallback'
    before = listing()
    proc = run(['embed'] + base + ['-o', os.path.join(WORKDIR, 'oy.npy')])
    assert proc.returncode == 1, f'exit {proc.returncode}'
    assert_one_error_line(proc.stderr, '--oob')
    assert listing() == before, 'an output was written'


def test_embed_dropout_dtype():
    B, T, D, N = 2, 64, 32, 64
    x, P, ids = embed_inputs(B, T, D, N, 31)
    base = ['--in', save_npy('dx.npy', x), '--ids', save_npy('di.npy', ids), '--padding-id', '1',
            '--table', save_npy('dP.npy', P), '--scale', '2']
    real = ids != 1
    ref = embed_reference(x, P, np.broadcast_to(np.arange(T), (B, T)), ~real, 2.0)
    y = embed_run(base + ['--dropout', '0.25', '--seed', '9'])
    keep = y != 0
    kept = keep & real[:, :, None]
    frac = 1 - kept.sum() / (real.sum() * D)
    assert abs(frac - 0.25) < 0.03, f'dropped fraction {frac:.3f}'
    assert same_bits(y[kept], (ref[kept] * np.float32(1 / 0.75)).astype(np.float32)), 'kept values != ref * 1/(1-p)'
    assert not y[~real].any()
    assert same_bits(y, embed_run(base + ['--dropout', '0.25', '--seed', '9'])), 'not deterministic'
    assert not np.array_equal(y, embed_run(base + ['--dropout', '0.25', '--seed', '10'])), 'seed ignored'
    assert same_bits(embed_run(base + ['--dropout', '0']), ref), 'p = 0 must equal no dropout'
    h = embed_run(base + ['--dtype', 'f16'])
    assert same_bits(h, ref.astype(np.float16)), 'f16 output is not the f32 result rounded once'
    b = embed_run(base + ['--dtype', 'bf16'])
    assert b.dtype == np.uint16 and np.array_equal(b, bf16_round(ref)), 'bf16 output'
    # f16 input: read as f16 values, output f16 by default
    x16 = x.astype(np.float16)
    y16 = embed_run(['--in', save_npy('dx16.npy', x16)] + base[2:])
    assert y16.dtype == np.float16
    ref16 = embed_reference(x16.astype(np.float32), P, np.broadcast_to(np.arange(T), (B, T)), ~real, 2.0)
    assert same_bits(y16, ref16.astype(np.float16)), 'f16 input'


def embed_error_cases():
    x = save_npy('ux.npy', np.zeros((2, 3, 8), np.float32))
    ids = save_npy('uids.npy', np.full((2, 3), 4, np.int32))
    P = save_npy('uP.npy', np.zeros((10, 8), np.float32))
    base = ['embed', '--in', x, '--ids', ids, '--padding-id', '0']
    usage = [
        (['embed', '--ids', ids, '--padding-id', '0', '--table', P], '--in'),
        (['embed', '--in', x, '--table', P], '--mask'),
        (base, '--sinusoidal'),
        (base + ['--table', P, '--sinusoidal'], 'exclude'),
        (['embed', '--in', x, '--ids', ids, '--table', P], '--padding-id'),
        (['embed', '--in', x, '--mask', ids, '--table', P, '--positions', 'fairseq'], '--padding-id'),
        (base + ['--table', P, '--positions', 'ids'], '--pos-ids'),
        (base + ['--table', P, '--pos-ids', ids], '--pos-ids'),
        (base + ['--table', P, '--positions', 'fairseq', '--start', '2'], '--start'),
        (base + ['--sinusoidal', '--oob', 'clamp'], '--oob'),
        (base + ['--table', P, '--positions', 'diagonal'], '--positions'),
        (base + ['--table', P, '--oob', 'wrap'], '--oob'),
        (base + ['--table', P, '--dropout', '1', '--seed', '1'], '--dropout'),
        (base + ['--table', P, '--dropout', '-0.1', '--seed', '1'], '--dropout'),
        (base + ['--table', P, '--dropout', '0.1'], '--seed'),
        (base + ['--table', P, '--seed', '1'], '--seed'),
        (base + ['--table', P, '--scale', 'nan'], '--scale'),
        (base + ['--table', P, '--scale', '1e39'], '--scale'),
        (base + ['--table', P, '--dtype', 'f64'], '--dtype'),
        (base + ['--table', P, '--layout', 'split'], '--layout'),
        (base[:-2] + ['--padding-id', '99', '--table', P, '--positions', 'fairseq'], '--padding-id'),
    ]
    inputs = [  # exit 1: the files are wrong
        (['embed', '--in', save_npy('u1.npy', np.zeros(8, np.float32)), '--ids', ids, '--padding-id', '0',
          '--table', P], '--in'),
        (['embed', '--in', save_npy('u2.npy', np.zeros((2, 3, 8), np.int32)), '--ids', ids, '--padding-id', '0',
          '--table', P], 'dtype'),
        (base + ['--table', save_npy('u3.npy', np.zeros((10, 7), np.float32))], '--table'),
        (base + ['--table', save_npy('u4.npy', np.zeros((10, 8), np.int32))], 'dtype'),
        (['embed', '--in', x, '--ids', save_npy('u5.npy', np.zeros((3, 2), np.int32)), '--padding-id', '0',
          '--table', P], '--ids'),
        (['embed', '--in', x, '--mask', save_npy('u6.npy', np.zeros((2, 3), np.float32)), '--table', P], 'dtype'),
        (base + ['--table', P, '--positions', 'ids', '--pos-ids', save_npy('u7.npy', np.full((2, 3), -1, np.int32))],
         'position'),
        (base + ['--table', save_npy('u8.npy', np.zeros((2, 8), np.float32))], 'rows'),
        (['embed', '--in', os.path.join(WORKDIR, 'missing.npy'), '--ids', ids, '--padding-id', '0', '--table', P],
         'missing.npy'),
    ]
    return [(a, n, 2) for a, n in usage] + [(a, n, 1) for a, n in inputs]


def test_embed_error(args, needle, rc):
    out = os.path.join(WORKDIR, 'uy.npy')
    before = listing()
    proc = run(args + ['-o', out])
    assert proc.returncode == rc, f'exit {proc.returncode}, expected {rc}: {proc.stderr.decode()!r}'
    assert proc.stdout == b''
    assert_one_error_line(proc.stderr, needle)
    assert listing() == before, 'the directory changed'
    return proc.stderr.decode().strip()


# -- analyze

def analyze(path, top=None):
    out = run_ok(['analyze', path] + (['--top', str(top)] if top else [])).decode()
    rows = {}
    for line in out.splitlines()[2:]:
        name, a, b = line.split()
        rows[name] = (a, b)
    return rows


def numpy_spectrum(a):
    """rank with numpy matrix_rank's float32 tolerance, k90, k99, entropy rank, energy, sigma."""
    a64 = a.astype(np.float64)
    s = np.linalg.svd(a64, compute_uv=False)
    s = np.concatenate([s, np.zeros(a.shape[1] - len(s))])  # posenc reports D values (rows < D: zeros)
    tol = s.max() * max(a.shape) * np.finfo(np.float32).eps
    e = np.cumsum(s ** 2)
    q = s[s > tol] / s[s > tol].sum()  # the entropy rank leaves out the values below the tolerance
    return dict(rank=int((s > tol).sum()), k90=int(np.argmax(e >= 0.9 * e[-1]) + 1),
                k99=int(np.argmax(e >= 0.99 * e[-1]) + 1), entropy=math.exp(-(q * np.log(q)).sum()),
                energy=float(e[-1]), sigma=s, tol=tol)


def check_spectrum_column(rows, col, a, what):
    ref = numpy_spectrum(a)
    s = ref['sigma']
    near = np.abs(s / ref['tol'] - 1) < 1e-6
    if not near.any():
        assert int(rows['rank'][col]) == ref['rank'], f'{what}: rank {rows["rank"][col]} != {ref["rank"]}'
    assert int(rows['k90'][col]) == ref['k90'], f'{what}: k90 {rows["k90"][col]} != {ref["k90"]}'
    assert int(rows['k99'][col]) == ref['k99'], f'{what}: k99 {rows["k99"][col]} != {ref["k99"]}'
    assert abs(float(rows['entropy_rank'][col]) / ref['entropy'] - 1) < 1e-9, f'{what}: entropy rank'
    assert abs(float(rows['energy'][col]) / ref['energy'] - 1) < 1e-12, f'{what}: energy'
    for i in range(len([k for k in rows if k.startswith('sigma_')])):
        got = float(rows[f'sigma_{i + 1}'][col])
        # from the eigenvalues of P^T P: error ~ eps * d * sigma_1^2 / sigma_i (sqrt(eps) sigma_1 for noise)
        bound = 1e-12 * s[i] + 1e-13 * s[0] ** 2 / s[i] if s[i] >= 1e-6 * s[0] else 1e-7 * s[0] + 1e-300
        assert abs(got - s[i]) <= bound, f'{what}: sigma_{i + 1} {got!r} != {s[i]!r}'


def test_analyze(name, array, top, expect_rank):
    path = save_npy(f'an_{name}.npy', array)
    rows = analyze(path, top)
    n_sigma = len([k for k in rows if k.startswith('sigma_')])
    assert n_sigma == min(top or 8, array.shape[1]), f'{n_sigma} sigma lines'
    as_f32 = array.astype(np.float32) if array.dtype != np.uint16 else bf16_from_bits(array)
    check_spectrum_column(rows, 0, as_f32, 'table')
    sin_table = load_npy(run_ok(table_args(*array.shape)))
    check_spectrum_column(rows, 1, sin_table, 'sinusoidal')
    if expect_rank is not None:
        assert int(rows['rank'][0]) == expect_rank, f'rank {rows["rank"][0]}, want {expect_rank}'
        assert np.linalg.matrix_rank(as_f32) == expect_rank, 'numpy disagrees with the designed rank'
    return f'rank {rows["rank"][0]} (sinusoidal {rows["rank"][1]}), k90 {rows["k90"][0]}'


def analyze_cases():
    rng = np.random.default_rng(41)
    low = (rng.standard_normal((300, 3)) @ rng.standard_normal((3, 32))).astype(np.float32)
    learned = load_npy(run_ok(TL + ['--rows', '512', '--dim', '64', '--seed', '3']))
    return [
        ('rank 3 of 300x32', low, 5, 3),
        ('rank 3 of 300x32 as f64', low.astype(np.float64), 40, 3),
        ('rank 3 of 300x32 rounded to f16 (no longer low rank)', low.astype(np.float16), None, None),
        ('random 50x8', rng.standard_normal((50, 8)).astype(np.float32), 8, 8),
        ('learned 512x64', learned, 64, 64),
        ('sinusoidal 64x16', load_npy(run_ok(table_args(64, 16))), 16, None),
        ('sinusoidal 256x8 (full rank)', load_npy(run_ok(table_args(256, 8))), None, 8),
        ('bf16 bits 40x8', bf16_round(rng.standard_normal((40, 8)).astype(np.float32)), 3, 8),
        ('one row', np.arange(1, 6, dtype=np.float32).reshape(1, 5), None, 1),
    ]


def test_analyze_errors():
    cases = [
        (save_npy('ae1.npy', np.zeros((2, 3, 4), np.float32)), 'shape'),
        (save_npy('ae2.npy', np.zeros((4, 4), np.int32)), 'dtype'),
        (save_npy('ae3.npy', np.array([[1.0, np.nan], [0.0, 1.0]], np.float32)), 'NaN'),
        (save_npy('ae4.npy', np.zeros((0, 4), np.float32)), 'shape'),
        (os.path.join(WORKDIR, 'nope.npy'), 'nope.npy'),
    ]
    for path, needle in cases:
        proc = run(['analyze', path])
        assert proc.returncode == 1, f'{path}: exit {proc.returncode}: {proc.stderr.decode()!r}'
        assert proc.stdout == b''
        assert_one_error_line(proc.stderr, needle)


def test_end_of_options():
    """'--' ends the options: a command may follow, and a path that starts with '-'."""
    assert b'POSENC_ISA' in run_ok(['--', 'info'])
    path = save_npy('-dash.npy', np.arange(12, dtype=np.float32).reshape(3, 4))
    here = os.getcwd()
    os.chdir(WORKDIR)
    try:
        dashed = run_ok(['analyze', '--top', '2', '--', '-dash.npy'])
        unended = run(['analyze', '-dash.npy'])
        twice = run(['analyze', '--', '--'])
    finally:
        os.chdir(here)
    assert dashed.startswith(b'table: -dash.npy (3, 4)'), dashed[:40]
    assert dashed.split(b'\n')[1:] == run_ok(['analyze', path, '--top', '2']).split(b'\n')[1:], \
        'analyze -- -dash.npy read another table'
    assert unended.returncode == 2, f'-dash.npy without --: exit {unended.returncode}'
    assert_one_error_line(unended.stderr, "unknown option '-dash.npy'")
    assert twice.returncode == 1, f'a second -- is a path: exit {twice.returncode}'
    assert_one_error_line(twice.stderr, "'--'")
    os.remove(path)


def run_issue4_cases(results):
    for rule, n, d, base, min_ts in (('fairseq', 50, 16, 10000.0, None), ('fairseq', 7, 9, 100.0, None),
                                     ('t2t', 50, 16, 10000.0, None), ('t2t', 30, 12, 1e4, 2.0),
                                     ('t2t', 20, 2, 10000.0, 0.5)):
        results.case(f'table sinusoidal --freqs {rule} {n}x{d} base {base} min {min_ts}',
                     test_table_freq_rule, rule, n, d, base, min_ts)
    results.case('table sinusoidal --freqs: default and C provenance', test_table_freqs_default_and_header)
    results.case('table learned: truncated normal, seeded, prefix-stable', test_table_learned)
    for d, gh, gw, cls in ((16, 4, 4, False), (8, 2, 3, True), (32, 14, 14, False), (4, 1, 5, True)):
        results.case(f'table sincos2d {d} {gh}x{gw} cls {cls} vs MAE', test_table_sincos2d, d, gh, gw, cls)
    for args, needle in ISSUE4_USAGE_ERRORS:
        results.case(f'usage error: {shlex.join(args)}', test_issue4_usage, args, needle)
    for mode in ('range', 'ids', 'fairseq', 'cumsum'):
        results.case(f'embed --positions {mode} vs numpy', test_embed_modes, mode)
    results.case('embed --mask --sinusoidal, (T, D) input', test_embed_mask_sinusoidal_2d)
    results.case('embed --oob clamp / sinusoidal / error', test_embed_oob)
    results.case('embed --dropout and --dtype', test_embed_dropout_dtype)
    for args, needle, rc in embed_error_cases():
        shown = ' '.join(os.path.basename(a) for a in args)
        results.case(f'embed error (exit {rc}): {shown}', test_embed_error, args, needle, rc)
    for name, array, top, rank in analyze_cases():
        results.case(f'analyze {name} vs numpy svd', test_analyze, name, array, top, rank)
    results.case('analyze: bad tables -> exit 1', test_analyze_errors)
    results.case("'--' ends the options: posenc -- info, analyze -- -dash.npy", test_end_of_options)
    for args, needles in ((['--help'], ['embed', 'analyze', 'learned', 'sincos2d']),
                          (['embed', '--help'], ['--padding-id', '--oob', '--dropout', 'fairseq', 'cumsum']),
                          (['analyze', '--help'], ['rank', 'k90', 'entropy', '--top']),
                          (['table', '--help'], ['--freqs', '--min-timescale', '--seed', '--grid', '--cls-token'])):
        results.case(f'help: {" ".join(args)}', test_help, args, needles)


# ---- issue 5: position biases (alibi, t5, deberta) ----------------------------------------------
#
# Independent references written from formulas.md §4 and §5: the original recursive get_slopes in
# Python doubles, the exact slope 2^e from decimal arithmetic, NumPy float32 products for the
# ALiBi block, HF's T5 bucket recipe in float64 and float32, DeBERTa's make_log_bucket_position.

def get_slopes_original(n):
    """ofirpress/attention_with_linear_biases, verbatim (Python doubles)."""
    def get_slopes_power_of_2(n):
        start = (2 ** (-2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + get_slopes_original(2 * closest_power_of_2)[0::2][:n - closest_power_of_2])


def slope_exponent(h, n, max_bias):
    """The exact exponent e of m_h = 2^e (formulas.md §4.1 closed form, 0-based h)."""
    from fractions import Fraction
    c = 1 << (n.bit_length() - 1)
    b = Fraction(max_bias)
    return -b * (h + 1) / c if h < c else -b * (2 * (h - c) + 1) / (2 * c)


def exact_f32_pow2(e):
    """The float32 nearest to 2^e for a rational e (ties to even), from 60-digit decimals."""
    import decimal
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        x = decimal.Decimal(2) ** (decimal.Decimal(e.numerator) / decimal.Decimal(e.denominator))
        f = np.float32(float(x))
        cands = [np.nextafter(f, np.float32(0)), f, np.nextafter(f, np.float32(np.inf))]
        dist = [abs(decimal.Decimal(float(c)) - x) for c in cands]
        best = min(range(3), key=lambda i: dist[i])
        assert dist.count(dist[best]) == 1, f'2^{e} is a float32 tie'
        return cands[best]


def alibi_slopes_text(heads, max_bias=None):
    args = ['alibi', 'slopes', '--heads', str(heads)] + (['--max-bias', str(max_bias)] if max_bias else [])
    lines = run_ok(args).decode().splitlines()
    assert len(lines) == heads, f'{len(lines)} lines for {heads} heads'
    return np.array([np.float32(v) for v in lines], np.float32)


def test_alibi_slopes_original():
    """H = 1..64, max_bias 8: the original get_slopes rounded to float32, the exact 2^e rounded to
    float32, and ours, all bit for bit."""
    differ_original = []
    for n in range(1, 65):
        got = alibi_slopes_text(n)
        exact = np.array([exact_f32_pow2(slope_exponent(h, n, 8)) for h in range(n)], np.float32)
        original = np.array(get_slopes_original(n), np.float64).astype(np.float32)
        assert same_bits(got, exact), f'H={n}: ours {got} != exact {exact}'
        differ_original += [(n, h) for h in range(n) if original[h] != exact[h]]
    assert not differ_original, \
        f'original get_slopes (rounded to f32) differs from the exact slope at {differ_original}'
    return 'H = 1..64 equal to get_slopes and to the exact 2^e'


def test_alibi_slopes_max_bias():
    """Other max_bias values: MPT's gen_slopes set and order, against the exact 2^e; the npy
    output equals the text."""
    for n, b in ((8, 4.0), (12, 16.0), (5, 0.5), (24, 6.5), (33, 8.0), (1, 100.0), (3, 100.0)):
        got = alibi_slopes_text(n, b)
        exact = np.array([exact_f32_pow2(slope_exponent(h, n, b)) for h in range(n)], np.float32)
        assert same_bits(got, exact), f'H={n} B={b}: ours {got} != exact {exact}'
        _n = 1 << (n - 1).bit_length()  # MPT: 1/2^(k*B/_n), k = 1.._n, odd picks first
        m = np.arange(1, _n + 1, dtype=np.float64) * (b / _n)
        mpt = 1.0 / 2 ** m
        if _n != n:
            mpt = np.concatenate([mpt[1::2], mpt[0::2]])[:n]
        assert np.allclose(got, mpt, rtol=1e-6, atol=0), f'H={n} B={b}: not MPT gen_slopes {mpt}'
        path = os.path.join(WORKDIR, 'slopes.npy')
        run_ok(['alibi', 'slopes', '--heads', str(n), '--max-bias', str(b), '-o', path])
        arr = np.load(path)
        assert arr.dtype == np.float32 and arr.shape == (n,) and same_bits(arr, got), 'npy != text'
        text = run_ok(['alibi', 'slopes', '--heads', str(n), '--max-bias', str(b), '--format', 'text', '-o', '-'])
        assert text.decode().split() == [f'{float(v):.9g}' for v in got]


def alibi_reference(heads, Q, K, form='symmetric', key_origin=0, causal=False, window=0, q_pos=0, k_pos=0,
                    max_bias=8.0):
    """The NumPy float32 recipe: np.float32(slope) * np.float32(D), -inf where masked."""
    slopes = np.array([exact_f32_pow2(slope_exponent(h, heads, max_bias)) for h in range(heads)], np.float32)
    q = np.arange(q_pos, q_pos + Q, dtype=np.int64)[:, None]
    k = np.arange(k_pos, k_pos + K, dtype=np.int64)[None, :]
    D = {'symmetric': -np.abs(k - q), 'relative': k - q, 'key': (k - key_origin) + 0 * q}[form]
    out = slopes[:, None, None] * D.astype(np.float32)[None]
    masked = np.zeros((Q, K), bool)
    if causal:
        masked |= k > q
    if window:
        masked |= q - k >= window
    out[:, masked] = -np.inf
    return out.astype(np.float32) + np.float32(0)  # fl(0 + b): -0 becomes +0, as in the tile


ALIBI_BLOCK_CASES = [  # (heads, Q, K, options, reference kwargs)
    (12, 5, 7, [], {}),
    (8, 6, 9, ['--causal'], {'form': 'relative', 'causal': True}),
    (6, 4, 10, ['--causal', '--form', 'key', '--key-origin', '3'], {'form': 'key', 'key_origin': 3, 'causal': True}),
    (4, 8, 8, ['--form', 'key'], {'form': 'key'}),
    (16, 7, 7, ['--causal', '--window', '3'], {'form': 'relative', 'causal': True, 'window': 3}),
    (3, 2, 40, ['--causal', '--q-pos', '100', '--k-pos', '70'], {'form': 'relative', 'causal': True, 'q_pos': 100,
                                                                  'k_pos': 70}),
    (20, 3, 5, ['--form', 'relative', '--max-bias', '4'], {'form': 'relative', 'max_bias': 4.0}),
    (2, 3, 3, ['--q-pos', '-5', '--k-pos', '16777200', '--window', '2'], {'q_pos': -5, 'k_pos': 16777200, 'window': 2}),
]


def test_alibi_block(heads, Q, K, opts, ref_kwargs, dtype):
    data = run_ok(['alibi', 'bias', '--heads', str(heads), '--queries', str(Q), '--keys', str(K), '--dtype', dtype]
                  + opts)
    got = load_npy(data)
    ref = alibi_reference(heads, Q, K, **ref_kwargs)
    if dtype == 'f16':
        ref = ref.astype(np.float16)
    assert got.dtype == ref.dtype and got.shape == (heads, Q, K), (got.dtype, got.shape)
    if not same_bits(got, ref):
        bad = np.argwhere(got.view(np.uint32 if dtype == 'f32' else np.uint16) !=
                          ref.view(np.uint32 if dtype == 'f32' else np.uint16))
        h, i, j = bad[0]
        raise AssertionError(f'{len(bad)} entries differ, first ({h},{i},{j}): got {got[h, i, j]!r}, '
                             f'numpy {ref[h, i, j]!r}')
    return f'{int(np.isinf(got).sum())} -inf (masked, or beyond f16)'


def t5_bucket_ref(r, bidirectional=True, num_buckets=32, max_distance=128, f32=False):
    """HF _relative_position_bucket in NumPy: float32 as HF computes it, or float64 with exact
    integer quotients (the ties, such as a = 16 at the defaults) placed on the upper bucket."""
    r = np.asarray(r, np.int64)
    ret = np.zeros_like(r)
    n = num_buckets
    if bidirectional:
        n //= 2
        ret += (r > 0) * n
        a = np.abs(r)
    else:
        a = -np.minimum(r, 0)
    e = n // 2
    safe = np.maximum(a, 1)
    if f32:
        v = (np.log(safe.astype(np.float32) / np.float32(e)) / np.float32(math.log(max_distance / e))
             * np.float32(n - e))
        large = e + v.astype(np.int64)
    else:
        v = np.log(safe / e) / math.log(max_distance / e) * (n - e)
        near = np.abs(v - np.round(v)) < 1e-9
        large = e + np.where(near, np.round(v), np.floor(v)).astype(np.int64)
    large = np.minimum(large, n - 1)
    return ret + np.where(a < e, a, large)


def t5_buckets(lo, hi, opts=()):
    path = os.path.join(WORKDIR, 't5b.npy')
    run_ok(['t5', 'buckets', '--from', str(lo), '--to', str(hi), '-o', path] + list(opts))
    got = np.load(path)
    assert got.dtype == np.int32 and got.shape == (hi - lo + 1,), (got.dtype, got.shape)
    return got


def test_t5_defaults(causal):
    opts = ['--causal'] if causal else []
    r = np.arange(-20000, 20001)
    got = t5_buckets(-20000, 20000, opts)
    for f32 in (False, True):
        ref = t5_bucket_ref(r, not causal, f32=f32)
        bad = np.flatnonzero(got != ref)
        assert not len(bad), f'{"float32" if f32 else "float64"} HF recipe differs at r = {r[bad][:5]}: ' \
                             f'ours {got[bad][:5]}, HF {ref[bad][:5]}'
    text = run_ok(['t5', 'buckets', '--from', '-40', '--to', '40'] + opts).decode().split('\n')
    assert text[-1] == '' and text[:-1] == [f'{x} {b}' for x, b in zip(range(-40, 41), got[20000 - 40:20000 + 41])]
    return '|r| <= 20000 equal to HF float32 and float64'


def test_t5_boundary_tables():
    """formulas.md §5.1's boundary tables."""
    bidi = {8: 8, 12: 9, 16: 10, 23: 11, 32: 12, 46: 13, 64: 14, 91: 15}
    causal = {19: 17, 21: 18, 24: 19, 27: 20, 31: 21, 35: 22, 40: 23, 46: 24, 52: 25, 59: 26, 67: 27, 77: 28,
              87: 29, 99: 30, 113: 31}
    got_b, got_c = t5_buckets(-200, 200), t5_buckets(-200, 200, ['--causal'])
    at = lambda arr, r: int(arr[r + 200])
    for a in range(8):
        assert at(got_b, -a) == a and at(got_b, a) == a + (16 if a else 0)
    for a, b in bidi.items():
        assert at(got_b, -a) == b and at(got_b, a) == b + 16, f'bidirectional |r| {a}: {at(got_b, -a)}, expected {b}'
        assert at(got_b, -(a - 1)) == b - 1, f'bidirectional |r| {a - 1} is not below the boundary {a}'
    for a in range(17):
        assert at(got_c, -a) == a
    for a, b in causal.items():
        assert at(got_c, -a) == b and at(got_c, -(a - 1)) == b - 1, f'causal -r {a}: {at(got_c, -a)}, expected {b}'
    assert (got_c[201:] == 0).all(), 'causal: future keys must be bucket 0'
    assert at(got_b, -200) == 15 and at(got_c, -200) == 31


def test_t5_other_configs():
    for nb, md, causal in ((64, 256, False), (16, 64, True), (8, 20, False), (4, 3, False), (2, 2, True),
                           (1024, 100000, False), (100, 1000, True)):
        opts = ['--buckets', str(nb), '--max-distance', str(md)] + (['--causal'] if causal else [])
        got = t5_buckets(-5000, 5000, opts)
        ref = t5_bucket_ref(np.arange(-5000, 5001), not causal, nb, md)
        bad = np.flatnonzero(got != ref)
        assert not len(bad), f'{opts}: differs at r = {bad[:5] - 5000}: ours {got[bad][:5]}, ref {ref[bad][:5]}'


def test_t5_bias_block(dtype_in, causal, out_dtype):
    rng = np.random.default_rng(5)
    heads, nb = 6, 32
    table = rng.standard_normal((nb + 3, heads)).astype(np.float32)  # extra rows are allowed
    if dtype_in == 'f16':
        stored = table.astype(np.float16)
        values = stored.astype(np.float32)
    elif dtype_in == 'bf16':
        stored = bf16_round(table)
        values = bf16_from_bits(stored)
    else:
        stored = values = table
    path = save_npy(f't5table_{dtype_in}.npy', stored)
    Q, K, qp, kp = 9, 40, 30, 0
    args = ['t5', 'bias', '--table', path, '--queries', str(Q), '--keys', str(K), '--q-pos', str(qp),
            '--k-pos', str(kp), '--dtype', out_dtype] + (['--causal'] if causal else [])
    got = load_npy(run_ok(args))
    q = np.arange(qp, qp + Q)[:, None]
    k = np.arange(kp, kp + K)[None, :]
    b = t5_bucket_ref(k - q, not causal)
    ref = values[b].transpose(2, 0, 1).copy()  # (heads, Q, K)
    if causal:
        ref[:, np.broadcast_to(k > q, (Q, K))] = -np.inf
    ref = ref + np.float32(0)
    if out_dtype == 'f16':
        ref = ref.astype(np.float16)
    assert got.shape == (heads, Q, K) and got.dtype == ref.dtype, (got.shape, got.dtype)
    assert same_bits(got, ref), f'{int((got != ref).sum())} entries differ'


def deberta_ref(r, bucket_size=256, max_position=512, f32=False):
    """make_log_bucket_position in NumPy (r = q - k): float32 as HF (int / int, float32 log), or
    float64 with exact integers kept (the ceiling of the exact value)."""
    r = np.asarray(r, np.int64)
    if bucket_size == 0:  # no buckets: r itself
        return r
    sign = np.sign(r)
    mid = bucket_size // 2
    abs_pos = np.where((r < mid) & (r > -mid), mid - 1, np.abs(r))
    if f32:
        v = (np.log(abs_pos.astype(np.float32) / np.float32(mid)) / np.log(np.float32((max_position - 1) / mid))
             * np.float32(mid - 1))
        log_pos = np.ceil(v).astype(np.int64) + mid
    else:
        v = np.log(abs_pos / mid) / math.log((max_position - 1) / mid) * (mid - 1)
        near = np.abs(v - np.round(v)) < 1e-9
        log_pos = np.where(near, np.round(v), np.ceil(v)).astype(np.int64) + mid
    return np.where(abs_pos <= mid, r, log_pos * sign)


def test_deberta_buckets(bucket_size, max_position, f32):
    opts = []
    if bucket_size is not None:
        opts += ['--bucket-size', str(bucket_size), '--max-position', str(max_position)]
    bs, mp = (256, 512) if bucket_size is None else (bucket_size, max_position)
    path = os.path.join(WORKDIR, 'deb.npy')
    run_ok(['deberta', 'buckets', '--from', '-3000', '--to', '3000', '-o', path] + opts)
    got = np.load(path)
    assert got.dtype == np.int32 and got.shape == (6001,)
    r = np.arange(-3000, 3001)
    ref = deberta_ref(r, bs, mp, f32)
    bad = np.flatnonzero(got != ref)
    assert not len(bad), f'differs at r = {r[bad][:5]}: ours {got[bad][:5]}, numpy {ref[bad][:5]}'
    text = run_ok(['deberta', 'buckets', '--from', '-3', '--to', '3'] + opts).decode()
    assert text == ''.join(f'{x} {got[x + 3000]}\n' for x in range(-3, 4)), text
    return f'max bucket {got.max()}'


def test_deberta_relative():
    got = load_npy(run_ok(['deberta', 'relative', '--queries', '300', '--keys', '700']))
    q, k = np.arange(300)[:, None], np.arange(700)[None, :]
    ref = deberta_ref(q - k)
    assert got.dtype == np.int32 and got.shape == (300, 700) and np.array_equal(got, ref)
    plain = load_npy(run_ok(['deberta', 'relative', '--queries', '3', '--keys', '4', '--bucket-size', '0']))
    assert np.array_equal(plain, np.arange(3)[:, None] - np.arange(4)[None, :]), plain


def test_bias_isa_identical(isa):
    p = save_npy('isa_t5.npy', np.random.default_rng(1).standard_normal((32, 4)).astype(np.float32))
    for args in (['alibi', 'bias', '--heads', '12', '--queries', '33', '--keys', '47', '--causal', '--q-pos', '14'],
                 ['alibi', 'bias', '--heads', '5', '--queries', '17', '--keys', '70', '--dtype', 'f16'],
                 ['t5', 'bias', '--table', p, '--queries', '19', '--keys', '41', '--causal', '--window', '9'],
                 ['t5', 'buckets', '--from', '-3000', '--to', '3000']):
        assert run_ok(args + ['--isa', isa]) == run_ok(args), f'{args}: --isa {isa} differs'


def bias_error_cases():
    A = ['alibi', 'bias', '--heads', '4', '--queries', '3', '--keys', '5']
    S = ['alibi', 'slopes', '--heads', '4']
    TB = ['t5', 'buckets', '--from', '-3', '--to', '3']
    DB = ['deberta', 'buckets', '--from', '-3', '--to', '3']
    table = save_npy('et5.npy', np.zeros((32, 4), np.float32))
    TT = ['t5', 'bias', '--queries', '3', '--keys', '5']
    usage = [
        (['alibi'], 'missing the kind'),
        (['alibi', 'frob'], 'frob'),
        (['t5', 'slopes'], 'slopes'),
        (['alibi', 'slopes'], '--heads'),
        (['alibi', 'slopes', '--heads', '0'], '--heads'),
        (['alibi', 'slopes', '--heads', 'x'], '--heads'),
        (['alibi', 'slopes', '--heads', '-3'], '--heads'),
        (S + ['--max-bias', '0'], '--max-bias'),
        (S + ['--max-bias', '-8'], '--max-bias'),
        (S + ['--max-bias', '1e5'], '--max-bias'),
        (S + ['--max-bias', 'nan'], '--max-bias'),
        (S + ['--bogus'], '--bogus'),
        (S + ['--queries', '3'], '--queries'),
        (S + ['--heads', '5'], 'twice'),
        (S + ['--format', 'json'], '--format'),
        (S + ['extra'], 'extra'),
        (S + ['--causal=1'], '--causal'),
        (['alibi', 'bias', '--heads', '4', '--queries', '3'], '--keys'),
        (A + ['--form', 'diagonal'], '--form'),
        (A + ['--key-origin', '3'], '--key-origin'),
        (A + ['--window', '-1'], '--window'),
        (A + ['--dtype', 'bf16'], '--dtype'),
        (A + ['--format', 'npy'], '--format'),
        (A + ['--q-pos', '2147483647'], '--q-pos'),
        (A + ['--k-pos', '2147483644'], '--k-pos'),
        (A + ['--k-pos', '2147483648'], '--k-pos'),
        (A + ['--q-pos', '-16777300'], '--q-pos'),
        (['alibi', 'bias', '--heads', '1000000', '--queries', '1000000', '--keys', '100000000000'], 'overflow'),
        (TB + ['--buckets', '31'], 'invalid dimension'),
        (TB + ['--buckets', '2'], 'invalid dimension'),
        (TB + ['--causal', '--buckets', '1'], 'invalid dimension'),
        (TB + ['--buckets', '8192'], 'invalid dimension'),
        (TB + ['--max-distance', '8'], '--max-distance'),
        (TB + ['--buckets', '99999999999'], '--buckets'),
        (['t5', 'buckets', '--from', '5', '--to', '3'], '--to'),
        (['t5', 'buckets', '--from', '5'], '--to'),
        (['t5', 'buckets', '--to', '5'], '--from'),
        (['t5', 'buckets', '--from', '2147483648', '--to', '2147483648'], '--from'),
        (TB + ['--heads', '4'], '--heads'),
        (TT, '--table'),
        (TT + ['--table', table, '--buckets', '31'], 'invalid dimension'),
        (DB + ['--bucket-size', '3'], 'invalid dimension'),
        (DB + ['--bucket-size', '2'], 'invalid dimension'),
        (DB + ['--max-position', '129'], '--max-position'),
        (DB + ['--causal'], '--causal'),
        (['deberta', 'relative', '--queries', '0', '--keys', '3'], '--queries'),
        (['deberta', 'relative', '--queries', '3'], '--keys'),
        (S + ['-o', ''], '-o'),
        (S + ['--isa', 'foo'], '--isa'),
    ]
    inputs = [  # exit 1: the table file is wrong
        (TT + ['--table', save_npy('et5s.npy', np.zeros((31, 4), np.float32))], 'fewer than --buckets'),
        (TT + ['--table', save_npy('et5i.npy', np.zeros((32, 4), np.int32))], 'dtype'),
        (TT + ['--table', save_npy('et5d.npy', np.zeros((32, 4, 1), np.float32))], 'shape'),
        (TT + ['--table', os.path.join(WORKDIR, 'no-table.npy')], 'no-table.npy'),
    ]
    return [(a, n, 2) for a, n in usage] + [(a, n, 1) for a, n in inputs]


def run_issue5_cases(results, available_isas):
    results.case('alibi slopes H=1..64 vs original get_slopes and exact 2^e', test_alibi_slopes_original)
    results.case('alibi slopes --max-bias vs exact and MPT, npy == text', test_alibi_slopes_max_bias)
    for heads, Q, K, opts, kw in ALIBI_BLOCK_CASES:
        for dtype in ('f32', 'f16'):
            results.case(f'alibi bias {heads}x{Q}x{K} {" ".join(opts)} --dtype {dtype} vs numpy float32',
                         test_alibi_block, heads, Q, K, opts, kw, dtype)
    for causal in (False, True):
        results.case(f't5 buckets defaults {"causal" if causal else "bidirectional"} vs HF f32/f64',
                     test_t5_defaults, causal)
    results.case('t5 buckets: formulas.md boundary tables', test_t5_boundary_tables)
    results.case('t5 buckets: other configurations vs exact float64', test_t5_other_configs)
    for dtype_in, causal, out in (('f32', False, 'f32'), ('f32', True, 'f32'), ('f16', True, 'f32'),
                                  ('bf16', False, 'f16')):
        results.case(f't5 bias table {dtype_in} causal {causal} --dtype {out} vs numpy', test_t5_bias_block,
                     dtype_in, causal, out)
    for bs, mp, f32 in ((None, None, False), (None, None, True), (256, 512, True), (64, 128, False),
                        (8, 20, False), (0, 512, False)):
        results.case(f'deberta buckets {bs}/{mp} vs make_log_bucket_position {"f32" if f32 else "f64"}',
                     test_deberta_buckets, bs, mp, f32)
    results.case('deberta relative vs build_relative_position', test_deberta_relative)
    for isa in available_isas:
        results.case(f'bias commands --isa {isa} identical', test_bias_isa_identical, isa)
    for args, needle, rc in bias_error_cases():
        shown = ' '.join(os.path.basename(a) for a in args)
        for mode in ('new', 'existing') if '-o' not in args else ('stdout',):
            results.case(f'bias error (exit {rc}, {mode}): {shown}', test_bad_args, args, needle, rc, mode)
    for args, needles in ((['--help'], ['alibi slopes', 'alibi bias', 't5 buckets', 't5 bias', 'deberta buckets']),
                          (['alibi', '--help'], ['--heads', '--max-bias', '--form', '--key-origin', 'tile of zeros',
                                                 '-inf']),
                          (['alibi', 'bias', '--heads', 'x', '-h'], ['Usage: posenc alibi']),
                          (['t5', '--help'], ['--buckets', '--max-distance', '--causal', '--table']),
                          (['deberta', 'buckets', '--help'], ['--bucket-size', '--max-position', 'relative'])):
        results.case(f'help: {" ".join(args)}', test_help, args, needles)


# ---- hostile outputs: what -o names -------------------------------------------------------------
#
# A regular file (or nothing yet) is replaced through a temporary and a rename; a device or FIFO is
# written in place and stays what it was; a symbolic link is followed; a dangling link and a
# directory are refused with nothing created. Device nodes are made here with mknod (root only);
# the system's own /dev nodes are never used.

NOTES = []  # sub-cases that could not run here, printed as "figure:" lines at the end


def hostile_commands():
    """(name, argv without -o, extra outputs): commands that write one file each, and rope apply,
    which writes Q (-o) and K (--k-out)."""
    q = save_npy('hq.npy', np.random.default_rng(3).standard_normal((5, 2, 8)).astype(np.float32))
    k = save_npy('hk.npy', np.random.default_rng(4).standard_normal((5, 1, 8)).astype(np.float32))
    return [
        ('table sinusoidal raw', T + P4D8 + ['--format', 'raw']),
        ('table sinusoidal npy', T + P4D8 + ['--format', 'npy']),
        ('table sinusoidal c', T + P4D8 + ['--format', 'c', '--name', 'pe']),
        ('rope table', ['rope', 'table', '--head-dim', '8', '--rows', '6']),
        ('alibi bias', ['alibi', 'bias', '--heads', '2', '--queries', '3', '--keys', '4']),
        ('rope apply -o', ['rope', 'apply', '--in', q, '--k', k, '--k-out', os.path.join(WORKDIR, 'hk_out.npy')]),
    ]


def hostile_dir(tag):
    """A fresh scratch directory for one sub-case, so that its listing shows any leftover."""
    path = tempfile.mkdtemp(prefix=f'h-{tag}-', dir=WORKDIR)
    return path


def expected_bytes(args):
    path = os.path.join(hostile_dir('ref'), 'ref.out')
    run_ok(args + ['-o', path])
    with open(path, 'rb') as f:
        return f.read()


def make_char_device(path, minor):
    """A character device like /dev/null (minor 3) or /dev/full (minor 7) at path, or None when
    this process may not make one (not root)."""
    import stat
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        return None
    return path


def read_fifo_while(path, args):
    """Runs the tool writing to the FIFO at path while this process reads it; (proc, bytes).
    The read end is opened first (O_NONBLOCK: no writer yet), so the tool finds a reader; poll()
    waits for data, and reports the hang-up only once a writer has come and gone."""
    import select
    import threading
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    chunks, errors = [], []

    def reader():
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            while True:
                if not poller.poll(60000):
                    raise TimeoutError('nothing came through the FIFO')
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    return
                chunks.append(data)
        except Exception as exc:  # reported by the main thread
            errors.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        proc = run(args + ['-o', path])
    finally:
        thread.join(120)
        os.close(fd)
    assert not errors, f'reader: {errors[0]!r}'
    return proc, b''.join(chunks)


def assert_kind(path, kind):
    import stat
    mode = os.lstat(path).st_mode
    names = {stat.S_IFREG: 'regular file', stat.S_IFIFO: 'FIFO', stat.S_IFCHR: 'character device',
             stat.S_IFLNK: 'symbolic link', stat.S_IFDIR: 'directory'}
    got = names.get(stat.S_IFMT(mode), oct(stat.S_IFMT(mode)))
    assert got == kind, f'{os.path.basename(path)} is now a {got}, not a {kind}'


def test_hostile_regular(args, want):
    d = hostile_dir('reg')
    path = os.path.join(d, 'out')
    with open(path, 'wb') as f:
        f.write(b'old contents')
    os.chmod(path, 0o640)
    ino = os.stat(path).st_ino
    run_ok(args + ['-o', path])
    assert_kind(path, 'regular file')
    with open(path, 'rb') as f:
        assert f.read() == want, 'the file does not hold the output'
    assert os.stat(path).st_ino != ino, 'written in place, not replaced'
    assert os.listdir(d) == ['out'], f'leftovers: {os.listdir(d)}'
    new = os.path.join(d, 'new')
    run_ok(args + ['-o', new])
    if WINDOWS_TOOL:
        return windows_skip('permission bits of a replaced or new file', 'Windows has none')
    mode = os.stat(path).st_mode & 0o777
    assert mode == 0o640, f'mode {oct(mode)}, was 0o640'
    umask = os.umask(0)
    os.umask(umask)
    mode = os.stat(new).st_mode & 0o777
    assert mode == 0o666 & ~umask, f'a new file got {oct(mode)}'


POSIX_KINDS = 'FIFOs and symbolic links are POSIX file kinds, which Wine shows a Windows program as regular files'


def test_hostile_fifo(args, want):
    if WINDOWS_TOOL:
        return windows_skip('-o a FIFO', POSIX_KINDS)
    d = hostile_dir('fifo')
    path = os.path.join(d, 'fifo')
    os.mkfifo(path)
    proc, got = read_fifo_while(path, args)
    assert proc.returncode == 0, f'exit {proc.returncode}: {proc.stderr.decode()!r}'
    assert got == want, f'the FIFO carried {len(got)} bytes, the file output is {len(want)}'
    assert_kind(path, 'FIFO')
    assert os.listdir(d) == ['fifo'], f'leftovers: {os.listdir(d)}'
    # nobody reading: an error at once, not a hang, and the FIFO stays
    proc = run(args + ['-o', path])
    assert proc.returncode == 1, f'no reader: exit {proc.returncode}'
    assert_one_error_line(proc.stderr, 'reading')
    assert_kind(path, 'FIFO')


def test_hostile_char_device(args, want):
    d = hostile_dir('chr')
    null = make_char_device(os.path.join(d, 'null'), 3)
    if not null:
        if 'character devices: mknod needs root' not in NOTES:
            NOTES.append('character devices: mknod needs root')
        return 'not run: mknod needs root'
    run_ok(args + ['-o', null])
    assert_kind(null, 'character device')
    link = os.path.join(d, 'to-null')
    os.symlink('null', link)
    run_ok(args + ['-o', link])
    assert_kind(link, 'symbolic link')
    assert_kind(null, 'character device')
    # a device whose writes fail (like /dev/full): exit 1, the device stays
    full = make_char_device(os.path.join(d, 'full'), 7)
    proc = run(args + ['-o', full])
    assert proc.returncode == 1, f'full device: exit {proc.returncode}'
    assert_one_error_line(proc.stderr, 'No space left')
    assert_kind(full, 'character device')
    assert sorted(os.listdir(d)) == ['full', 'null', 'to-null'], f'leftovers: {os.listdir(d)}'
    return None


def test_hostile_symlink(args, want):
    if WINDOWS_TOOL:
        return windows_skip('-o a symbolic link', POSIX_KINDS)
    d = hostile_dir('link')
    os.mkdir(os.path.join(d, 'sub'))
    target = os.path.join(d, 'sub', 'target')
    with open(target, 'wb') as f:
        f.write(b'old')
    os.chmod(target, 0o604)
    link = os.path.join(d, 'link')
    os.symlink(os.path.join('sub', 'target'), link)
    run_ok(args + ['-o', link])
    assert_kind(link, 'symbolic link')
    assert os.readlink(link) == os.path.join('sub', 'target'), 'the link was changed'
    with open(target, 'rb') as f:
        assert f.read() == want, 'the link\'s target does not hold the output'
    assert os.stat(target).st_mode & 0o777 == 0o604, 'the target lost its mode'
    assert sorted(os.listdir(d)) == ['link', 'sub'] and os.listdir(os.path.join(d, 'sub')) == ['target'], \
        'leftovers'


def test_hostile_refused(args, want):
    d = hostile_dir('refuse')
    dangling = os.path.join(d, 'dangling')
    os.symlink('nowhere', dangling)
    os.mkdir(os.path.join(d, 'dir'))
    refused = [(dangling, 'dangling'), (os.path.join(d, 'dir'), 'directory')]
    if WINDOWS_TOOL:
        windows_skip('-o a dangling symbolic link', POSIX_KINDS)
        refused = refused[1:]
    for path, needle in refused:
        before = sorted(os.listdir(d))
        proc = run(args + ['-o', path])
        assert proc.returncode == 1, f'{os.path.basename(path)}: exit {proc.returncode}'
        assert_one_error_line(proc.stderr, needle)
        assert sorted(os.listdir(d)) == before, f'{os.path.basename(path)}: {before} -> {os.listdir(d)}'
        assert not os.listdir(os.path.join(d, 'dir')), 'something was written into the directory'
    assert_kind(dangling, 'symbolic link')


def test_hostile_unwritable(args, want):
    """Paths that cannot be written: exit 1, and no temporary or partial file anywhere."""
    d = hostile_dir('unwritable')
    with open(os.path.join(d, 'file'), 'wb') as f:
        f.write(b'x')
    ro = os.path.join(d, 'ro')
    os.mkdir(ro)
    with open(os.path.join(ro, 'old'), 'wb') as f:
        f.write(b'old')
    os.chmod(ro, 0o555)
    # Windows: a path through a file is a path that does not exist (ERROR_PATH_NOT_FOUND)
    cases = [(os.path.join(d, 'file', 'under-a-file'), 'No such file' if WINDOWS_TOOL else 'Not a directory')]
    if os.geteuid() != 0:  # root writes into a read-only directory anyway
        cases += [(os.path.join(ro, 'new'), 'Permission denied'), (os.path.join(ro, 'old'), 'Permission denied')]
    elif 'read-only directory: not run as root (root writes there anyway)' not in NOTES:
        NOTES.append('read-only directory: not run as root (root writes there anyway)')
    try:
        for path, needle in cases:
            proc = run(args + ['-o', path])
            assert proc.returncode == 1, f'{path}: exit {proc.returncode}'
            assert_one_error_line(proc.stderr, needle)
            assert sorted(os.listdir(d)) == ['file', 'ro'] and os.listdir(ro) == ['old'], 'leftovers'
            with open(os.path.join(ro, 'old'), 'rb') as f:
                assert f.read() == b'old', 'the old file changed'
    finally:
        os.chmod(ro, 0o755)


def test_hostile_multi_output(args, want):
    """rope apply: Q and K together. A K that cannot be written leaves an existing Q untouched,
    even when the failure comes from a device (devices are opened first and written before any
    rename); Q into a FIFO and K into a file both arrive."""
    i = args.index('--k-out')
    d = hostile_dir('multi')
    q_path = os.path.join(d, 'q.npy')
    with open(q_path, 'wb') as f:
        f.write(b'old q')
    k_fifo = os.path.join(d, 'k-fifo')
    os.mkfifo(k_fifo)
    failing = [(os.path.join(d, 'dangling'), 'dangling'), (k_fifo, 'reading')]
    os.symlink('nowhere', os.path.join(d, 'dangling'))
    if WINDOWS_TOOL:
        windows_skip('rope apply: Q or K into a FIFO or a dangling symbolic link', POSIX_KINDS)
        failing = []
    full = make_char_device(os.path.join(d, 'full'), 7)
    if full:
        failing.append((full, 'No space left'))
    for k_path, needle in failing:
        before = sorted(os.listdir(d))
        proc = run(args[:i + 1] + [k_path] + args[i + 2:] + ['-o', q_path])
        assert proc.returncode == 1, f'K {os.path.basename(k_path)}: exit {proc.returncode}'
        assert_one_error_line(proc.stderr, needle)
        assert sorted(os.listdir(d)) == before, f'K {os.path.basename(k_path)}: leftovers'
        with open(q_path, 'rb') as f:
            assert f.read() == b'old q', f'K {os.path.basename(k_path)}: Q was replaced'
    if WINDOWS_TOOL:
        return None
    k_file = os.path.join(d, 'k.npy')
    proc, got = read_fifo_while(k_fifo, args[:i + 1] + [k_file] + args[i + 2:])  # Q into the FIFO
    assert proc.returncode == 0, f'exit {proc.returncode}: {proc.stderr.decode()!r}'
    assert got == want, 'Q through the FIFO differs from Q into a file'
    with open(k_file, 'rb') as f, open(args[i + 1], 'rb') as g:
        assert f.read() == g.read(), 'K differs'
    assert_kind(k_fifo, 'FIFO')


def run_hostile_output_cases(results):
    for name, args in hostile_commands():
        want = expected_bytes(args)
        subs = [('regular file', test_hostile_regular), ('FIFO', test_hostile_fifo),
                ('character device', test_hostile_char_device), ('symlink to a file', test_hostile_symlink),
                ('dangling symlink, directory', test_hostile_refused),
                ('unwritable path', test_hostile_unwritable)]
        if '--k-out' in args:
            subs.append(('two outputs', test_hostile_multi_output))
        for what, fn in subs:
            results.case(f'hostile -o {what}: {name}', fn, args, want)


# ---- analyze: large f16 tables ----------------------------------------------------------------------
#
# A hostile-harness report had analyze refuse valid 1024x1024 and 2048x2048 f16 tables as holding
# NaN or Inf. f16 tables analyze exactly like their f32 copy (the same values reach the spectrum),
# and their energy is sum(x^2) of the values. The spectrum costs O(D^3) per Jacobi sweep: at 1024
# and 2048 that is minutes of CPU, so those sizes run only with POSENC_CLI_SLOW=1.

SLOW = os.environ.get('POSENC_CLI_SLOW') == '1'


def test_analyze_f16_like_f32(kind, n):
    if kind == 'sinusoidal':
        f16 = load_npy(run_ok(table_args(n, n, dtype='f16')))
    else:
        f16 = np.random.default_rng(n).standard_normal((n, n)).astype(np.float16)
    assert np.isfinite(f16).all(), 'the f16 table itself holds NaN or Inf'
    a16 = analyze(save_npy(f'big16_{kind}_{n}.npy', f16), 4)
    a32 = analyze(save_npy(f'big32_{kind}_{n}.npy', f16.astype(np.float32)), 4)
    for key in ('rank', 'k90', 'k99'):
        assert a16[key][0] == a32[key][0], f'{key}: f16 {a16[key][0]}, f32 {a32[key][0]}'
    energy = float((f16.astype(np.float64) ** 2).sum())
    for key, want in (('energy', energy), ('entropy_rank', float(a32['entropy_rank'][0])),
                      ('sigma_1', float(a32['sigma_1'][0]))):
        got = float(a16[key][0])
        assert abs(got / want - 1) < 1e-12, f'{key}: f16 {got!r}, expected {want!r}'
    return f'rank {a16["rank"][0]}, energy {float(a16["energy"][0]):.9g}'


def run_analyze_f16_cases(results):
    sizes = (256, 1024, 2048) if SLOW else (256,)
    for n in sizes:
        for kind in ('sinusoidal', 'normal'):
            results.case(f'analyze {n}x{n} f16 {kind} == its f32 copy', test_analyze_f16_like_f32, kind, n)
    if not SLOW:
        NOTES.append('analyze of 1024x1024 and 2048x2048 f16 tables: set POSENC_CLI_SLOW=1 (CPU minutes each)')


# ---- hostile messages: huge user input is echoed shortened -----------------------------------------

WINDOWS_COMMAND_LINE = 32767  # characters, CreateProcess's limit


def test_long_input_message(args, needle):
    if WINDOWS_TOOL and len(subprocess.list2cmdline(args)) >= WINDOWS_COMMAND_LINE:
        return windows_skip('arguments over 32,767 characters', "Windows' command line cannot hold them")
    proc = run(args)
    assert proc.returncode in (1, 2), f'exit {proc.returncode}'
    assert_one_error_line(proc.stderr, needle)
    text = proc.stderr.decode()
    assert len(text) < 300, f'{len(text)} characters of stderr: {text[:120]!r}...'
    return text.strip()


def long_input_cases():
    digits = '1' * 100000
    deep = os.path.join(WORKDIR, *(['d' * 200] * 25))  # 5,000+ characters, each name legal
    return [
        (T + ['--positions', digits, '--dim', '8'], '--positions'),
        (T + P4D8 + ['--base', '1' + '0' * 99999], '--base'),
        (T + P4D8 + ['--start', '-' + digits], '--start'),
        (T + P4D8 + ['-o', deep], 'too long'),  # POSIX: File name too long; Windows: File name is too long
        (['rope', 'apply', '--in', deep + '.npy'], '--in'),
        (['analyze', deep + '.npy'], 'analyze'),
        (T + P4D8 + ['--' + 'x' * 5000], 'unknown option'),
        (['x' * 5000], 'unknown command'),
        (T + P4D8 + ['--name', 'n' * 5000 + '-', '--format', 'c'], '--name'),
        (T + P4D8 + ['--isa', 'i\n' * 3000], '--isa'),
    ]


class Results:
    def __init__(self):
        self.passed = self.failed = self.left = 0
        self.cases_of = {}  # check function -> its cases so far
        self.order = {}  # check function -> its place in the run's order (POSENC_TEST_SHARD)
        self.cases = 0  # cases so far, every shard's

    def case(self, name, fn, *args, every_shard=False):
        # The shard of a case: by its check's place where only each check's first cases run
        # (POSENC_TEST_WRAPPER_CASES), by its own place otherwise (a check's cases spread over the
        # shards: by check, one shard of the whole suite took 83 s and the other 15)
        place = self.order.setdefault(fn, len(self.order))
        self.cases += 1
        if (place if WRAPPED_CASES else self.cases - 1) % SHARD[1] != SHARD[0] and not every_shard:
            return
        self.cases_of[fn] = self.cases_of.get(fn, 0) + 1
        global CASE_SHAPES
        if WRAPPED_CASES and self.cases_of[fn] > WRAPPED_CASES:
            self.left += 1
            return
        CASE_SHAPES = set() if WRAPPED_CASES else None
        try:
            detail = fn(*args)
        except Exception as exc:  # any exception is a failed check, reported and counted
            self.failed += 1
            print(f'FAIL {name}: {type(exc).__name__}: {exc}')
            if not isinstance(exc, AssertionError):
                traceback.print_exc(file=sys.stdout)
        else:
            self.passed += 1
            print(f'ok   {name}' + (f'  [{detail}]' if detail else ''))
        finally:
            CASE_SHAPES = None


def main():
    global POSENC, WORKDIR, WINDOWS_TOOL
    # --sanitized: the binary runs under ASan, whose shadow memory needs far more address space
    # than the out-of-memory case allows; that case runs in the unsanitized builds.
    sanitized = '--sanitized' in sys.argv[2:]
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and not sanitized):
        sys.exit(__doc__)
    POSENC = os.path.abspath(sys.argv[1])
    WINDOWS_TOOL = POSENC.lower().endswith('.exe')
    results = Results()
    with tempfile.TemporaryDirectory(prefix='posenc-cli-test-') as WORKDIR:
        for case in F32_CASES:
            results.case(f'f32 accuracy {case}', test_f32_accuracy, *case)
        for dtype in ('f16', 'bf16'):
            for case in (F32_CASES[1], F32_CASES[3], F32_CASES[5], F32_CASES[6]):
                results.case(f'{dtype} accuracy {case}', test_half_precision, dtype, *case)
        for dtype in ('f32', 'f16', 'bf16'):
            for layout in ('interleaved', 'split'):
                results.case(f'raw == npy payload {dtype} {layout}', test_raw_equals_npy, dtype, layout)
        for fmt in ('npy', 'raw', 'c'):
            results.case(f'-o FILE == stdout, --format {fmt}', test_file_equals_stdout, fmt)
        results.case('option spellings and order', test_options_spelling)
        for dtype, layout, n, d, base, start, name in (
                ('f32', 'interleaved', 12, 16, 10000.0, 0, 'posenc_table'),  # 0.0f, 1.0f
                ('f32', 'split', 5, 9, 1e8, 3, 'pe_split'),     # 1e-06-style literals, odd D
                ('f32', 'interleaved', 1, 1, 10000.0, -7, 'one'),
                ('f16', 'interleaved', 12, 7, 10000.0, 3, 'pe16'),
                ('bf16', 'split', 12, 10, 10000.0, 3, 'pe_bf16')):
            results.case(f'C header {dtype} {layout} {n}x{d} start {start} {name}', test_c_header,
                         dtype, layout, n, d, base, start, name)
        for args in (['table', 'learned', '--rows', '3', '--dim', '5', '--seed', '7'],
                     ['table', 'learned', '--rows', '3', '--dim', '5', '--seed', '7', '--std', '0.1',
                      '--dtype', 'bf16'],
                     ['table', 'sincos2d', '--dim', '8', '--grid', '2x3', '--cls-token', '--base', '100'],
                     table_args(4, 6, base=1e8, start=-2, layout='split', extra=('--freqs', 't2t')),
                     table_args(4, 6, dtype='f16', extra=('--freqs', 'fairseq'))):
            results.case(f'C header regenerates: {shlex.join(args)}', test_table_kinds_regenerate, args)
        results.case('info', test_info)
        results.case('detection matches /proc/cpuinfo', test_detection_matches_cpuinfo)
        names, available, info = isa_facts()
        default_isa = re.search(r'^active isa: (\w+)$', info, re.M).group(1)
        for isa in available:
            results.case(f'--isa {isa} output identical to default', test_isa_identical, isa)
        for isa in sorted(set(names) - set(available)):
            results.case(f'--isa {isa} unavailable -> exit 1', test_isa_unavailable, isa)
            results.case(f'POSENC_ISA={isa} unavailable is ignored', test_info_env, isa,
                         default_isa, 'ignored: not')
        results.case('POSENC_ISA=bogus is ignored', test_info_env, 'bogus', default_isa,
                     'ignored: unknown')
        results.case('POSENC_ISA=scalar is used', test_info_env, 'scalar', 'scalar', "POSENC_ISA: 'scalar'")
        results.case('info --isa scalar overrides POSENC_ISA', test_info_forced)
        for args, needles in ((['--help'], ['Usage: posenc', 'info', 'table', '--isa']),
                              (['-h'], ['Usage: posenc']),
                              (['info', '--help'], ['Usage: posenc info', 'selftest']),
                              (['table', '--help'], ['Usage: posenc table', '<u2', 'bf16']),
                              (T + ['-h'], ['--positions', '--dim', '--base', '--start', '--layout',
                                            '--dtype', '--format', '--name', '--output'])):
            results.case(f'help: {" ".join(args)}', test_help, args, needles)
        results.case('--version', test_version)
        results.case('--help wins over bad values', test_help_wins)
        for args, needle in USAGE_ERRORS:
            modes = ('stdout', 'new', 'existing') if args[:2] == T and '-o' not in args else ('stdout',)
            for mode in modes:
                results.case(f'usage error ({mode}): {shlex.join(args)}', test_bad_args,
                             args, needle, 2, mode)
        results.case('-o into a missing directory -> exit 1', test_missing_directory)
        results.case('-o naming a directory -> exit 1', test_output_is_directory)
        if sys.platform.startswith('linux'):
            if not sanitized:
                results.case('out of memory -> exit 1', test_out_of_memory)
        if os.path.exists('/dev/full'):
            results.case('stdout write error -> exit 1', test_stdout_full)
            results.case('stdio text to a full stdout -> exit 1 with the reason', test_text_stdout_full)
        run_stream_cases(results, sanitized)
        run_rope_cases(results, available)
        run_issue4_cases(results)
        run_issue5_cases(results, available)
        run_hostile_output_cases(results)
        run_analyze_f16_cases(results)
        for args, needle in long_input_cases():
            shown = shlex.join(a if len(a) < 40 else f'<{len(a)} characters>' for a in args)
            results.case(f'long input echoed short: {shown}', test_long_input_message, args, needle)
        results.case('no temporary files left', test_no_leftovers, every_shard=True)
        for note in NOTES:
            print(f'figure: not run: {note}')
        for retry in WINE_RETRIES:
            print(f'figure: Wine failed a run, run again: {retry}')
        if WRAPPED_CASES:
            first = 'the first case' if WRAPPED_CASES == 1 else f'the first {WRAPPED_CASES} cases'
            print(f'figure: {first} of each check, {RUNS[0]} runs of the tool (some while cases are set'
                  f' up), {RUNS[1]} of them under {shlex.join(WRAPPER)}; {results.left} cases not run here'
                  f' (the plain and ASan builds run them)')
        if SHARD[1] > 1:
            print(f'figure: shard {SHARD[0]}/{SHARD[1]}: {sum(results.cases_of.values())} of the {results.cases}'
                  f' cases, of {len(results.cases_of)} of the {len(results.order)} checks')
    print(f'{results.passed} passed, {results.failed} failed')
    sys.exit(1 if results.failed or not results.passed else 0)


if __name__ == '__main__':
    main()
