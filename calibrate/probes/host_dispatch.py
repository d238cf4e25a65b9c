#!/usr/bin/env python3
# Host dispatch probe of `dsplan calibrate`: how long eager PyTorch on this machine's CPU
# takes to issue one kernel of a training step (Python, the ATen dispatcher, autograd and
# autocast bookkeeping, cudaLaunchKernel), the step-time model's host_op_overhead
# (docs/model.md §4, "Host dispatch floor"). It trains a transformer so small that the GPU
# idles between kernels: token embedding, 4 pre-norm layers (LayerNorm, fused QKV linear,
# scaled-dot-product attention, output linear, dropout, residual; LayerNorm, FC1, GELU,
# FC2, dropout, residual), final norm, logits and cross-entropy, under bf16 autocast
# (fp32 on GPUs without bf16) with torch.optim.AdamW's default implementation, batch 1 and
# 16 tokens. The step time over many steps divided by the kernels one step launches
# (counted by torch.profiler) is the host time per kernel. The GPU's own busy time is
# reported too: the figure means something only while it is a small part of the step.
# Prints one JSON object on stdout; exit 3 without a CUDA device, 4 without PyTorch.
import json
import sys
import time

try:
    import torch
except Exception as e:  # noqa: BLE001 - any import failure means no PyTorch to probe
    print(f"cannot import torch: {e}", file=sys.stderr)
    sys.exit(4)

if not torch.cuda.is_available():
    print("PyTorch sees no CUDA device", file=sys.stderr)
    sys.exit(3)

H, LAYERS, HEADS, VOCAB, TOKENS = 64, 4, 4, 512, 16


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(H), torch.nn.LayerNorm(H)
        self.qkv, self.proj = torch.nn.Linear(H, 3 * H), torch.nn.Linear(H, H)
        self.fc1, self.fc2 = torch.nn.Linear(H, 4 * H), torch.nn.Linear(4 * H, H)
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, HEADS, H // HEADS).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.drop(self.proj(a.transpose(1, 2).reshape(b, s, H)))
        return x + self.drop(self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x)))))


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, H)
        self.layers = torch.nn.ModuleList(Layer() for _ in range(LAYERS))
        self.ln = torch.nn.LayerNorm(H)
        self.head = torch.nn.Linear(H, VOCAB, bias=False)

    def forward(self, ids, labels):
        x = self.emb(ids)
        for layer in self.layers:
            x = layer(x)
        logits = self.head(self.ln(x)).float()
        return torch.nn.functional.cross_entropy(logits.view(-1, VOCAB), labels.view(-1))


def main():
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = Tiny().to(dev).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else None
    ids = torch.randint(0, VOCAB, (1, TOKENS), device=dev)
    labels = torch.randint(0, VOCAB, (1, TOKENS), device=dev)

    def step():
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = model(ids, labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(10):
        step()
    torch.cuda.synchronize()
    steps = 60
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    step_us = (time.perf_counter() - t0) / steps * 1e6

    from torch.profiler import ProfilerActivity, profile
    counted = 3
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(counted):
            step()
        torch.cuda.synchronize()
    kernels = busy_us = 0.0
    for ev in prof.key_averages():
        t = getattr(ev, "device_time_total", None) or getattr(ev, "cuda_time_total", 0)
        if t > 0 and ev.count > 0:
            kernels += ev.count
            busy_us += t
    if kernels <= 0:
        print("the profiler counted no kernels", file=sys.stderr)
        sys.exit(5)
    kernels /= counted
    busy_us /= counted
    print(json.dumps({"framework": "pytorch " + torch.__version__,
                      "precision": "bf16 autocast" if dtype else "fp32",
                      "step_us": step_us, "kernels_per_step": kernels,
                      "gpu_busy_us_per_step": busy_us, "us_per_kernel": step_us / kernels}))


if __name__ == "__main__":
    main()
