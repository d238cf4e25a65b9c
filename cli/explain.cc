// Describing one evaluated configuration (see explain.h).
#include "cli/explain.h"

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

}  // namespace

std::string describe_config(const Evaluation& e) {
  const TrainConfig& c = e.cfg;
  std::string s =
      "z" + std::to_string(c.zero_stage) + " tp" + std::to_string(c.tp) + " pp" + std::to_string(c.pp);
  if (c.pp > 1 && (c.pp_account_embedding || c.pp_account_loss))  // Megatron's accounted split
    s += c.pp_account_embedding && c.pp_account_loss ? "(+embedding+loss)"
         : c.pp_account_loss                         ? "(+loss)"
                                                     : "(+embedding)";
  if (c.cp > 1) s += " cp" + std::to_string(c.cp);
  s += " dp" + std::to_string(c.dp);
  if (c.vpp > 1) s += " vpp" + std::to_string(c.vpp);
  s += " mbs" + std::to_string(c.micro_batch) + " gas" + std::to_string(c.grad_accum);
  if (c.checkpointing != Checkpointing::none) s += std::string(" ckpt=") + name(c.checkpointing);
  if (c.checkpointing == Checkpointing::block) s += ":" + std::to_string(c.recompute_layers);
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
  os << indent << "critical path:\n";
  for (const auto& s : t.critical_path) os << indent << "  " << s << "\n";
}

}  // namespace dsplan::cli
