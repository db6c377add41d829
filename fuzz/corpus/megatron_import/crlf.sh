#!/bin/bash
# Llama-3-70B pre-training with Megatron-LM (Megatron-Core) on 8 nodes x 8 H100: TP 8 inside each
# node, PP 4 with an interleaved (virtual) pipeline of 4 chunks per rank, data parallel over the
# remaining 2 with the distributed optimizer, selective recompute, TP and DP communication overlap.
# An example input for `stepsim import megatron` (see docs/import.md); stepsim runs nothing in it.

export CUDA_DEVICE_MAX_CONNECTIONS=1

GPUS_PER_NODE=8
NNODES=${SLURM_NNODES:-8}
NODE_RANK=${SLURM_NODEID:-0}
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=${MASTER_PORT:-6000}

CHECKPOINT_PATH=${1:-/checkpoints/llama3-70b}
DATA_PATH=$2
TOKENIZER_MODEL=${3:-meta-llama/Meta-Llama-3-70B}

TP=8
PP=4
LAYERS_PER_VIRTUAL_STAGE=5    # 80 layers / PP 4 = 20 per rank: 4 virtual stages
MICRO_BATCH=1
GLOBAL_BATCH=64               # sequences of 8192 tokens: 524,288 tokens per step
SEQ_LEN=8192

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NNODES
    --node_rank $NODE_RANK
    --master_addr $MASTER_ADDR
    --master_port $MASTER_PORT
)

GPT_MODEL_ARGS=(
    --num-layers 80
    --hidden-size 8192
    --ffn-hidden-size 28672
    --num-attention-heads 64
    --group-query-attention
    --num-query-groups 8
    --kv-channels 128
    --seq-length ${SEQ_LEN}
    --max-position-embeddings ${SEQ_LEN}
    --position-embedding-type rope
    --rotary-base 500000
    --use-rope-scaling
    --swiglu
    --normalization RMSNorm
    --norm-epsilon 1e-5
    --untie-embeddings-and-output-weights
    --disable-bias-linear
    --attention-dropout 0.0
    --hidden-dropout 0.0
    --tokenizer-type HuggingFaceTokenizer
    --tokenizer-model "$TOKENIZER_MODEL"
    --vocab-size 128256
)

TRAINING_ARGS="--micro-batch-size $MICRO_BATCH --global-batch-size $GLOBAL_BATCH \
    --train-iters 250000 --lr 1.5e-4 --min-lr 1.5e-5 --lr-decay-style cosine --lr-warmup-iters 2000 \
    --weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.95 --clip-grad 1.0 --bf16"

PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size $PP
    --num-layers-per-virtual-pipeline-stage $LAYERS_PER_VIRTUAL_STAGE
    --sequence-parallel
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
    --tp-comm-overlap
    --recompute-granularity selective    # the attention core
)

DATA_ARGS=(
    --data-path "$DATA_PATH"
    --split 99,1,0
)

LOGGING_ARGS=(
    --log-interval 10
    --save-interval 1000
    --eval-interval 1000
    --eval-iters 10
    --save "$CHECKPOINT_PATH"
    --load "$CHECKPOINT_PATH"
    --tensorboard-dir "${CHECKPOINT_PATH}/tensorboard"
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${GPT_MODEL_ARGS[@]} \
    $TRAINING_ARGS \
    ${PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    ${LOGGING_ARGS[@]}
