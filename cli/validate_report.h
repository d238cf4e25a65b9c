// What `dsplan validate` reports (cli/validate_report.cc): one result per compared figure,
// per ordering, and the summary over them; printed as text or Markdown, or as JSON.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "core/json_reader.h"
#include "validation/validation_rows.h"

namespace dsplan::cli {

struct RowResult {
  std::string id, kind, label, note;
  std::string source;  // the row's source, shortened (group key of the by-source table)
  double predicted = 0, measured = 0, error = 0;  // error: (pred - meas) / meas
  bool pass = true;                               // for checks (oom, max micro-batch)
  bool inconsistent = false;
  bool unpredicted = false;  // no valid configuration: listed, counted apart
  std::string group{};       // ValidationCase::group: runs that compete for the same GPUs
  std::string config{};      // the configuration predicted (describe_config), for --json
  // Evidence for the predicted configuration's regime (estimator/search/evidence.h): a timed
  // row that times the step, or a memory row, on a GPU its source names, predicted with the
  // datasheet defaults; empty otherwise. ratio: measured / predicted step or memory.
  std::string regime{};
  double ratio = 0;
  bool memory() const { return kind == "memory_MiB"; }
  bool check() const { return kind == "max_mbs" || kind == "oom"; }
  // A time/throughput row that enters the aggregates (not a check, memory row, row marked
  // inconsistent or row without a configuration).
  bool timed() const { return !check() && !inconsistent && !unpredicted && kind != "memory_MiB"; }
};

struct OrderResult {
  std::string id, note;
  std::vector<std::string> labels;
  std::vector<double> measured, predicted;
  int concordant = 0, pairs = 0;
  bool matches() const { return concordant == pairs; }
};

struct Summary {
  std::vector<double> mem, time, comm;
  int checks = 0, checks_pass = 0, over40 = 0, orders_ok = 0, orders = 0, unpredicted = 0;
  // Pairs of one source's runs of one workload (model, sequence; global batch for step
  // times) on the same GPU count, measured by the same key more than 2% apart: how many the
  // prediction puts in the measured order.
  int pairs = 0, pairs_concordant = 0;
  double mape() const;
};

Summary summarise(const std::vector<RowResult>& rows, const std::vector<RowResult>& comm,
                  const std::vector<OrderResult>& orders);
Json to_json(const std::vector<RowResult>& rows, const std::vector<RowResult>& comm,
             const std::vector<OrderResult>& orders, const Summary& s, const validation::ValidationSet& set);
// --evidence (cli/validate_evidence.cc): the evidence rows grouped by regime, next to the
// bands estimate quotes (estimator/search/evidence.h); `md`: as the Markdown table of
// docs/accuracy.md.
Json evidence_json(const std::vector<RowResult>& rows);
void print_evidence(const std::vector<RowResult>& rows, std::ostream& os, bool md);
void print_text(const std::vector<RowResult>& rows, const std::vector<RowResult>& comm,
                const std::vector<OrderResult>& orders, const Summary& s,
                const validation::ValidationSet& set, bool md);

}  // namespace dsplan::cli
