# Every RV32/RV64 IMAC + Zicsr + Zifencei instruction (and the privileged ones objdump decodes
# with them), with edge-case immediates and registers, for test_riscv_disasm.cpp: it assembles
# this file with -march=rv32imac_zicsr_zifencei and (with --defsym RV64=1)
# -march=rv64imac_zicsr_zifencei and compares every instruction with objdump -d.
# 32-bit encodings are under `.option norvc` (so gas does not compress them), the C ones are
# written as c.* under `.option rvc`.
        .text
        .globl _start
_start:
        .option norvc
# ── RV32I: 2.4 integer computational ──
        lui     zero, 0
        lui     a0, 0xfffff
        lui     t6, 0x80000
        lui     s1, 1
        auipc   ra, 0
        auipc   a0, 0xfffff
        auipc   t0, 0x7ffff
        addi    zero, zero, 0
        addi    a0, zero, 0
        addi    a0, zero, -2048
        addi    a0, zero, 2047
        addi    a1, a2, 0
        addi    a1, a2, -1
        addi    sp, sp, -16
        addi    t6, s11, 2047
        addi    zero, t0, 5
        slti    a0, a1, -2048
        slti    a0, zero, 2047
        sltiu   a0, a1, 1
        sltiu   a0, a1, -1
        sltiu   a0, a1, 2047
        xori    a0, a1, -1
        xori    a0, a1, 0
        xori    t1, t2, -2048
        ori     a0, a1, -1
        ori     s0, s1, 2047
        andi    a0, a1, 255
        andi    a0, a1, -1
        andi    a0, a1, -2048
        andi    a0, a1, 254
        slli    a0, a1, 0
        slli    a0, a1, 31
        slli    t6, zero, 1
        srli    a0, a1, 0
        srli    a0, a1, 31
        srai    a0, a1, 0
        srai    a0, a1, 31
        add     a0, a1, a2
        add     zero, zero, zero
        add     t6, t5, t4
        sub     a0, a1, a2
        sub     a0, zero, a2
        sub     a0, a2, zero
        sll     a0, a1, a2
        slt     a0, a1, a2
        slt     a0, a1, zero
        slt     a0, zero, a1
        slt     a0, zero, zero
        sltu    a0, a1, a2
        sltu    a0, zero, a1
        sltu    a0, a1, zero
        xor     a0, a1, a2
        srl     a0, a1, a2
        sra     a0, a1, a2
        or      a0, a1, a2
        and     a0, a1, a2
# ── 2.5 control transfer ──
1:      jal     zero, 1b
        jal     ra, 1b
        jal     t0, 2f
        jal     a0, 1b
2:      jalr    zero, 0(ra)
        jalr    zero, 0(a5)
        jalr    zero, 12(a5)
        jalr    zero, -2048(t0)
        jalr    ra, 0(a5)
        jalr    ra, 2047(a5)
        jalr    t0, 0(a5)
        jalr    t0, -4(a5)
        jalr    zero, 0(zero)
        beq     a0, a1, 1b
        beq     a0, zero, 2b
        beq     zero, a0, 3f
        bne     a0, a1, 3f
        bne     a0, zero, 3f
        blt     a0, a1, 3f
        blt     a0, zero, 3f
        blt     zero, a0, 3f
        bge     a0, a1, 3f
        bge     a0, zero, 3f
        bge     zero, a0, 3f
        bltu    a0, a1, 3f
        bltu    zero, a1, 3f
        bgeu    a0, a1, 3f
        bgeu    a0, zero, 3f
3:      beq     zero, zero, 3b
# ── 2.6 loads and stores ──
        lb      a0, 0(a1)
        lb      a0, -2048(a1)
        lh      a0, 2047(sp)
        lw      a0, -4(s0)
        lw      t6, 0(zero)
        lw      a0, 16(tp)
        lw      a0, 8(gp)
        lbu     a0, 1(a1)
        lhu     a0, -1(a1)
        sb      a0, 0(a1)
        sb      zero, -2048(a1)
        sh      a0, 2047(a1)
        sw      ra, 12(sp)
        sw      t6, -1(t5)
        sw      a0, 4(zero)
        sw      a0, 4(tp)
# ── 2.7 memory ordering, 2.8 environment, Zifencei ──
        fence
        fence   rw, rw
        fence   r, w
        fence   i, o
        fence   io, rw
        fence   iorw, r
        fence.tso
        fence.i
        ecall
        ebreak
        .insn   i 0x0f, 0, x0, x0, 0x010
        .insn   i 0x0f, 0, x0, x0, 0x100
        .insn   i 0x0f, 0, x0, x0, 0x000
        .insn   i 0x0f, 0, a0, a1, 0x0ff
        .insn   i 0x0f, 1, a0, a1, 7
# ── privileged (Volume II 3.3) ──
        mret
        sret
        wfi
        sfence.vma
        sfence.vma a0
        sfence.vma a0, a1
        sfence.vma zero, a1
# ── address comments: lui/auipc pairs, gp, tp, x0 bases ──
        lui     a0, 0x12345
        addi    a0, a0, 0x678
        lui     a1, 0x80000
        lw      a2, -4(a1)
        auipc   a3, 0
        jalr    ra, 8(a3)
        auipc   t0, 0x1
        sw      a0, 16(t0)
        lui     t1, 0xfffff
        addi    t1, t1, -1
        auipc   t2, 0
        jalr    zero, 0(t2)
        auipc   t3, 0
        jalr    t3
        lui     zero, 1
        addi    a0, zero, 5
        lw      a0, 0(zero)
        lui     a4, 0x10
        addi    a5, a5, 4
        addi    a4, a4, 4
        addi    a0, gp, -2048
        addi    a0, tp, 100
        jalr    ra, 0(tp)
# ── 7 M ──
        mul     a0, a1, a2
        mulh    a0, a1, a2
        mulhsu  a0, a1, a2
        mulhu   a0, a1, a2
        div     a0, a1, a2
        divu    a0, a1, a2
        rem     a0, a1, a2
        remu    t6, zero, s11
# ── 8 A ──
        lr.w    a0, (a1)
        lr.w.aq a0, (a1)
        lr.w.rl a0, (a1)
        lr.w.aqrl a0, (a1)
        sc.w    a0, a2, (a1)
        sc.w.aq a0, a2, (a1)
        sc.w.rl a0, a2, (a1)
        sc.w.aqrl a0, a2, (a1)
        amoswap.w a0, a2, (a1)
        amoswap.w.aq a0, a2, (a1)
        amoswap.w.rl a0, a2, (a1)
        amoswap.w.aqrl a0, a2, (a1)
        amoadd.w a0, a2, (a1)
        amoadd.w.aqrl zero, zero, (sp)
        amoxor.w a0, a2, (a1)
        amoand.w a0, a2, (a1)
        amoor.w a0, a2, (a1)
        amomin.w a0, a2, (a1)
        amomax.w a0, a2, (a1)
        amominu.w a0, a2, (a1)
        amomaxu.w.aq t6, t5, (t4)
# ── 9 Zicsr ──
        csrrw   a0, mstatus, a1
        csrrw   zero, mtvec, a1
        csrrw   a0, 0x7c0, zero
        csrrw   zero, cycle, zero
        csrrs   a0, mepc, a1
        csrrs   a0, mcause, zero
        csrrs   zero, mie, a1
        csrrs   zero, mip, zero
        csrrs   a0, cycle, zero
        csrrs   a0, time, zero
        csrrs   a0, instret, zero
        csrrs   a0, cycleh, zero
        csrrs   a0, timeh, zero
        csrrs   a0, instreth, zero
        csrrs   a0, 0xfff, zero
        csrrs   a0, 0x000, zero
        csrrc   a0, mstatus, a1
        csrrc   zero, mstatus, a1
        csrrwi  a0, mscratch, 0
        csrrwi  zero, mscratch, 31
        csrrsi  a0, mstatus, 8
        csrrsi  zero, mstatus, 8
        csrrci  a0, mstatus, 31
        csrrci  zero, mstatus, 1
        csrr    t0, mhartid
        csrw    satp, t0
        csrs    sstatus, a0
        csrc    sie, a0
        csrwi   0x800, 1
        csrsi   fcsr, 2
        csrci   frm, 3
        rdcycle a0
        rdtime  a1
        rdinstret a2
        unimp
        .option rvc
# ── 16 C, quadrant 0 ──
        c.addi4spn a0, sp, 4
        c.addi4spn s0, sp, 1020
        c.addi4spn a5, sp, 16
        c.lw    a0, 0(a1)
        c.lw    s0, 124(a5)
        c.sw    a0, 0(a1)
        c.sw    s1, 124(a5)
# ── quadrant 1 ──
        c.nop
        c.addi  a0, 1
        c.addi  a0, -32
        c.addi  sp, 31
        c.li    a0, 0
        c.li    a0, -32
        c.li    t6, 31
        c.lui   a0, 1
        c.lui   a0, 0x1f
        c.lui   t6, 0xfffe0
        c.lui   ra, 0xfffff
        c.addi16sp sp, -512
        c.addi16sp sp, 496
        c.addi16sp sp, 16
        c.srli  a0, 1
        c.srai  s1, 31
        c.andi  a0, 0
        c.andi  a5, -32
        c.andi  a0, 31
        c.sub   a0, a1
        c.xor   s0, s1
        c.or    a4, a5
        c.and   a0, a0
4:      c.j     4b
        c.j     5f
        c.beqz  a0, 4b
        c.beqz  s1, 5f
        c.bnez  a5, 4b
        c.bnez  s0, 5f
5:
# ── quadrant 2 ──
        c.slli  a0, 1
        c.slli  t6, 31
        c.lwsp  ra, 0(sp)
        c.lwsp  a0, 252(sp)
        c.swsp  ra, 0(sp)
        c.swsp  t6, 252(sp)
        c.jr    ra
        c.jr    a5
        c.jalr  a0
        c.jalr  ra
        c.mv    a0, a1
        c.mv    t6, ra
        c.add   a0, a1
        c.add   sp, t6
        c.ebreak
        c.unimp
# ── compressed address comments ──
        lui     a0, 0x10000
        c.addi  a0, 4
        c.lui   a1, 2
        c.addi  a1, -4
.ifdef RV64
        .option norvc
# ── RV64I (ch. 5) ──
        slli    a0, a1, 32
        slli    a0, a1, 63
        srli    a0, a1, 63
        srai    a0, a1, 32
        ld      a0, 0(a1)
        ld      a0, -2048(a1)
        ld      t6, 8(zero)
        lwu     a0, 2047(a1)
        sd      a0, -8(sp)
        sd      zero, 2047(t6)
        addiw   a0, a1, 0
        addiw   a0, a1, -2048
        addiw   a0, zero, 5
        addiw   zero, a0, 1
        slliw   a0, a1, 0
        slliw   a0, a1, 31
        srliw   a0, a1, 31
        sraiw   a0, a1, 31
        addw    a0, a1, a2
        subw    a0, a1, a2
        subw    a0, zero, a2
        sllw    a0, a1, a2
        srlw    a0, a1, a2
        sraw    a0, a1, a2
        lui     a3, 0x80000
        addiw   a3, a3, -1
        lui     a4, 0x7ffff
        addiw   a4, a4, 2047
# ── RV64M, RV64A ──
        mulw    a0, a1, a2
        divw    a0, a1, a2
        divuw   a0, a1, a2
        remw    a0, a1, a2
        remuw   a0, a1, a2
        lr.d    a0, (a1)
        lr.d.aq a0, (a1)
        lr.d.rl a0, (a1)
        lr.d.aqrl a0, (a1)
        sc.d    a0, a2, (a1)
        sc.d.aq a0, a2, (a1)
        sc.d.rl a0, a2, (a1)
        sc.d.aqrl a0, a2, (a1)
        amoswap.d a0, a2, (a1)
        amoadd.d a0, a2, (a1)
        amoxor.d a0, a2, (a1)
        amoand.d a0, a2, (a1)
        amoor.d a0, a2, (a1)
        amomin.d a0, a2, (a1)
        amomax.d a0, a2, (a1)
        amominu.d a0, a2, (a1)
        amomaxu.d.aqrl a0, a2, (a1)
# ── RV64C ──
        .option rvc
        c.ld    a0, 0(a1)
        c.ld    s0, 248(a5)
        c.sd    a0, 0(a1)
        c.sd    s1, 248(a5)
        c.ldsp  ra, 0(sp)
        c.ldsp  t6, 504(sp)
        c.sdsp  ra, 0(sp)
        c.sdsp  t6, 504(sp)
        c.addiw a0, 0
        c.addiw a0, -32
        c.addiw t6, 31
        c.addw  a0, a1
        c.subw  s0, s1
        c.slli  a0, 32
        c.slli  a0, 63
        c.srli  a0, 63
        c.srai  a0, 32
        lui     a2, 0x1
        c.addiw a2, 8
.else
        .option rvc
# ── RV32C only ──
6:      c.jal   6b
        c.jal   7f
7:
.endif
        c.nop
