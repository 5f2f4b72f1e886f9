/*
 * transformer.h — the firmware's NPU workload (transformer.c): TF_LAYERS int8 transformer encoder
 * layers run on the NPU, each result checked against the golden model on the core.
 */
#ifndef TRANSFORMER_H
#define TRANSFORMER_H

#include <stdint.h>

#define TF_LAYERS 2
#define TF_SEQ    8
#define TF_DM     16
#define TF_HEADS  2
#define TF_DH     (TF_DM / TF_HEADS)
#define TF_DFF    32

/* Runs every layer; returns the number of NPU results that differed from the golden model, and
 * a fingerprint of the final activations in *checksum. */
int transformer_run(uint32_t *checksum);

#endif /* TRANSFORMER_H */
