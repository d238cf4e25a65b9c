// Structural check of a residual model file before XGBoost reads it (see residual_check.h).
// XGBoost's JSON loader trusts a tree's indices: an empty tree_info, a child or split index
// out of range or a missing array crashes the process (found by fuzzing; SIGSEGV and
// "double free"). The invariants below are those of the gbtree models `confirm` trains
// (XGBoost's JSON model schema, doc/model.schema in dmlc/xgboost): one output group,
// numerical splits only, every per-node array num_nodes long, children and split features
// in range.
#include "confirm/residual_check.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace dsplan {
namespace {

// XGBoost writes its integer parameters as decimal strings ("60"); -1 when it is not one.
long long int_param(const Json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) return -1;
  const Json& v = obj.at(key);
  if (v.is_number_integer()) return v.get<long long>();
  if (!v.is_string()) return -1;
  const std::string s = v.get<std::string>();
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(s);
}

const Json* child(const Json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) ? &obj.at(key) : nullptr;
}

// Empty when the tree is well formed, else what is wrong with it.
std::string tree_problem(const Json& t, long long index, long long features) {
  if (!t.is_object()) return "is not an object";
  if (int_param(t, "id") != index) return "has id " + (t.contains("id") ? t.at("id").dump() : "none");
  const Json* param = child(t, "tree_param");
  const long long n = param ? int_param(*param, "num_nodes") : -1;
  if (n < 1 || n > 1000000) return "has no valid tree_param.num_nodes";
  if (int_param(*param, "num_feature") != features) return "has a different num_feature";
  for (const char* key : {"left_children", "right_children", "parents", "split_indices", "split_conditions",
                          "default_left", "base_weights", "loss_changes", "sum_hessian", "split_type"}) {
    const Json* a = child(t, key);
    if (!a || !a->is_array() || static_cast<long long>(a->size()) != n)
      return std::string(key) + " is not num_nodes long";
    for (const Json& v : *a)
      if (!v.is_number()) return std::string(key) + " holds a non-number";
  }
  for (const char* key : {"categories", "categories_nodes", "categories_segments", "categories_sizes"}) {
    const Json* a = child(t, key);
    if (a && (!a->is_array() || !a->empty())) return "has categorical splits, which dsplan never trains";
  }
  const Json &left = t.at("left_children"), &right = t.at("right_children"), &split = t.at("split_indices"),
             &type = t.at("split_type");
  for (long long i = 0; i < n; ++i) {
    const long long l = left[i].get<long long>(), r = right[i].get<long long>();
    const bool leaf = l == -1 && r == -1;
    if (!leaf && (l <= i || r <= i || l >= n || r >= n))
      return "node " + std::to_string(i) + " has children out of range";
    if (!leaf && (split[i].get<long long>() < 0 || split[i].get<long long>() >= features))
      return "node " + std::to_string(i) + " splits on a feature out of range";
    if (type[i].get<long long>() != 0) return "node " + std::to_string(i) + " is not a numerical split";
  }
  return "";
}

}  // namespace

Diagnostics check_residual_structure(const Json& doc, const std::string& file, std::size_t features) {
  auto bad = [&](const std::string& path, const std::string& what) {
    return Diagnostics{{file, path, what, "the file is damaged: rerun 'dsplan confirm' to retrain it"}};
  };
  const Json* learner = child(doc, "learner");
  if (!learner || !learner->is_object()) return bad("/learner", "missing");
  const Json* lparam = child(*learner, "learner_model_param");
  if (!lparam || int_param(*lparam, "num_feature") != static_cast<long long>(features))
    return bad("/learner/learner_model_param/num_feature", "must be " + std::to_string(features));
  if (int_param(*lparam, "num_class") > 1)
    return bad("/learner/learner_model_param/num_class", "must be 0 or 1");
  // The base score is added to every prediction: a non-finite one (XGBoost writes it as a
  // string) would make every correction up; "nan" used to give each configuration 1.64.
  const Json* base = child(*lparam, "base_score");
  double base_score = 0;
  if (base && base->is_string()) {
    const std::string v = base->get<std::string>();
    char* end = nullptr;
    base_score = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size()) base_score = NAN;
  } else if (base && base->is_number()) {
    base_score = base->get<double>();
  }
  if (base && !std::isfinite(base_score))
    return bad("/learner/learner_model_param/base_score", "must be a finite number");
  // dsplan's attributes are strings (XGBoost's own check of them is an internal assertion).
  if (const Json* attrs = child(*learner, "attributes"))
    for (const char* key : {"dsplan_features", "dsplan_runs", "dsplan_cluster"})
      if (const Json* a = child(*attrs, key); a && !a->is_string())
        return bad(std::string("/learner/attributes/") + key, "must be a string");
  const Json* gb = child(*learner, "gradient_booster");
  if (!gb || !child(*gb, "name") || child(*gb, "name")->dump() != "\"gbtree\"")
    return bad("/learner/gradient_booster/name", "must be \"gbtree\"");
  const Json* model = child(*gb, "model");
  const Json* gparam = model ? child(*model, "gbtree_model_param") : nullptr;
  const long long trees = gparam ? int_param(*gparam, "num_trees") : -1;
  const std::string at = "/learner/gradient_booster/model";
  if (trees < 0 || trees > 100000)
    return bad(at + "/gbtree_model_param/num_trees", "missing or out of range");
  if (int_param(*gparam, "num_parallel_tree") != 1)
    return bad(at + "/gbtree_model_param/num_parallel_tree", "must be 1");
  const Json* info = child(*model, "tree_info");
  if (!info || !info->is_array() || static_cast<long long>(info->size()) != trees)
    return bad(at + "/tree_info", "must hold num_trees entries");
  for (const Json& g : *info)
    if (!g.is_number_integer() || g.get<long long>() != 0) return bad(at + "/tree_info", "entries must be 0");
  const Json* list = child(*model, "trees");
  if (!list || !list->is_array() || static_cast<long long>(list->size()) != trees)
    return bad(at + "/trees", "must hold num_trees trees");
  for (long long i = 0; i < trees; ++i)
    if (auto p = tree_problem((*list)[i], i, static_cast<long long>(features)); !p.empty())
      return bad(at + "/trees/" + std::to_string(i), p);
  return {};
}

}  // namespace dsplan
