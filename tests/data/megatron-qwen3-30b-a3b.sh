#!/bin/bash
# Qwen3-30B-A3B on 16 H100 as NeMo's BF16 pretraining recipe runs it (Megatron-Bridge
# recipes/qwen/h100/qwen3_moe.py with the performance recipe's all-to-all overlap), written as
# Megatron-LM flags for stepsim's tests: TP 1, PP 1, EP 16, the flex dispatcher on HybridEP, grouped
# GEMMs, BF16 gradient reductions (grad_reduce_in_fp32 = False).
torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py \
  --num-layers 48 --hidden-size 2048 --num-attention-heads 32 --group-query-attention --num-query-groups 4 \
  --kv-channels 128 --ffn-hidden-size 6144 --swiglu --disable-bias-linear --untie-embeddings-and-output-weights \
  --normalization RMSNorm --qk-layernorm --position-embedding-type rope --rotary-base 1000000 \
  --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 768 --moe-grouped-gemm \
  --moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-3 --moe-permute-fusion \
  --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --overlap-moe-expert-parallel-comm \
  --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --expert-model-parallel-size 16 \
  --expert-tensor-parallel-size 1 \
  --micro-batch-size 1 --global-batch-size 1024 --seq-length 4096 --max-position-embeddings 40960 \
  --vocab-size 151936 --bf16 --grad-reduce-in-bf16 --use-distributed-optimizer --overlap-grad-reduce \
  --overlap-param-gather
