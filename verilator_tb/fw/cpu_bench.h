/* cpu_bench.h — core-only workloads (cpu_bench.c). Returns the number of failed checks. */
#ifndef CPU_BENCH_H
#define CPU_BENCH_H
int cpu_bench_run(void);
#endif
