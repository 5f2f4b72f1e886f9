/*
 * isa_test.S — int isa_selftest(void): checks every RV32I instruction of the core, and the
 * pipeline hazards around them, against known answers. Returns 0, or the number of the first
 * failing test (the harness reports it as fw.isa_fail).
 *
 * Hand-written so that the hazards are exactly where the tests say: back-to-back dependencies
 * (forwarding from M), one instruction apart (forwarding from W), two apart (the register
 * file's write-first bypass), loads followed at once by a use (the load-use bubble), and
 * branches whose operands were just computed or loaded.
 *
 * Uses only caller-saved registers; a0 holds the current test number.
 */
  .option arch, +zicsr            /* the core's read-only counters (the C code is plain rv32i) */
  .section .text
  .globl isa_selftest

#define TEST(n)        li a0, n
#define CHECK(r, v)    li t6, v; bne r, t6, fail

  .balign 4
isa_selftest:
  la    a1, isa_scratch

  /* ── Register-register ALU ── */
  TEST(1);  li t0, 17;  li t1, 25;  add  t2, t0, t1;  CHECK(t2, 42)
  TEST(2);  li t0, 17;  li t1, 25;  sub  t2, t0, t1;  CHECK(t2, -8)
  TEST(3);  li t0, 0x80000000; li t1, 0x80000000; add t2, t0, t1; CHECK(t2, 0)  /* wraps */
  TEST(4);  li t0, 1;   li t1, 33;  sll  t2, t0, t1;  CHECK(t2, 2)   /* shift amount mod 32 */
  TEST(5);  li t0, -1;  li t1, 1;   slt  t2, t0, t1;  CHECK(t2, 1)
  TEST(6);  li t0, -1;  li t1, 1;   sltu t2, t0, t1;  CHECK(t2, 0)
  TEST(7);  li t0, 0x0F0F0F0F; li t1, 0x00FF00FF; xor t2, t0, t1; CHECK(t2, 0x0FF00FF0)
  TEST(8);  li t0, 0x80000000; li t1, 4; srl t2, t0, t1; CHECK(t2, 0x08000000)
  TEST(9);  li t0, 0x80000000; li t1, 4; sra t2, t0, t1; CHECK(t2, 0xF8000000)
  TEST(10); li t0, 0x0F0F0F0F; li t1, 0x00FF00FF; or  t2, t0, t1; CHECK(t2, 0x0FFF0FFF)
  TEST(11); li t0, 0x0F0F0F0F; li t1, 0x00FF00FF; and t2, t0, t1; CHECK(t2, 0x000F000F)
  TEST(12); li t0, 5;   li t1, 5;   slt  t2, t0, t1;  CHECK(t2, 0)

  /* ── Register-immediate ALU ── */
  TEST(20); li t0, 100; addi  t2, t0, -101;  CHECK(t2, -1)
  TEST(21); li t0, -5;  slti  t2, t0, -4;    CHECK(t2, 1)
  TEST(22); li t0, 5;   sltiu t2, t0, -1;    CHECK(t2, 1)   /* imm -1 is 0xFFFFFFFF unsigned */
  TEST(23); li t0, 0x1234; xori t2, t0, -1;  CHECK(t2, 0xFFFFEDCB)
  TEST(24); li t0, 0x1200; ori  t2, t0, 0x34; CHECK(t2, 0x1234)
  TEST(25); li t0, 0x1234; andi t2, t0, 0x0F0; CHECK(t2, 0x030)
  TEST(26); li t0, 3;   slli  t2, t0, 30;    CHECK(t2, 0xC0000000)
  TEST(27); li t0, -16; srli  t2, t0, 28;    CHECK(t2, 0xF)
  TEST(28); li t0, -16; srai  t2, t0, 2;     CHECK(t2, -4)

  /* ── LUI, AUIPC ── */
  TEST(30); lui t2, 0xABCDE; CHECK(t2, 0xABCDE000)
  TEST(31)
1:
  auipc t0, 0
  jal   t1, 2f                  /* t1 = address of the instruction after the jal = 1b + 8 */
2:
  sub   t2, t1, t0
  CHECK(t2, 8)
  TEST(32)
3:
  auipc t0, 1                   /* 3b + 0x1000 */
  lla   t1, 3b
  sub   t2, t0, t1
  CHECK(t2, 0x1000)

  /* ── Forwarding ── */
  TEST(40)
  addi  t0, zero, 5
  addi  t1, t0, 1               /* from M */
  addi  t2, t1, 1               /* from M */
  add   t3, t2, t0              /* t2 from M, t0 from the register file */
  CHECK(t3, 12)
  TEST(41)
  addi  t0, zero, 7
  addi  t4, zero, 1
  addi  t1, t0, 0               /* t0 from W */
  CHECK(t1, 7)
  TEST(42)
  addi  t0, zero, 9
  addi  t4, zero, 1
  addi  t5, zero, 2
  addi  t1, t0, 0               /* t0 written by W in the same cycle as D reads it */
  CHECK(t1, 9)
  TEST(43)
  addi  t0, zero, 1
  addi  t0, t0, 1               /* the youngest producer of t0 must win over an older one */
  addi  t0, t0, 1
  add   t1, t0, t0
  CHECK(t1, 6)
  TEST(44)
  addi  zero, zero, 5           /* x0 stays 0, and is never forwarded */
  add   t1, zero, zero
  CHECK(t1, 0)
  bnez  zero, fail

  /* ── Loads and stores, every width and offset ── */
  TEST(50)
  li    t0, 0x80FF7F01
  sw    t0, 0(a1)
  lw    t1, 0(a1)               /* store then load, back to back */
  CHECK(t1, 0x80FF7F01)
  TEST(51); lb  t1, 0(a1); CHECK(t1, 0x01)
  TEST(52); lb  t1, 1(a1); CHECK(t1, 0x7F)
  TEST(53); lb  t1, 2(a1); CHECK(t1, -1)
  TEST(54); lb  t1, 3(a1); CHECK(t1, -128)
  TEST(55); lbu t1, 2(a1); CHECK(t1, 0xFF)
  TEST(56); lbu t1, 3(a1); CHECK(t1, 0x80)
  TEST(57); lh  t1, 0(a1); CHECK(t1, 0x7F01)
  TEST(58); lh  t1, 2(a1); CHECK(t1, 0xFFFF80FF)
  TEST(59); lhu t1, 2(a1); CHECK(t1, 0x80FF)
  TEST(60)
  sw    zero, 4(a1)
  li    t0, 0xA1
  sb    t0, 4(a1)
  li    t0, 0xB2
  sb    t0, 5(a1)
  li    t0, 0xC3
  sb    t0, 6(a1)
  li    t0, 0xD4
  sb    t0, 7(a1)
  lw    t1, 4(a1)
  CHECK(t1, 0xD4C3B2A1)
  TEST(61)
  li    t0, 0x11112222
  sh    t0, 8(a1)               /* low half: 0x2222 */
  li    t0, 0x33334444
  sh    t0, 10(a1)              /* high half: 0x4444 */
  lw    t1, 8(a1)
  CHECK(t1, 0x44442222)
  TEST(62)
  lw    zero, 0(a1)             /* a load to x0 is discarded */
  bnez  zero, fail

  /* ── Load-use hazards ── */
  TEST(70)
  li    t0, 1234
  sw    t0, 12(a1)
  lw    t1, 12(a1)
  addi  t2, t1, 1               /* use right after the load: one bubble */
  CHECK(t2, 1235)
  TEST(71)
  lw    t1, 12(a1)
  add   t2, t1, t1              /* both operands */
  CHECK(t2, 2468)
  TEST(72)
  lw    t1, 12(a1)
  sw    t1, 16(a1)              /* store data from the load */
  lw    t2, 16(a1)
  CHECK(t2, 1234)
  TEST(73)
  addi  t0, a1, 24
  sw    t0, 20(a1)              /* scratch[5] = &scratch[6] */
  li    t3, 777
  sw    t3, 24(a1)
  lw    t1, 20(a1)
  lw    t2, 0(t1)               /* address from the load: pointer chase */
  CHECK(t2, 777)
  TEST(74)
  lw    t1, 12(a1)
  li    t3, 1234
  bne   t1, t3, fail            /* load, one instruction, then branch on it */
  lw    t1, 12(a1)
  beq   t1, zero, fail          /* branch right after the load */
  TEST(75)
  lw    t1, 12(a1)
  addi  t4, zero, 3             /* independent: no stall needed */
  add   t2, t1, t4              /* t1 from W */
  CHECK(t2, 1237)

  /* ── Branches: taken and not taken, signed and unsigned ── */
  TEST(80); li t0, 5;  li t1, 5;  beq  t0, t1, 1f; j fail
1:
  TEST(81); li t0, 5;  li t1, 6;  beq  t0, t1, fail
  TEST(82); li t0, 5;  li t1, 6;  bne  t0, t1, 1f; j fail
1:
  TEST(83); li t0, 5;  li t1, 5;  bne  t0, t1, fail
  TEST(84); li t0, -1; li t1, 1;  blt  t0, t1, 1f; j fail
1:
  TEST(85); li t0, 1;  li t1, -1; blt  t0, t1, fail
  TEST(86); li t0, 1;  li t1, -1; bge  t0, t1, 1f; j fail
1:
  TEST(87); li t0, 3;  li t1, 3;  bge  t0, t1, 1f; j fail
1:
  TEST(88); li t0, -1; li t1, 1;  bge  t0, t1, fail
  TEST(89); li t0, 1;  li t1, -1; bltu t0, t1, 1f; j fail
1:
  TEST(90); li t0, -1; li t1, 1;  bltu t0, t1, fail
  TEST(91); li t0, -1; li t1, 1;  bgeu t0, t1, 1f; j fail
1:
  TEST(92); li t0, 1;  li t1, -1; bgeu t0, t1, fail
  TEST(93)
  li    t0, 0
  li    t1, 10
1:
  addi  t0, t0, 1               /* a loop: the back edge is a taken branch every time */
  bne   t0, t1, 1b
  CHECK(t0, 10)
  TEST(94)
  li    t0, 1
  addi  t0, t0, -1
  beqz  t0, 1f                  /* operand forwarded from M into the comparator */
  j     fail
1:

  /* ── Jumps ── */
  TEST(100)
  jal   t0, 1f
2:
  j     fail
1:
  lla   t1, 2b
  bne   t0, t1, fail            /* link = pc + 4 */
  TEST(101)
  lla   t1, 1f
  jalr  t0, 0(t1)
2:
  j     fail
1:
  lla   t1, 2b
  bne   t0, t1, fail
  TEST(102)
  lla   t1, 1f
  jalr  t0, 1(t1)               /* target bit 0 is cleared */
  j     fail
1:
  TEST(103)
  lla   t1, 1f
  addi  t1, t1, -4
  jalr  zero, 4(t1)             /* rd = x0: no link; operand t1 forwarded from M */
  j     fail
1:

  /* ── CSRs: instret is exact, cycle moves ── */
  TEST(110)
  csrr  t0, instret
  csrr  t1, instret
  sub   t2, t1, t0
  CHECK(t2, 1)
  TEST(111)
  csrr  t0, instret
  nop
  nop
  nop
  csrr  t1, instret
  sub   t2, t1, t0
  CHECK(t2, 4)
  TEST(112)
  csrr  t0, cycle
  csrr  t1, cycle
  bgeu  t0, t1, fail
  TEST(113)
  fence                          /* a no-op here, but must not disturb anything */
  .word 0x0000100f               /* fence.i (Zifencei), spelled out to keep -march=rv32i_zicsr */
  li    t0, 3
  CHECK(t0, 3)

  li    a0, 0
  ret
fail:
  ret                            /* a0 = the failing test */

  .section .bss
  .balign 4
isa_scratch:
  .space 64
