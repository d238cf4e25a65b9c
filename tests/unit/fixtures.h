// Hand-built hardware and model descriptions shared by the unit tests (the hardware and
// model databases are separate components; these copy their datasheet figures from
// shared/reference/hardware-and-comm.md §1 and the models' published configurations).
#pragma once

#include <string>

#include "core/hardware_spec.h"
#include "core/model_spec.h"

namespace dsplan::test {

inline GpuSpec a100(double memory_gib = 80, double hbm_gbps = 2039) {
  GpuSpec g;
  g.name = "a100";
  g.arch = GpuArch::ampere;
  g.memory = GiB(memory_gib);
  g.hbm_bw = GBps(hbm_gbps);
  g.sm_count = 108;
  g.tensor_clock_MHz = 1410;
  g.boost_clock_MHz = 1410;
  g.fp16_tc_flop_per_clk_sm = 2048;
  g.bf16_tc_flop_per_clk_sm = 2048;
  g.tf32_tc_flop_per_clk_sm = 1024;
  g.fp32_flop_per_clk_sm = 128;
  g.l2 = MiB(40);
  g.nvlink_links = 12;
  g.nvlink_bw_per_link = GBps(25);
  g.pcie_gen = 4;
  g.pcie_bw = GBps(31.5);
  return g;
}

inline GpuSpec v100(double memory_gib = 32) {
  GpuSpec g;
  g.name = "v100";
  g.arch = GpuArch::volta;
  g.memory = GiB(memory_gib);
  g.hbm_bw = GBps(900);
  g.sm_count = 80;
  g.tensor_clock_MHz = 1530;
  g.boost_clock_MHz = 1530;
  g.fp16_tc_flop_per_clk_sm = 1024;
  g.fp32_flop_per_clk_sm = 128;
  g.l2 = MiB(6);
  g.nvlink_links = 6;
  g.nvlink_bw_per_link = GBps(25);
  g.pcie_gen = 3;
  g.pcie_bw = GBps(15.75);
  return g;
}

inline GpuSpec h200() {
  GpuSpec g;
  g.name = "h200";
  g.arch = GpuArch::hopper;
  g.memory = GiB(141);
  g.hbm_bw = GBps(4800);
  g.sm_count = 132;
  g.tensor_clock_MHz = 1830;
  g.boost_clock_MHz = 1980;
  g.fp16_tc_flop_per_clk_sm = 4096;
  g.bf16_tc_flop_per_clk_sm = 4096;
  g.tf32_tc_flop_per_clk_sm = 2048;
  g.fp8_tc_flop_per_clk_sm = 8192;
  g.fp32_flop_per_clk_sm = 256;
  g.l2 = MiB(50);
  g.nvlink_links = 18;
  g.nvlink_bw_per_link = GBps(25);
  g.pcie_gen = 5;
  g.pcie_bw = GBps(63);
  return g;
}

// B200 as hwdb/data/gpus/b200-180gb.json: 148 SMs, 8192 dense FLOP/clk/SM at 1856 MHz (FP8
// twice, NVFP4 four times that).
inline GpuSpec b200() {
  GpuSpec g = h200();
  g.name = "b200";
  g.arch = GpuArch::blackwell;
  g.memory = GiB(179.0615234375);
  g.hbm_bw = GBps(7700);
  g.sm_count = 148;
  g.tensor_clock_MHz = 1856;
  g.boost_clock_MHz = 1965;
  g.fp16_tc_flop_per_clk_sm = 8192;
  g.bf16_tc_flop_per_clk_sm = 8192;
  g.tf32_tc_flop_per_clk_sm = 4096;
  g.fp8_tc_flop_per_clk_sm = 16384;
  g.fp4_tc_flop_per_clk_sm = 32768;
  g.l2 = MiB(126);
  g.nvlink_bw_per_link = GBps(50);
  return g;
}

inline SystemSpec node(const GpuSpec& g, int gpus, IntraTopology topo, double intra_gbps,
                       int nics, double nic_gbit, double host_gbps) {
  SystemSpec s;
  s.name = g.name + "-node";
  s.gpu = g;
  s.gpus_per_node = gpus;
  s.topology = topo;
  s.intra_bw_per_gpu = GBps(intra_gbps);
  s.nics_per_node = nics;
  s.nic_bw = Gbitps(nic_gbit);
  s.host_memory = GiB(1024);
  s.host_mem_bw = GBps(host_gbps);
  s.cpu_cores = 64;
  return s;
}

// DGX A100: 8 GPUs, NVSwitch 300 GB/s/dir per GPU, 8x HDR 200 Gb/s.
inline SystemSpec dgx_a100() { return node(a100(), 8, IntraTopology::nvswitch, 300, 8, 200, 409.6); }
// DGX H200: NVSwitch gen3 with NVLink SHARP, 450 GB/s/dir per GPU, 8x NDR 400 Gb/s.
inline SystemSpec dgx_h200(bool nvls) {
  SystemSpec s = node(h200(), 8, IntraTopology::nvswitch, 450, 8, 400, 614.4);
  s.nvls = nvls;
  return s;
}
// DGX-1 V100 16GB: hybrid cube-mesh NVLink2 (6 links), 4x EDR.
inline SystemSpec dgx1() { return node(v100(16), 8, IntraTopology::nvlink_mesh, 150, 4, 100, 153.6); }
// DGX-2: 16 V100 32GB on NVSwitch (6 links each), 8x EDR, 2x Xeon 8168 (256 GB/s).
inline SystemSpec dgx2() { return node(v100(32), 16, IntraTopology::nvswitch, 150, 8, 100, 256); }
// ALCF Polaris: 4 A100-40GB all-to-all NVLink (4 links per pair), 2x Slingshot-11.
inline SystemSpec polaris() {
  return node(a100(40, 1555), 4, IntraTopology::nvlink_mesh, 300, 2, 200, 204.8);
}

inline Cluster cluster(const SystemSpec& s, int gpus) {
  Cluster c;
  c.node = s;
  c.num_gpus = gpus;
  return c;
}

// A GPT-2/3-style decoder: learned positions, LayerNorm, GELU MLP of 4h, biases, tied.
inline ModelSpec gpt(const std::string& name, int layers, int hidden, int heads, int seq,
                     long vocab, int pad) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.head_dim = hidden / heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = vocab;
  m.max_positions = seq;
  m.vocab_pad_multiple = pad;
  return m;
}

// A Llama-style decoder: RMSNorm, rotary, a SwiGLU MLP of `ffn`, grouped K/V heads of
// `head_dim`, no biases, no dropout, an untied vocabulary (the MoE and MLA tests' base).
inline ModelSpec llama_style(const std::string& name, int layers, int hidden, int heads, int kv_heads,
                             int head_dim, int ffn, long vocab, int max_positions) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = head_dim;
  m.ffn_hidden = ffn;
  m.gated_mlp = true;
  m.activation = Activation::silu;
  m.norm = NormKind::rmsnorm;
  m.position = PositionKind::rotary;
  m.linear_bias = false;
  m.tied_embeddings = false;
  m.vocab = vocab;
  m.max_positions = max_positions;
  m.dropout = false;
  return m;
}

// A BERT-style encoder fine-tuned for sequence classification (no vocabulary logits).
inline ModelSpec bert_cls(const std::string& name, int layers, int hidden, int heads, long vocab,
                          int type_vocab, bool pooler) {
  ModelSpec m = gpt(name, layers, hidden, heads, 512, vocab, 1);
  m.causal = false;
  m.type_vocab = type_vocab;
  m.embedding_norm = true;
  m.final_norm = false;
  m.pooler = pooler;
  m.vocab_logits = false;
  return m;
}

}  // namespace dsplan::test
