// port/thread_annotations.h — clang's thread-safety attributes as macros.
//
// With clang and -Wthread-safety (CMake option EDDY_THREAD_SAFETY, `make
// thread-safety`) the compiler checks that a member marked GUARDED_BY(mu_)
// is only touched with mu_ held, that a function marked REQUIRES(mu_) is
// only called with it held, and so on. Other compilers see empty macros.
// The capability itself is port::Mutex (port/mutex.h).
// https://clang.llvm.org/docs/ThreadSafetyAnalysis.html
#pragma once

#if defined(__clang__)
#define EDDY_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define EDDY_THREAD_ANNOTATION(x)
#endif

// On a class: its objects are capabilities (a mutex).
#define CAPABILITY(name) EDDY_THREAD_ANNOTATION(capability(name))
// On a class: RAII, holds the capabilities its constructor acquires.
#define SCOPED_CAPABILITY EDDY_THREAD_ANNOTATION(scoped_lockable)

// On a member: read and written only with the capability held.
#define GUARDED_BY(x) EDDY_THREAD_ANNOTATION(guarded_by(x))
// On a pointer member: what it points to is guarded (the pointer is not).
#define PT_GUARDED_BY(x) EDDY_THREAD_ANNOTATION(pt_guarded_by(x))

// Lock order (checked by clang's -Wthread-safety-beta only).
#define ACQUIRED_BEFORE(...) EDDY_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) EDDY_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))

// On a function: callers must hold the capability (exclusively / shared).
#define REQUIRES(...) EDDY_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) EDDY_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
// On a function: callers must not hold it (the function acquires it).
#define EXCLUDES(...) EDDY_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// On a function: acquires / releases the capability (no argument: this).
#define ACQUIRE(...) EDDY_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) EDDY_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) EDDY_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// On a function: asserts (at run time, if at all) that the capability is held.
#define ASSERT_CAPABILITY(x) EDDY_THREAD_ANNOTATION(assert_capability(x))
// On a function: returns the capability (a mutex accessor).
#define RETURN_CAPABILITY(x) EDDY_THREAD_ANNOTATION(lock_returned(x))

// On a function: not checked. Say why next to each use.
#define NO_THREAD_SAFETY_ANALYSIS EDDY_THREAD_ANNOTATION(no_thread_safety_analysis)
