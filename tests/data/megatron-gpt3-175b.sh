#!/bin/bash
# GPT-3 175B as Megatron-LM's examples/gpt3 launches it (written for stepsim's tests, not copied):
# default bias vectors, learned positions, FP16, GPT-2 BPE files without --tokenizer-type, one node
# as written (the model needs TP 8 x PP 16 = 128 GPUs), TP without sequence parallelism.
GPUS_PER_NODE=8
NUM_NODES=1
CHECKPOINT_PATH=$1
VOCAB_FILE=$3
MERGE_FILE=$4

DISTRIBUTED_ARGS=(--nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES)
MODEL=(--num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048
       --max-position-embeddings 2048 --attention-backend auto)
TRAIN=(--micro-batch-size 1 --global-batch-size 1536 --fp16 --lr 6.0e-5 --clip-grad 1.0)
PARALLEL=(--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16)
DATA=(--vocab-file $VOCAB_FILE --merge-file $MERGE_FILE --save $CHECKPOINT_PATH)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${MODEL[@]} ${TRAIN[@]} ${PARALLEL[@]} ${DATA[@]}
