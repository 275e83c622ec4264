/* The slow path shared by the base-MPI trampolines on x86-64 (cmake/BaseMpiTrampolines.cmake).
 * A trampoline whose slot is empty jumps here with its index in %r11d. Every register that can carry
 * an argument (System V: rdi, rsi, rdx, rcx, r8, r9, xmm0-7, and al for variadic calls) is saved,
 * mcrp_base_mpi_resolve(index) binds the slots and returns the target, the registers are restored
 * and the target is entered as if called directly, so it returns straight to the original caller. */
        .text
        .p2align 4
        .globl  mcrp_base_mpi_bind_and_jump
        .hidden mcrp_base_mpi_bind_and_jump
        .type   mcrp_base_mpi_bind_and_jump, @function
mcrp_base_mpi_bind_and_jump:
        .cfi_startproc
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        /* Entered with %rsp = 8 mod 16 (the caller's return address): after the push it is 16-byte
         * aligned, and 192 bytes keep it so for movdqa and for the call. */
        subq    $192, %rsp
        movq    %rdi, 0(%rsp)
        movq    %rsi, 8(%rsp)
        movq    %rdx, 16(%rsp)
        movq    %rcx, 24(%rsp)
        movq    %r8, 32(%rsp)
        movq    %r9, 40(%rsp)
        movq    %rax, 48(%rsp)
        movdqa  %xmm0, 64(%rsp)
        movdqa  %xmm1, 80(%rsp)
        movdqa  %xmm2, 96(%rsp)
        movdqa  %xmm3, 112(%rsp)
        movdqa  %xmm4, 128(%rsp)
        movdqa  %xmm5, 144(%rsp)
        movdqa  %xmm6, 160(%rsp)
        movdqa  %xmm7, 176(%rsp)
        movl    %r11d, %edi
        call    mcrp_base_mpi_resolve
        movq    %rax, %r11
        movq    0(%rsp), %rdi
        movq    8(%rsp), %rsi
        movq    16(%rsp), %rdx
        movq    24(%rsp), %rcx
        movq    32(%rsp), %r8
        movq    40(%rsp), %r9
        movq    48(%rsp), %rax
        movdqa  64(%rsp), %xmm0
        movdqa  80(%rsp), %xmm1
        movdqa  96(%rsp), %xmm2
        movdqa  112(%rsp), %xmm3
        movdqa  128(%rsp), %xmm4
        movdqa  144(%rsp), %xmm5
        movdqa  160(%rsp), %xmm6
        movdqa  176(%rsp), %xmm7
        leave
        .cfi_def_cfa %rsp, 8
        jmp     *%r11
        .cfi_endproc
        .size   mcrp_base_mpi_bind_and_jump, .-mcrp_base_mpi_bind_and_jump

        .section .note.GNU-stack, "", @progbits
