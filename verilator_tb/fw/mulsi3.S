/*
 * unsigned __mulsi3(unsigned a, unsigned b): a * b modulo 2^32, replacing libgcc's.
 *
 * RV32I has no multiplier, so GCC calls __mulsi3 for every `*`. libgcc's loop runs over every
 * bit of the multiplier, 32 iterations for a negative one, and the golden model multiplies
 * sign-extended int8 values all the time. This one multiplies magnitudes and loops over the bits
 * of the smaller one (at most 8 for int8 data), about three times faster here. The result is the
 * same for every input: the low 32 bits of a product do not depend on signedness, and the sign
 * is folded into the larger operand ((-x) * y == -(x * y) modulo 2^32).
 *
 * Like libgcc's it clobbers only a0-a3: libgcc's __muldi3 calls __mulsi3 and keeps live values
 * in a4-a7 and t-registers across the call.
 */
  .section .text
  .globl __mulsi3
  .type __mulsi3, @function
__mulsi3:
  srai  a2, a0, 31
  xor   a0, a0, a2
  sub   a0, a0, a2          /* a0 = |a|, a2 = sign of a (0 or -1) */
  srai  a3, a1, 31
  xor   a1, a1, a3
  sub   a1, a1, a3          /* a1 = |b|, a3 = sign of b */
  xor   a3, a3, a2          /* a3 = sign of the product */
  bgeu  a0, a1, 1f
  xor   a0, a0, a1          /* swap, so that a1 is the smaller magnitude */
  xor   a1, a1, a0
  xor   a0, a0, a1
1:
  xor   a2, a0, a3
  sub   a2, a2, a3          /* a2 = the larger magnitude, with the product's sign */
  li    a0, 0
  beqz  a1, 3f
2:
  andi  a3, a1, 1
  beqz  a3, 4f
  add   a0, a0, a2
4:
  srli  a1, a1, 1
  slli  a2, a2, 1
  bnez  a1, 2b
3:
  ret
  .size __mulsi3, . - __mulsi3
