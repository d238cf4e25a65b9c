// Describing one evaluated configuration (see explain.h).
#include "cli/explain.h"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "core/names.h"

namespace dsplan::cli {
namespace {

std::string fmt(double v, int prec) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(prec) << v;
  return s.str();
}

std::string pct(Seconds part, Seconds whole) {
  return whole.v > 0 ? fmt(100.0 * std::max(0.0, part.v) / whole.v, 0) + "%" : "-";
}

std::string ms(Seconds s) { return fmt(in_ms(s), 2); }

// "4.52 ms: linear GEMMs 53%, attention core 12%, memory-bound and other 36%".
std::string three_way(Seconds total, Seconds linear, Seconds attention) {
  const Seconds rest = total - linear - attention;
  return ms(total) + " ms: linear GEMMs " + pct(linear, total) + ", attention core " + pct(attention, total) +
         ", memory-bound and other " + pct(rest, total);
}

}  // namespace

std::string describe_config(const Evaluation& e) {
  const TrainConfig& c = e.cfg;
  std::string s =
      "z" + std::to_string(c.zero_stage) + " tp" + std::to_string(c.tp) + " pp" + std::to_string(c.pp);
  if (c.pp > 1 && (c.pp_account_embedding || c.pp_account_loss))  // Megatron's accounted split
    s += c.pp_account_embedding && c.pp_account_loss ? "(+embedding+loss)"
         : c.pp_account_loss                         ? "(+loss)"
                                                     : "(+embedding)";
  if (c.pp > 1 && c.explicit_split())  // Megatron's explicit split: first | middle chunks | last
    s += "(" + std::to_string(c.pp_first_layers) + "|..|" + std::to_string(c.pp_last_layers) + ")";
  if (c.cp > 1) s += " cp" + std::to_string(c.cp);
  s += " dp" + std::to_string(c.dp);
  if (c.ep > 1) s += " ep" + std::to_string(c.ep);
  if (c.etp > 1) s += " etp" + std::to_string(c.etp);
  if (c.vpp > 1) s += " vpp" + std::to_string(c.vpp);
  s += " mbs" + std::to_string(c.micro_batch) + " gas" + std::to_string(c.grad_accum);
  if (c.checkpointing != Checkpointing::none) s += std::string(" ckpt=") + name(c.checkpointing);
  if (c.checkpointing == Checkpointing::block) s += ":" + std::to_string(c.recompute_layers);
  if (c.checkpointing == Checkpointing::selective && c.recompute_modules != 0)
    s += "(" + recompute_modules_text(c.recompute_modules) + ")";
  if (c.ds_partitions_checkpoints()) s += "+partition";  // DeepSpeed's checkpoint options
  if (c.ds_checkpoints_on_host()) s += "+cpu";
  if (c.cpu_offload_layers > 0) s += " offload-layers=" + std::to_string(c.cpu_offload_layers);
  if (c.flash_attention) s += " flash";
  if (c.sequence_parallel) s += " sp";
  if (c.offload != Offload::none) s += std::string(" offload=") + name(c.offload);
  return s;
}

void print_breakdown(std::ostream& os, const Evaluation& e, const std::string& indent) {
  const auto& m = e.memory;
  const auto& t = e.time;
  os << indent << "memory per GPU (GiB): params " << fmt(in_GiB(m.params), 2) << ", grads "
     << fmt(in_GiB(m.grads), 2) << ", optimizer " << fmt(in_GiB(m.optimizer), 2) << ", activations "
     << fmt(in_GiB(m.activations), 2) << ", buffers " << fmt(in_GiB(m.buffers), 2) << ", overhead "
     << fmt(in_GiB(m.overhead), 2) << "\n" << indent << "  allocated " << fmt(in_GiB(m.allocated), 2)
     << ", reserved " << fmt(in_GiB(m.reserved), 2) << ", device " << fmt(in_GiB(m.device), 2) << ", host "
     << fmt(in_GiB(m.host), 2) << "\n";
  os << indent << "step " << fmt(in_ms(t.step), 1) << " ms (" << (e.simulated ? "simulator" : "closed form")
     << "): compute " << fmt(in_ms(t.compute), 1) << ", exposed comm " << fmt(in_ms(t.comm_exposed), 1)
     << ", bubble " << fmt(in_ms(t.bubble), 1) << ", optimizer " << fmt(in_ms(t.optimizer), 1) << ", offload "
     << fmt(in_ms(t.offload), 1) << " ms\n";
  if (t.contention.v > 0)
    os << indent << "  of the compute, " << fmt(in_ms(t.contention), 1)
       << " ms is lost beside overlapped collectives (docs/model.md §4.6)\n";
  // The host's side (docs/model.md §4 "Host dispatch floor"): what issuing the step's kernels
  // takes, and how much of the step waits for it; a slower host scales the first.
  if (t.host_issue.v > 0)
    os << indent << "  the host issues the step's kernels in " << fmt(in_ms(t.host_issue), 1) << " ms"
       << (t.host_stall.v > 0 ? "; the GPU waits " + fmt(in_ms(t.host_stall), 1) + " ms for it"
                              : std::string(", behind the GPU's work"))
       << "\n";
  os << indent << "critical path:\n";
  for (const auto& s : t.critical_path) os << indent << "  " << s << "\n";
}

void print_micro_batch(std::ostream& os, const StepTimeModel& m, const TrainConfig& cfg,
                       const std::string& indent) {
  const StepCosts c = m.costs(cfg);
  const OperatorSplit split = m.operator_split(cfg);
  const LayerCosts& l = c.layer;
  os << indent << "one micro-batch on a rank of the busiest stage:\n";
  os << indent << "  layer forward   " << three_way(l.fwd, split.fwd_linear, split.fwd_attention) << "\n";
  os << indent << "  layer backward  " << three_way(l.bwd, split.bwd_linear, split.bwd_attention) << "\n";
  if (l.recompute.v > 0) os << indent << "  layer recompute " << ms(l.recompute) << " ms\n";
  const Seconds tp_fwd = l.tp_comm_fwd - l.ep_comm_fwd, tp_bwd = l.tp_comm_bwd - l.ep_comm_bwd;
  if (tp_fwd.v > 0 || tp_bwd.v > 0)
    os << indent << "  layer TP collectives (exposed) " << ms(tp_fwd) << " ms forward, " << ms(tp_bwd)
       << " ms backward\n";
  if (l.ep_comm_fwd.v > 0 || l.ep_comm_bwd.v > 0)
    os << indent << "  layer MoE all-to-alls (exposed) " << ms(l.ep_comm_fwd) << " ms forward, "
       << ms(l.ep_comm_bwd) << " ms backward\n";
  std::string alone;  // the layer's data-parallel collectives, each as if alone
  if (l.param_gather.v > 0) alone += "ZeRO-3 parameter gather " + ms(l.param_gather) + " ms";
  if (l.grad_reduce.v > 0)
    alone += std::string(alone.empty() ? "" : ", ") + "DP gradient reduction " + ms(l.grad_reduce) + " ms";
  if (!alone.empty()) os << indent << "  layer collectives, each as if alone: " << alone << "\n";
  os << indent << "  x " << c.layers_per_rank << " layers per rank";
  if (c.vpp > 1) os << " (" << c.vpp << " chunks)";
  os << ": "
     << fmt(in_ms((l.fwd + l.bwd + l.recompute + l.tp_comm_fwd + l.tp_comm_bwd) * c.layers_per_rank), 1)
     << " ms\n";
  if (c.embed_fwd.v > 0 || c.embed_bwd.v > 0)
    os << indent << "  embedding       " << ms(c.embed_fwd) << " ms forward, " << ms(c.embed_bwd)
       << " ms backward\n";
  if (c.head_fwd.v > 0 || c.head_bwd.v > 0)
    os << indent << "  head            " << ms(c.head_fwd) << " ms forward (logits GEMM "
       << pct(split.head_fwd_linear, c.head_fwd) << "), " << ms(c.head_bwd) << " ms backward (logits GEMMs "
       << pct(split.head_bwd_linear, c.head_bwd) << ")\n";
  if (c.pp > 1) os << indent << "  pipeline send   " << ms(c.p2p) << " ms\n";
}

Json micro_batch_json(const StepTimeModel& m, const TrainConfig& cfg) {
  const StepCosts c = m.costs(cfg);
  const OperatorSplit split = m.operator_split(cfg);
  const LayerCosts& l = c.layer;
  Json layer = {{"forward_s", l.fwd.v},
                {"forward_linear_s", split.fwd_linear.v},
                {"forward_attention_s", split.fwd_attention.v},
                {"backward_s", l.bwd.v},
                {"backward_linear_s", split.bwd_linear.v},
                {"backward_attention_s", split.bwd_attention.v},
                {"recompute_s", l.recompute.v},
                {"tp_comm_forward_s", l.tp_comm_fwd.v},
                {"tp_comm_backward_s", l.tp_comm_bwd.v},
                {"moe_all_to_all_forward_s", l.ep_comm_fwd.v},  // the part of tp_comm_* that is MoE's
                {"moe_all_to_all_backward_s", l.ep_comm_bwd.v},
                {"zero3_gather_s", l.param_gather.v},
                {"grad_reduce_s", l.grad_reduce.v}};
  return Json{{"layer", layer},
              {"layers_per_rank", c.layers_per_rank},
              {"embedding", {{"forward_s", c.embed_fwd.v}, {"backward_s", c.embed_bwd.v}}},
              {"head",
               {{"forward_s", c.head_fwd.v},
                {"forward_linear_s", split.head_fwd_linear.v},
                {"backward_s", c.head_bwd.v},
                {"backward_linear_s", split.head_bwd_linear.v}}},
              {"p2p_send_s", c.pp > 1 ? c.p2p.v : 0.0}};
}

}  // namespace dsplan::cli
