// Activation memory of one transformer layer for one micro-batch: the tensors autograd
// saves for the backward pass, generalising Korthikanti et al. 2022 (arXiv 2205.05198,
// sec. 4.1: sbh(34 + 5as/h) bytes for 16-bit activations with dropout) term by term to
// any element size, GQA/MQA, FFN width, gated MLPs, models without dropout, tensor and
// sequence parallelism, selective recomputation and FlashAttention. Derivation in
// docs/model.md §3 Memory, "Activations".
#pragma once

namespace dsplan {

struct LayerShape {
  double b = 1;        // micro-batch
  double s = 1;        // sequence length
  double h = 1;        // hidden
  double heads = 1;    // attention heads (a)
  double q = 1;        // heads x head_dim (Q and attention-output width)
  double kv = 1;       // kv_heads x head_dim (K and V width; MLA: their mean)
  double out = 0;      // the attention output's width when it is not q (MLA: heads x v_head_dim)
  // MLA: elements a token saves of the latents (each before and after its norm) and the
  // rotary key: 2 (q_lora_rank + kv_lora_rank) + qk_rope_head_dim.
  double latent = 0;
  double f = 4;        // FFN intermediate width (MoE: topk x expert width + shared)
  // The parts of f that are routed experts (topk x expert width) and shared experts, each
  // at the layer's MoE share; the rest of f is the dense layers' MLP.
  double f_routed = 0;
  double f_shared = 0;
  double dense_share = 1;  // the dense layers' share of the rank's layers (1 without MoE)
  // MoE (layer_activation): token copies per token (topk; 0 for a dense layer) and routed
  // experts, for the router's and the permutation's saved tensors.
  double moe_copies = 0;
  double experts = 0;
  double moe_gathered = 1;  // expert TP: the experts' input is gathered etp-fold
  // The combine weights each expert output by its routing probability after the return
  // all-to-all, saving the outputs (h per copy) for the probabilities' gradient: Megatron-
  // Core before 2025-04 and other MoE code. Since then (ADLR/megatron-lm!2668, "memory
  // efficient token permutation", core 0.13) the probabilities multiply inside the fused
  // activation, which saves only its input.
  bool moe_saves_outputs = false;
  // Norms that are modules of their own rather than fused into the next linear (Megatron's
  // TE spec: MLA's input norm, an MoE layer's pre-MLP norm; at the layer's MoE share).
  double separate_norms = 0;
  // Megatron's selective recompute modules beyond the attention core (TrainConfig::
  // recompute_modules): what each frees is in layer_activation.
  bool rc_mla_up_proj = false;  // Q, K and V (the up projections' and rope's outputs)
  bool rc_moe_act = false;      // the routed experts' activation output (FC2's input)
  bool rc_layernorm = false;    // the separate norms' outputs
  bool rc_mlp = false;          // a dense layer's MLP: its FC1 input and intermediates
  bool rc_moe = false;          // the MoE layer: experts, shared experts, router, copies
  bool rc_shared = false;       // the shared experts' intermediates
  double norms = 2;    // norms per block (1: one norm output feeds both parallel branches;
                       // 4: sandwich norms, whose two post-norm outputs feed residual adds
                       // and whose inputs are the 16-bit sublayer outputs)
  bool qk_norm = false;    // a norm on the query and key heads: it saves its input, e sb (q + kv)
  // The norms of 16-bit inputs (query/key norms, sandwich post-norms) run torch.nn.RMSNorm's
  // fallback chain in fp32 (NormKernel::torch under autocast): it saves the fp32 upcast and
  // the fp32 normalised product, 8 B an element, where a fused kernel saves the 16-bit
  // input (TrainConfig::rmsnorm16_fused).
  bool norm16_eager = false;
  bool attn_softcap = false;  // soft-capped scores (standard attention): the tanh output, e a score
  double mlp_tensors = 2;  // f-wide tensors the MLP saves: 2 plain, 3 fused SwiGLU, 4 eager; +3 unfused gelu_new
  double t = 1;        // tensor-parallel degree
  bool sp = false;     // sequence parallel: the replicated sbh tensors are split over t
  double e = 2;        // bytes per activation element (2 for 16-bit, 4 for fp32)
  bool dropout = true; // 1-byte masks after attention probs, attention and MLP outputs
  bool flash = false;  // FlashAttention: no s^2 tensors, a 4 B/row logsumexp instead
  bool selective = false;  // selective recomputation: drop the s^2 tensors
  bool fp8 = false;        // FP8 linears: each linear saves its input as one FP8 byte per element
  bool nvfp4 = false;      // ... NVFP4 linears instead: its column-wise NVFP4 copy, 9/16 B
  bool amp_softmax = false;  // torch.amp: softmax saved in fp32 plus a 16-bit cast
  // torch.amp: the residual stream (embedding sum, LayerNorm outputs, residual adds of a
  // 16-bit branch to an fp32 stream) stays fp32, so LayerNorm inputs, layer inputs kept
  // as checkpoints and the layer input/output gradients are 4 B, whatever e is.
  bool fp32_residual = false;
  // Eager PyTorch attention (Hugging Face's SDPA path, torchtitan, dsplan's workload; not
  // Megatron/Transformer Engine): rotary embeddings written as tensor ops keep their
  // inputs, the pre-rotation Q and K (e sb (q + kv)), and grouped K/V are repeated to
  // every head before SDPA, which saves the copies (2 e sb (q - kv) more than K and V).
  bool eager_rotary = false;
  bool repeat_kv = false;
  // Extra 16-bit copies of the QKV and FC1 inputs: under torch.amp each separate linear
  // (Q, K, V; gate, up) casts and saves its own copy of the shared fp32 norm output.
  int input_copies = 0;
  // The loss runs on fp32 logits (loss_bytes_per_logit): false only where the framework's
  // loss stays in 16 bits (FSDP rows: llm-foundry's fused cross-entropy, IBM FMS).
  bool fp32_loss = true;
  // A fused cross-entropy (TrainConfig::cross_entropy fused) keeps only the logits in
  // their own dtype and writes the gradient into them.
  bool fused_loss = false;
  double residual_bytes() const { return fp32_residual ? 4 : e; }
};

struct LayerActivation {
  double replicated = 0;  // LayerNorm inputs, QKV and FC1 inputs, dropout masks
  double sharded = 0;     // Q, K, V, attention output, MLP intermediates (+ eager extras)
  double quadratic = 0;   // softmax output, its dropout mask and output (s^2 terms)
  double flash_lse = 0;   // FlashAttention logsumexp
  // Bytes the selective recompute modules free (not in total): rebuilt while the layer
  // runs its backward.
  double recomputed = 0;
  double total() const { return replicated + sharded + quadratic + flash_lse; }
};

// Bytes saved per layer per micro-batch on one tensor-parallel rank.
LayerActivation layer_activation(const LayerShape& x);

// Bytes alive only while one layer runs its backward: gradients of the attention
// scores/probabilities (or of the MLP intermediate) and of the layer's input/output.
double layer_backward_transient(const LayerShape& x);

// Bytes of one layer's input kept per layer under full recomputation.
double layer_checkpoint_bytes(const LayerShape& x);

// Bytes per logit at the peak of the loss. Megatron's vocab-parallel cross-entropy
// (mpu/cross_entropy.py) works in place on an fp32 copy of the logits: 16-bit logits +
// that copy (6), or the fp32 logits alone (4). torch's cross_entropy (log_softmax then
// nll_loss) peaks in backward with three logits-sized tensors in its compute dtype c:
// the gradient nll_loss materialises, the saved log-probabilities and log_softmax's
// input gradient; c = 4: fp32 runs, torch.amp (autocast runs the loss in fp32), and
// 16-bit models whose loss upcasts the logits first (Hugging Face's ForCausalLMLoss,
// dsplan's reference workload; measured on the H100 under DeepSpeed bf16, where c = 2
// left GPT-2-medium's peak 10% low); c = e for FSDP (LayerShape::fp32_loss), whose
// held-out llm-foundry rows ran at micro-batches that an fp32 loss would not fit. Its
// forward (logits, fp32 cast, log-probabilities) stays below 3c.
double loss_bytes_per_logit(const LayerShape& x, bool vocab_parallel_inplace);

}  // namespace dsplan
