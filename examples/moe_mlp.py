"""The mixture-of-experts MLP of dsplan's reference workload, as Megatron-Core runs a dropless
MoE layer and dsplan prices it (docs/model.md section 4.11), on one GPU (expert parallelism 1):

- the router: a hidden x experts linear without bias, a softmax over the experts in fp32, the
  top-k experts of each token and their probabilities renormalised to sum to one, and the
  switch load-balancing loss (experts x sum of each expert's token fraction times its mean
  probability, times a coefficient) kept in `aux_loss` for the caller to add to the loss;
- the permutation: each token copied once per chosen expert into expert order; unfused (the
  default) as Megatron-Core's moe_utils: a row gather forward whose backward adds rows into
  tokens with atomics (index_add), and an unpermutation that adds them with scatter_add (an
  index expanded over the row); with `permute_fusion`
  (--moe-permute-fusion, Transformer Engine's kernels) without atomics: every direction
  gathers rows through the permutation or its inverse and sums a token's top-k copies;
- the token counts per expert read back to the host once a forward (`host_counts`), as
  Megatron's all-to-all dispatcher does for the split sizes of its all-to-alls and grouped
  GEMMs: the GPU drains its queue there;
- the experts' two linears (the first gated or not): grouped GEMMs (torch._grouped_mm, as
  --moe-grouped-gemm) or one GEMM per expert in a loop over counts read back to the host
  (Megatron's SequentialMLP);
- the unpermutation: each expert output scaled by its routing probability and a token's
  copies summed back into it; a shared expert (--moe-shared-expert-intermediate-size) beside.

`balanced=True` keeps the router's work but replaces its choice by a fixed round robin that
gives every expert the same number of tokens, what NVIDIA's benchmark tables force and what
dsplan assumes. Not modelled: expert biases (gpt-oss), group-limited routing's choice (its
cost is the router's), token dropping. torch is passed in, as in gpt_model.py, so importing
this needs no GPU.
"""


def autocast_dtype(torch):
    """The dtype autocast computes linears in on CUDA, or None when autocast is off."""
    try:
        if torch.is_autocast_enabled("cuda"):
            return torch.get_autocast_dtype("cuda")
    except TypeError:  # PyTorch < 2.4: no device argument
        if torch.is_autocast_enabled():
            return torch.get_autocast_gpu_dtype()
    return None


def permute_function(torch):
    """rows -> rows[perm] for a permutation, its backward the gather through the inverse (no
    atomics): y = Permute.apply(x, perm, inverse)."""
    class Permute(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, perm, inverse):
            ctx.save_for_backward(inverse)
            return x.index_select(0, perm)

        @staticmethod
        def backward(ctx, grad):
            (inverse,) = ctx.saved_tensors
            return grad.index_select(0, inverse), None, None
    return Permute


def replicate_function(torch):
    """x [T, h] -> its rows copied k times into expert order (copy c = x[c_token]); the
    backward gathers each token's k copy gradients into token-major order and sums them (no
    atomics): y = Replicate.apply(x, token_of, position, k), position[t k + j] the copy's row."""
    class Replicate(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, token_of, position, k):
            ctx.save_for_backward(position)
            ctx.k = k
            return x.index_select(0, token_of)

        @staticmethod
        def backward(ctx, grad):
            (position,) = ctx.saved_tensors
            return grad.index_select(0, position).view(-1, ctx.k, grad.shape[-1]).sum(1), None, None, None
    return Replicate


def make_moe_mlp(torch, h, ffn, experts, topk, gated, swiglu=True, grouped=True, balanced=False,
                 shared_ffn=0, aux_coeff=1e-2, permute_fusion=False, host_counts=True):
    """An nn.Module: [..., h] -> [..., h]; its aux_loss holds the last forward's balancing loss."""
    nn, F = torch.nn, torch.nn.functional
    if topk > experts:
        raise ValueError("top-k %d exceeds the %d experts" % (topk, experts))
    width = ffn * (2 if gated else 1)
    has_grouped_mm = hasattr(torch, "_grouped_mm")
    Permute, Replicate = permute_function(torch), replicate_function(torch)

    def activation(y):
        if gated:  # Megatron's fc1 output is [gate | up]
            a, g = y.chunk(2, dim=-1)
            return (F.silu(a) if swiglu else F.gelu(a, approximate="tanh")) * g
        return F.gelu(y)

    class MoEMLP(nn.Module):
        def __init__(self):
            super().__init__()
            # Weights laid out as nn.Linear's ([out, in]) for each expert.
            self.router = nn.Parameter(torch.empty(experts, h))
            self.w1 = nn.Parameter(torch.empty(experts, width, h))
            self.w2 = nn.Parameter(torch.empty(experts, h, ffn))
            for w in (self.router, self.w1, self.w2):
                nn.init.normal_(w, std=0.02)
            self.shared = None
            if shared_ffn:
                self.shared = nn.ModuleList([nn.Linear(h, shared_ffn * (2 if gated else 1), bias=False),
                                             nn.Linear(shared_ffn, h, bias=False)])
            self.aux_loss = None

        def experts_grouped(self, xs, w1, w2, counts):
            offs = torch.cumsum(counts, 0, dtype=torch.int32)
            y = torch._grouped_mm(xs, w1.transpose(-2, -1), offs=offs)
            return torch._grouped_mm(activation(y), w2.transpose(-2, -1), offs=offs)

        def experts_loop(self, xs, w1, w2, counts):
            outs = []
            w1s, w2s = w1.unbind(0), w2.unbind(0)  # one gradient copy each, not one per expert
            for e, part in enumerate(xs.split(counts.tolist())):  # the host waits for the counts
                outs.append(F.linear(activation(F.linear(part, w1s[e])), w2s[e]))
            return torch.cat(outs)

        def forward(self, x):
            shape = x.shape
            x = x.reshape(-1, h)
            tokens = x.shape[0]
            logits = F.linear(x, self.router.to(x.dtype)).float()
            probs = torch.softmax(logits, dim=-1)
            top_p, top_i = torch.topk(probs, topk, dim=-1)
            top_p = top_p / top_p.sum(dim=-1, keepdim=True)
            if balanced:  # token t takes experts (t k + j) mod E: every expert t k / E tokens
                top_i = (torch.arange(tokens * topk, device=x.device) % experts).view(tokens, topk)
                top_p = torch.gather(probs, 1, top_i)
                top_p = top_p / top_p.sum(dim=-1, keepdim=True)
            flat = top_i.reshape(-1)
            # Counted on the GPU (torch.bincount would read the largest index back to the host).
            counts = torch.zeros(experts, dtype=torch.int64, device=x.device).scatter_add_(
                0, flat, torch.ones_like(flat))
            if host_counts:
                counts.tolist()
            self.aux_loss = aux_coeff * experts * (counts.float() / flat.numel() * probs.mean(0)).sum()
            order = torch.argsort(flat, stable=True)  # the token copies in expert order
            token_of = order // topk
            dtype = autocast_dtype(torch) or x.dtype
            if permute_fusion:  # position[t k + j]: where copy (t, j) sits in expert order
                position = torch.empty_like(order).scatter_(0, order, torch.arange(order.numel(), device=x.device))
                xs = Replicate.apply(x.to(dtype), token_of, position, topk)
            else:
                xs = x.to(dtype).index_select(0, token_of)
            w1, w2 = self.w1.to(dtype), self.w2.to(dtype)  # autocast's casts, as for nn.Linear
            if grouped and has_grouped_mm and dtype == torch.bfloat16:
                out = self.experts_grouped(xs, w1, w2, counts)
            else:
                out = self.experts_loop(xs, w1, w2, counts)
            if permute_fusion:  # back to token-major order, each copy weighted, k copies summed
                copies = Permute.apply(out, position, order).view(tokens, topk, h)
                y = (copies * top_p.unsqueeze(-1).to(out.dtype)).sum(1)
            else:  # as Megatron-Core's unpermute: scatter_add with the index expanded over the row
                out = out * top_p.reshape(-1).index_select(0, order).unsqueeze(-1).to(out.dtype)
                y = torch.zeros(tokens, h, dtype=out.dtype, device=x.device).scatter_add(
                    0, token_of.unsqueeze(1).expand(-1, h), out)
            if self.shared is not None:
                y = y + self.shared[1](activation(self.shared[0](x)))
            return y.reshape(shape)

    return MoEMLP()


def moe_layer_flags(text, layers):
    """Megatron's --moe-layer-freq: an int N (every N-th layer, from the first) or a list
    "[1,0,...]" of one 0/1 a layer; returns a list of booleans, one a layer."""
    text = str(text).strip()
    if text.startswith("["):
        flags = [int(v) != 0 for v in text.strip("[]").split(",") if v.strip()]
        if len(flags) != layers:
            raise ValueError("--moe-layer-freq lists %d layers, the model has %d" % (len(flags), layers))
        return flags
    n = int(text)
    return [i % n == 0 for i in range(layers)]


def expert_parameter_count(model):
    """Expert weights in the model (the w1 and w2 of every MoEMLP)."""
    return sum(p.numel() for name, p in model.named_parameters() if name.endswith((".w1", ".w2")))
