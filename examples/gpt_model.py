"""The model of dsplan's reference workload (train_gpt.py): a GPT block built from the plan's
shape flags, with the variants dsplan prices (LayerNorm or RMSNorm, learned or rotary
positions, GELU, SwiGLU or GeGLU, GQA, a head width other than hidden / heads, Q/K/V-only
biases, query and key norms, post-norms, sliding windows, soft-capped scores and logits,
separate or fused projections, selective or full recompute) and the attention kernels
(SDPA's flash or cuDNN backend, flash-attn's Triton kernel, flash-attn's window and softcap
kernel, or the unfused s x s path), and mixture-of-experts MLPs (moe_mlp.py). torch is passed
in, so importing this needs no GPU.
"""
import math
import sys

from moe_mlp import make_moe_mlp, moe_layer_flags


def triton_attention():
    """flash-attn's Triton FlashAttention (flash_attn.flash_attn_triton), or exit saying why."""
    try:
        from flash_attn.flash_attn_triton import flash_attn_func
    except ImportError as e:
        sys.exit("train_gpt.py: --use-flash-attn-triton needs flash-attn's Triton kernel "
                 "(flash_attn.flash_attn_triton, with the Triton version it was written for): %s" % e)
    return flash_attn_func


def rope_table(torch, seq, d, device, dtype):
    """cos and sin of the position angles [seq, d / 2], in dtype."""
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, device=device, dtype=torch.float32) / d))
    ang = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv)
    return ang.cos().to(dtype), ang.sin().to(dtype)


def rope(torch, x, seq, table=None):
    """Rotary embedding of x [b, heads, s, d]: rotates pairs (first half, second half) by
    position angles, as eager ops (scripts/block_kernel_rates.py times this function).
    `table`: rope_table's (cos, sin) for x's dtype, computed here when not given."""
    d = x.shape[-1]
    cos, sin = table if table is not None else rope_table(torch, seq, d, x.device, x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def recompute_mode(args):
    if args.recompute_granularity:
        return args.recompute_granularity
    return "selective" if args.recompute_activations else "none"


def build_model(args, torch):
    nn, F = torch.nn, torch.nn.functional
    h, heads = args.hidden_size, args.num_attention_heads
    kv_heads = args.num_query_groups or heads
    head_dim = args.kv_channels or h // heads
    gated = args.swiglu or args.gated_gelu
    ffn = args.ffn_hidden_size or (4 * h if not gated else int(8 * h / 3 / 64 + 0.999) * 64)
    bias = not args.disable_bias_linear
    qkv_bias = bias or args.add_qkv_bias
    windowed_layers = args.window_layers or args.num_layers
    pad = max(1, args.make_vocab_size_divisible_by) * args.tensor_model_parallel_size
    vocab = -(-args.vocab_size // pad) * pad  # Megatron's padded vocabulary
    p_attn = args.attention_dropout
    recompute = recompute_mode(args)
    # Megatron's --recompute-method block recomputes only the first --recompute-num-layers
    # layers; uniform (or none given) recomputes them all.
    recompute_layers = args.num_layers
    if args.recompute_method == "block" and args.recompute_num_layers:
        recompute_layers = min(args.recompute_num_layers, args.num_layers)
    Norm = nn.LayerNorm if args.normalization == "LayerNorm" else getattr(nn, "RMSNorm", None)
    if args.normalization == "RMSNorm" and args.eager_rmsnorm:
        class Norm(nn.Module):  # Hugging Face's LlamaRMSNorm: a chain of eager ops
            def __init__(self, d, eps=1e-5):
                super().__init__()
                self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

            def forward(self, x):
                dtype = x.dtype
                x = x.to(torch.float32)
                x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
                return self.weight * x.to(dtype)
    elif Norm is None:
        class Norm(nn.Module):  # RMSNorm for PyTorch < 2.4
            def __init__(self, d, eps=1e-5):
                super().__init__()
                self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

            def forward(self, x):
                return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    triton_attn = triton_attention() if args.use_flash_attn_triton else None
    experts = args.num_experts or 0
    moe_layers = moe_layer_flags(args.moe_layer_freq, args.num_layers) if experts else [False] * args.num_layers

    def moe_mlp():
        return make_moe_mlp(torch, h, args.moe_ffn_hidden_size or ffn, experts, args.moe_router_topk, gated,
                            swiglu=args.swiglu, grouped=args.moe_grouped_gemm,
                            balanced=args.moe_router_force_load_balancing,
                            shared_ffn=args.moe_shared_expert_intermediate_size or 0,
                            aux_coeff=args.moe_aux_loss_coeff, permute_fusion=args.moe_permute_fusion,
                            host_counts=not args.moe_no_host_counts)

    def flash_attn_package(q, k, v, window):
        # Only flash-attn's kernel takes a window (skipping the key blocks outside it, as
        # dsplan prices flash runs) and soft-caps the scores inside the kernel; SDPA does
        # neither (a window mask would compute every block).
        try:
            from flash_attn import flash_attn_func
        except ImportError as e:
            sys.exit("train_gpt.py: --sliding-window or --attn-softcap with flash attention needs the "
                     "flash-attn package (flash_attn_func with window_size and softcap, flash-attn >= 2.6): %s" % e)
        o = flash_attn_func(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), dropout_p=p_attn,
                            causal=True, window_size=(window - 1, 0) if window else (-1, -1),
                            softcap=args.attn_softcap or 0.0)
        return o.transpose(1, 2)

    def core_attention(q, k, v, window=None):
        s = q.shape[-2]
        window = window if window and window < s else None
        if (window or args.attn_softcap) and args.use_flash_attn and args.attention_backend != "unfused":
            return flash_attn_package(q, k, v, window)
        if triton_attn is not None:  # flash-attn's Triton kernel takes [b, s, heads, d]
            o = triton_attn(q.transpose(1, 2).contiguous(), k.transpose(1, 2).contiguous(),
                            v.transpose(1, 2).contiguous(), None, True)
            return o.transpose(1, 2)
        if args.use_flash_attn and args.attention_backend != "unfused":
            try:
                from torch.nn.attention import SDPBackend, sdpa_kernel
                # Looked up by name: CUDNN_ATTENTION exists from PyTorch 2.5 only, and only
                # --attention-backend fused may fall back for want of it.
                backend = {"fused": "CUDNN_ATTENTION", "auto": None}.get(args.attention_backend,
                                                                         "FLASH_ATTENTION")
                if backend is None:
                    return F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p_attn)
                with sdpa_kernel(getattr(SDPBackend, backend)):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p_attn)
            except (ImportError, AttributeError):  # older PyTorch: let SDPA pick
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p_attn)
        # The unfused path keeps the s x s scores in memory, as non-flash training does; a
        # window masks the keys more than window - 1 positions back as well.
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        if args.attn_softcap:  # Gemma 2: three passes over the scores
            scores = args.attn_softcap * torch.tanh(scores / args.attn_softcap)
        mask = torch.ones(s, s, device=q.device, dtype=torch.bool).triu(1)
        if window:
            mask |= torch.ones(s, s, device=q.device, dtype=torch.bool).tril(-window)
        return F.dropout(torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1), p_attn) @ v

    widths = [heads * head_dim, kv_heads * head_dim, kv_heads * head_dim]  # of Q, K and V
    rope_tables = {}  # this forward's rotary table, shared by every layer (GPT.forward clears it)

    class Block(nn.Module):
        def __init__(self, index):
            super().__init__()
            self.ln1, self.ln2 = Norm(h), Norm(h)
            # Post-norms (Gemma 2/3): a norm on each sublayer's output before the residual add.
            self.pn1, self.pn2 = (Norm(h), Norm(h)) if args.post_norms else (nn.Identity(), nn.Identity())
            # Query and key norms over each head (Qwen3, Gemma 3), before the rotary embedding.
            # OLMo 2 (--qk-norm-full-width): one norm over all the queries and one over all keys.
            qk_widths = (widths[0], widths[1]) if args.qk_norm_full_width else (head_dim, head_dim)
            self.qn, self.kn = (Norm(qk_widths[0]), Norm(qk_widths[1])) if args.qk_layernorm else (None, None)
            # Which layers window is immaterial to the cost: the first window_layers do.
            self.window = args.sliding_window if index < windowed_layers else None
            if args.separate_qkv:  # one linear each, as Hugging Face's BERT and Llama
                self.q, self.k, self.v = (nn.Linear(h, w, bias=qkv_bias) for w in widths)
            else:
                self.qkv = nn.Linear(h, sum(widths), bias=qkv_bias)
            self.proj = nn.Linear(heads * head_dim, h, bias=bias)
            self.moe = moe_mlp() if moe_layers[index] else None  # the experts replace the MLP
            if self.moe is None and gated and args.separate_gate_up:  # gate and up as two linears
                self.gate, self.up = nn.Linear(h, ffn, bias=bias), nn.Linear(h, ffn, bias=bias)
            elif self.moe is None:
                self.fc1 = nn.Linear(h, ffn * (2 if gated else 1), bias=bias)
            if self.moe is None:
                self.fc2 = nn.Linear(ffn, h, bias=bias)
            self.drop = nn.Dropout(args.hidden_dropout)

        def attention(self, x):
            b, s, _ = x.shape
            qkv = (self.q(x), self.k(x), self.v(x)) if args.separate_qkv else self.qkv(x).split(widths, -1)
            if self.qn is not None and args.qk_norm_full_width:
                qkv = (self.qn(qkv[0]), self.kn(qkv[1]), qkv[2])
            q, k, v = (t.view(b, s, -1, head_dim).transpose(1, 2) for t in qkv)  # heads, kv, kv
            if self.qn is not None and not args.qk_norm_full_width:
                q, k = self.qn(q), self.kn(k)
            if args.position_embedding_type == "rope":
                # One table a forward for every layer, as Hugging Face's rotary embedding
                # does (until session 28 each call rebuilt it: 22 small kernels a layer).
                key = (s, q.device, q.dtype)
                if key not in rope_tables:
                    rope_tables[key] = rope_table(torch, s, head_dim, q.device, q.dtype)
                q, k = rope(torch, q, s, rope_tables[key]), rope(torch, k, s, rope_tables[key])
            if kv_heads != heads:
                k = k.repeat_interleave(heads // kv_heads, dim=1)
                v = v.repeat_interleave(heads // kv_heads, dim=1)
            if recompute == "selective":  # recompute only the attention core (Megatron's choice)
                o = torch.utils.checkpoint.checkpoint(core_attention, q, k, v, self.window, use_reentrant=False)
            else:
                o = core_attention(q, k, v, self.window)
            return self.proj(o.transpose(1, 2).reshape(b, s, heads * head_dim))

        def mlp(self, x):
            if self.moe is not None:
                return self.moe(x)
            if gated:
                a, g = (self.gate(x), self.up(x)) if args.separate_gate_up else self.fc1(x).chunk(2, dim=-1)
                return self.fc2((F.silu(a) if args.swiglu else F.gelu(a, approximate="tanh")) * g)
            y = self.fc1(x)
            if args.unfused_gelu:  # gelu_new as Hugging Face writes it: eight kernels
                y = 0.5 * y * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (y + 0.044715 * torch.pow(y, 3.0))))
            else:
                y = F.gelu(y)
            return self.fc2(y)

        def forward(self, x):
            x = x + self.drop(self.pn1(self.attention(self.ln1(x))))
            return x + self.drop(self.pn2(self.mlp(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, h)
            self.drop = nn.Dropout(args.hidden_dropout)
            self.wpe = None
            if args.position_embedding_type == "learned_absolute":
                self.wpe = nn.Embedding(args.max_position_embeddings or args.seq_length, h)
            self.blocks = nn.ModuleList(Block(i) for i in range(args.num_layers))
            self.ln_f = Norm(h)
            self.head = nn.Linear(h, vocab, bias=False)
            self.checkpoint_fn = None  # a layer checkpoint function other than torch's
            if not args.untie_embeddings_and_output_weights:
                self.head.weight = self.wte.weight

        def forward(self, tokens):
            rope_tables.clear()
            ids, labels = tokens[:, :-1], tokens[:, 1:]
            x = self.wte(ids)
            if self.wpe is not None:
                x = x + self.wpe(torch.arange(ids.shape[1], device=ids.device))
            x = self.drop(x)
            for i, blk in enumerate(self.blocks):
                if recompute == "full" and i < recompute_layers and self.checkpoint_fn is not None:
                    x = self.checkpoint_fn(blk, x)  # DeepSpeed's (train_gpt.py sets it)
                elif recompute == "full" and i < recompute_layers:
                    x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
                else:
                    x = blk(x)
            logits = self.head(self.ln_f(x))
            if args.logit_softcap:  # Gemma 2: three passes over the 16-bit logits
                logits = args.logit_softcap * torch.tanh(logits / args.logit_softcap)
            logits = logits.float()
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
            for blk in self.blocks:  # the MoE layers' load-balancing losses
                if blk.moe is not None and blk.moe.aux_loss is not None:
                    loss = loss + blk.moe.aux_loss
            return loss

    return GPT()
