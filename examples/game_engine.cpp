// posenc in a game engine's inference subsystem: C++17, -fno-exceptions -fno-rtti, -Wall -Wextra
// -Wpedantic -Werror, header-only (this file is the implementation), no allocation after load.
// At load time a fixed arena receives the model's RoPE state and its cos/sin cache; every frame
// rotates the Q and K of the tokens generated that frame (GQA, Llama-3 scaling) from the cache.
// Each rotated value is checked against the rotation recomputed here in double from the Llama-3
// formula (the tolerance is posenc's documented bound), and a frame past the cache must be
// refused with nothing written. Exit status 0 only if every check held.
// Build: c++ -std=c++17 -O2 -fno-exceptions -fno-rtti -I<posenc> examples/game_engine.cpp
#define POSENC_IMPLEMENTATION
#include "posenc_simd.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace {

constexpr size_t kHeadDim = 64, kQHeads = 8, kKvHeads = 2;      // one attention layer's shape
constexpr int32_t kContext = 256;                               // cache rows: positions 0..255
constexpr size_t kTokensPerFrame = 4, kFrames = 48;             // 192 positions used
constexpr double kTheta = 500000.0, kFactor = 8.0;              // Llama-3.1
constexpr uint32_t kOriginalContext = 8192;

// A bump allocator over static storage: the subsystem's only memory, sized at compile time.
template <size_t N>
class Arena {
 public:
  template <typename T>
  T *alloc(size_t count) {
    size_t at = (used_ + alignof(T) - 1) / alignof(T) * alignof(T);
    if (count > (N - at) / sizeof(T)) return nullptr;
    used_ = at + count * sizeof(T);
    return reinterpret_cast<T *>(bytes_ + at);
  }
  size_t used() const { return used_; }

 private:
  alignas(64) unsigned char bytes_[N];
  size_t used_ = 0;
};

// The model's RoPE: frequencies and a vLLM-layout cache, built once at load.
class Rope {
 public:
  template <size_t N>
  posenc_status load(Arena<N> &arena) {
    posenc_rope_config cfg = posenc_rope_default(kHeadDim);
    cfg.base = kTheta;
    cfg.scaling = POSENC_ROPE_SCALING_LLAMA3;
    cfg.factor = kFactor;
    cfg.original_max_pos = kOriginalContext;
    size_t rope_bytes = 0;
    posenc_status st = posenc_rope_bytes(&cfg, &rope_bytes);  // 4 KiB for a 128-dim head
    if (st != POSENC_OK) return st;
    rope_ = reinterpret_cast<posenc_rope *>(arena.template alloc<double>(rope_bytes / sizeof(double)));
    if (!rope_) return POSENC_ERR_BUFFER;
    st = posenc_rope_init(rope_, rope_bytes, &cfg);
    if (st != POSENC_OK) return st;

    view_.spec = {POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0};
    view_.n_rows = kContext;
    size_t bytes = 0;
    st = posenc_rope_cache_bytes(rope_, &view_.spec, view_.n_rows, &bytes);
    if (st != POSENC_OK) return st;
    float *cache = arena.template alloc<float>(bytes / sizeof(float));
    if (!cache) return POSENC_ERR_BUFFER;
    view_.data = cache;
    return posenc_rope_cache_table(rope_, &view_.spec, 0, view_.n_rows, cache, bytes);
  }

  // Rotates [tokens][heads][kHeadDim] Q and K of the tokens at start, start+1, ... in place.
  posenc_status rotate(float *q, float *k, int32_t start, size_t tokens) const {
    posenc_rope_positions pos = {1, tokens, nullptr, start};
    posenc_rope_tensor tq = {q, POSENC_DTYPE_F32, kQHeads, 0, 0, 0};
    posenc_rope_tensor tk = {k, POSENC_DTYPE_F32, kKvHeads, 0, 0, 0};
    return posenc_rope_apply(rope_, &view_, &pos, &tq, &tk, POSENC_ROPE_FORWARD);
  }

 private:
  posenc_rope *rope_ = nullptr;
  posenc_rope_cache_view view_ = {};
};

// The expectation, written from the Llama-3 recipe (HF _compute_llama3_parameters), not posenc.
double llama3_inv_freq(size_t i) {
  const double pi = 3.14159265358979323846, low_factor = 1.0, high_factor = 4.0;
  double w = std::pow(kTheta, -2.0 * static_cast<double>(i) / kHeadDim);
  double wavelen = 2.0 * pi / w, L = kOriginalContext;
  if (wavelen < L / high_factor) return w;
  if (wavelen > L / low_factor) return w / kFactor;
  double smooth = (L / wavelen - low_factor) / (high_factor - low_factor);
  return (1.0 - smooth) * w / kFactor + smooth * w;
}

// Every rotated value against the rotation recomputed in double: NeoX pairs (j, j + d/2) of every
// head of every token. posenc's bound for an f32 rotation: 2^-22 * (|x0| + |x1|) (attention factor 1).
struct Check {
  size_t values = 0, outside = 0;
  double worst = 0.0;  // largest |error| / bound
  void add(double ratio) {
    values++;
    outside += !(ratio <= 1.0);  // NaN counts as outside
    worst = std::fmax(worst, ratio);
  }
  void rotation(const float *in, const float *out, size_t heads, int32_t start, size_t tokens) {
    constexpr size_t half = kHeadDim / 2;
    for (size_t t = 0; t < tokens; t++)
      for (size_t h = 0; h < heads; h++)
        for (size_t j = 0; j < half; j++) {
          size_t at = (t * heads + h) * kHeadDim + j;
          double x0 = in[at], x1 = in[at + half];
          double a = static_cast<double>(start + static_cast<int32_t>(t)) * llama3_inv_freq(j);
          double bound = std::ldexp(std::fabs(x0) + std::fabs(x1), -22) + 1e-12;
          add(std::fabs(out[at] - (x0 * std::cos(a) - x1 * std::sin(a))) / bound);
          add(std::fabs(out[at + half] - (x1 * std::cos(a) + x0 * std::sin(a))) / bound);
        }
  }
};

// Deterministic activations in [-2, 2): what a frame's projection would produce.
void fill(float *x, size_t n, uint32_t *state) {
  for (size_t i = 0; i < n; i++) {
    *state = *state * 1664525u + 1013904223u;
    x[i] = static_cast<float>(*state >> 8) * 0x1p-22f - 2.0f;
  }
}

Arena<256 * 1024> g_arena;  // static storage: nothing is allocated at run time

}  // namespace

int main() {
  if (posenc_selftest() != POSENC_OK) {
    std::fprintf(stderr, "posenc self-test failed: this build changes posenc's results\n");
    return 1;
  }
  Rope rope;
  posenc_status st = rope.load(g_arena);
  if (st != POSENC_OK) {
    std::fprintf(stderr, "RoPE load: %s\n", posenc_strerror(st));
    return 1;
  }
  constexpr size_t q_len = kTokensPerFrame * kQHeads * kHeadDim, k_len = kTokensPerFrame * kKvHeads * kHeadDim;
  float *q = g_arena.alloc<float>(q_len), *k = g_arena.alloc<float>(k_len);
  float *q_in = g_arena.alloc<float>(q_len), *k_in = g_arena.alloc<float>(k_len);
  if (!q || !k || !q_in || !k_in) {
    std::fprintf(stderr, "arena too small\n");
    return 1;
  }
  std::printf("posenc %s (%s), arena %zu bytes: llama3 RoPE, %d cached positions\n", POSENC_VERSION_STRING,
              posenc_isa_name(posenc_isa_active()), g_arena.used(), kContext);

  uint32_t rng = 1;
  Check check;
  int32_t pos = 0;
  for (size_t frame = 0; frame < kFrames; frame++, pos += static_cast<int32_t>(kTokensPerFrame)) {
    fill(q_in, q_len, &rng);
    fill(k_in, k_len, &rng);
    std::memcpy(q, q_in, q_len * sizeof *q);
    std::memcpy(k, k_in, k_len * sizeof *k);
    st = rope.rotate(q, k, pos, kTokensPerFrame);
    if (st != POSENC_OK) {
      std::fprintf(stderr, "frame %zu: %s\n", frame, posenc_strerror(st));
      return 1;
    }
    check.rotation(q_in, q, kQHeads, pos, kTokensPerFrame);
    check.rotation(k_in, k, kKvHeads, pos, kTokensPerFrame);
  }
  std::printf("%zu frames, positions 0..%d: %zu values, %zu outside posenc's bound, worst %.3f of it\n",
              kFrames, pos - 1, check.values, check.outside, check.worst);

  // A frame that runs past the cache is refused, and its tensors are left as they were.
  std::memcpy(q, q_in, q_len * sizeof *q);
  st = rope.rotate(q, k, kContext - 1, kTokensPerFrame);
  bool untouched = std::memcmp(q, q_in, q_len * sizeof *q) == 0;
  std::printf("frame at position %d: %s, tensors %s\n", kContext - 1, posenc_strerror(st),
              untouched ? "untouched" : "WRITTEN");

  bool ok = check.outside == 0 && st == POSENC_ERR_POSITION && untouched;
  std::printf("%s\n", ok ? "OK" : "FAIL");
  return ok ? 0 : 1;
}
