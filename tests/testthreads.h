/* testthreads.h - starting and joining the threads of a test: POSIX threads, or Windows' own
 * (_beginthreadex), whose C libraries have no <pthread.h> under MSVC, or none (TEST_NO_THREADS).
 *   tl_thread_start(&t, fn, arg)   0 when fn(arg) runs in a new thread
 *   tl_thread_join(t)              waits for it to end */
#ifndef POSENC_TESTTHREADS_H
#define POSENC_TESTTHREADS_H

#include <stdlib.h>

#if defined(_WIN32)
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h>
#  include <process.h>

typedef HANDLE tl_thread;

typedef struct tl_thread_call {
  void *(*fn)(void *);
  void *arg;
} tl_thread_call;

static unsigned __stdcall tl_thread_main(void *p) {
  tl_thread_call call = *(tl_thread_call *)p;
  free(p);
  call.fn(call.arg);
  return 0;
}

static inline int tl_thread_start(tl_thread *t, void *(*fn)(void *), void *arg) {
  tl_thread_call *call = (tl_thread_call *)malloc(sizeof *call);
  if (!call) return -1;
  call->fn = fn;
  call->arg = arg;
  *t = (HANDLE)_beginthreadex(NULL, 0, tl_thread_main, call, 0, NULL);
  if (*t) return 0;
  free(call);
  return -1;
}

static inline void tl_thread_join(tl_thread t) {
  WaitForSingleObject(t, INFINITE);
  CloseHandle(t);
}
#elif defined(TEST_NO_THREADS)
/* WebAssembly here (wasi-libc, Emscripten without its SharedArrayBuffer build): no threads; a
 * "thread" runs its function at once, in the caller's. */
typedef int tl_thread;

static inline int tl_thread_start(tl_thread *t, void *(*fn)(void *), void *arg) {
  *t = 0;
  fn(arg);
  return 0;
}

static inline void tl_thread_join(tl_thread t) { (void)t; }
#else
#  include <pthread.h>

typedef pthread_t tl_thread;

static inline int tl_thread_start(tl_thread *t, void *(*fn)(void *), void *arg) {
  return pthread_create(t, NULL, fn, arg) == 0 ? 0 : -1;
}

static inline void tl_thread_join(tl_thread t) { pthread_join(t, NULL); }
#endif

#endif /* POSENC_TESTTHREADS_H */
