#!/usr/bin/env python3
"""Black-box tests of the posenc command-line tool.

Usage: test_cli.py PATH/TO/posenc

Runs the binary and checks its output against an independent float64 NumPy computation, the
.npy / raw / C-header formats against each other (the header is compiled as C99 and C++11 and
its XXH3 checked), ISA independence, and that every bad argument fails with one line on stderr
without leaving any output file behind. CC and CXX override the compilers (default cc, c++).
The last line is "N passed, M failed"; the exit status is non-zero if anything failed.
"""
import ast
import io
import os
import re
import shlex
import subprocess
import sys
import tempfile
import traceback

import numpy as np

POSENC = ''   # the binary under test (set in main)
WORKDIR = ''  # scratch directory for this run

# ---- running the tool ----------------------------------------------------------------------


def run(args, env=None, stdout=subprocess.PIPE, preexec_fn=None):
    full_env = dict(os.environ)
    full_env.pop('POSENC_ISA', None)  # tests set it explicitly when they need it
    full_env.update(env or {})
    return subprocess.run([POSENC] + list(args), stdout=stdout, stderr=subprocess.PIPE,
                          env=full_env, timeout=120, preexec_fn=preexec_fn)


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
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    assert proc.returncode == 0, f'{" ".join(cmd)} failed:\n{proc.stdout.decode()[-3000:]}'


def test_c_header(dtype, layout, n, d, base, start, name):
    base_args = table_args(n, d, base=base, start=start, layout=layout, dtype=dtype)
    npy = load_npy(run_ok(base_args))
    tag = f'{name}_{dtype}_{layout}_{d}'
    header = os.path.join(WORKDIR, f'{tag}.h')
    run_ok(base_args + ['--format', 'c', '--name', name, '-o', header])
    text = open(header).read()
    assert f'posenc table sinusoidal --positions {n} --dim {d}' in text, 'no provenance comment'
    assert f'#define {name}_ROWS {n}\n' in text and f'#define {name}_COLS {d}\n' in text, \
        'ROWS/COLS macros missing'
    subst = {'header': os.path.basename(header), 'name': name}
    strict = ['-Wall', '-Wextra', '-Wpedantic', '-Werror', '-I', WORKDIR]
    for lang, tool, std, ext in (('C', 'CC', '-std=c99', 'c'), ('C++', 'CXX', '-std=c++11', 'cpp')):
        src = os.path.join(WORKDIR, f'use_{tag}.{ext}')
        with open(src, 'w') as f:
            f.write(USE_HEADER % subst)
        compile_or_fail(compiler(tool, 'cc' if tool == 'CC' else 'c++') +
                        [std] + strict + ['-c', src, '-o', src + '.o'])
    src, exe = os.path.join(WORKDIR, f'hash_{tag}.c'), os.path.join(WORKDIR, f'hash_{tag}')
    with open(src, 'w') as f:
        f.write(HASH_PROGRAM % subst)
    compile_or_fail(compiler('CC', 'cc') + ['-std=c99', '-I', WORKDIR, src, '-o', exe])
    dump = os.path.join(WORKDIR, f'{tag}.bin')
    out = subprocess.run([exe, dump], stdout=subprocess.PIPE, check=True, timeout=60)
    rows, cols, computed, embedded = out.stdout.decode().split()
    assert (int(rows), int(cols)) == (n, d), f'ROWS/COLS {rows}x{cols}, expected {n}x{d}'
    if sys.byteorder == 'little':  # the macro hashes little-endian bytes
        assert computed == embedded, f'XXH3 of the array {computed} != {name}_XXH3 {embedded}'
    native = np.dtype('<f4' if dtype == 'f32' else '<u2').newbyteorder('=')
    values = np.fromfile(dump, dtype=native).reshape(n, d)
    expected = npy.view(np.uint32 if dtype == 'f32' else np.uint16)
    got = values.view(np.uint32 if dtype == 'f32' else np.uint16)
    assert np.array_equal(got, expected), 'the compiled array differs bitwise from the npy output'


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
    assert names == sorted(['scalar', 'sse2', 'avx2', 'neon']), f'ISA lines: {names}'
    assert 'scalar' in available, 'scalar must always be available'
    assert re.search(r'^active isa: (\w+)$', info, re.M), 'no active isa line'
    active = re.search(r'^active isa: (\w+)$', info, re.M).group(1)
    assert active in available, f'active isa {active} is not available'
    assert re.search(r'^selftest: \S', info, re.M), 'no selftest line'
    assert re.search(r'^version: \d+\.\d+\.\d+$', info, re.M), 'no version line'
    assert re.search(r'^POSENC_ISA: unset$', info, re.M), 'POSENC_ISA should read unset'
    return info.splitlines()[-1]


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
    """A 2 GB table under a 1 GiB address-space limit: exit 1, one line, no file."""
    import resource
    limit = 1 << 30
    path = os.path.join(WORKDIR, 'oom.npy')
    before = listing()
    proc = run(table_args(1 << 20, 512) + ['-o', path],
               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert proc.returncode == 1, f'exit {proc.returncode}: {proc.stderr!r}'
    assert_one_error_line(proc.stderr, 'out of memory')
    assert listing() == before, 'a file was left behind'
    return proc.stderr.decode().strip()


def test_stdout_full():
    with open('/dev/full', 'wb') as full:
        proc = run(table_args(64, 64), stdout=full)
    assert proc.returncode == 1, f'exit {proc.returncode}'
    assert_one_error_line(proc.stderr, 'standard output')
    return proc.stderr.decode().strip()


def test_no_leftovers():
    leftovers = [name for name in os.listdir(WORKDIR) if name.startswith('.posenc-')]
    assert not leftovers, f'temporary files left behind: {leftovers}'


def test_help_wins():
    """--help prints help even when other values are wrong (they are not converted)."""
    text = run_ok(T + ['--dim', 'abc', '--help']).decode()
    assert 'Usage: posenc table' in text


# ---- driver -----------------------------------------------------------------------------------------

class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def case(self, name, fn, *args):
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


def main():
    global POSENC, WORKDIR
    # --sanitized: the binary runs under ASan, whose shadow memory needs far more address space
    # than the out-of-memory case allows; that case runs in the unsanitized builds.
    sanitized = '--sanitized' in sys.argv[2:]
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and not sanitized):
        sys.exit(__doc__)
    POSENC = os.path.abspath(sys.argv[1])
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
        results.case('info', test_info)
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
        results.case('no temporary files left', test_no_leftovers)
    print(f'{results.passed} passed, {results.failed} failed')
    sys.exit(1 if results.failed else 0)


if __name__ == '__main__':
    main()
