#!/usr/bin/env bash
# Builds the library and a focused set of its tests with AddressSanitizer and UndefinedBehaviorSanitizer
# into $MCRPMPI_SANITIZE_BUILD_DIR (default build-sanitize/) and runs them: the unit tests and the
# multi-rank programs that drive the library's own code on CPU -- the fake-device staged and
# pipelined paths, the device-only point-to-point protocol (its base-MPI channel's chunked staging
# too), the fake device's asynchronous copies and legacy-stream uploads (queued copies that outlive
# a buffer would be reads or writes after free here), bad input, VERIFY agreement and memory checks, ignored
# arguments, eight threads a rank, a Sessions-only program, an idle member of a device-only
# communicator, handles and arrays freed while requests use them, derived datatypes whose data lies
# far from the buffer's base (a staged copy's base then lies outside any object), the device-only assertion made
# from infos on ranks with and without CUDA, and the paths for a base MPI with CUDA support
# (tests/cuda_aware_base.cmake). Any sanitizer report fails
# the run. scripts/test.sh runs it after the main suite (MCRPMPI_SANITIZER_TESTS=0 skips it). Left
# out: Python tests (the interpreter is not instrumented, so the sanitizer runtime cannot come
# first), GPU tests (compute-sanitizer is the tool there: docs/reliability.md), and the
# memory-flat test (ASan's quarantine grows RSS).
# Then a ThreadSanitizer build ($MCRPMPI_TSAN_BUILD_DIR, default build-tsan/) runs the threaded tests.
# Usage: scripts/test-sanitizers.sh [extra ctest arguments] | --check-names [BUILD]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MCRPMPI_SANITIZE_BUILD_DIR:-$root/build-sanitize}
targets="mcrpmpi mcrpmpi_unit_tests mcrpmpi_pool_tests mcrpmpi_memory_check_tests test_p2p_linked test_staged_pipeline test_thread_stress
         test_ignored_arguments_linked test_verify_agreement test_bad_input_linked
         mcrpmpi_fake_nccl mcrpmpi_gpu_collectives test_stuck_peer test_sessions test_p2p_idle_member
         test_block_collectives_linked test_local_calls_linked test_attached_buffer_linked test_intercomm_bcast_linked
         test_nonblocking_gpu test_freed_handles_linked test_assertion_agreement test_p2p_random_linked
         test_blocked_elsewhere_linked test_timeout_report test_partitioned_linked test_datatype_placement_linked"
# The multi-rank runs, one pattern per test family (each anchored as ^mpi\.<pattern>$). Every pattern
# must name a test of the build (check_named below): a renamed test must not leave the set unnoticed,
# as the nonblocking-communicator runs did when `.inline.` became `.nbcomm.` (2026-11-27).
asan_tests=(
  'p2p\.asserted\.np[23]' 'p2p\.asserted\.small_chunks\.np3' 'p2p\.fake_device\.np[23]'
  'staged_pipeline\.fake_device\.np[23]' 'thread_stress\.fake-device\.np2' 'ignored_arguments\.fake_device\.np[23]'
  'verify_agreement\.fake_device\.np3' 'bad_input\.fake_device\.np[23]' 'sessions\.fake_device\.np2'
  'block_collectives\.(fake_device\.np3|mixed\.np3|host\.np3)' 'local_calls\.(fake_device|host)\.np2'
  'attached_buffer\.fake_device\.np2' 'intercomm_bcast\.(fake_device|host)\.np4'
  'fake_nccl\.(collectives\.np3|nonblocking\.np2|ignored_arguments\.np2|p2p_asserted\.np2|thread_stress\.np2|stuck_peer\.np2|sessions\.np2|p2p_idle_member\.np3)'
  'fake_nccl\.nbcomm\.(collectives\.np3|p2p_asserted\.np2|stuck_peer\.np2)'
  'async_device\.(p2p_asserted\.small_chunks\.np3|collectives\.nccl\.np2)' 'stream_order\.p2p\.async\.np3'
  'freed_handles\.fake_device\.pipelined\.np3' 'fake_nccl\.freed_handles\.asserted\.np2'
  'p2p\.assertion_agreement\.(all|mixed)_cuda\.np3'
  'p2p_random\.(asserted\.np3|fake_device\.np3|fake_device\.asserted_comm\.np3)'
  'fake_nccl\.p2p_random\.(asserted|asserted_comm)\.np3'
  'blocked_elsewhere\.fake_device\.raised_plain\.np3' 'fake_nccl\.blocked_elsewhere\.np3'
  'fake_nccl\.timeout_report\.(stuck|setup)\.np2' 'partitioned\.(fake_device\.np2|async_device\.np2)'
  'cuda_aware_base\.(p2p_asserted\.async\.np2|p2p_random\.threads\.sync\.np2|partitioned\.async\.np2)'
  'derived_types\.placement\.fake_device\.(np[23]|pipelined\.np3|p2p_device_only\.np2)'
)
tsan_tests=(
  'thread_stress\.fake-device\.np2' 'thread_stress\.host\.np3' 'fake_nccl\.thread_stress\.np[23]' 'p2p\.asserted\.np2'
  'fake_nccl\.p2p_asserted\.np2' 'fake_nccl\.nbcomm\.thread_stress\.np2'
  'blocked_elsewhere\.fake_device\.multiple\.np2' 'fake_nccl\.blocked_elsewhere\.np2'
  'request_reuse\.fake_device\.np1' 'p2p_random\.fake_device\.asserted_comm\.threads\.np3'
  'fake_nccl\.coll_random\.threads\.np3' 'fake_nccl\.owed_progress\.multiple\.np2'
  'fake_nccl\.timeout_report\.stuck\.np2' 'partitioned\.async_device\.np2'
  'cuda_aware_base\.p2p_random\.threads\.sync\.np2' 'fake_nccl\.coll_random\.fresh_comms\.threads\.np3'
  'fake_nccl\.coll_random\.helper\.np3' 'fake_nccl\.p2p_random\.asserted_comm\.threads\.np3'
)
# Prints the ctest regex of the patterns given; fails naming each pattern that matches no test of
# the build directory it runs in. An alternation counts as one pattern: each of its names must exist.
# The regex lists every alternative expanded, inside one group: CMake's regular expressions take
# at most nine groups, and with a group per pattern the set outgrew them on 2026-11-28 (ctest:
# "Too many parentheses", then "No tests were found", and the run passed having run nothing; the
# ctest calls below now fail on no tests, and --check-names counts what the regex selects).
check_named() {
  local missing=0 pattern name known names=()
  known=$(ctest -N | sed -n 's/^ *Test *#[0-9]*: //p')
  for pattern in "$@"; do
    while IFS= read -r name; do
      if ! grep -qE "^mpi\.${name}\$" <<<"$known"; then
        echo "test-sanitizers: no test matches ^mpi\.${name}\$ (renamed or removed?)" >&2
        missing=1
      fi
      names+=("$name")
    done < <(expand_alternatives "$pattern")
  done
  [ "$missing" = 0 ] || return 1
  local IFS='|'
  echo "^mpi\.(${names[*]})\$"
}
# How many tests ctest selects with the regex (0 when CMake cannot compile it).
count_selected() { ctest -N -R "$1" 2>&1 | sed -n 's/^Total Tests: //p'; }
# One pattern with its single (a|b|...) group expanded into one pattern per alternative.
expand_alternatives() {
  local pattern=$1
  if [[ $pattern =~ ^(.*)\(([^()]*)\)(.*)$ ]]; then
    local head=${BASH_REMATCH[1]} body=${BASH_REMATCH[2]} tail=${BASH_REMATCH[3]} alternative
    local IFS='|'
    for alternative in $body; do echo "${head}${alternative}${tail}"; done
  else
    echo "$pattern"
  fi
}
# --check-names [BUILD]: only check that both sets name tests of BUILD (default build/), as the main
# suite's scripts.sanitizer_names does, so that a rename fails there before the long builds here.
if [ "${1:-}" = --check-names ]; then
  cd "${2:-$root/build}"
  asan=$(check_named "${asan_tests[@]}")
  tsan=$(check_named "${tsan_tests[@]}")
  asan_count=$(count_selected "$asan")
  tsan_count=$(count_selected "$tsan")
  if [ "${asan_count:-0}" = 0 ] || [ "${tsan_count:-0}" = 0 ]; then
    echo "test-sanitizers: ctest selects no test with a set's regex (ASan ${asan_count:-0}, TSan ${tsan_count:-0})" >&2
    exit 1
  fi
  echo "test-sanitizers: all ${#asan_tests[@]} ASan and ${#tsan_tests[@]} TSan patterns name tests of $(pwd)," \
       "selecting $asan_count and $tsan_count"
  exit 0
fi
# -O1 -g1 (line tables: reports still name file and line), the sanitizers' usual level: the ASan
# build took about 10 of a fresh-clone CI run's 42.5 minutes at RelWithDebInfo's -O2 -g.
# No idle-yield shim in the ranks (tests/CMakeLists.txt, MCRPMPI_TEST_YIELD): preloaded, it comes
# before the ASan runtime, which then refuses to start ("ASan runtime does not come first"). The
# sets ran without it before too, by accident: the build step that was to build it asked
# `cmake --build --target help | grep -q` under pipefail, where grep's early exit fails the pipe, so
# the shim was never built and ld.so ignored the missing preload (found 2026-11-29 when a build that
# had the shim failed every ASan test).
sanitizer_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                 "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DMCRPMPI_TEST_YIELD=OFF)
# build_sanitized DIR SANITIZERS TARGETS...: configures DIR with -fsanitize=SANITIZERS and builds
# the targets as the dependencies of one (MCRPMPI_BUILD_SET, CMakeLists.txt): named one by one they
# built one after another, each test program's sources compiling alone (the ASan build took 6.3 of
# a fresh-clone CI run's 45.4 minutes, 2026-11-29).
build_sanitized() {
  local dir=$1 sanitizers=$2
  shift 2
  local set
  set=$(IFS=';'; echo "$*")
  cmake -S "$root" -B "$dir" "${sanitizer_flags[@]}" "-DMCRPMPI_SANITIZE=$sanitizers" "-DMCRPMPI_BUILD_SET=$set" >/dev/null
  cmake --build "$dir" -j "$(nproc)" --target mcrpmpi_build_set
}
# shellcheck disable=SC2086
build_sanitized "$build" address,undefined $targets
# Leak checking is off: MPICH's hwloc plugin leaks at MPI_Init from a module it unloads, which
# LeakSanitizer cannot name (so no suppression matches); the library's leaks are measured by the
# memory-flat test of the main suite. halt_on_error makes any report fatal.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
"$build/tests/unit/mcrpmpi_unit_tests" --gtest_brief=1
"$build/tests/unit/mcrpmpi_pool_tests" --gtest_brief=1
MCRPMPI_FAKE_DEVICE=async "$build/tests/unit/mcrpmpi_pool_tests" --gtest_brief=1 --gtest_filter='BufferPoolAsync.*'
"$build/tests/unit/mcrpmpi_memory_check_tests" --gtest_brief=1
cd "$build"
tests=$(check_named "${asan_tests[@]}")
ctest --output-on-failure --no-tests=error -j "$(nproc)" --timeout 600 -R "$tests" "$@"

# ThreadSanitizer over the threaded tests (issue 13 item 6: no data race): 8 threads a rank on 8
# communicators, staged path and the NCCL path through the fake NCCL; and the device-only
# point-to-point protocol with two threads a rank, on the base-MPI channel's chunked staging and on
# the fake NCCL; and the helper thread of runtime/progress_thread.h answering for a blocked rank;
# request handles passed between threads by the base MPI, and three threads a rank of random traffic;
# three threads a rank of random collectives through the fake NCCL, and the helper thread advancing a
# fresh communicator's NCCL setup for a rank blocked in host calls (both since 2026-11-29); partitions
# of one request readied by a thread each, with asynchronous fake copies (since 2026-11-30); three
# threads a rank of random traffic handed to a (fake) CUDA-aware base MPI (since 2026-12-01); and
# (since the afternoon of 2026-12-01) three threads a rank of random collectives on communicators
# made and freed every round, each with its NCCL setup, the helper thread advancing random
# collectives, and three threads a rank of random device-only traffic on the fake NCCL's channel.
# MPICH is not instrumented; UCX's memory hooks are turned off because they break TSan's interceptors (a crash at MPI_Init).
tsan_build=${MCRPMPI_TSAN_BUILD_DIR:-$root/build-tsan}
build_sanitized "$tsan_build" thread mcrpmpi test_thread_stress test_p2p_linked mcrpmpi_fake_nccl \
  test_blocked_elsewhere_linked test_request_reuse_linked test_p2p_random_linked test_coll_random_linked test_owed_progress \
  test_timeout_report test_partitioned_linked
cd "$tsan_build"
tests=$(check_named "${tsan_tests[@]}")
TSAN_OPTIONS="halt_on_error=1:report_signal_unsafe=0:${TSAN_OPTIONS:-}" UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_MALLOC_HOOKS=no \
  ctest --output-on-failure --no-tests=error -j "$(nproc)" --timeout 600 \
  -R "$tests" "$@"
