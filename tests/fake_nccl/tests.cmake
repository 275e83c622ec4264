# The library's NCCL path on CPU: test programs of tests/mpi and tests/gpu on the fake device, with
# the fake NCCL (tests/fake_nccl) loaded as MCRPMPI_NCCL_LIBRARY, so that routing, communicator
# setup, queueing, the direct blocking launch, completion and failures run as on a GPU (label
# fake_nccl; `ctest -L fake_nccl`). Included from tests/CMakeLists.txt once every program exists.
set(fake_nccl_env MCRPMPI_FAKE_DEVICE=1 MCRPMPI_NCCL_LIBRARY=$<TARGET_FILE:mcrpmpi_fake_nccl>)
set(fake_nccl_labels "host;fake_device;fake_nccl")

# mcrpmpi_add_fake_nccl_test(<name> <ranks...> [NBCOMM] ENV <extra env...> COMMAND <program and arguments>)
# The library's default NCCL communicators are blocking ones (MCRPMPI_NCCL_INLINE_LAUNCH,
# runtime/nccl_comm.h). The fake's blocking communicators make a launch that opens a point-to-point
# connection wait for the peer's launch that opens the other end, as NCCL does, so a launch that
# connected on the caller instead of on the side thread hangs the cross-communicator orders of
# `nonblocking` and the all-pairs exchanges of `p2p_asserted`.
# NBCOMM: the same again as mpi.fake_nccl.nbcomm.<name>.np<N> with MCRPMPI_NCCL_INLINE_LAUNCH=0
# (nonblocking NCCL communicators, the default before 2026-11-27).
function(mcrpmpi_add_fake_nccl_test name)
  cmake_parse_arguments(F "NBCOMM" "TIMEOUT" "RANKS;ENV;COMMAND" ${ARGN})
  if(NOT F_TIMEOUT)
    set(F_TIMEOUT 300)
  endif()
  set(variants plain)
  if(F_NBCOMM)
    list(APPEND variants nbcomm)
  endif()
  foreach(variant IN LISTS variants)
    set(prefix "")
    set(variant_env "")
    if(variant STREQUAL "nbcomm")
      set(prefix "nbcomm.")
      set(variant_env MCRPMPI_NCCL_INLINE_LAUNCH=0)
    endif()
    foreach(np IN LISTS F_RANKS)
      mcrpmpi_add_mpi_test(NAME mpi.fake_nccl.${prefix}${name}.np${np} NPROCS ${np} LABELS ${fake_nccl_labels}
                           TIMEOUT ${F_TIMEOUT} ENV ${fake_nccl_env} ${F_ENV} ${variant_env} COMMAND ${F_COMMAND})
    endforeach()
  endforeach()
endfunction()

# Every blocking collective against host references (one rank: the local copy, no NCCL).
mcrpmpi_add_fake_nccl_test(collectives NBCOMM RANKS 1 2 3 4
                           COMMAND $<TARGET_FILE:mcrpmpi_gpu_collectives> --space fake-device --path nccl)
# Which NCCL communicators the library chose, as MCRPMPI_DEBUG says (runtime/nccl_api.cpp): blocking
# ones by default; nonblocking ones when the process had NCCL before the library loaded it (preloaded
# here, as PyTorch's NCCL backend may have it), since NCCL may have read NCCL_RUNTIME_CONNECT then;
# blocking again when NCCL_RUNTIME_CONNECT=0 comes from the environment. The line and the exit status
# judge it (OUTPUT), so failed checks and a rank's bad exit fail the test.
function(mcrpmpi_add_communicator_kind_test name expected)
  mcrpmpi_add_mpi_test(NAME mpi.fake_nccl.communicator_kind.${name}.np2 NPROCS 2 LABELS ${fake_nccl_labels}
                       TIMEOUT 60 ENV ${fake_nccl_env} MCRPMPI_DEBUG=1 ${ARGN}
                       OUTPUT "NCCL communicators are ${expected}"
                       COMMAND $<TARGET_FILE:mcrpmpi_gpu_collectives> --space fake-device --path nccl)
endfunction()
mcrpmpi_add_communicator_kind_test(default "blocking ones")
mcrpmpi_add_communicator_kind_test(preloaded "nonblocking ones \\(NCCL was loaded before"
                                   LD_PRELOAD=$<TARGET_FILE:mcrpmpi_fake_nccl>)
mcrpmpi_add_communicator_kind_test(preloaded_connect0 "blocking ones" LD_PRELOAD=$<TARGET_FILE:mcrpmpi_fake_nccl>
                                   NCCL_RUNTIME_CONNECT=0)
mcrpmpi_add_communicator_kind_test(turned_off "nonblocking ones \\(MCRPMPI_NCCL_INLINE_LAUNCH=0"
                                   MCRPMPI_NCCL_INLINE_LAUNCH=0)
# The same with every blocking collective run as its nonblocking form and a polling wait
# (MCRPMPI_POLLING_COLLECTIVES, on by default under MCRPMPI_P2P_DEVICE_ONLY): the in-place
# reduce_scatter with large uneven blocks, which NCCL cannot do, then reaches the base MPI's
# MPI_Ireduce_scatter, which MPICH 4.0.2 aborts in unless given a copy (collectives/base_call.cpp).
mcrpmpi_add_fake_nccl_test(collectives.polling RANKS 2 ENV MCRPMPI_POLLING_COLLECTIVES=1
                           COMMAND $<TARGET_FILE:mcrpmpi_gpu_collectives> --space fake-device --path nccl)
# Swapped gap-free datatypes (packed for NCCL) and MPI_BOTTOM with absolute device addresses (every
# rank on NCCL: one classified host would leave the others waiting in NCCL).
mcrpmpi_add_fake_nccl_test(derived_placement NBCOMM RANKS 2 3 TIMEOUT 60
                           COMMAND $<TARGET_FILE:test_datatype_placement_linked> --space fake-device-legacy)
# Nonblocking collectives, and the cross-communicator orders that need guarantee 2.
mcrpmpi_add_fake_nccl_test(nonblocking NBCOMM RANKS 2 3 4 COMMAND $<TARGET_FILE:test_nonblocking_gpu> --fake-device)
mcrpmpi_add_fake_nccl_test(persistent NBCOMM RANKS 2 3 COMMAND $<TARGET_FILE:test_persistent_gpu> --fake-device)
mcrpmpi_add_fake_nccl_test(horovod_pattern NBCOMM RANKS 2 3 COMMAND $<TARGET_FILE:test_horovod_pattern> --fake-device)
mcrpmpi_add_fake_nccl_test(ignored_arguments RANKS 2 3
                           COMMAND $<TARGET_FILE:test_ignored_arguments_linked> --space fake-device)
mcrpmpi_add_fake_nccl_test(bad_input NBCOMM RANKS 2 3 COMMAND $<TARGET_FILE:test_bad_input_linked> --space fake-device)
mcrpmpi_add_fake_nccl_test(verify_agreement RANKS 2 3 ENV MCRPMPI_VERIFY=1 MCRPMPI_P2P_CHANNEL=nccl
                           COMMAND $<TARGET_FILE:test_verify_agreement> --space fake-device)
mcrpmpi_add_fake_nccl_test(thread_stress NBCOMM RANKS 2 3
                           COMMAND $<TARGET_FILE:test_thread_stress> --space fake-device --rounds 8)
# The same with staging pools of 0 bytes: every block is freed, by the background thread, while other
# threads' NCCL work is in flight; the fake NCCL makes such a free wait for its kernels (as cudaFreeHost
# does), so a free not held to a quiet moment (device/quiet_work.h) deadlocks the ranks.
mcrpmpi_add_fake_nccl_test(thread_stress.pool_limit_0 RANKS 2 ENV MCRPMPI_PINNED_POOL_LIMIT=0 MCRPMPI_DEVICE_POOL_LIMIT=0
                           COMMAND $<TARGET_FILE:test_thread_stress> --space fake-device --rounds 8)
# Memory held flat with NCCL communicators created and freed (one every 64 rounds): freed ones must be
# destroyed, not kept for a quiet moment that never comes (runtime/nccl_teardown.h).
mcrpmpi_add_fake_nccl_test(memory_flat NBCOMM RANKS 2 COMMAND $<TARGET_FILE:test_memory_flat> --space fake-device --calls 40000)
# A program on MPI Sessions only: NCCL loaded, yet staged alike on every rank (no MPI_Init, no map).
mcrpmpi_add_fake_nccl_test(sessions RANKS 2 3 COMMAND $<TARGET_FILE:test_sessions> --space fake-device)
# Device-only point-to-point with NCCL moving the payloads (p2p/channel_nccl.cpp).
mcrpmpi_add_fake_nccl_test(p2p_asserted NBCOMM RANKS 2 3 ENV MCRPMPI_P2P_DEVICE_ONLY=1 MCRPMPI_P2P_CHANNEL=nccl
                           COMMAND $<TARGET_FILE:test_p2p_linked> --space fake-device --assert env --threads)
# Random traffic (tests/mpi/test_p2p_random.cpp) with its collectives on the NCCL path: staged
# point-to-point beside them, then through the device-only protocol (groups proposed, rejected and
# accepted in orders no fixed case makes; every payload by rendezvous in the last), and both at once
# (a duplicate asserted by the info key among staged communicators, with the polling collectives,
# and without them: the helper thread of runtime/progress_thread.h then answers for a rank in a
# barrier).
mcrpmpi_add_fake_nccl_test(p2p_random RANKS 2 3 TIMEOUT 120 COMMAND $<TARGET_FILE:test_p2p_random_linked> --space fake-device)
mcrpmpi_add_fake_nccl_test(p2p_random.asserted NBCOMM RANKS 2 3 4 TIMEOUT 120
                           ENV MCRPMPI_P2P_DEVICE_ONLY=1 MCRPMPI_P2P_CHANNEL=nccl
                           COMMAND $<TARGET_FILE:test_p2p_random_linked> --space fake-device)
mcrpmpi_add_fake_nccl_test(p2p_random.asserted_comm RANKS 2 3 TIMEOUT 120
                           ENV MCRPMPI_P2P_CHANNEL=nccl MCRPMPI_POLLING_COLLECTIVES=1
                           COMMAND $<TARGET_FILE:test_p2p_random_linked> --space fake-device --asserted-comm)
mcrpmpi_add_fake_nccl_test(p2p_random.asserted_comm.helper RANKS 3 TIMEOUT 120
                           ENV MCRPMPI_P2P_CHANNEL=nccl MCRPMPI_PROGRESS_THREAD=1
                           COMMAND $<TARGET_FILE:test_p2p_random_linked> --space fake-device --asserted-comm --seed 29)
# Three threads a rank, each with its own rounds and communicators, one of them asserted (the
# helper thread runs: the program asks for MPI_THREAD_MULTIPLE); buffers from a caching space, as
# a threaded program must (memory_space.h, CachingSpace: a free while another thread's NCCL work
# waits for a peer hangs, as on a GPU).
mcrpmpi_add_fake_nccl_test(p2p_random.asserted_comm.threads RANKS 2 3 TIMEOUT 120 ENV MCRPMPI_P2P_CHANNEL=nccl
                           COMMAND $<TARGET_FILE:test_p2p_random_linked> --space fake-device --asserted-comm
                                   --threads 3 --rounds 60)
# Random collectives (tests/mpi/test_coll_random.cpp) with NCCL setups and launches among staged
# and host ones. Blocking collectives poll (MCRPMPI_POLLING_COLLECTIVES=1), or the helper thread
# advances what a rank blocked in a host collective owes its peers (MCRPMPI_PROGRESS_THREAD=1; the
# default seed on 4 ranks hung without it), or the program runs threads at MPI_THREAD_MULTIPLE.
mcrpmpi_add_fake_nccl_test(coll_random NBCOMM RANKS 2 3 4 TIMEOUT 120 ENV MCRPMPI_POLLING_COLLECTIVES=1
                           COMMAND $<TARGET_FILE:test_coll_random_linked> --space fake-device)
mcrpmpi_add_fake_nccl_test(coll_random.helper RANKS 3 4 TIMEOUT 120 ENV MCRPMPI_PROGRESS_THREAD=1
                           COMMAND $<TARGET_FILE:test_coll_random_linked> --space fake-device)
mcrpmpi_add_fake_nccl_test(coll_random.threads RANKS 3 TIMEOUT 120
                           COMMAND $<TARGET_FILE:test_coll_random_linked> --space fake-device --threads 3 --rounds 40)
# Communicators made anew every round and freed with their NCCL work perhaps in flight
# (--fresh-comms): a new NCCL communicator at each one's first device collective, the old ones
# retired and torn down while the next are set up, and handles the base MPI hands out again. Runs by
# hand without the idle-yield shim killed 2 of 133 on 4 ranks at 150 s, none since; perhaps slow
# spells of unyielding ranks (docs/reliability.md): not settled.
mcrpmpi_add_fake_nccl_test(coll_random.fresh_comms NBCOMM RANKS 3 4 TIMEOUT 120 ENV MCRPMPI_POLLING_COLLECTIVES=1
                           COMMAND $<TARGET_FILE:test_coll_random_linked> --space fake-device --fresh-comms)
mcrpmpi_add_fake_nccl_test(coll_random.fresh_comms.threads NBCOMM RANKS 3 TIMEOUT 120
                           COMMAND $<TARGET_FILE:test_coll_random_linked> --space fake-device --fresh-comms --threads 3 --rounds 40)
# A rank blocked in a host receive, probe or wait (and, where the helper runs or blocking
# collectives poll, a host barrier, MPI_Comm_dup or MPI_Comm_split) while its peers wait for its
# nonblocking device allreduce on a fresh communicator, whose NCCL setup only its library advances
# (tests/mpi/test_owed_progress.cpp): every case hung before 2026-11-29, the constructors under
# MCRPMPI_POLLING_COLLECTIVES=1 until that night (runtime/base_collective_meeting.h).
mcrpmpi_add_fake_nccl_test(owed_progress NBCOMM RANKS 2 3 TIMEOUT 60
                           COMMAND $<TARGET_FILE:test_owed_progress> --space fake-device)
mcrpmpi_add_fake_nccl_test(owed_progress.multiple RANKS 2 3 TIMEOUT 60
                           COMMAND $<TARGET_FILE:test_owed_progress> --space fake-device --init multiple --with-barrier)
mcrpmpi_add_fake_nccl_test(owed_progress.polling NBCOMM RANKS 2 3 TIMEOUT 60 ENV MCRPMPI_POLLING_COLLECTIVES=1
                           COMMAND $<TARGET_FILE:test_owed_progress> --space fake-device --with-barrier)
mcrpmpi_add_fake_nccl_test(p2p_random.asserted.rendezvous_only RANKS 3 TIMEOUT 120
                           ENV MCRPMPI_P2P_DEVICE_ONLY=1 MCRPMPI_P2P_CHANNEL=nccl MCRPMPI_P2P_EAGER_LIMIT=0
                           COMMAND $<TARGET_FILE:test_p2p_random_linked> --space fake-device --seed 13)
# A rank blocked inside the base MPI or computing while its peer waits for the device-only protocol
# on a communicator asserted by the info key: the library's helper thread answers for it
# (test_blocked_elsewhere.cpp; both hung without it).
mcrpmpi_add_fake_nccl_test(blocked_elsewhere NBCOMM RANKS 2 3 TIMEOUT 60 ENV MCRPMPI_P2P_CHANNEL=nccl
                           COMMAND $<TARGET_FILE:test_blocked_elsewhere_linked> --space fake-device --init multiple)
# The NCCL path's wait keeps the base MPI's own rendezvous sends moving (test_progress_while_waiting.cpp).
mcrpmpi_add_fake_nccl_test(progress_while_waiting NBCOMM RANKS 2 3 TIMEOUT 60
                           COMMAND $<TARGET_FILE:test_progress_while_waiting_linked> --space fake-device)
# Communicators, datatypes and ops freed while nonblocking and persistent requests use them: on the
# NCCL path, and with every communicator asserted device-only (point-to-point on NCCL).
mcrpmpi_add_fake_nccl_test(freed_handles NBCOMM RANKS 2 3 TIMEOUT 120
                           COMMAND $<TARGET_FILE:test_freed_handles_linked> --space fake-device)
mcrpmpi_add_fake_nccl_test(freed_handles.asserted RANKS 2 3 TIMEOUT 120
                           ENV MCRPMPI_P2P_DEVICE_ONLY=1 MCRPMPI_P2P_CHANNEL=nccl
                           COMMAND $<TARGET_FILE:test_freed_handles_linked> --space fake-device)
# A member idle outside MPI for longer than MCRPMPI_NCCL_TIMEOUT: the others' rendezvous still runs.
mcrpmpi_add_fake_nccl_test(p2p_idle_member RANKS 3 TIMEOUT 120 ENV MCRPMPI_P2P_CHANNEL=nccl MCRPMPI_NCCL_TIMEOUT=4
                           COMMAND $<TARGET_FILE:test_p2p_idle_member> --space fake-device)
# Ranks started with different MCRPMPI_P2P_CHANNEL values (rank 0 mpi, two more nccl) use rank 0's.
mcrpmpi_add_mpi_test(NAME mpi.fake_nccl.p2p_asserted.mixed_channels.np3 NPROCS 1 LABELS ${fake_nccl_labels} p2p
                     TIMEOUT 300 ENV ${fake_nccl_env} MCRPMPI_P2P_DEVICE_ONLY=1
                     COMMAND env MCRPMPI_P2P_CHANNEL=mpi $<TARGET_FILE:test_p2p_linked> --space fake-device --assert env
                             : ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} env MCRPMPI_P2P_CHANNEL=nccl
                             $<TARGET_FILE:test_p2p_linked> --space fake-device --assert env)
set_tests_properties(mpi.fake_nccl.p2p_asserted.mixed_channels.np3 PROPERTIES PROCESSORS 3)
# A fresh communicator's setup while kernels wait for peers, NCCL's setup call waiting for them as its
# page-locked allocation may (test_setup_beside_kernels.cpp): timed out (MCRPMPI_NCCL_TIMEOUT) on
# nonblocking communicators while their setup call was made under the launch lock.
mcrpmpi_add_fake_nccl_test(setup_beside_kernels NBCOMM RANKS 2 3 TIMEOUT 90
                           ENV MCRPMPI_FAKE_NCCL_SETUP_WAITS=1 MCRPMPI_NCCL_TIMEOUT=20
                           COMMAND $<TARGET_FILE:test_setup_beside_kernels_linked> --space fake-device)
# A peer that never comes: errors within MCRPMPI_NCCL_TIMEOUT, the communicator usable afterwards.
mcrpmpi_add_fake_nccl_test(stuck_peer NBCOMM RANKS 2 3 TIMEOUT 120 ENV MCRPMPI_NCCL_TIMEOUT=3
                           COMMAND $<TARGET_FILE:test_stuck_peer> --space fake-device)
# A peer killed with SIGKILL in the middle of a 64 MiB NCCL allreduce: the job ends within the bound
# with no process left, ended by hydra (its default) or, when the launcher does not notice, by the
# survivors' own failed calls: the fake NCCL reports the dead peer (ncclRemoteError), and with
# MCRPMPI_NCCL_TIMEOUT at its default of 600 s nothing else could end them within the bound.
foreach(mode launcher survivors)
  foreach(np 2 3)
    set(name mpi.fake_nccl.killed_peer.${mode}.np${np})
    add_test(NAME ${name}
             COMMAND ${CMAKE_SOURCE_DIR}/tests/mpi/killed_peer.sh ${mode} 60 ${np} ${MPIEXEC_EXECUTABLE}
                     -genv MCRPMPI_FAKE_DEVICE 1 -genv MCRPMPI_NCCL_LIBRARY $<TARGET_FILE:mcrpmpi_fake_nccl>
                     -- $<TARGET_FILE:test_killed_peer> --space fake-device)
    set_tests_properties(${name} PROPERTIES TIMEOUT 150 PROCESSORS ${np} SKIP_RETURN_CODE 77
                         LABELS "mpi;${fake_nccl_labels};reliability")
  endforeach()
endforeach()
# mcrpmpi-tune end to end on the fake device: both paths of the collectives (NCCL = the fake NCCL)
# and the point-to-point eager limit (inline and rendezvous on asserted communicators of world ranks
# 0 and 1); the script checks the files it writes (tune_end_to_end.sh). Two ranks: every collective
# up to 64 KiB (the limit written is then the default as long as inline wins up to 64 KiB); three
# ranks (world and a two-rank sub-communicator, oversubscribed on a 2-core machine): two collectives
# up to 16 KiB, so that a limit below 65536 is written when inline wins throughout. The staged chunk
# (sizes from 256 KiB up) in a run of its own, two ranks up to 4 MiB: the rows of the allreduce and of
# reduce_scatter_block, every collective's chunk and reduce_scatter_block's own; the 64 KiB runs check
# that the part says it was skipped.
if(TARGET mcrpmpi-tune)
  foreach(run "2;65536;all;" "3;16384;allreduce,bcast,p2p,staged_chunk;" "2;4194304;allreduce,reduce_scatter_block,staged_chunk;.staged_chunk")
    list(GET run 0 np)
    list(GET run 1 max_bytes)
    list(GET run 2 kinds)
    list(GET run 3 suffix)
    set(name mpi.fake_nccl.tune${suffix}.np${np})
    add_test(NAME ${name}
             COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/tune_end_to_end.sh ${CMAKE_CURRENT_BINARY_DIR}/tune${suffix}-np${np}
                     $<TARGET_FILE:mcrpmpi-tune> $<TARGET_FILE:mcrpmpi_fake_nccl> ${max_bytes} ${kinds}
                     ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS})
    set_tests_properties(${name} PROPERTIES TIMEOUT 120 PROCESSORS ${np} LABELS "mpi;${fake_nccl_labels};tuning")
  endforeach()
  # A run ended by SIGTERM to its launcher once six rows are measured keeps them in its CSV, which
  # --from-csv turns into a table (tune_cut_short.sh).
  add_test(NAME mpi.fake_nccl.tune.cut_short.np2
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/tune_cut_short.sh ${CMAKE_CURRENT_BINARY_DIR}/tune-cut-short
                   $<TARGET_FILE:mcrpmpi-tune> $<TARGET_FILE:mcrpmpi_fake_nccl>
                   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS})
  set_tests_properties(mpi.fake_nccl.tune.cut_short.np2 PROPERTIES TIMEOUT 120 PROCESSORS 2
                       LABELS "mpi;${fake_nccl_labels};tuning")
endif()
