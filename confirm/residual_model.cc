// XGBoost residual model (see residual_model.h). The only file that includes the XGBoost
// C API: one RAII handle template owns DMatrix and Booster handles; every call's return
// code is checked and turned into a Diagnostic carrying XGBGetLastError(); outputs that
// XGBoost owns are copied before the next call.
#include "confirm/residual_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>

#include "confirm/residual_check.h"
#include "core/json_reader.h"

namespace dsplan {
namespace {

template <class H, int (*Free)(H)>
class XgbHandle {
 public:
  XgbHandle() = default;
  ~XgbHandle() { reset(); }
  XgbHandle(const XgbHandle&) = delete;
  XgbHandle& operator=(const XgbHandle&) = delete;
  XgbHandle(XgbHandle&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  XgbHandle& operator=(XgbHandle&& o) noexcept {
    if (this != &o) { reset(); h_ = o.h_; o.h_ = nullptr; }
    return *this;
  }
  H get() const { return h_; }
  H* out() { reset(); return &h_; }

 private:
  void reset() {
    if (h_) Free(h_);
    h_ = nullptr;
  }
  H h_ = nullptr;
};

using Matrix = XgbHandle<DMatrixHandle, XGDMatrixFree>;
using Booster = XgbHandle<BoosterHandle, XGBoosterFree>;

// Records a failed call (rc != 0) with XGBoost's message; returns whether it succeeded.
bool check(int rc, const char* call, Diagnostics& errs, const std::string& file = "") {
  if (rc == 0) return true;
  errs.push_back({file, "", std::string("XGBoost ") + call + " failed: " + XGBGetLastError(), ""});
  return false;
}

Expected<Matrix> make_matrix(const std::vector<FeatureRow>& rows, const std::vector<float>* labels) {
  const size_t ncol = residual_feature_names().size();
  std::vector<float> flat;
  flat.reserve(rows.size() * ncol);
  for (const auto& r : rows) {
    if (r.size() != ncol) return Diagnostic{"", "", "feature row of the wrong width", ""};
    flat.insert(flat.end(), r.begin(), r.end());
  }
  Diagnostics errs;
  Matrix m;
  if (!check(XGDMatrixCreateFromMat(flat.data(), rows.size(), ncol, NAN, m.out()),
             "XGDMatrixCreateFromMat", errs))
    return errs;
  if (labels && !check(XGDMatrixSetFloatInfo(m.get(), "label", labels->data(), labels->size()),
                       "XGDMatrixSetFloatInfo", errs))
    return errs;
  return m;
}

std::string feature_list() { return join(residual_feature_names(), ","); }

// Where XGBoost keeps dsplan's attributes in the model JSON, for diagnostics.
std::string attribute_path(const char* key) { return std::string("/learner/attributes/") + key; }

// "dsplan_runs" as written by save(): a whole number of runs, 1 to 1e9, in decimal digits
// only (std::atoi read "-7" as -7 and "99999999999999999999" as -1); nullopt otherwise.
constexpr long long kMaxTrainingRuns = 1000000000;
std::optional<int> parse_training_runs(const std::string& s) {
  if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const long long n = std::stoll(s);
  if (n < 1 || n > kMaxTrainingRuns) return std::nullopt;
  return static_cast<int>(n);
}

}  // namespace

std::string residual_factor_problem(double log_factor) {
  const double factor = std::exp(log_factor);
  if (std::isfinite(factor) && factor >= kMinResidualFactor && factor <= kMaxResidualFactor) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "a correction factor of %.3g (measured / predicted throughput), outside [%g, %g]", factor,
                kMinResidualFactor, kMaxResidualFactor);
  return buf;
}

std::string cluster_key_of(const Json& hardware) {
  if (!hardware.is_object()) return "";
  const Json name = hardware.value("name", Json());
  const Json gpu = hardware.value("gpu", Json::object());
  const Json gpu_name = gpu.is_object() ? gpu.value("name", Json()) : Json();
  if (!name.is_string() || !gpu_name.is_string()) return "";
  return name.get<std::string>() + "/" + gpu_name.get<std::string>();
}

struct ResidualModel::Impl {
  Booster booster;
  int runs = 0;
  std::string cluster;
};

const std::vector<std::string>& residual_feature_names() {
  static const std::vector<std::string> names = {
      "zero_stage", "tp", "pp", "dp", "vpp", "micro_batch", "grad_accum", "log2_seq_len",
      "checkpointing", "flash_attention", "sequence_parallel", "offload", "precision",
      "layers", "hidden", "heads", "log_layer_hidden2", "log_tokens_per_micro_batch",
      "log_pred_step_s", "frac_compute", "frac_comm_exposed", "frac_bubble", "frac_optimizer",
      "frac_offload", "pred_mfu", "pred_allocated_gib", "frac_activations"};
  return names;
}

FeatureRow residual_features(const TrainConfig& c, const ModelSpec& m, const Prediction& p) {
  const double step = p.step_s > 0 ? p.step_s : 1.0;
  const double alloc = p.allocated_gib > 0 ? p.allocated_gib : 1.0;
  auto f = [](double v) { return static_cast<float>(v); };
  const Precision precision = c.linear_precision();  // fp8, nvfp4: bf16 + such linears
  return {f(c.zero_stage),
          f(c.tp),
          f(c.pp),
          f(c.dp),
          f(c.vpp),
          f(c.micro_batch),
          f(c.grad_accum),
          f(std::log2(std::max(1, c.seq_len))),
          f(static_cast<int>(c.checkpointing)),
          f(c.flash_attention),
          f(c.sequence_parallel),
          f(static_cast<int>(c.offload)),
          f(static_cast<int>(precision)),
          f(m.layers),
          f(m.hidden),
          f(m.heads),
          f(std::log(std::max(1.0, double(m.layers) * m.hidden * m.hidden))),
          f(std::log(std::max(1.0, double(c.micro_batch) * c.seq_len))),
          f(std::log(step)),
          f(p.compute_s / step),
          f(p.comm_exposed_s / step),
          f(p.bubble_s / step),
          f(p.optimizer_s / step),
          f(p.offload_s / step),
          f(p.mfu),
          f(p.allocated_gib),
          f(p.activations_gib / alloc)};
}

ResidualModel::ResidualModel() : impl_(std::make_unique<Impl>()) {}
ResidualModel::~ResidualModel() = default;
ResidualModel::ResidualModel(ResidualModel&&) noexcept = default;
ResidualModel& ResidualModel::operator=(ResidualModel&&) noexcept = default;
int ResidualModel::training_runs() const { return impl_->runs; }
const std::string& ResidualModel::cluster() const { return impl_->cluster; }

Expected<ResidualModel> ResidualModel::train(const std::vector<FeatureRow>& rows,
                                             const std::vector<float>& targets,
                                             const std::string& cluster, int rounds) {
  if (rows.empty() || rows.size() != targets.size())
    return Diagnostic{"", "", "no runs to learn from", "confirm needs at least one successful run"};
  auto dtrain = make_matrix(rows, &targets);
  if (!dtrain) return dtrain.errors();
  ResidualModel model;
  Impl& im = *model.impl_;
  Diagnostics errs;
  DMatrixHandle mats[] = {dtrain->get()};
  if (!check(XGBoosterCreate(mats, 1, im.booster.out()), "XGBoosterCreate", errs)) return errs;
  // Start from the mean residual so that few runs already correct the level; shallow trees
  // and L2 on the leaves keep the model from chasing noise in a handful of runs.
  const double mean = std::accumulate(targets.begin(), targets.end(), 0.0) / targets.size();
  const std::vector<std::pair<const char*, std::string>> params = {
      {"objective", "reg:squarederror"}, {"base_score", std::to_string(mean)},
      {"max_depth", "3"}, {"eta", "0.3"}, {"min_child_weight", "1"}, {"lambda", "1"},
      {"nthread", "1"}, {"seed", "0"}, {"verbosity", "0"}};
  for (const auto& [k, v] : params)
    if (!check(XGBoosterSetParam(im.booster.get(), k, v.c_str()), "XGBoosterSetParam", errs)) return errs;
  for (int i = 0; i < rounds; ++i)
    if (!check(XGBoosterUpdateOneIter(im.booster.get(), i, dtrain->get()), "XGBoosterUpdateOneIter", errs))
      return errs;
  im.runs = static_cast<int>(rows.size());
  im.cluster = cluster;
  return model;
}

Expected<std::vector<double>> ResidualModel::predict(const std::vector<FeatureRow>& rows) const {
  if (rows.empty()) return std::vector<double>{};
  if (!impl_->booster.get()) return Diagnostic{"", "", "residual model not trained", ""};
  auto m = make_matrix(rows, nullptr);
  if (!m) return m.errors();
  Diagnostics errs;
  bst_ulong len = 0;
  const float* out = nullptr;
  if (!check(XGBoosterPredict(impl_->booster.get(), m->get(), 0, 0, 0, &len, &out), "XGBoosterPredict", errs))
    return errs;
  if (len != rows.size()) return Diagnostic{"", "", "XGBoost returned the wrong number of predictions", ""};
  return std::vector<double>(out, out + len);  // copied before any other XGBoost call
}

Expected<bool> ResidualModel::save(const std::string& path) const {
  if (path.size() < 5 || path.substr(path.size() - 5) != ".json")
    return Diagnostic{path, "", "residual model path must end in .json", "XGBoost picks its JSON format by the name"};
  Diagnostics errs;
  BoosterHandle h = impl_->booster.get();
  if (!h) return Diagnostic{path, "", "residual model not trained", ""};
  const std::string runs = std::to_string(impl_->runs), features = feature_list();
  if (!check(XGBoosterSetAttr(h, "dsplan_features", features.c_str()), "XGBoosterSetAttr", errs, path) ||
      !check(XGBoosterSetAttr(h, "dsplan_runs", runs.c_str()), "XGBoosterSetAttr", errs, path) ||
      !check(XGBoosterSetAttr(h, "dsplan_cluster", impl_->cluster.c_str()), "XGBoosterSetAttr", errs, path) ||
      !check(XGBoosterSaveModel(h, path.c_str()), "XGBoosterSaveModel", errs, path))
    return errs;
  return true;
}

Expected<ResidualModel> ResidualModel::load(const std::string& path) {
  ResidualModel model;
  Impl& im = *model.impl_;
  Diagnostics errs;
  // Read and parse it first, so a missing, endless, malformed or foreign file gets dsplan's
  // own message rather than XGBoost's internals; XGBoost then loads the same checked bytes.
  auto text = read_text_file(path);
  if (!text) return text.errors();
  auto doc = parse_json_text(*text, path);
  if (!doc) return doc.errors();
  if (!doc->is_object() || !doc->contains("learner"))
    return Diagnostic{path, "", "not a residual model (no XGBoost \"learner\" object)",
                      ""};  // the caller names its flag in the hint
  if (auto bad = check_residual_structure(*doc, path, residual_feature_names().size()); !bad.empty())
    return bad;
  if (!check(XGBoosterCreate(nullptr, 0, im.booster.out()), "XGBoosterCreate", errs, path) ||
      !check(XGBoosterLoadModelFromBuffer(im.booster.get(), text->data(), text->size()),
             "XGBoosterLoadModelFromBuffer", errs, path))
    return errs;
  auto attr = [&](const char* key, std::string& out) {
    const char* v = nullptr;
    int found = 0;
    if (!check(XGBoosterGetAttr(im.booster.get(), key, &v, &found), "XGBoosterGetAttr", errs, path)) return false;
    out = found && v ? std::string(v) : std::string();  // copied at once
    return true;
  };
  std::string features, runs;
  if (!attr("dsplan_features", features) || !attr("dsplan_runs", runs) || !attr("dsplan_cluster", im.cluster))
    return errs;
  if (features != feature_list())
    return Diagnostic{path, "", "not a residual model of this dsplan version (different features)",
                      "rerun 'dsplan confirm' to retrain it"};
  const std::optional<int> n = parse_training_runs(runs);
  if (!n)
    return Diagnostic{path, attribute_path("dsplan_runs"),
                      runs.empty() ? "missing" : "\"" + runs + "\" is not a whole number of runs",
                      "the number of confirmed runs the model learned from, 1 to " +
                          std::to_string(kMaxTrainingRuns) + "; rerun 'dsplan confirm' to retrain it"};
  im.runs = *n;
  return model;
}

Expected<ResidualApplied> apply_residual_model(const std::string& model_path, const ModelSpec& model,
                                               Json& configs, bool resort, const std::string& cluster) {
  auto rm = ResidualModel::load(model_path);
  if (!rm) return rm.errors();
  // Residuals are learned per cluster (confirm trains on one cluster's runs only): the
  // same rule as a calibration profile measured on another GPU (efficiency_from_profile).
  if (!cluster.empty() && rm->cluster() != cluster)
    return Diagnostic{
        model_path, attribute_path("dsplan_cluster"),
        "residual model was learned on '" + rm->cluster() + "' but the estimate is for '" + cluster + "'",
        "use a residual model learned by 'dsplan confirm' on this cluster, or choose the "
        "matching --hw"};
  if (!configs.is_array()) return Diagnostic{"", "/configs", "must be an array", ""};
  std::vector<FeatureRow> rows;
  std::vector<size_t> at;
  for (size_t i = 0; i < configs.size(); ++i) {
    const Json& fits = configs[i].is_object() ? configs[i].value("fits", Json(true)) : Json(true);
    if (fits.is_boolean() && !fits.get<bool>()) continue;  // nothing to correct
    auto c = parse_candidate(configs[i], "", "/configs/" + std::to_string(i));
    if (!c) return c.errors();
    rows.push_back(residual_features(c->cfg, model, c->pred));
    at.push_back(i);
  }
  auto logs = rm->predict(rows);
  if (!logs) return logs.errors();
  // A factor out of range refuses the model rather than skipping that configuration:
  // skipping would rank corrected throughputs against uncorrected ones and hide the
  // problem (non-finite factors used to be left out silently), and clamping would invent
  // a correction the model never made. confirm never trains on a run outside
  // [kMinTrainingRatio, kMaxTrainingRatio], so a factor outside the wider
  // [kMinResidualFactor, kMaxResidualFactor] means a damaged or foreign file.
  for (size_t k = 0; k < at.size(); ++k)
    if (auto bad = residual_factor_problem((*logs)[k]); !bad.empty())
      return Diagnostic{
          model_path, "",
          "residual model gives the configuration at /configs/" + std::to_string(at[k]) + " " + bad,
          "a model learned by 'dsplan confirm' stays inside that range: rerun 'dsplan confirm' "
          "to retrain it, or leave the residual model out"};
  for (size_t k = 0; k < at.size(); ++k) {
    Json& j = configs[at[k]];
    const double factor = std::exp((*logs)[k]);
    j["residual"] = {{"factor", factor},
                     {"samples_per_s", j["throughput"]["samples_per_s"].get<double>() * factor},
                     {"step_s", j["time"]["step_s"].get<double>() / factor}};
  }
  if (resort) {
    auto key = [](const Json& j) {
      return j.contains("residual") ? j["residual"]["samples_per_s"].get<double>() : -1.0;
    };
    std::vector<Json> v(configs.begin(), configs.end());
    std::stable_sort(v.begin(), v.end(), [&](const Json& a, const Json& b) { return key(a) > key(b); });
    configs = Json(v);
  }
  return ResidualApplied{static_cast<int>(at.size()), rm->training_runs(), rm->cluster()};
}

}  // namespace dsplan
