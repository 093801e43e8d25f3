// Linked into every Emscripten program of this build (meson.build, --pre-js): Emscripten gives a
// program an environment of its own (USER, PATH, HOME, LANG and a few more), not node's, so the
// variables a test runs with (POSENC_ISA, POSENC_EXPECT_ISA) would not reach getenv. This copies
// node's environment into it before main. A program that never calls getenv has no ENV.
Module['preRun'] = (Module['preRun'] || []).concat([function () {
  if (typeof ENV === 'object' && typeof process === 'object' && process.env)
    for (var k in process.env) ENV[k] = process.env[k];
}]);
