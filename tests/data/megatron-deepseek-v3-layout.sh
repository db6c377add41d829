#!/bin/bash
# DeepSeek-V3's 61 layers over PP 8 with virtual stages as a Megatron layout string (written for
# stepsim's tests): the embedding and one layer, 30 stages of two, the MTP layer and the loss.
torchrun --nnodes 64 --nproc-per-node 8 pretrain_gpt.py \
  --num-layers 61 --hidden-size 7168 --num-attention-heads 128 --ffn-hidden-size 18432 --swiglu --disable-bias-linear \
  --untie-embeddings-and-output-weights --multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 \
  --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 \
  --num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 \
  --moe-layer-freq "([0]*3+[1]*58)" --moe-router-num-groups 8 --moe-router-group-topk 4 --mtp-num-layers 1 \
  --moe-token-dispatcher-type alltoall --expert-tensor-parallel-size 1 \
  --tensor-model-parallel-size 2 --sequence-parallel --pipeline-model-parallel-size 8 --expert-model-parallel-size 64 \
  --pipeline-model-parallel-layout "Et|(tt|)*30mL" \
  --micro-batch-size 1 --global-batch-size 1024 --seq-length 4096 --vocab-size 129280 --bf16 --use-distributed-optimizer
