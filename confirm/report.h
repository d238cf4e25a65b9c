// What confirm hands back: the predicted-vs-measured table, summary.txt in the DeepSpeed
// autotuner's format (plus dsplan's prediction and error columns), ds_config_optimal.json
// and cmd_optimal.txt for the best successful run, and, when nothing succeeded, a listing
// of every failure with its class and reason.
#pragma once

#include <string>
#include <vector>

#include "confirm/confirm.h"

namespace dsplan {

// Pipe table, one row per run: predicted and measured throughput, step time and peak
// memory, with error % = (predicted - measured) / measured.
std::string results_table(const ConfirmReport& rep);

// The autotuner's table (rows z0..z3 and global) with predicted_metric_val and error_pct
// columns, then "Tuning completed in H:MM:SS.ffffff. Total number of experiments: N."
std::string autotuner_summary(const ConfirmReport& rep);

// "No configuration succeeded:" and one line per run (class, reason, stderr tail).
std::string failure_summary(const ConfirmReport& rep);

// The best run's command with its ds_config path replaced by `optimal_ds_config`.
std::vector<std::string> optimal_command(const ConfirmReport& rep, const std::string& optimal_ds_config);

// Writes summary.txt (table + autotuner summary) and, when a run succeeded,
// ds_config_optimal.json (autotuning section removed) and cmd_optimal.txt; otherwise
// removes stale optimal files from an earlier confirm.
Expected<bool> write_outputs(const ConfirmReport& rep, const std::string& results_dir);

}  // namespace dsplan
