#!/bin/bash
# Qwen3-235B-A22B's published Megatron plan (written for stepsim's tests): 94 layers over PP 8 with
# 4 virtual stages, the embedding and the loss counted as pipeline layers (NeMo's
# account_for_embedding / account_for_loss_in_pipeline_split): 96 / 32 = 3 per stage, 2 on the
# first and the last.
torchrun --nnodes 32 --nproc-per-node 8 pretrain_gpt.py \
  --num-layers 94 --hidden-size 4096 --num-attention-heads 64 --group-query-attention --num-query-groups 4 \
  --kv-channels 128 --ffn-hidden-size 12288 --swiglu --disable-bias-linear --untie-embeddings-and-output-weights \
  --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 1536 --moe-grouped-gemm \
  --moe-token-dispatcher-type alltoall --expert-tensor-parallel-size 1 \
  --tensor-model-parallel-size 2 --sequence-parallel --pipeline-model-parallel-size 8 --expert-model-parallel-size 32 \
  --num-virtual-stages-per-pipeline-rank 4 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
  --micro-batch-size 1 --global-batch-size 2048 --seq-length 4096 --vocab-size 151936 --bf16 --use-distributed-optimizer
