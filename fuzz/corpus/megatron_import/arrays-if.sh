#!/bin/bash
NNODES=${SLURM_NNODES:-2}
GPUS=8
DTYPE=bf16
MODEL=(--num-layers 8 --hidden-size 2048 --num-attention-heads 16 --group-query-attention --num-query-groups 4
       --swiglu --disable-bias-linear --untie-embeddings-and-output-weights --vocab-size 50257)
if [[ "$DTYPE" == "fp8" ]]; then
  PREC=(--fp8-format hybrid --bf16)
else
  PREC=(--bf16)
fi
TRAIN="--seq-length 4096 --micro-batch-size 2 --global-batch-size $((16 * NNODES)) --lr 3e-4"
python -m torch.distributed.run --nnodes=$NNODES --nproc_per_node=$GPUS pretrain_gpt.py \
    "${MODEL[@]}" ${PREC[@]} $TRAIN --tensor-model-parallel-size 2 --sequence-parallel \
    --use-distributed-optimizer 2>&1 | tee log.txt
