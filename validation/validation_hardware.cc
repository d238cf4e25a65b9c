// Which dsplan hardware stands for a published row's free-text "hardware" object
// (docs/accuracy.md, "Mapping decisions", Hardware). Rows name their GPUs the way papers
// and READMEs do ("V100", "Tesla V100-PCIE-32GB", "A100 SXM4 80GB", "H100 80GB HBM3"), so
// the mapping reads three things from the text and the numbers beside it:
//  - the GPU family: V100, A100, H100, H200, B200, B300, GB200 or GB300, and the export parts
//    A800 and H800 (hwdb's hgx-a800 / hgx-h800: an A100 and an H100 with NVLink at 200 GB/s per
//    direction); GH200 and every other GPU are not in hwdb: the row is skipped with the
//    families dsplan knows;
//  - the memory: hardware.gpu_mem_gb, else a "<n> GB" in the GPU text, else the larger
//    part of the family (V100 32GB, A100 80GB): the row ran, so the roomier card cannot
//    call its configuration impossible; the note says so;
//  - the form factor: a PCIe card (named in the GPU text, or an interconnect that says
//    PCIe and no NVLink/NVSwitch) is a generic node of that card on PCIe; otherwise the
//    family's NVLink node: DGX-1 (V100 16/32GB, hybrid cube mesh), DGX-2 (16 V100 32GB on
//    NVSwitch, when the row says DGX-2 or runs 16 V100s in one node), DGX A100 40/80GB,
//    DGX H100, DGX H200, DGX B200, DGX B300, GB200 or GB300 NVL72 (a rack of 72 GPUs, the
//    NVLink domain, is the node); Polaris (4 A100-40GB a node) when the interconnect names it.
// A multi-node row's num_gpus / nodes is its node size, where it differs from the preset's
// (not on GB200/GB300, whose "nodes" are 4-GPU compute trays inside one NVLink domain)
// (the NICs scale with it, one NIC per GPU as the DGX presets have, until the row states
// its own); a single-node row that uses part of a node keeps the preset. Source-specific
// readings stay explicit: Meta's 96 GB HBM2e H100 (torchtitan), PAI's unstated V100 32GB.
#include <cmath>
#include <cstdio>
#include <regex>

#include "hwdb/hwdb.h"
#include "validation/validation_rows.h"

namespace dsplan::validation::rows {
namespace {

// The first "<n> GB" / "<n>GB" / "<n> GiB" / "<n>G" in the GPU text, or 0; a bandwidth
// ("900 GB/s") is not a memory size.
double memory_in_text(const std::string& g) {
  static const std::regex re(R"((\d+(?:\.\d+)?)\s*(?:GB|GiB|G)\b(?!\s*/))", std::regex::icase);
  std::smatch m;
  return std::regex_search(g, m, re) ? std::stod(m[1].str()) : 0;
}

}  // namespace

std::optional<std::pair<int, double>> stated_nics(const std::string& ic) {
  static const std::regex re(
      R"((?:^|[^\d])(\d{1,3})\s*(?:x|\xC3\x97)\s*(?:[A-Za-z][A-Za-z0-9-]*\s+){0,3}(\d{1,6}(?:\.\d{1,6})?)\s*G(?:b/s|bps|bit/s))",
      std::regex::icase);
  std::smatch mm;
  if (!std::regex_search(ic, mm, re)) return std::nullopt;
  const int n = std::stoi(mm[1].str());
  const double gbps = std::stod(mm[2].str());
  if (n < 1 || n > 64 || gbps <= 0) return std::nullopt;
  return std::make_pair(n, gbps);
}

double gpu_count(const Json& row, std::string* why) {
  const Json& hw = at(row, "hardware");
  const Json& p = at(row, "parallel");
  if (at(hw, "num_gpus").is_number()) return num(hw, "num_gpus");
  auto say = [why](const std::string& w) {
    if (why) *why = w;
  };
  if (at(p, "dp").is_number() && at(p, "tp").is_number() && at(p, "pp").is_number()) {
    const double n = num(p, "dp") * num(p, "tp") * num(p, "pp") * std::max(1.0, num(p, "cp", 1));
    say("num_gpus not given: dp x tp x pp" + std::string(num(p, "cp", 1) > 1 ? " x cp" : "") + " = " +
        std::to_string(static_cast<long long>(n)));
    return n;
  }
  static const std::regex per_node(R"(^\s*(\d+)\s*(?:x|\xC3\x97)\s*)", std::regex::icase);
  std::smatch mm;
  const std::string g = str(hw, "gpu");
  if (std::regex_search(g, mm, per_node)) {
    const double nodes = num(hw, "nodes") >= 1 ? num(hw, "nodes") : 1;
    const double n = std::stod(mm[1].str()) * nodes;
    say("num_gpus not given: " + mm[1].str() + " a node (the GPU text) x " +
        std::to_string(static_cast<long long>(nodes)) + " node(s)");
    return n;
  }
  say("num_gpus not given: 1");
  return 1;
}

Expected<RowHw> row_hardware(const Json& row) {
  const Json& hw = at(row, "hardware");
  const std::string g = str(hw, "gpu"), ic = str(hw, "interconnect");
  const double counted = gpu_count(row, nullptr);
  const int gpus = counted >= 1 && counted <= 1e6 ? static_cast<int>(counted) : 0;
  const bool nodes_stated = at(hw, "nodes").is_number() && num(hw, "nodes") >= 1;
  const int nodes = nodes_stated ? inum(hw, "nodes") : 0;
  const std::string row_text = str(row, "source") + " " + joined(at(row, "inferred"));
  // Source-specific readings (docs/accuracy.md): PAI's page states no GPU.
  if ((has(g, "32") || has(g, "not stated")) && has(row_text, "seed 004") && gpus > 0 && nodes <= 1) {
    RowHw pai{"dgx1-v100", std::string("v100-32gb"), gpus,
              "GPU/interconnect not stated: V100 32GB on DGX-1-style NVLink, " + std::to_string(gpus) +
                  " per node"};
    auto preset = system_named(pai.system);
    if (!preset) return preset.errors();
    pai.preset = *preset;
    return pai;
  }
  // The export parts A800 and H800 are the A100 and H100 with NVLink cut to 400 GB/s
  // (200 GB/s per direction; NVIDIA's A800 and H800 SXM datasheets).
  const bool export_part = has(g, "A800") || has(g, "H800");
  // Grace-Blackwell racks (GB200, GB300 NVL72): their rows' "nodes" are compute trays.
  const bool gb200 = has(g, "GB200"), gb300 = has(g, "GB300"), rack = gb200 || gb300;
  const bool b200 = has(g, "B200") && !gb200, b300 = has(g, "B300") && !gb300;
  if (has(g, "GH200") || !(has(g, "V100") || has(g, "A100") || has(g, "H100") || has(g, "H200") || b200 ||
                           b300 || rack || export_part))
    return Diagnostic{
        "", "/hardware/gpu", "hardware \"" + g + "\" not recognised",
        "dsplan knows V100, A100 (A800), H100 (H800), H200, B200 and B300 (DGX B200, DGX B300), "
        "GB200 and GB300 (NVL72 racks), SXM or PCIe"};
  const double stated = num(hw, "gpu_mem_gb") > 0 ? num(hw, "gpu_mem_gb") : memory_in_text(g);
  const bool pcie = has(g, "PCIe") || (has(ic, "PCIe") && !has(ic, "NVLink") && !has(ic, "NVSwitch"));
  RowHw h;
  std::string memory_note = stated > 0 ? "" : ", memory not stated: the family's larger part";
  if (has(g, "V100")) {
    const bool big = !(stated > 0 && stated < 24);
    if (pcie) {
      h = RowHw{"v100-pcie-16gb", {}, 0, std::string("V100 PCIe ") + (big ? "32GB" : "16GB") + " on PCIe"};
      if (big) h.memory = gpu_preset("v100-32gb")->memory;
    } else if (has(g, "DGX-2") || has(ic, "DGX-2") || (gpus == 16 && nodes == 1) ||
               (nodes_stated && gpus == 16 * nodes)) {
      h = RowHw{"dgx2",
                {},
                0,
                has(g, "DGX-2") || has(ic, "DGX-2") ? "DGX-2 (V100 32GB, NVSwitch)"
                                                    : "16 V100s a node = DGX-2 (V100 32GB, NVSwitch)"};
      memory_note.clear();
    } else {
      h = RowHw{"dgx1-v100", big ? std::optional<std::string>("v100-32gb") : std::nullopt, 0,
                std::string("DGX-1 V100 ") + (big ? "32GB" : "16GB") + " (NVLink hybrid cube mesh)"};
    }
  } else if (export_part && !pcie) {
    // The hwdb's HGX A800 / H800 nodes (hgx-a800 carries the 80 GB part).
    const bool a800 = has(g, "A800");
    h = RowHw{a800 ? "hgx-a800" : "hgx-h800",
              a800 && stated > 0 && stated < 60 ? std::optional<std::string>("a100-40gb") : std::nullopt, 0,
              a800 ? "HGX A800 (A100 with NVLink at 200 GB/s per direction)"
                   : "HGX H800 (H100 with NVLink at 200 GB/s per direction)"};
    if (!a800) memory_note.clear();
  } else if (has(g, "A100") || has(g, "A800")) {
    const bool big = !(stated > 0 && stated < 60);
    if (has(ic, "Polaris")) {
      h = RowHw{"polaris", {}, 0, "Polaris"};
      memory_note.clear();
    } else if (pcie) {
      h = RowHw{big ? "a100-pcie-80gb" : "a100-pcie-40gb",
                {},
                0,
                big ? "A100 PCIe 80GB on PCIe" : "A100 PCIe 40GB on PCIe"};
    } else {
      h = RowHw{big ? "dgx-a100" : "dgx-a100-40gb", {}, 0, big ? "DGX A100 80GB" : "DGX A100 40GB"};
    }
  } else if (has(g, "H100") || has(g, "H800")) {
    if (has(g, "96GB") && has(g, "HBM2e")) {  // Meta's Grand Teton H100 (torchtitan)
      h = RowHw{"dgx-h100",
                {},
                0,
                "DGX H100 node with Meta's H100 96GB HBM2e: 96e9 bytes at 2.4 TB/s (torchtitan's benchmark "
                "page); its 500 W power limit is not modelled",
                Bytes(96e9),
                GBps(2400)};
    } else {
      h = pcie ? RowHw{"h100-pcie-80gb", {}, 0, "H100 PCIe 80GB on PCIe"}
               : RowHw{"dgx-h100", {}, 0, "DGX H100"};
    }
    memory_note.clear();  // 80 GB either way
  } else if (b200) {
    h = RowHw{"dgx-b200", {}, 0, "DGX B200"};
    memory_note.clear();
  } else if (b300) {
    h = RowHw{"dgx-b300", {}, 0, "DGX B300"};
    memory_note.clear();
  } else if (rack) {
    h = gb300 ? RowHw{"gb300-nvl72", {}, 0, "GB300 NVL72 (a rack's 72 GPUs a node)"}
              : RowHw{"gb200-nvl72", {}, 0, "GB200 NVL72 (a rack's 72 GPUs a node)"};
    memory_note.clear();
  } else {
    h = RowHw{"dgx-h200", {}, 0, "DGX H200"};
    memory_note.clear();
  }
  h.why += memory_note;
  // The node size a multi-node row states (num_gpus / nodes), or a single node larger than
  // the preset's; the NICs keep the preset's count per GPU.
  auto preset = system_named(h.system);
  if (!preset) return preset.errors();
  h.preset = *preset;
  const int preset_gpn = preset->gpus_per_node;
  // A GB200/GB300 row's "nodes" are compute trays (4 GPUs), not its NVLink domain: the rack stays.
  if (h.gpus_per_node == 0 && nodes_stated && gpus > 0 && gpus % nodes == 0 && !rack) {
    const int per = gpus / nodes;
    if (per != preset_gpn && (nodes > 1 || per > preset_gpn) && per <= 16) {
      h.gpus_per_node = per;
      h.nics_per_node =
          std::max(1, static_cast<int>(std::lround(double(preset->nics_per_node) * per / preset_gpn)));
      h.why += ", " + std::to_string(per) + " GPUs a node (num_gpus / nodes)";
    }
  }
  return h;
}

Expected<SystemSpec> row_system(const Json& row, std::vector<std::string>& notes) {
  auto h = row_hardware(row);
  if (!h) return h.errors();
  SystemSpec sys = h->preset;
  if (h->gpu) {
    auto g = gpu_preset(*h->gpu);
    if (!g) return g.errors();
    sys.gpu = *g;
  }
  if (h->gpus_per_node > 0) sys.gpus_per_node = h->gpus_per_node;
  if (h->nics_per_node > 0) sys.nics_per_node = h->nics_per_node;
  if (h->memory.v > 0) sys.gpu.memory = h->memory;
  if (h->hbm.v > 0) sys.gpu.hbm_bw = h->hbm;
  notes.push_back("hardware " + h->system + (h->gpu ? " with " + *h->gpu : "") + ": " + h->why);
  if (auto nics = stated_nics(str(at(row, "hardware"), "interconnect"))) {
    if (nics->first != sys.nics_per_node || std::abs(nics->second * 1e9 / 8 - sys.nic_bw.v) > 1) {
      sys.nics_per_node = nics->first;
      sys.nic_bw = BytesPerSecond(nics->second * 1e9 / 8);
      char buf[96];
      std::snprintf(buf, sizeof buf, "NICs as the row states: %d x %g Gb/s per node", nics->first,
                    nics->second);
      notes.push_back(buf);
    }
  }
  return sys;
}

}  // namespace dsplan::validation::rows
