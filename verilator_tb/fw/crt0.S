/* crt0: reset entry. Sets gp and sp, clears .bss, calls main() and reports its return value to
 * the testbench through TOHOST (0 = pass), then halts the core with ECALL (README: the harness
 * ends the run when the core halts; the trap cause ECALL marks a normal end). */
  .section .text.init, "ax"
  .globl _start
_start:
  .option push
  .option norelax               /* gp is not set yet: this la must not be relaxed against it */
  la    gp, __global_pointer$
  .option pop
  la    sp, __stack_top

  la    t0, __bss_start
  la    t1, __bss_end
1:
  bgeu  t0, t1, 2f
  sw    zero, 0(t0)
  addi  t0, t0, 4
  j     1b
2:
  call  main

  li    t0, 0x20000000          /* TB MMIO: TOHOST */
  sw    a0, 0(t0)
  ecall
3:
  j     3b                      /* not reached: ECALL halts the core */
