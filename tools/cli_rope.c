/* cli_rope.c - 'posenc rope freqs|table|apply'.
 *
 * The three commands share the variant options (converted once, by convert_variant) and the
 * library's own validation (posenc_rope_init). Each command reads its inputs, computes in
 * memory and only then writes, all-or-nothing (cli_write.c). Exit statuses: EXIT_USAGE for
 * anything about the options themselves (including a library error they cause), EXIT_FAILURE
 * for I/O, memory and the contents of input files. */
#include "cli_rope.h"

#include <float.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_format.h"
#include "cli_input.h"
#include "cli_parse.h"
#include "cli_stream.h"
#include "cli_write.h"

#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))
#define MAX_PAIRS (POSENC_ROPE_MAX_DIM / 2)
#define MAX_ROWS ((size_t)INT32_MAX + 1) /* positions 0 .. 2147483647 */
#define BIG 1e300                         /* the library's bound on factors, betas, mscales */

/* ---- help ------------------------------------------------------------------------------------- */

static const char freqs_usage[] =
  "Usage: posenc rope freqs --head-dim D [variant options] [--format text|npy] [-o FILE]\n";
static const char table_usage[] =
  "Usage: posenc rope table --head-dim D (--rows N [--start S] | --positions P.npy)\n"
  "           [--layout half|full|interleaved] [--dtype f32|f16|bf16] [variant options]\n"
  "           [--format npy|raw|c [--name IDENT]] [-o FILE]\n";
static const char apply_usage[] =
  "Usage: posenc rope apply --in X.npy [--positions P.npy | --start S] [--k K.npy --k-out FILE]\n"
  "           [--inverse] [--cache-rows N [--layout L]] [--out-dtype f32|f16|bf16]\n"
  "           [--qk-norm W.npy [--k-norm KW.npy] [--qk-norm-eps E] [--qk-norm-offset]]\n"
  "           [variant options] [-o FILE]\n";

static const char rope_intro[] =
  "\n"
  "Rotary position embedding. Pair i < d/2 of the rotary dims has the frequency w_i (default\n"
  "base^(-2i/d); the scalings change it); position p rotates the pair by the angle p*w_i, and\n"
  "cos and sin are scaled by the attention factor A. cos/sin come from the library's exact\n"
  "primitive (README: Contracts), the same bits on every ISA; --hf-compat reproduces HF's\n"
  "float32 recipe instead.\n";

static const char freqs_text[] =
  "\n"
  "rope freqs: the frequencies and the attention factor.\n"
  "  text (default): a line '# attention_factor A', a header line, then one line 'i w_i' per pair,\n"
  "        w_i printed with 17 significant digits (the real-valued frequency rounded to double);\n"
  "        with --hf-compat a third column holds HF's float32 inv_freq (9 digits: exact as float32)\n"
  "  npy:  a float64 array of shape (d/2,) holding w_i (A is not in it: see the text format)\n"
  "  --format F           text (default) or npy\n"
  "  -o, --output FILE    write FILE instead of stdout (replaced only once complete)\n";

static const char table_text[] =
  "\n"
  "rope table: the cos/sin cache, shape (N, width), row r for the r-th position:\n"
  "  half         [A cos(p w_0) .. A cos(p w_h-1) | A sin(p w_0) ..]  width d (vLLM cos_sin_cache)\n"
  "  full         [cos | cos | sin | sin]                             width 2d (HF's cos, sin rows)\n"
  "  interleaved  [cos_0 sin_0 cos_1 sin_1 ..]                        width d (Meta's freqs_cis)\n"
  "  --rows N             positions S .. S+N-1\n"
  "  --start S            first position (default 0); |S| and S+N-1 at most 2147483647\n"
  "  --positions P.npy    instead of --rows/--start: a 1-D <i4 or <i8 array of positions\n"
  "  --layout L           half (default), full or interleaved\n"
  "  --dtype T            f32 (default: <f4), f16 (<f2) or bf16, stored as <u2 holding the raw\n"
  "                       bits as 'posenc table' does; decode with\n"
  "                       (a.astype(np.uint32) << 16).view(np.float32)\n"
  "  --format F           npy (default); raw: the values only, little-endian, row-major; c: a C/C++\n"
  "                       header for firmware, one array IDENT[N][width] holding the cache in its\n"
  "                       layout and dtype (as 'posenc table --format c' writes tables: f32 values\n"
  "                       that convert back exactly, f16/bf16 uint16_t bit patterns), IDENT_ROWS,\n"
  "                       IDENT_COLS and IDENT_XXH3 (XXH3-64 of its little-endian bytes), and the\n"
  "                       command that regenerates it (not with --positions: row r is position S+r)\n"
  "  --name IDENT         the array's C identifier with --format c (default posenc_rope_cache)\n"
  "  -o, --output FILE    write FILE instead of stdout (replaced only once complete)\n";

static const char apply_text[] =
  "\n"
  "rope apply: rotates X in the order (x0, x1) -> (x0 c - x1 s, x1 c + x0 s) in float32 and writes\n"
  "the result with X's shape and dtype (or --out-dtype's). X is <f4 or <f2, C order, of shape\n"
  "(tokens, heads, D) or (batch, tokens, heads, D); D, the head dim, is its last axis.\n"
  "  --in X.npy           the tensor to rotate (queries, say)\n"
  "  --positions P.npy    <i4 or <i8 positions of shape (tokens,) (every batch row) or\n"
  "                       (batch, tokens); M-RoPE: (3, tokens) or (3, batch, tokens) for t, h, w\n"
  "  --start S            instead: positions S, S+1, .. in every batch row (default 0)\n"
  "  --k K.npy            also rotate K: same batch and tokens and D, any head count (GQA)\n"
  "  --k-out FILE         where the rotated K goes (required with --k)\n"
  "  --inverse            rotate by -angle: undoes a forward rotation\n"
  "  --cache-rows N       read cos/sin from a cache of positions 0 .. N-1 (f32) instead of\n"
  "                       computing them per token: the same bits; positions must lie in [0, N)\n"
  "  --layout L           the cache's layout with --cache-rows: half (default), full, interleaved\n"
  "  --out-dtype T        the dtype of every output (-o, --k-out): f32 (<f4), f16 (<f2) or bf16 (<u2\n"
  "                       holding the raw bits, as 'rope table --dtype bf16' writes them). Default:\n"
  "                       each output its input's. An input is converted to float32, rotated in\n"
  "                       float32 and rounded once to T (posenc_rope_apply_out), so from an <f4\n"
  "                       input T's output is the float32 output converted to T\n"
  "  --qk-norm W.npy      QK-norm (Qwen3's q_norm, Gemma 3's): each head of X is RMS-normalised\n"
  "                       and scaled by W, shape (D,), shared by the heads, then rotated (dims past\n"
  "                       --rotary-dim: normalised only), fused (posenc_rope_apply_norm):\n"
  "                       x * W / sqrt(mean(x^2) + E) in float32, rounded once to the output dtype\n"
  "                       (as HF's Gemma 3; HF's Qwen3 rounds to the model's dtype before the\n"
  "                       weight; the exact rule: posenc.h, posenc_rope_norm). W is <f4, <f2 or\n"
  "                       <u2 (bfloat16 bits), converted to float32 exactly. Forward only: not with\n"
  "                       --inverse. OLMo 2's QK-norm spans all heads at once and is not this\n"
  "  --k-norm KW.npy      K's own weight (Qwen3's k_norm), shape (D,): required with --qk-norm and\n"
  "                       --k (give one file twice to share a weight). To normalise K alone, give K\n"
  "                       as --in\n"
  "  --qk-norm-eps E      added to the mean square by both norms, rounded to float32: finite, > 0\n"
  "                       (default 1e-6, the rms_norm_eps of Qwen3 and Gemma 3)\n"
  "  --qk-norm-offset     both norms scale by 1 + W (Gemma's convention) instead of W\n"
  "  -o, --output FILE    the rotated X (default stdout). All outputs are replaced together,\n"
  "                       only once every one of them is complete\n";

static const char variant_text[] =
  "\n"
  "Variant options (the same in freqs, table and apply):\n"
  "  --head-dim D         elements per head, at least 2 (apply: X's last axis)\n"
  "  --rotary-dim d       rotated dims, even, at most D and 512 (default D); the rest pass through\n"
  "  --base B             rope_theta (default 10000)\n"
  "  --style S            neox: pairs (j, j + d/2), HF Llama (default); gptj: pairs (2j, 2j + 1)\n"
  "  --scaling K          none (default), linear, ntk, dynamic, yarn, llama3 or longrope\n"
  "  --factor s           the scaling factor (required by every scaling but none)\n"
  "  --original-max-pos L original context: dynamic (HF's max_position_embeddings), yarn, llama3,\n"
  "                       longrope (required there)\n"
  "  --seq-len S          dynamic, longrope: the sequence length, HF's max(position_ids) + 1.\n"
  "                       Default: L for freqs; the largest position + 1 for table and apply\n"
  "  --qwen-alpha         dynamic: Qwen's rule base * alpha^(d/(d-2)), alpha = 2^ceil(log2(S/L)+1) - 1\n"
  "                       (takes no --factor)\n"
  "  --beta-fast B        yarn: default 32 (0 means the default, as in HF)\n"
  "  --beta-slow B        yarn: default 1 (0 means the default)\n"
  "  --no-truncate        yarn: keep the correction range unrounded (gpt-oss)\n"
  "  --mscale M           yarn (DeepSeek): with --mscale-all-dim, A = mscale(s, M) / mscale(s, M_all);\n"
  "  --mscale-all-dim M   either alone is ignored, as in HF\n"
  "  --low-freq-factor F  llama3: default 1\n"
  "  --high-freq-factor F llama3: default 4; must exceed the low one\n"
  "  --short-factor F.npy longrope: d/2 factors (<f4, <f8 or <f2), used while S <= L (required)\n"
  "  --long-factor F.npy  longrope: d/2 factors used when S > L (required)\n"
  "  --freq-factors F.npy ggml rope_freqs: w_i / F[i], d/2 factors, any scaling (not --hf-compat)\n"
  "  --attention-factor A cos and sin times A (default: yarn's and longrope's own, else 1)\n"
  "  --mrope-section t,h,w  M-RoPE (Qwen2-VL): pairs per position axis t, h, w; sums to d/2\n"
  "  --mrope-interleaved  with --mrope-section: Qwen3-VL's interleaved assignment\n"
  "  --hf-compat          Hugging Face's float32 path: HF's float32 inv_freq (pow correctly rounded),\n"
  "                       the angle fl32(fl32(p) * inv_freq), and the correctly rounded cos/sin of it\n"
  "  --isa NAME           backend (see 'posenc --help'); the output is the same on every ISA\n"
  "  -h, --help           show this help\n"
  "\n"
  "Exit status: 0 success; 1 I/O, memory, or a problem with an input file's contents (not a\n"
  "strict little-endian C-order .npy, wrong dtype or shape, a bad value); 2 usage error.\n";

void rope_help(enum leaf leaf, FILE *out) {
  switch (leaf) {
    case LEAF_ROPE_FREQS: fputs(freqs_usage, out); fputs(rope_intro, out); fputs(freqs_text, out); break;
    case LEAF_ROPE_TABLE: fputs(table_usage, out); fputs(rope_intro, out); fputs(table_text, out); break;
    case LEAF_ROPE_APPLY: fputs(apply_usage, out); fputs(rope_intro, out); fputs(apply_text, out); break;
    default:
      fputs(freqs_usage, out); fputs(table_usage, out); fputs(apply_usage, out); fputs(rope_intro, out);
      fputs(freqs_text, out); fputs(table_text, out); fputs(apply_text, out);
      break;
  }
  fputs(variant_text, out);
}

/* ---- the variant options ---------------------------------------------------------------------- */

static const char *const style_names[] = {"neox", "gptj"};  /* by posenc_rope_style */
static const char *const scaling_names[] = {"none", "linear", "ntk", "dynamic", "yarn", "llama3",
                                            "longrope"};      /* by posenc_rope_scaling */
static const char *const cache_layout_names[] = {"half", "full", "interleaved"}; /* by layout */
static const char *const dtype_names[] = {"f32", "f16", "bf16"};                   /* by posenc_dtype */

#define SC(name) (1u << POSENC_ROPE_SCALING_##name)
#define SC_SCALED (SC(LINEAR) | SC(NTK) | SC(DYNAMIC) | SC(YARN) | SC(LLAMA3) | SC(LONGROPE))

/* Options that belong to some scalings only. */
static const struct {
  enum option_id id;
  unsigned scalings;
} scaling_options[] = {
  {OPT_FACTOR, SC_SCALED},
  {OPT_ORIGINAL_MAX_POS, SC(DYNAMIC) | SC(YARN) | SC(LLAMA3) | SC(LONGROPE)},
  {OPT_SEQ_LEN, SC(DYNAMIC) | SC(LONGROPE)},
  {OPT_QWEN_ALPHA, SC(DYNAMIC)},
  {OPT_BETA_FAST, SC(YARN)},
  {OPT_BETA_SLOW, SC(YARN)},
  {OPT_NO_TRUNCATE, SC(YARN)},
  {OPT_MSCALE, SC(YARN)},
  {OPT_MSCALE_ALL_DIM, SC(YARN)},
  {OPT_LOW_FREQ_FACTOR, SC(LLAMA3)},
  {OPT_HIGH_FREQ_FACTOR, SC(LLAMA3)},
  {OPT_SHORT_FACTOR, SC(LONGROPE)},
  {OPT_LONG_FACTOR, SC(LONGROPE)},
};

/* "yarn", "dynamic or longrope", ... */
static void scaling_list(unsigned scalings, char *out, size_t size) {
  size_t len = 0, left = 0, i;
  for (i = 0; i < COUNT_OF(scaling_names); i++) left += (scalings >> i) & 1u;
  out[0] = '\0';
  for (i = 0; i < COUNT_OF(scaling_names); i++) {
    if (!((scalings >> i) & 1u)) continue;
    left--;
    len += (size_t)snprintf(out + len, size - len, "%s%s", scaling_names[i],
                            left > 1 ? ", " : left == 1 ? " or " : "");
    if (len >= size) return;
  }
}


/* A 32-bit count option (original max position, sequence length). */
static int convert_u32(const struct raw_args *args, enum option_id id, uint32_t *out) {
  size_t value = 0;
  int rc = convert_optional_count(args, id, UINT32_MAX, &value);
  if (rc == EXIT_SUCCESS && args->value[id]) *out = (uint32_t)value;
  return rc;
}

/* "t,h,w": three counts. */
static int convert_mrope_section(const struct raw_args *args, uint32_t section[3]) {
  const char *text = args->value[OPT_MROPE_SECTION], *p = text;
  int part;
  if (!text) return EXIT_SUCCESS;
  for (part = 0; part < 3; part++) {
    char digits[24];
    size_t len = strcspn(p, ","), value;
    if (len == 0 || len >= sizeof digits || (p[len] == ',') != (part < 2)) break;
    memcpy(digits, p, len);
    digits[len] = '\0';
    if (parse_size(digits, &value) != PARSE_OK || value > UINT32_MAX) break;
    section[part] = (uint32_t)value;
    if (part < 2) p += len + 1;
  }
  if (part < 3) return bad_value(OPT_MROPE_SECTION, text, "expected three counts t,h,w");
  return EXIT_SUCCESS;
}

/* Every variant option into req->config (head_dim may still be 0: apply). */
static int convert_variant(const struct raw_args *args, struct rope_request *req) {
  posenc_rope_config *c = &req->config;
  int style = POSENC_ROPE_NEOX, scaling = POSENC_ROPE_SCALING_NONE, rc;
  size_t rotary = 0, i;
  *c = posenc_rope_default(0);
  req->head_dim_given = 0;
  if ((rc = convert_optional_count_from(args, OPT_HEAD_DIM, 2, SIZE_MAX, &req->head_dim_given)) ||
      (rc = convert_optional_count(args, OPT_ROTARY_DIM, SIZE_MAX, &rotary)) ||
      (rc = convert_optional_double(args, OPT_BASE, &c->base)) ||
      (rc = convert_choice(args, OPT_STYLE, style_names, COUNT_OF(style_names),
                           "unknown style (expected neox or gptj)", &style)) ||
      (rc = convert_choice(args, OPT_SCALING, scaling_names, COUNT_OF(scaling_names),
                           "unknown scaling (expected none, linear, ntk, dynamic, yarn, llama3 or "
                           "longrope)",
                           &scaling)) ||
      (rc = convert_optional_real(args, OPT_FACTOR, 1, BIG, &c->factor)) ||
      (rc = convert_u32(args, OPT_ORIGINAL_MAX_POS, &c->original_max_pos)) ||
      (rc = convert_u32(args, OPT_SEQ_LEN, &c->seq_len)) ||
      (rc = convert_optional_real(args, OPT_BETA_FAST, 0, BIG, &c->beta_fast)) ||
      (rc = convert_optional_real(args, OPT_BETA_SLOW, 0, BIG, &c->beta_slow)) ||
      (rc = convert_optional_real(args, OPT_MSCALE, 0, BIG, &c->mscale)) ||
      (rc = convert_optional_real(args, OPT_MSCALE_ALL_DIM, 0, BIG, &c->mscale_all_dim)) ||
      (rc = convert_optional_real(args, OPT_LOW_FREQ_FACTOR, 1, BIG, &c->low_freq_factor)) ||
      (rc = convert_optional_real(args, OPT_HIGH_FREQ_FACTOR, 1, BIG, &c->high_freq_factor)) ||
      (rc = convert_optional_real(args, OPT_ATTENTION_FACTOR, 1, 1e30, &c->attention_factor)) ||
      (rc = convert_mrope_section(args, c->mrope_section)))
    return rc;
  c->head_dim = req->head_dim_given;
  c->rotary_dim = rotary;
  c->style = (posenc_rope_style)style;
  c->scaling = (posenc_rope_scaling)scaling;
  c->dynamic_qwen_alpha = args->value[OPT_QWEN_ALPHA] != NULL;
  c->yarn_no_truncate = args->value[OPT_NO_TRUNCATE] != NULL;
  c->hf_compat = args->value[OPT_HF_COMPAT] != NULL;
  if (args->value[OPT_MROPE_SECTION])
    c->mrope = args->value[OPT_MROPE_INTERLEAVED] ? POSENC_ROPE_MROPE_INTERLEAVED
                                                  : POSENC_ROPE_MROPE_SECTIONS;
  req->seq_len_given = args->value[OPT_SEQ_LEN] != NULL;
  req->short_path = args->value[OPT_SHORT_FACTOR];
  req->long_path = args->value[OPT_LONG_FACTOR];
  req->freq_factors_path = args->value[OPT_FREQ_FACTORS];
  req->base_text = args->value[OPT_BASE] ? args->value[OPT_BASE] : "10000";

  /* which options the scaling takes, and which it needs */
  for (i = 0; i < COUNT_OF(scaling_options); i++)
    if (args->value[scaling_options[i].id] && !(scaling_options[i].scalings & (1u << scaling))) {
      char list[96];
      scaling_list(scaling_options[i].scalings, list, sizeof list);
      return cli_usage_error("%s only applies to --scaling %s", option_label(scaling_options[i].id), list);
    }
  if (c->dynamic_qwen_alpha) {
    if (args->value[OPT_FACTOR])
      return cli_usage_error("--factor is not used by --qwen-alpha (Qwen's rule depends on --seq-len and "
                         "--original-max-pos only)");
    c->factor = 1.0; /* checked by the library, not used */
  } else if (scaling != POSENC_ROPE_SCALING_NONE && !args->value[OPT_FACTOR]) {
    return cli_usage_error("--scaling %s needs --factor", scaling_names[scaling]);
  }
  if (((SC(DYNAMIC) | SC(YARN) | SC(LLAMA3) | SC(LONGROPE)) & (1u << scaling)) && !c->original_max_pos)
    return cli_usage_error("--scaling %s needs --original-max-pos", scaling_names[scaling]);
  if (scaling == POSENC_ROPE_SCALING_LONGROPE && c->original_max_pos < 2)
    return cli_usage_error("--scaling longrope needs --original-max-pos of at least 2 (A divides by ln L)");
  if (scaling == POSENC_ROPE_SCALING_LONGROPE && (!req->short_path || !req->long_path))
    return cli_usage_error("--scaling longrope needs --short-factor and --long-factor");
  if (scaling == POSENC_ROPE_SCALING_LLAMA3) {
    double low = c->low_freq_factor != 0.0 ? c->low_freq_factor : 1.0;
    double high = c->high_freq_factor != 0.0 ? c->high_freq_factor : 4.0;
    if (!(high > low))
      return cli_usage_error("--high-freq-factor (default 4) must be greater than --low-freq-factor (default 1)");
  }
  if (args->value[OPT_MROPE_INTERLEAVED] && !args->value[OPT_MROPE_SECTION])
    return cli_usage_error("--mrope-interleaved needs --mrope-section");
  if (c->hf_compat && req->freq_factors_path)
    return cli_usage_error("--freq-factors cannot be combined with --hf-compat (HF has no float32 recipe for "
                       "ggml's frequency factors)");
  return EXIT_SUCCESS;
}

/* ---- checks that need the head dim ------------------------------------------------------------- */

static size_t rotary_dim_of(const posenc_rope_config *c) {
  return c->rotary_dim ? c->rotary_dim : c->head_dim;
}

/* The dims against each other and the library's limits; source says where the head dim came
 * from ("--head-dim 64", "the head dim of --in (64)"). */
static int check_dims(const posenc_rope_config *c, const char *source) {
  size_t d = rotary_dim_of(c);
  uint64_t sections = (uint64_t)c->mrope_section[0] + c->mrope_section[1] + c->mrope_section[2];
  if (c->head_dim < 2) return cli_usage_error("%s: the head dim must be at least 2", source);
  if (c->rotary_dim && c->rotary_dim > c->head_dim)
    return cli_usage_error("--rotary-dim %zu exceeds the head dim (%s)", c->rotary_dim, source);
  if (d % 2 && c->rotary_dim) return cli_usage_error("--rotary-dim %zu: must be even", d);
  if (d % 2)
    return cli_usage_error("%s is odd: RoPE rotates an even number of dims (set --rotary-dim)", source);
  if (d > POSENC_ROPE_MAX_DIM)
    return cli_usage_error("the rotary dim %zu exceeds %d (set --rotary-dim)", d, POSENC_ROPE_MAX_DIM);
  if (d < 4 && (c->scaling == POSENC_ROPE_SCALING_NTK || c->scaling == POSENC_ROPE_SCALING_DYNAMIC))
    return cli_usage_error("--scaling %s needs a rotary dim of at least 4 (its exponent is d/(d-2))",
                       scaling_names[c->scaling]);
  if (c->mrope != POSENC_ROPE_MROPE_NONE && sections != d / 2)
    return cli_usage_error("--mrope-section %" PRIu32 ",%" PRIu32 ",%" PRIu32 " covers %" PRIu64
                       " pairs, but the rotary dim %zu has %zu", c->mrope_section[0], c->mrope_section[1],
                       c->mrope_section[2], sections, d, d / 2);
  return EXIT_SUCCESS;
}

/* A library error that the options caused: name them. */
static int report_config_status(const struct rope_request *req, posenc_status st) {
  switch (st) {
    case POSENC_OK: return EXIT_SUCCESS;
    case POSENC_ERR_BASE: return bad_value(OPT_BASE, req->base_text, posenc_strerror(st));
    case POSENC_ERR_DIM: return cli_usage_error("the head or rotary dims: %s", posenc_strerror(st));
    case POSENC_ERR_PARAM: return cli_usage_error("the RoPE variant options: %s", posenc_strerror(st));
    default:
      cli_error("internal error: %s", posenc_strerror(st));
      return EXIT_FAILURE;
  }
}

/* Storage for any rope the options can ask for (15 KiB, on the heap). */
typedef POSENC_ROPE_STORAGE(POSENC_ROPE_MAX_DIM) rope_storage;
/* All that the options decide, checked by the library itself before any file is read (the
 * factor lists stand in as ones). */
static int validate_config(const struct rope_request *req, const posenc_rope_config *c,
                           const char *source) {
  float stand_in[MAX_PAIRS];
  posenc_rope_config probe = *c;
  rope_storage *rope;
  size_t i;
  int rc = check_dims(c, source);
  if (rc) return rc;
  for (i = 0; i < MAX_PAIRS; i++) stand_in[i] = 1.0f;
  if (req->short_path) probe.short_factor = stand_in;
  if (req->long_path) probe.long_factor = stand_in;
  if (req->freq_factors_path) probe.freq_factors = stand_in;
  rope = malloc(sizeof *rope);
  if (!rope) {
    cli_error("out of memory");
    return EXIT_FAILURE;
  }
  rc = report_config_status(req, posenc_rope_init(&rope->rope, sizeof *rope, &probe));
  free(rope);
  return rc;
}

/* ---- the request -------------------------------------------------------------------------------- */

static int convert_positions_choice(const struct raw_args *args, struct rope_request *req) {
  int rc;
  if (args->value[OPT_POSITIONS] && args->value[OPT_START])
    return cli_usage_error("--start and --positions exclude each other");
  if ((rc = convert_optional_int32(args, OPT_START, &req->start)) != EXIT_SUCCESS) return rc;
  req->positions_path = args->value[OPT_POSITIONS];
  if (req->positions_path && req->positions_path[0] == '\0')
    return bad_value(OPT_POSITIONS, "", "empty file name");
  return EXIT_SUCCESS;
}

/* start .. start + n - 1 must stay within int32; what: "rows (--rows)", "tokens (--in)". */
static int check_range(int32_t start, size_t n, const char *what) {
  if ((uint64_t)(n - 1) > (uint64_t)((int64_t)INT32_MAX - start))
    return cli_usage_error("--start %" PRId32 " with %zu %s: the last position exceeds 2147483647", start, n,
                       what);
  return EXIT_SUCCESS;
}

static int convert_freqs(const struct raw_args *args, struct rope_request *req) {
  static const char *const formats[] = {"npy", "text"};
  int text = 1, rc;
  if ((rc = convert_choice(args, OPT_FORMAT, formats, COUNT_OF(formats),
                           "unknown format (expected text or npy)", &text)))
    return rc;
  req->text_format = text;
  return EXIT_SUCCESS;
}

/* A C header's regenerate command names the factor files: it must stay one shell word inside
 * a C comment. */
static int check_plain_path(enum option_id id, const char *path) {
  if (path && (!*path || path[strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                           "0123456789_./+-")]))
    return bad_value(id, path, "with --format c the path must use only letters, digits and _ . / + -");
  return EXIT_SUCCESS;
}

/* --format c: the header's rows are positions --start + r, and its comment can name every input. */
static int check_c_format(const struct raw_args *args, const struct rope_request *req) {
  const char *problem = c_identifier_problem(req->name);
  int rc;
  if (args->value[OPT_NAME] && req->format != TABLE_FORMAT_C)
    return bad_value(OPT_NAME, req->name, "only applies to --format c");
  if (req->format != TABLE_FORMAT_C) return EXIT_SUCCESS;
  if (problem) return bad_value(OPT_NAME, req->name, problem);
  if (req->positions_path)
    return cli_usage_error("--format c bakes positions --start .. --start + --rows - 1: --positions does not apply");
  if ((rc = check_plain_path(OPT_SHORT_FACTOR, req->short_path)) ||
      (rc = check_plain_path(OPT_LONG_FACTOR, req->long_path)) ||
      (rc = check_plain_path(OPT_FREQ_FACTORS, req->freq_factors_path)))
    return rc;
  return EXIT_SUCCESS;
}

static int convert_table(const struct raw_args *args, struct rope_request *req) {
  int layout = POSENC_ROPE_CACHE_HALF, dtype = POSENC_DTYPE_F32, format = TABLE_FORMAT_NPY, rc;
  if ((rc = convert_positions_choice(args, req)) ||
      (rc = convert_optional_count(args, OPT_ROWS, MAX_ROWS, &req->rows)) ||
      (rc = convert_choice(args, OPT_LAYOUT, cache_layout_names, COUNT_OF(cache_layout_names),
                           "unknown cache layout (expected half, full or interleaved)", &layout)) ||
      (rc = convert_choice(args, OPT_DTYPE, dtype_names, COUNT_OF(dtype_names),
                           "unknown dtype (expected f32, f16 or bf16)", &dtype)) ||
      (rc = convert_choice(args, OPT_FORMAT, table_format_names, TABLE_FORMAT_COUNT,
                           "unknown format (expected npy, raw or c)", &format)))
    return rc;
  req->layout = (posenc_rope_cache_layout)layout;
  req->dtype = (posenc_dtype)dtype;
  req->format = (enum table_format)format;
  req->name = args->value[OPT_NAME] ? args->value[OPT_NAME] : "posenc_rope_cache";
  if ((rc = check_c_format(args, req)) != EXIT_SUCCESS) return rc;
  if (!req->positions_path && !req->rows) return missing_option(OPT_ROWS, args->leaf);
  if (req->rows && !req->positions_path) return check_range(req->start, req->rows, "rows (--rows)");
  return EXIT_SUCCESS;
}

/* --qk-norm (X's weight), --k-norm (K's), --qk-norm-eps, --qk-norm-offset; after the other apply
 * options (it checks them against --k and --inverse). */
static int convert_norm(const struct raw_args *args, struct rope_request *req) {
  const char *eps_text = args->value[OPT_QK_NORM_EPS];
  double eps = 1e-6;
  int rc;
  req->qk_norm_path = args->value[OPT_QK_NORM];
  req->k_norm_path = args->value[OPT_K_NORM];
  req->qk_norm_offset = args->value[OPT_QK_NORM_OFFSET] != NULL;
  if ((rc = convert_optional_real(args, OPT_QK_NORM_EPS, 1, FLT_MAX, &eps)) != EXIT_SUCCESS) return rc;
  req->qk_norm_eps = (float)eps;
  if (!(req->qk_norm_eps > 0.0f)) return bad_value(OPT_QK_NORM_EPS, eps_text, "rounds to 0 in float32");
  if (req->qk_norm_path && !*req->qk_norm_path) return bad_value(OPT_QK_NORM, "", "empty file name");
  if (req->k_norm_path && !*req->k_norm_path) return bad_value(OPT_K_NORM, "", "empty file name");
  if (!req->qk_norm_path) {
    if (req->k_norm_path)
      return cli_usage_error("--k-norm needs --qk-norm (--in's weight); to normalise K alone, give it as --in");
    if (eps_text || req->qk_norm_offset)
      return cli_usage_error("%s only applies with --qk-norm", eps_text ? "--qk-norm-eps" : "--qk-norm-offset");
    return EXIT_SUCCESS;
  }
  if (req->inverse)
    return cli_usage_error("--qk-norm cannot be combined with --inverse: the fused norm and rotation run forward "
                           "only");
  if (req->k_norm_path && !req->k_path) return cli_usage_error("--k-norm needs --k (the tensor it normalises)");
  if (req->k_path && !req->k_norm_path)
    return cli_usage_error("--qk-norm with --k needs --k-norm, K's own weight (Qwen3's k_norm; give one file "
                           "twice to share it)");
  return EXIT_SUCCESS;
}

static int convert_apply(const struct raw_args *args, struct rope_request *req) {
  int layout = POSENC_ROPE_CACHE_HALF, rc;
  req->out_dtype = -1;
  if ((rc = convert_positions_choice(args, req)) ||
      (rc = convert_optional_count(args, OPT_CACHE_ROWS, MAX_ROWS, &req->cache_rows)) ||
      (rc = convert_choice(args, OPT_LAYOUT, cache_layout_names, COUNT_OF(cache_layout_names),
                           "unknown cache layout (expected half, full or interleaved)", &layout)) ||
      (rc = convert_choice(args, OPT_OUT_DTYPE, dtype_names, COUNT_OF(dtype_names),
                           "unknown dtype (expected f32, f16 or bf16)", &req->out_dtype)) ||
      (rc = convert_output(args, OPT_K_OUT, &req->k_out)))
    return rc;
  req->layout = (posenc_rope_cache_layout)layout;
  req->in_path = args->value[OPT_IN];
  req->k_path = args->value[OPT_K];
  req->inverse = args->value[OPT_INVERSE] != NULL;
  if (!req->in_path) return missing_option(OPT_IN, args->leaf);
  if (req->in_path[0] == '\0') return bad_value(OPT_IN, "", "empty file name");
  if (req->k_path && req->k_path[0] == '\0') return bad_value(OPT_K, "", "empty file name");
  if (args->value[OPT_LAYOUT] && !req->cache_rows)
    return cli_usage_error("--layout only applies with --cache-rows");
  if (!req->k_path != !args->value[OPT_K_OUT])
    return cli_usage_error(req->k_path ? "--k needs --k-out (where the rotated K goes)"
                                   : "--k-out needs --k");
  if (req->k_path && !req->output && !req->k_out)
    return cli_usage_error("-o and --k-out cannot both be standard output");
  if (req->k_path && req->output && req->k_out && strcmp(req->output, req->k_out) == 0)
    return cli_usage_error("-o and --k-out name the same file %s", quoted(req->output));
  return convert_norm(args, req);
}

int build_rope_request(const struct raw_args *args, struct rope_request *req) {
  int rc;
  memset(req, 0, sizeof *req);
  req->leaf = args->leaf;
  if (args->leaf == LEAF_NONE)
    return cli_usage_error("rope: missing the rope command (expected freqs, table or apply)");
  if ((rc = convert_variant(args, req)) || (rc = convert_output(args, OPT_OUTPUT, &req->output)))
    return rc;
  switch (args->leaf) {
    case LEAF_ROPE_FREQS: rc = convert_freqs(args, req); break;
    case LEAF_ROPE_TABLE: rc = convert_table(args, req); break;
    default: rc = convert_apply(args, req); break;
  }
  if (rc) return rc;
  if (args->leaf != LEAF_ROPE_APPLY) {
    char source[48];
    if (!req->head_dim_given) return missing_option(OPT_HEAD_DIM, args->leaf);
    snprintf(source, sizeof source, "--head-dim %zu", req->head_dim_given);
    return validate_config(req, &req->config, source);
  }
  return EXIT_SUCCESS;
}

/* ---- building the rope ---------------------------------------------------------------------- */

struct rope_state {
  rope_storage rope;
  float short_factor[MAX_PAIRS], long_factor[MAX_PAIRS], freq_factors[MAX_PAIRS];
};

static int load_factor_list(enum option_id id, const char *path, size_t pairs, float *out) {
  struct npy_input in;
  int rc;
  if (!path) return EXIT_SUCCESS;
  if ((rc = npy_load(option_label(id), path, &in)) != EXIT_SUCCESS) return rc;
  rc = npy_positive_floats(&in, pairs, out);
  npy_input_free(&in);
  return rc;
}

/* HF's rule for dynamic NTK and LongRoPE: the sequence length is the largest position + 1. */
static void default_seq_len(const struct rope_request *req, posenc_rope_config *c,
                            int64_t max_position) {
  if (!req->seq_len_given) c->seq_len = max_position < 0 ? 0 : (uint32_t)(max_position + 1);
}

/* Loads the factor lists and initialises state->rope from c (its dims already checked). */
static int init_rope(const struct rope_request *req, posenc_rope_config c, struct rope_state *state) {
  size_t pairs = rotary_dim_of(&c) / 2;
  int rc;
  if ((rc = load_factor_list(OPT_SHORT_FACTOR, req->short_path, pairs, state->short_factor)) ||
      (rc = load_factor_list(OPT_LONG_FACTOR, req->long_path, pairs, state->long_factor)) ||
      (rc = load_factor_list(OPT_FREQ_FACTORS, req->freq_factors_path, pairs, state->freq_factors)))
    return rc;
  if (req->short_path) c.short_factor = state->short_factor;
  if (req->long_path) c.long_factor = state->long_factor;
  if (req->freq_factors_path) c.freq_factors = state->freq_factors;
  return report_config_status(req, posenc_rope_init(&state->rope.rope, sizeof state->rope, &c));
}

static struct rope_state *new_rope_state(void) {
  struct rope_state *state = malloc(sizeof *state);
  if (!state) cli_error("out of memory");
  return state;
}

/* ---- rope freqs ------------------------------------------------------------------------------- */

static int write_freqs_text(const struct rope_request *req, const posenc_rope *rope) {
  size_t cap = 160 + rope->pairs * 80, len = 0, i;
  char *text = malloc(cap);
  struct byte_span span;
  int hf = rope->config.hf_compat, rc;
  if (!text) {
    cli_error("out of memory");
    return EXIT_FAILURE;
  }
  len += (size_t)snprintf(text + len, cap - len, "# attention_factor %.17g\n# pair inv_freq%s\n",
                          rope->attention_factor, hf ? " inv_freq_f32" : "");
  for (i = 0; i < rope->pairs; i++) {
    len += (size_t)snprintf(text + len, cap - len, "%zu %.17g", i, posenc_rope_inv_freq(rope)[i]);
    if (hf) len += (size_t)snprintf(text + len, cap - len, " %.9g", (double)posenc_rope_inv_freq_f32(rope)[i]);
    len += (size_t)snprintf(text + len, cap - len, "\n");
  }
  span.data = text;
  span.size = len;
  rc = write_output(req->output, &span, 1);
  free(text);
  return rc;
}

static int write_freqs_npy(const struct rope_request *req, const posenc_rope *rope) {
  double values[MAX_PAIRS];
  size_t shape[1];
  shape[0] = rope->pairs;
  memcpy(values, posenc_rope_inv_freq(rope), rope->pairs * sizeof values[0]);
  return write_npy_file(req->output, POSENC_NPY_F64, shape, 1, values, rope->pairs, sizeof values[0]);
}

static int run_freqs(const struct rope_request *req) {
  struct rope_state *state = new_rope_state();
  int rc;
  if (!state) return EXIT_FAILURE;
  rc = init_rope(req, req->config, state);
  if (rc == EXIT_SUCCESS)
    rc = req->text_format ? write_freqs_text(req, &state->rope.rope) : write_freqs_npy(req, &state->rope.rope);
  free(state);
  return rc;
}

/* ---- positions from a file ----------------------------------------------------------------------- */

struct position_list {
  int32_t *ids;        /* malloc'd; NULL: start, start + 1, ... */
  int64_t min, max;
};

/* The file's values as int32 (all of them), with their range. */
static int read_positions(const struct npy_input *in, struct position_list *list) {
  size_t i, n = in->info.count;
  int rc;
  list->ids = malloc(n ? n * sizeof *list->ids : 1);
  if (!list->ids) {
    cli_error("out of memory");
    return EXIT_FAILURE;
  }
  if ((rc = npy_positions(in, list->ids)) != EXIT_SUCCESS) return rc;
  list->min = INT32_MAX;
  list->max = -(int64_t)INT32_MAX;
  for (i = 0; i < n; i++) {
    if (list->ids[i] < list->min) list->min = list->ids[i];
    if (list->ids[i] > list->max) list->max = list->ids[i];
  }
  return EXIT_SUCCESS;
}

/* ---- rope table -------------------------------------------------------------------------------- */

struct table_job {
  struct rope_state *state;
  struct npy_input positions_file;
  struct position_list positions;
  unsigned char *cache;
};

/* The positions of a table: a 1-D list from --positions, or --rows from --start. */
static int table_positions(const struct rope_request *req, struct table_job *job, size_t *rows) {
  struct npy_input *in = &job->positions_file;
  char shape[96];
  int rc;
  *rows = req->rows;
  if (!req->positions_path) {
    job->positions.min = req->start;
    job->positions.max = (int64_t)req->start + (int64_t)req->rows - 1;
    return EXIT_SUCCESS;
  }
  if ((rc = npy_load(option_label(OPT_POSITIONS), req->positions_path, in)) != EXIT_SUCCESS) return rc;
  if (in->info.ndim != 1 || in->info.count == 0)
    return input_error(in, "shape %s, expected a non-empty list of positions (n,)",
                       input_shape(in, shape, sizeof shape));
  if (req->rows && req->rows != in->info.count)
    return input_error(in, "holds %zu positions, but --rows is %zu", in->info.count, req->rows);
  *rows = in->info.count;
  return read_positions(in, &job->positions);
}

/* ---- rope table --format c ---------------------------------------------------------------------- */

/* printf at buf + *len; once buf is full, *len stays >= size and later appends do nothing. */
static void appendf(char *buf, size_t size, size_t *len, const char *fmt, ...) CLI_PRINTF(4, 5);
static void appendf(char *buf, size_t size, size_t *len, const char *fmt, ...) {
  va_list ap;
  int n;
  if (*len >= size) return;
  va_start(ap, fmt);
  n = vsnprintf(buf + *len, size - *len, fmt, ap);
  va_end(ap);
  *len = n < 0 ? size : *len + (size_t)n;
}

/* " --option v" with the fewest digits (15 to 17) that read back as v: "--mscale 0.707". */
static void append_real(char *buf, size_t size, size_t *len, const char *option, double v) {
  char digits[32];
  int precision;
  for (precision = 15;; precision++) {
    snprintf(digits, sizeof digits, "%.*g", precision, v);
    if (precision == 17 || strtod(digits, NULL) == v) break;
  }
  appendf(buf, size, len, " %s %s", option, digits);
}

/* "posenc rope table ..." with every parameter spelled out (defaults too): a C header's
 * provenance, and the exact command that regenerates it. */
static char *canonical_command(const struct rope_request *req, const posenc_rope_config *c) {
  char v[640]; /* the variant: bounded, the longest about 400 characters */
  size_t len = 0, n = sizeof v;
  appendf(v, n, &len, " --head-dim %zu --rotary-dim %zu", c->head_dim, rotary_dim_of(c));
  append_real(v, n, &len, "--base", c->base);
  appendf(v, n, &len, " --style %s --scaling %s", style_names[c->style], scaling_names[c->scaling]);
  if (c->dynamic_qwen_alpha) appendf(v, n, &len, " --qwen-alpha");
  else if (c->scaling != POSENC_ROPE_SCALING_NONE) append_real(v, n, &len, "--factor", c->factor);
  if (c->original_max_pos) appendf(v, n, &len, " --original-max-pos %" PRIu32, c->original_max_pos);
  if (req->seq_len_given) appendf(v, n, &len, " --seq-len %" PRIu32, c->seq_len);
  if (c->scaling == POSENC_ROPE_SCALING_YARN) { /* 0 means the default, as in HF */
    append_real(v, n, &len, "--beta-fast", c->beta_fast ? c->beta_fast : 32.0);
    append_real(v, n, &len, "--beta-slow", c->beta_slow ? c->beta_slow : 1.0);
    if (c->yarn_no_truncate) appendf(v, n, &len, " --no-truncate");
    if (c->mscale) append_real(v, n, &len, "--mscale", c->mscale);
    if (c->mscale_all_dim) append_real(v, n, &len, "--mscale-all-dim", c->mscale_all_dim);
  }
  if (c->scaling == POSENC_ROPE_SCALING_LLAMA3) {
    append_real(v, n, &len, "--low-freq-factor", c->low_freq_factor ? c->low_freq_factor : 1.0);
    append_real(v, n, &len, "--high-freq-factor", c->high_freq_factor ? c->high_freq_factor : 4.0);
  }
  if (c->attention_factor) append_real(v, n, &len, "--attention-factor", c->attention_factor);
  if (c->mrope != POSENC_ROPE_MROPE_NONE)
    appendf(v, n, &len, " --mrope-section %" PRIu32 ",%" PRIu32 ",%" PRIu32 "%s", c->mrope_section[0],
            c->mrope_section[1], c->mrope_section[2],
            c->mrope == POSENC_ROPE_MROPE_INTERLEAVED ? " --mrope-interleaved" : "");
  if (c->hf_compat) appendf(v, n, &len, " --hf-compat");
  if (len >= n) return NULL; /* cannot happen: every value is bounded */
  return format_new_string(
      "posenc rope table%s%s%s%s%s%s%s --rows %zu --start %" PRId32 " --layout %s --dtype %s --format %s --name %s",
      v, req->short_path ? " --short-factor " : "", req->short_path ? req->short_path : "",
      req->long_path ? " --long-factor " : "", req->long_path ? req->long_path : "",
      req->freq_factors_path ? " --freq-factors " : "", req->freq_factors_path ? req->freq_factors_path : "",
      req->rows, req->start, cache_layout_names[req->layout], dtype_names[req->dtype],
      table_format_names[req->format], req->name);
}

/* The header's note on what the columns hold. */
static char *cache_notes(const struct rope_request *req, const posenc_rope *rope) {
  static const char *const columns[] = {
    "[A cos(p w_0) .. A cos(p w_h-1) | A sin(p w_0) .. A sin(p w_h-1)] (vLLM's cos_sin_cache)",
    "[A cos(p w_i) twice | A sin(p w_i) twice], i < h (HF's cos and sin rows)",
    "[A cos(p w_0), A sin(p w_0), A cos(p w_1), ..] (Meta's freqs_cis)"};
  return format_new_string(" * Layout %s, h = %zu pairs, a row is\n *   %s.\n"
                           " * Attention factor A = %.17g. With --start 0 the array is a cache for\n"
                           " * posenc_rope_apply: posenc_rope_cache_view {%s, %s_ROWS,\n"
                           " *   {POSENC_ROPE_CACHE_%s, POSENC_DTYPE_%s, 0}}.\n",
                           cache_layout_names[req->layout], rope->pairs, columns[req->layout],
                           rope->attention_factor, req->name, req->name, req->layout == POSENC_ROPE_CACHE_HALF ? "HALF"
                           : req->layout == POSENC_ROPE_CACHE_FULL ? "FULL" : "INTERLEAVED",
                           req->dtype == POSENC_DTYPE_F32 ? "F32" : req->dtype == POSENC_DTYPE_F16 ? "F16" : "BF16");
}

/* The cache (little-endian) in the requested format, to -o. */
static int render_and_write(const struct rope_request *req, const posenc_rope *rope,
                            const struct table_view *view) {
  struct c_header_info info;
  struct rendered_table rendered;
  char *command = NULL, *notes = NULL;
  int rc;
  memset(&info, 0, sizeof info);
  if (req->format == TABLE_FORMAT_C) {
    if (!(command = canonical_command(req, &rope->config)) || !(notes = cache_notes(req, rope))) {
      free(command);
      cli_error("out of memory");
      return EXIT_FAILURE;
    }
    info.name = req->name;
    info.title = "RoPE cos/sin cache";
    info.command = command;
    info.notes = notes;
    info.first_position = req->start;
  }
  rc = render_table(view, req->format, &info, &rendered);
  if (rc == EXIT_SUCCESS) rc = write_output(req->output, rendered.spans, rendered.count);
  rendered_table_free(&rendered);
  free(command);
  free(notes);
  return rc;
}

/* A cache error: the positions (of --positions FILE, or of --start and --rows), or a bug. */
static int cache_error(const struct rope_request *req, const struct table_job *job, size_t rows,
                       posenc_status st) {
  if (st == POSENC_ERR_POSITION && job->positions.ids)
    return input_error(&job->positions_file, "%s (with --base %s)", posenc_strerror(st), quoted(req->base_text));
  if (st == POSENC_ERR_POSITION)
    return cli_usage_error("--start %" PRId32 " with --rows %zu and --base %s: %s", req->start, rows,
                       quoted(req->base_text), posenc_strerror(st));
  cli_error("internal error: %s", posenc_strerror(st));
  return EXIT_FAILURE;
}

/* What computing the cache a chunk of rows at a time needs. */
struct cache_chunks {
  const struct rope_request *req;
  const struct table_job *job;
  posenc_rope_cache_spec spec;
  size_t rows, row_bytes;
};

/* Rows row0 .. row0+n-1 of the cache (a row_stream's fill). */
static int fill_cache_rows(void *ctx, size_t row0, size_t n, unsigned char *out) {
  const struct cache_chunks *c = (const struct cache_chunks *)ctx;
  const posenc_rope *rope = &c->job->state->rope.rope;
  posenc_status st;
  if (c->job->positions.ids)
    st = posenc_rope_cache_rows(rope, &c->spec, c->job->positions.ids + row0, n, out, n * c->row_bytes);
  else /* fits int32: start + rows - 1 was checked with the request */
    st = posenc_rope_cache_table(rope, &c->spec, (int32_t)((int64_t)c->req->start + (int64_t)row0), n, out,
                                 n * c->row_bytes);
  return st == POSENC_OK ? EXIT_SUCCESS : cache_error(c->req, c->job, c->rows, st);
}

/* With --positions FILE the errors are decided by the smallest and largest position, wherever
 * they are in the list; a range's by its first and last rows (the stream's default check). */
static int check_cache_positions(void *ctx, unsigned char *row) {
  const struct cache_chunks *c = (const struct cache_chunks *)ctx;
  int32_t extremes[2];
  int i;
  posenc_status st = POSENC_OK;
  extremes[0] = (int32_t)c->job->positions.min;
  extremes[1] = (int32_t)c->job->positions.max;
  for (i = 0; i < 2 && st == POSENC_OK; i++)
    st = posenc_rope_cache_rows(&c->job->state->rope.rope, &c->spec, &extremes[i], 1, row, c->row_bytes);
  return st == POSENC_OK ? EXIT_SUCCESS : cache_error(c->req, c->job, c->rows, st);
}

/* .npy and raw caches are streamed: their rows are independent and nothing in the output needs
 * the whole cache. */
static int stream_cache(const struct rope_request *req, const struct table_job *job, size_t rows,
                        const posenc_rope_cache_spec *spec) {
  struct cache_chunks chunks;
  struct row_stream stream;
  size_t shape[2];
  chunks.req = req;
  chunks.job = job;
  chunks.spec = *spec;
  chunks.rows = rows;
  shape[0] = rows;
  shape[1] = posenc_rope_cache_width(&job->state->rope.rope, req->layout);
  stream.rows = rows;
  stream.elem_size = posenc_dtype_size(req->dtype);
  stream.row_bytes = chunks.row_bytes = shape[1] * stream.elem_size;
  stream.fill = fill_cache_rows;
  stream.check = job->positions.ids ? check_cache_positions : NULL;
  stream.ctx = &chunks;
  return write_row_stream(req->output, req->format, npy_type_of(req->dtype), shape, 2, &stream);
}

/* A C header begins with the XXH3 of the whole cache: it is computed whole. */
static int compute_table(const struct rope_request *req, struct table_job *job, size_t rows) {
  const posenc_rope *rope = &job->state->rope.rope;
  posenc_rope_cache_spec spec;
  struct table_view view;
  size_t bytes;
  posenc_status st;
  spec.layout = req->layout;
  spec.dtype = req->dtype;
  spec.row_stride = 0;
  if ((st = posenc_rope_cache_bytes(rope, &spec, rows, &bytes)) != POSENC_OK)
    return cli_usage_error("%zu rows x %zu columns: %s", rows, posenc_rope_cache_width(rope, req->layout),
                       posenc_strerror(st));
  if (req->format != TABLE_FORMAT_C) return stream_cache(req, job, rows, &spec);
  if (!(job->cache = malloc(bytes))) {
    cli_error("out of memory: the cache needs %zu bytes", bytes);
    return EXIT_FAILURE;
  }
  if (job->positions.ids)
    st = posenc_rope_cache_rows(rope, &spec, job->positions.ids, rows, job->cache, bytes);
  else
    st = posenc_rope_cache_table(rope, &spec, req->start, rows, job->cache, bytes);
  if (st != POSENC_OK) return cache_error(req, job, rows, st);
  table_to_little_endian(job->cache, bytes / posenc_dtype_size(req->dtype),
                         posenc_dtype_size(req->dtype));
  view.bytes = job->cache;
  view.size = bytes;
  view.rows = rows;
  view.cols = posenc_rope_cache_width(rope, req->layout);
  view.dtype = req->dtype;
  return render_and_write(req, rope, &view);
}

static int run_table(const struct rope_request *req) {
  struct table_job job;
  posenc_rope_config c = req->config;
  size_t rows = 0;
  int rc;
  memset(&job, 0, sizeof job);
  if (!(job.state = new_rope_state())) return EXIT_FAILURE;
  rc = table_positions(req, &job, &rows);
  if (rc == EXIT_SUCCESS) {
    default_seq_len(req, &c, job.positions.max);
    rc = init_rope(req, c, job.state);
  }
  if (rc == EXIT_SUCCESS) rc = compute_table(req, &job, rows);
  free(job.cache);
  free(job.positions.ids);
  npy_input_free(&job.positions_file);
  free(job.state);
  return rc;
}

/* ---- rope apply -------------------------------------------------------------------------------- */

struct tensor_input {
  struct npy_input npy;
  size_t batch, tokens, heads, dim;
  posenc_dtype dtype;
  posenc_dtype out_dtype;     /* --out-dtype, else dtype */
  unsigned char *out;         /* the rotated tensor: npy.data (in place) or out_owned */
  unsigned char *out_owned;   /* malloc'd when out_dtype differs from dtype */
};

struct apply_job {
  struct rope_state *state;
  struct tensor_input x, k;
  float *x_weight, *k_weight;      /* --qk-norm, --k-norm (head_dim values each); NULL: none */
  struct npy_input positions_file;
  struct position_list positions;  /* ids: naxes planes of batch * tokens */
  float *cache;
};

/* X or K: <f4 or <f2 of shape (tokens, heads, D) or (batch, tokens, heads, D). */
static int load_tensor(enum option_id id, const char *path, struct tensor_input *t) {
  const posenc_npy_info *info = &t->npy.info;
  char shape[96];
  int rc = npy_load(option_label(id), path, &t->npy);
  if (rc != EXIT_SUCCESS) return rc;
  if (info->type != POSENC_NPY_F32 && info->type != POSENC_NPY_F16)
    return input_error(&t->npy, "dtype %s, expected <f4 (float32) or <f2 (float16)",
                       npy_dtype_descr(info->type));
  if (info->ndim != 3 && info->ndim != 4)
    return input_error(&t->npy, "shape %s, expected (tokens, heads, head_dim) or "
                       "(batch, tokens, heads, head_dim)", input_shape(&t->npy, shape, sizeof shape));
  if (info->count == 0)
    return input_error(&t->npy, "shape %s has an empty axis", input_shape(&t->npy, shape, sizeof shape));
  t->batch = info->ndim == 4 ? info->shape[0] : 1;
  t->tokens = info->shape[info->ndim - 3];
  t->heads = info->shape[info->ndim - 2];
  t->dim = info->shape[info->ndim - 1];
  t->dtype = info->type == POSENC_NPY_F32 ? POSENC_DTYPE_F32 : POSENC_DTYPE_F16;
  return EXIT_SUCCESS;
}

static int load_tensors(const struct rope_request *req, struct apply_job *job) {
  struct tensor_input *x = &job->x, *k = &job->k;
  char shape[96];
  int rc = load_tensor(OPT_IN, req->in_path, x);
  if (rc != EXIT_SUCCESS || !req->k_path) return rc;
  if ((rc = load_tensor(OPT_K, req->k_path, k)) != EXIT_SUCCESS) return rc;
  if (k->batch != x->batch || k->tokens != x->tokens || k->dim != x->dim)
    return input_error(&k->npy, "shape %s does not match --in's batch %zu, tokens %zu and head dim %zu",
                       input_shape(&k->npy, shape, sizeof shape), x->batch, x->tokens, x->dim);
  return EXIT_SUCCESS;
}

/* One norm weight file: head_dim values as float32. */
static int load_weight(enum option_id id, const char *path, size_t dim, float **out) {
  struct npy_input in;
  int rc;
  if (!path) return EXIT_SUCCESS;
  if (!(*out = malloc(dim * sizeof **out))) {
    cli_error("out of memory");
    return EXIT_FAILURE;
  }
  if ((rc = npy_load(option_label(id), path, &in)) != EXIT_SUCCESS) return rc;
  rc = npy_norm_weight(&in, dim, *out);
  npy_input_free(&in);
  return rc;
}

/* --positions for a batch x tokens tensor: (T,) or (B, T); M-RoPE (3, T) or (3, B, T). A list
 * without the batch axis holds for every batch row. Laid out as the library reads them: naxes
 * planes of B * T. */
static int apply_positions(const struct rope_request *req, struct apply_job *job, size_t naxes) {
  struct npy_input *in = &job->positions_file;
  const posenc_npy_info *info = &in->info;
  size_t B = job->x.batch, T = job->x.tokens, lead = naxes == 3, a, b;
  int per_batch, fits, rc;
  char shape[96];
  int32_t *all;
  if (!req->positions_path) {
    job->positions.min = req->start;
    job->positions.max = (int64_t)req->start + (int64_t)T - 1;
    return check_range(req->start, T, "tokens (--in)");
  }
  if ((rc = npy_load(option_label(OPT_POSITIONS), req->positions_path, in)) != EXIT_SUCCESS) return rc;
  per_batch = info->ndim == lead + 2;
  fits = (info->ndim == lead + 1 || per_batch) && (!lead || info->shape[0] == 3) &&
         info->shape[info->ndim - 1] == T && (!per_batch || info->shape[lead] == B);
  if (!fits)
    return input_error(in,
                       naxes == 3 ? "shape %s, expected (3, %zu) or (3, %zu, %zu) for M-RoPE (t, h, w)"
                                  : "shape %s, expected (%zu,) or (%zu, %zu): --in's (batch,) tokens",
                       input_shape(in, shape, sizeof shape), T, B, T);
  if ((rc = read_positions(in, &job->positions)) != EXIT_SUCCESS) return rc;
  if (per_batch) return EXIT_SUCCESS; /* already naxes planes of B * T */
  all = malloc(naxes * B * T * sizeof *all);
  if (!all) {
    cli_error("out of memory");
    return EXIT_FAILURE;
  }
  for (a = 0; a < naxes; a++)
    for (b = 0; b < B; b++) memcpy(all + (a * B + b) * T, job->positions.ids + a * T, T * sizeof *all);
  free(job->positions.ids);
  job->positions.ids = all;
  return EXIT_SUCCESS;
}

/* The head dim comes from X; the options must agree with it. */
static int apply_config(const struct rope_request *req, const struct apply_job *job,
                        posenc_rope_config *c) {
  char source[64];
  *c = req->config;
  c->head_dim = job->x.dim;
  if (req->head_dim_given && req->head_dim_given != job->x.dim)
    return cli_usage_error("--head-dim %zu does not match the head dim of --in %s (%zu, its last axis)",
                       req->head_dim_given, quoted(req->in_path), job->x.dim);
  snprintf(source, sizeof source, "the head dim of --in (%zu)", job->x.dim);
  return validate_config(req, c, source);
}

static int apply_cache(const struct rope_request *req, struct apply_job *job,
                       posenc_rope_cache_view *view) {
  size_t bytes;
  posenc_status st;
  view->data = NULL;
  view->n_rows = req->cache_rows;
  view->spec.layout = req->layout;
  view->spec.dtype = POSENC_DTYPE_F32;
  view->spec.row_stride = 0;
  if (job->positions.min < 0 || job->positions.max >= (int64_t)req->cache_rows) {
    int64_t bad = job->positions.min < 0 ? job->positions.min : job->positions.max;
    if (job->positions.ids)
      return input_error(&job->positions_file, "position %lld is outside the cache rows [0, %zu) of "
                         "--cache-rows", (long long)bad, req->cache_rows);
    return cli_usage_error("--start %" PRId32 " with %zu tokens: position %lld is outside the cache rows "
                       "[0, %zu) of --cache-rows", req->start, job->x.tokens, (long long)bad,
                       req->cache_rows);
  }
  st = posenc_rope_cache_bytes(&job->state->rope.rope, &view->spec, req->cache_rows, &bytes);
  if (st != POSENC_OK)
    return cli_usage_error("--cache-rows %zu: %s", req->cache_rows, posenc_strerror(st));
  if (!(job->cache = malloc(bytes))) {
    cli_error("out of memory: the cache needs %zu bytes", bytes);
    return EXIT_FAILURE;
  }
  st = posenc_rope_cache_table(&job->state->rope.rope, &view->spec, 0, req->cache_rows, job->cache, bytes);
  if (st == POSENC_ERR_POSITION)
    return cli_usage_error("--cache-rows %zu with --base %s: %s", req->cache_rows, quoted(req->base_text),
                       posenc_strerror(st));
  if (st != POSENC_OK) {
    cli_error("internal error: %s", posenc_strerror(st));
    return EXIT_FAILURE;
  }
  view->data = job->cache;
  return EXIT_SUCCESS;
}

static posenc_rope_tensor tensor_view(void *data, posenc_dtype dtype, size_t heads) {
  posenc_rope_tensor view;
  memset(&view, 0, sizeof view); /* zero strides: dense */
  view.data = data;
  view.dtype = dtype;
  view.heads = heads;
  return view;
}

/* Where t's rotation goes: in place when its dtype stays, else a new buffer of out_dtype. */
static int prepare_output(const struct rope_request *req, struct tensor_input *t) {
  size_t bytes;
  t->out_dtype = req->out_dtype < 0 ? t->dtype : (posenc_dtype)req->out_dtype;
  t->out = t->npy.data;
  if (t->out_dtype == t->dtype) return EXIT_SUCCESS;
  bytes = t->npy.info.count * posenc_dtype_size(t->out_dtype); /* at most 2x the input's */
  if (!(t->out = t->out_owned = malloc(bytes))) {
    cli_error("out of memory: the %s output needs %zu bytes", t->npy.label, bytes);
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}

static int rotate(const struct rope_request *req, struct apply_job *job) {
  posenc_rope_cache_view view;
  posenc_rope_positions pos;
  struct tensor_input *x = &job->x, *k = &job->k;
  posenc_rope_tensor q_in, q_out, k_in, k_out;
  posenc_status st;
  int rc;
  if ((rc = prepare_output(req, x)) != EXIT_SUCCESS ||
      (req->k_path && (rc = prepare_output(req, k)) != EXIT_SUCCESS))
    return rc;
  q_in = tensor_view(x->npy.data, x->dtype, x->heads);
  q_out = tensor_view(x->out, x->out_dtype, x->heads);
  k_in = tensor_view(k->npy.data, k->dtype, k->heads);
  k_out = tensor_view(k->out, k->out_dtype, k->heads);
  if (req->cache_rows && (rc = apply_cache(req, job, &view)) != EXIT_SUCCESS) return rc;
  pos.batch = job->x.batch;
  pos.tokens = job->x.tokens;
  pos.ids = job->positions.ids;
  pos.start = req->start;
  if (req->qk_norm_path) {
    posenc_rope_norm q_norm, k_norm;
    q_norm.weight = job->x_weight;
    q_norm.epsilon = req->qk_norm_eps;
    q_norm.weight_offset = req->qk_norm_offset;
    k_norm = q_norm;
    k_norm.weight = job->k_weight;
    st = posenc_rope_apply_norm(&job->state->rope.rope, req->cache_rows ? &view : NULL, &pos, &q_in, &q_out, &q_norm,
                                req->k_path ? &k_in : NULL, req->k_path ? &k_out : NULL,
                                req->k_path ? &k_norm : NULL);
  } else {
    st = posenc_rope_apply_out(&job->state->rope.rope, req->cache_rows ? &view : NULL, &pos, &q_in, &q_out,
                               req->k_path ? &k_in : NULL, req->k_path ? &k_out : NULL,
                               req->inverse ? POSENC_ROPE_INVERSE : POSENC_ROPE_FORWARD);
  }
  if (st == POSENC_ERR_POSITION && pos.ids)
    return input_error(&job->positions_file, "%s (with --base %s)", posenc_strerror(st), quoted(req->base_text));
  if (st == POSENC_ERR_POSITION)
    return cli_usage_error("--start %" PRId32 " with --base %s: %s", req->start, quoted(req->base_text),
                       posenc_strerror(st));
  if (st != POSENC_OK) {
    cli_error("internal error: %s", posenc_strerror(st));
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}

/* X (and K) back to little-endian .npy, written together. */
static int write_tensors(const struct rope_request *req, struct apply_job *job) {
  struct tensor_input *t[2];
  struct rendered_table rendered[2];
  struct output_file outputs[2];
  size_t n = req->k_path ? 2 : 1, i;
  int rc = EXIT_SUCCESS;
  t[0] = &job->x;
  t[1] = &job->k;
  memset(rendered, 0, sizeof rendered);
  for (i = 0; i < n; i++) {
    const posenc_npy_info *info = &t[i]->npy.info;
    size_t item_size = posenc_dtype_size(t[i]->out_dtype);
    table_to_little_endian(t[i]->out, info->count, item_size);
    if (rc == EXIT_SUCCESS)
      rc = render_npy_array(npy_type_of(t[i]->out_dtype), info->shape, info->ndim, t[i]->out,
                            info->count * item_size, &rendered[i]);
    outputs[i].path = i ? req->k_out : req->output;
    outputs[i].spans = rendered[i].spans;
    outputs[i].count = rendered[i].count;
  }
  if (rc == EXIT_SUCCESS) rc = write_outputs(outputs, n);
  for (i = 0; i < n; i++) rendered_table_free(&rendered[i]);
  return rc;
}

static int run_apply(const struct rope_request *req) {
  struct apply_job job;
  posenc_rope_config c;
  int rc;
  memset(&job, 0, sizeof job);
  if (!(job.state = new_rope_state())) return EXIT_FAILURE;
  if ((rc = load_tensors(req, &job)) == EXIT_SUCCESS && (rc = apply_config(req, &job, &c)) == EXIT_SUCCESS &&
      (rc = load_weight(OPT_QK_NORM, req->qk_norm_path, job.x.dim, &job.x_weight)) == EXIT_SUCCESS &&
      (rc = load_weight(OPT_K_NORM, req->k_norm_path, job.x.dim, &job.k_weight)) == EXIT_SUCCESS &&
      (rc = apply_positions(req, &job, c.mrope != POSENC_ROPE_MROPE_NONE ? 3 : 1)) == EXIT_SUCCESS) {
    default_seq_len(req, &c, job.positions.max);
    if ((rc = init_rope(req, c, job.state)) == EXIT_SUCCESS && (rc = rotate(req, &job)) == EXIT_SUCCESS)
      rc = write_tensors(req, &job);
  }
  free(job.cache);
  free(job.positions.ids);
  npy_input_free(&job.positions_file);
  npy_input_free(&job.x.npy);
  npy_input_free(&job.k.npy);
  free(job.x.out_owned);
  free(job.k.out_owned);
  free(job.x_weight);
  free(job.k_weight);
  free(job.state);
  return rc;
}

int run_rope(const struct rope_request *req) {
  switch (req->leaf) {
    case LEAF_ROPE_FREQS: return run_freqs(req);
    case LEAF_ROPE_TABLE: return run_table(req);
    default: return run_apply(req);
  }
}
