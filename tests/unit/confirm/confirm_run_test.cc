// The confirm loop against the protocol-following fake workload (real subprocesses):
// exactly K runs, the autotuner's layout, classification, arg mappings, resume after an
// interruption, the outputs when nothing succeeds, and adaptive selection.
#include "confirm/confirm.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <chrono>
#include <thread>

#include "confirm/ds_config.h"
#include "confirm/report.h"
#include "confirm/runs_db.h"
#include "test_util.h"

namespace dsplan {
namespace {

using test::ScratchDir;
using test::slurp;
using test::workload_args;
namespace fs = std::filesystem;

ConfirmOptions options(const ScratchDir& d, int top) {
  ConfirmOptions o;
  o.top = top;
  o.results_dir = d / "results";
  o.exps_dir = d / "exps";
  o.timeout_s = 20;
  o.kill_grace_s = 0.5;
  return o;
}

LaunchSpec launch(const std::vector<std::string>& extra = {}) {
  auto l = make_launch_spec(test::fake_command(extra), {}, "");
  EXPECT_TRUE(l.ok());
  return l.ok() ? *l : LaunchSpec{};
}

TEST(Confirm, TopFiveRunsExactlyFiveAndWritesTheLayout) {
  ScratchDir d;
  Plan plan = test::tiny_plan();
  ASSERT_EQ(plan.candidates.size(), 6u);  // 8 configs, 2 do not fit
  auto rep = run_confirm(plan, launch(), options(d, 5));
  ASSERT_TRUE(rep.ok()) << rep.errors().front().to_string();
  ASSERT_EQ(rep->runs.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    const auto& r = rep->runs[i];
    EXPECT_EQ(r.cand.name, plan.candidates[i].name);  // plan order without --adaptive
    EXPECT_EQ(r.result.cls.outcome, Outcome::ok) << r.cand.name << ": " << r.result.cls.reason;
    for (const char* f : {"ds_config.json", "exp.json", "cmd.txt", "stdout.log", "stderr.log", "metrics.json"})
      EXPECT_TRUE(fs::exists(fs::path(r.exp.dir) / f)) << r.cand.name << "/" << f;
    Json exp = Json::parse(slurp(d / ("exps/" + r.cand.name + ".json")));
    EXPECT_EQ(exp["name"].get<std::string>(), r.cand.name);
    EXPECT_EQ(exp["num_gpus"], 2);
    EXPECT_EQ(exp["num_nodes"], 1);
    Json ds = Json::parse(slurp(r.exp.ds_config_path));
    EXPECT_TRUE(ds["autotuning"]["enabled"].get<bool>());
    EXPECT_EQ(fs::path(ds["autotuning"]["metric_path"].get<std::string>()),
              fs::absolute(fs::path(r.exp.dir) / "metrics.json").lexically_normal());
    EXPECT_EQ(ds["train_micro_batch_size_per_gpu"], r.cand.cfg.micro_batch);
  }
  EXPECT_FALSE(fs::exists(d / ("results/" + plan.candidates[5].name)));
  // fake_train: 250 x mbs/(mbs+1) x stage factor; z0 mbs4 = 250 x 0.8 x 1.0 = 200 is best
  // although the plan ranked it 4th.
  ASSERT_GE(rep->best, 0);
  EXPECT_EQ(rep->runs[rep->best].cand.name, "z0_tp1_pp1_gas1_tmbspg4");
  EXPECT_DOUBLE_EQ(rep->runs[rep->best].result.measured.throughput, 200.0);

  ASSERT_TRUE(write_outputs(*rep, d / "results").ok());
  std::string summary = slurp(d / "results/summary.txt");
  EXPECT_NE(summary.find("| tuning_space | num_experiments | best_metric_val | best_exp_name |"), std::string::npos);
  EXPECT_NE(summary.find("| global | 5 | 200 | z0_tp1_pp1_gas1_tmbspg4 | 170 | -15.0 |"), std::string::npos)
      << summary;  // predicted 170 vs measured 200: (170-200)/200 = -15%
  Json opt = Json::parse(slurp(d / "results/ds_config_optimal.json"));
  EXPECT_FALSE(opt.contains("autotuning"));
  EXPECT_EQ(opt["zero_optimization"]["stage"], 0);
  EXPECT_NE(slurp(d / "results/cmd_optimal.txt").find("ds_config_optimal.json"), std::string::npos);
  // Predicted vs measured table: one row per run.
  std::string table = results_table(*rep);
  EXPECT_NE(table.find("| 4 | z0_tp1_pp1_gas1_tmbspg4 | ok | 170 | 200 | -15.0 |"), std::string::npos) << table;
}

TEST(Confirm, ClassifiesEachOutcome) {
  ScratchDir d;
  auto o = options(d, 6);
  // Long enough for a Python start-up on a loaded 2-core CI machine (1 s flaked under
  // ctest -j8), short enough that the hanging run does not slow the suite much.
  o.timeout_s = 4.0;
  auto rep = run_confirm(test::tiny_plan(),
                         launch({"--when", "z2_mbs4=oom", "--when", "z1_mbs2=hang", "--when", "z0_mbs4=crash",
                                 "--when", "z3_mbs4=nometrics", "--when", "z1_mbs1=errorword"}),
                         o);
  ASSERT_TRUE(rep.ok());
  ASSERT_EQ(rep->runs.size(), 6u);
  const std::vector<std::pair<Outcome, std::string>> expect = {
      {Outcome::ok, ""}, {Outcome::oom, "out of memory (\"CUDA out of memory\")"},
      {Outcome::timeout, "no result within 4 s"}, {Outcome::failed, "exit status 139 (segmentation fault)"},
      {Outcome::failed, "no metrics written"}, {Outcome::ok, ""}};
  for (size_t i = 0; i < expect.size(); ++i) {
    EXPECT_EQ(rep->runs[i].result.cls.outcome, expect[i].first) << rep->runs[i].cand.name;
    EXPECT_EQ(rep->runs[i].result.cls.reason, expect[i].second) << rep->runs[i].cand.name;
  }
  EXPECT_NE(slurp(rep->runs[5].exp.dir + "/stderr.log").find("error"), std::string::npos);
  Json exp = Json::parse(slurp(rep->runs[3].exp.dir + "/exp.json"));
  EXPECT_EQ(exp["result"]["outcome"].get<std::string>(), "failed");
  EXPECT_EQ(exp["result"]["exit_code"], 139);
}

// A run that writes 20 MiB of log before its out-of-memory traceback: confirm reads the
// last 16 MiB of each log, which hold the traceback, and classifies the run by it.
TEST(Confirm, LongLogIsReadFromItsEnd) {
  ScratchDir d;
  auto o = options(d, 1);
  auto rep = run_confirm(test::tiny_plan(), launch({"--mode", "bigoom"}), o);
  ASSERT_TRUE(rep.ok());
  ASSERT_EQ(rep->runs.size(), 1u);
  EXPECT_GT(fs::file_size(rep->runs[0].exp.dir + "/stderr.log"), 20u << 20);
  EXPECT_EQ(rep->runs[0].result.cls.outcome, Outcome::oom);
  EXPECT_NE(rep->runs[0].result.cls.tail.find("CUDA out of memory"), std::string::npos);
  // What was read: exactly the cap's worth, ending where the log ends.
  const std::string tail = read_log_tail(rep->runs[0].exp.dir + "/stderr.log");
  EXPECT_EQ(tail.size(), static_cast<size_t>(kMaxLogBytes));
  EXPECT_EQ(tail.substr(tail.size() - 18), "1.02 GiB is free.\n");
  EXPECT_EQ(read_log_tail(d / "no-such.log"), "");
}

// A run whose log shows DeepSpeed skipping fp16 steps on overflow is still ok, but the
// report says how many were skipped: the profiled steps may have had no optimizer update.
TEST(Confirm, ReportsFp16OverflowSkips) {
  ScratchDir d;
  auto o = options(d, 1);
  o.runs_db_path = d / "runs.json";
  auto rep = run_confirm(test::tiny_plan(), launch({"--mode", "overflow"}), o);
  ASSERT_TRUE(rep.ok());
  const auto& r = rep->runs.at(0);
  EXPECT_EQ(r.result.cls.outcome, Outcome::ok);
  EXPECT_EQ(r.result.cls.overflow_skips, 3);  // fake_train prints three
  Json exp = Json::parse(slurp(r.exp.dir + "/exp.json"));
  EXPECT_EQ(exp["result"]["fp16_overflow_skips"], 3);
  EXPECT_NE(results_table(*rep).find("| 3 fp16 overflow steps skipped |"), std::string::npos)
      << results_table(*rep);
  // The run is recorded but teaches the residual model nothing.
  auto db = RunsDb::load(d / "runs.json");
  ASSERT_TRUE(db.ok());
  std::vector<FeatureRow> rows;
  std::vector<float> targets;
  db->training_set(test::tiny_plan().cluster_key(), rows, targets);
  EXPECT_TRUE(rows.empty());
  // Resuming reads the count back from exp.json instead of rerunning.
  auto again = run_confirm(test::tiny_plan(), launch({"--mode", "overflow"}), o);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->runs.at(0).result.reused);
  EXPECT_EQ(again->runs.at(0).result.cls.overflow_skips, 3);
}

TEST(Confirm, UserConfigAndArgMappings) {
  ScratchDir d;
  std::ofstream(d / "user.json") << R"({
    "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
    "fp16": {"enabled": "auto", "loss_scale_window": 500},
    "optimizer": {"type": "Lamb", "params": {"lr": 0.002}},
    "autotuning": {"enabled": true,
                   "arg_mappings": {"train_micro_batch_size_per_gpu ": "--per_device_train_batch_size"}}})";
  auto l = make_launch_spec({"python3", test::fake_workload(), "--deepspeed", d / "user.json",
                             "--per_device_train_batch_size", "99"},
                            {{"checkpointing", "--checkpoint-activations"}}, "");
  ASSERT_TRUE(l.ok()) << l.errors().front().to_string();
  auto rep = run_confirm(test::tiny_plan(), *l, options(d, 1));
  ASSERT_TRUE(rep.ok());
  const auto& r = rep->runs.at(0);
  EXPECT_EQ(r.result.cls.outcome, Outcome::ok) << r.result.cls.reason;
  std::string out = slurp(r.exp.dir + "/stdout.log");
  EXPECT_NE(out.find("--deepspeed " + r.exp.ds_config_path + " --per_device_train_batch_size 4"), std::string::npos) << out;
  EXPECT_EQ(out.find("--checkpoint-activations"), std::string::npos);  // the plan has no checkpointing
  Json ds = Json::parse(slurp(r.exp.ds_config_path));
  EXPECT_EQ(ds["optimizer"]["type"].get<std::string>(), "Lamb");   // the user's optimizer is kept
  EXPECT_FALSE(ds["fp16"]["enabled"].get<bool>());                // the plan is bf16
  EXPECT_EQ(ds["fp16"]["loss_scale_window"], 500);
  EXPECT_TRUE(ds["bf16"]["enabled"].get<bool>());
  EXPECT_EQ(ds["gradient_accumulation_steps"], 1);
}

TEST(Confirm, BadLaunchSpecs) {
  auto none = make_launch_spec({"python3", "train.py"}, {}, "");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.errors()[0].message.find("names no DeepSpeed config"), std::string::npos);
  auto typo = make_launch_spec(test::fake_command(), {{"train_micro_batch_size_per_gp", "--mbs"}}, "");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.errors()[0].hint.find("did you mean \"train_micro_batch_size_per_gpu\""), std::string::npos);
}

TEST(Confirm, ResumesAfterAnInterruption) {
  ScratchDir d;
  Plan plan = test::tiny_plan();
  std::ofstream(d / "rules") << "z1_mbs2=slow\n";  // the third run hangs until cancelled
  auto l = launch({"--rules-file", d / "rules", "--sleep", "60"});
  std::atomic<bool> cancel{false};
  auto o = options(d, 5);
  o.cancel = &cancel;
  std::thread watcher([&] {
    const std::string log = d / "results/z1_tp1_pp1_gas1_tmbspg2/stdout.log";
    for (int i = 0; i < 1000 && slurp(log).find("mode=slow") == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    cancel = true;
  });
  auto first = run_confirm(plan, l, o);
  watcher.join();
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->interrupted);
  ASSERT_EQ(first->runs.size(), 3u);
  EXPECT_EQ(first->runs[2].result.cls.outcome, Outcome::interrupted);

  fs::remove(d / "rules");
  o.cancel = nullptr;
  auto second = run_confirm(plan, l, o);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->runs.size(), 5u);
  EXPECT_TRUE(second->runs[0].result.reused);
  EXPECT_TRUE(second->runs[1].result.reused);
  for (int i = 2; i < 5; ++i) {
    EXPECT_FALSE(second->runs[i].result.reused) << i;
    EXPECT_EQ(second->runs[i].result.cls.outcome, Outcome::ok) << i;
  }
  EXPECT_DOUBLE_EQ(second->runs[0].result.measured.throughput, 194.0);  // 250 x 4/5 x 0.97

  o.overwrite = true;
  o.top = 1;
  auto third = run_confirm(plan, l, o);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third->runs.at(0).result.reused);
}

TEST(Confirm, NothingSucceedsMeansNoOptimalConfig) {
  ScratchDir d;
  fs::create_directories(d / "results");
  std::ofstream(d / "results/ds_config_optimal.json") << "{}";  // stale, from an earlier confirm
  auto rep = run_confirm(test::tiny_plan(), launch({"--mode", "raise", "--when", "z2_mbs4=oom"}), options(d, 2));
  ASSERT_TRUE(rep.ok());
  EXPECT_EQ(rep->best, -1);
  ASSERT_TRUE(write_outputs(*rep, d / "results").ok());
  EXPECT_FALSE(fs::exists(d / "results/ds_config_optimal.json"));
  EXPECT_FALSE(fs::exists(d / "results/cmd_optimal.txt"));
  std::string msg = failure_summary(*rep);
  EXPECT_NE(msg.find("z1_tp1_pp1_gas1_tmbspg4: failed - exit status 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("RuntimeError: the data loader found no shards"), std::string::npos) << msg;
  // The workload's Python traceback is cut to its exception line; the log keeps the rest.
  EXPECT_EQ(msg.find("Traceback"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("File \""), std::string::npos) << msg;
  EXPECT_NE(msg.find("stderr.log"), std::string::npos) << msg;
  EXPECT_NE(msg.find("z2_tp1_pp1_gas1_tmbspg4: oom"), std::string::npos) << msg;
}

TEST(Confirm, AdaptiveStartsFromTheCorrectedRanking) {
  ScratchDir d;
  Plan plan = test::tiny_plan();
  auto o = options(d, 6);
  o.runs_db_path = d / "runs.json";
  o.residual_path = d / "residual.json";
  ASSERT_TRUE(run_confirm(plan, launch(), o).ok());  // an earlier session: all six recorded
  EXPECT_TRUE(fs::exists(d / "residual.json"));

  auto o2 = o;
  o2.results_dir = d / "results2";
  o2.exps_dir = d / "exps2";
  o2.adaptive = true;
  o2.top = 2;
  auto rep = run_confirm(plan, launch(), o2);
  ASSERT_TRUE(rep.ok());
  // The plan ranks z0 mbs4 4th (170 samples/s); it measured 200, the best. Trained on the
  // earlier runs, the residual model moves it to the front.
  EXPECT_EQ(rep->runs.at(0).cand.name, "z0_tp1_pp1_gas1_tmbspg4");
  EXPECT_GT(rep->runs.at(0).corrected_samples_per_s, 190.0);
  EXPECT_EQ(rep->training_runs, 6);
}

// The reference workload cannot train here (no PyTorch), but its flag parser must accept
// every flag confirm generates for it; parse_args imports nothing beyond the standard library.
TEST(Confirm, ReferenceWorkloadAcceptsTheGeneratedFlags) {
  ScratchDir d;
  ModelSpec llama;
  llama.layers = 8;
  llama.hidden = 512;
  llama.heads = 8;
  llama.kv_heads = 2;
  llama.ffn_hidden = 1408;
  llama.gated_mlp = true;
  llama.activation = Activation::silu;
  llama.norm = NormKind::rmsnorm;
  llama.position = PositionKind::rotary;
  llama.tied_embeddings = false;
  llama.linear_bias = false;
  llama.vocab = 32000;
  llama.max_positions = 2048;
  TrainConfig c;
  c.zero_stage = 3;
  c.checkpointing = Checkpointing::full;
  c.flash_attention = true;
  c.precision = Precision::fp16;
  for (const ModelSpec& m : {test::tiny_plan().model, llama}) {
    std::vector<std::string> argv = {"python3", "-c",
                                     "import sys; sys.path.insert(0, sys.argv[1]); import train_gpt; "
                                     "a = train_gpt.parse_args(sys.argv[2:]); print(train_gpt.recompute_mode(a))",
                                     std::string(DSPLAN_SOURCE_DIR) + "/examples"};
    auto args = megatron_args(c, m);
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--deepspeed_config", "ds.json"});
    auto r = run_process(argv, d / "out", d / "err", {});
    EXPECT_TRUE(r.exited && r.exit_code == 0) << test::slurp(d / "err");
    EXPECT_EQ(test::slurp(d / "out"), "full\n");
  }
  // Megatron plans add the overlap flags and a pinned attention kernel's flag.
  c.framework = Framework::megatron;
  c.zero.overlap_comm = 1;
  for (AttentionKernel k : {AttentionKernel::fa2, AttentionKernel::cudnn, AttentionKernel::triton}) {
    c.attention = k;
    std::vector<std::string> argv = {"python3", "-c",
                                     "import sys; sys.path.insert(0, sys.argv[1]); import train_gpt; "
                                     "a = train_gpt.parse_args(sys.argv[2:]); "
                                     "print(a.attention_backend, a.use_flash_attn_triton, a.overlap_grad_reduce)",
                                     std::string(DSPLAN_SOURCE_DIR) + "/examples"};
    auto args = megatron_args(c, llama);
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_process(argv, d / "out", d / "err", {});
    EXPECT_TRUE(r.exited && r.exit_code == 0) << test::slurp(d / "err");
    const std::string want = k == AttentionKernel::fa2     ? "flash False True\n"
                             : k == AttentionKernel::cudnn ? "fused False True\n"
                                                           : "None True True\n";
    EXPECT_EQ(test::slurp(d / "out"), want);
  }
  for (const char* file : {"/examples/train_gpt.py", "/examples/gpt_model.py", "/examples/fsdp_wrap.py"}) {
    const std::string src = std::string(DSPLAN_SOURCE_DIR) + file;
    auto r = run_process({"python3", "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", src},
                         "", d / "err", {});
    EXPECT_EQ(r.exit_code, 0) << file << ": " << test::slurp(d / "err");
  }
}

// The Qwen- and Gemma-style blocks reach the workload as Megatron-LM's flags (--add-qkv-bias,
// --qk-layernorm, --kv-channels) and its own (--gated-gelu, --post-norms, --sliding-window,
// --window-layers, --logit-softcap), and it reads each; models it cannot build are named.
TEST(Confirm, ReferenceWorkloadBuildsTheLlamaStyleBlocks) {
  ScratchDir d;
  Plan plan = test::tiny_plan();
  ModelSpec& m = plan.model;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 2 * m.hidden / m.heads;  // wider than hidden / heads, as Gemma's
  m.gated_mlp = true;
  m.activation = Activation::gelu;
  m.norm = NormKind::rmsnorm;
  m.linear_bias = false;
  m.qkv_bias = m.qk_norm = m.qk_norm_full_width = m.logit_softcap = m.attn_softcap = true;
  m.norms_per_layer = 4;
  m.attention_window = 64;
  m.window_layers = 2;
  Candidate cand = plan.candidates.front();
  LaunchSpec l;
  l.reference_script = std::string(DSPLAN_SOURCE_DIR) + "/examples/train_gpt.py";
  const Experiment e = make_experiment(cand, plan, l, d.path());
  std::vector<std::string> argv = {
      "python3", "-c",
      "import sys; sys.path.insert(0, sys.argv[1]); import train_gpt; "
      "a = train_gpt.parse_args(sys.argv[2:]); "
      "print(a.kv_channels, a.add_qkv_bias, a.qk_layernorm, a.gated_gelu, a.post_norms, "
      "a.sliding_window, a.window_layers, a.logit_softcap, a.attn_softcap, a.qk_norm_full_width)",
      std::string(DSPLAN_SOURCE_DIR) + "/examples"};
  argv.insert(argv.end(), e.argv.begin() + 2, e.argv.end());
  auto r = run_process(argv, d / "out", d / "err", {});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << test::slurp(d / "err");
  EXPECT_EQ(test::slurp(d / "out"),
            std::to_string(m.head_dim) + " True True True True 64 2 30.0 50.0 True\n");
  EXPECT_TRUE(reference_workload_gaps(m).empty());
  m.parallel_residual = true;
  m.position = PositionKind::alibi;
  EXPECT_EQ(reference_workload_gaps(m).size(), 2u);
}

// A plan priced as PyTorch FSDP runs the reference workload's PyTorch path with the
// plan's sharding and reduce dtype; the workload must accept the whole command line.
TEST(Confirm, FsdpPlansRunTheWorkloadsFsdpPath) {
  ScratchDir d;
  Plan plan = test::tiny_plan();
  Candidate cand = plan.candidates.front();
  cand.cfg.framework = Framework::fsdp;
  cand.cfg.zero_stage = 3;
  cand.cfg.fsdp_hybrid = true;
  cand.cfg.fsdp_reduce_fp32 = true;
  cand.cfg.fsdp_version = 2;
  LaunchSpec l;
  l.reference_script = std::string(DSPLAN_SOURCE_DIR) + "/examples/train_gpt.py";
  const Experiment e = make_experiment(cand, plan, l, d.path());
  auto has = [&](const std::string& w) { return std::find(e.argv.begin(), e.argv.end(), w) != e.argv.end(); };
  EXPECT_TRUE(has("--no-deepspeed"));
  EXPECT_TRUE(has("--fsdp-plan"));
  EXPECT_TRUE(has("hybrid"));
  EXPECT_TRUE(has("fp32"));
  std::vector<std::string> argv = {"python3", "-c",
                                   "import sys; sys.path.insert(0, sys.argv[1]); import train_gpt; "
                                   "a = train_gpt.parse_args(sys.argv[2:]); "
                                   "print(a.no_deepspeed, a.fsdp_plan, a.fsdp_sharding, a.fsdp_reduce_dtype, "
                                   "a.fsdp_version)",
                                   std::string(DSPLAN_SOURCE_DIR) + "/examples"};
  argv.insert(argv.end(), e.argv.begin() + 2, e.argv.end());  // drop python3 and the script
  auto r = run_process(argv, d / "out", d / "err", {});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << test::slurp(d / "err");
  EXPECT_EQ(test::slurp(d / "out"), "True True hybrid fp32 2\n");
  // DeepSpeed plans keep the DeepSpeed path.
  cand.cfg.framework = Framework::deepspeed;
  const Experiment ds = make_experiment(cand, plan, l, d.path());
  EXPECT_EQ(std::find(ds.argv.begin(), ds.argv.end(), "--no-deepspeed"), ds.argv.end());
}

// A model priced with Hugging Face's unfused gelu_new runs it in the reference workload,
// whose parser takes the shape flags confirm passes (vocabulary padding, dropout).
TEST(Confirm, ReferenceWorkloadRunsThePlansActivationAndDropout) {
  ScratchDir d;
  Plan plan = test::tiny_plan();
  plan.model.activation_unfused = true;
  plan.model.vocab_pad_multiple = 1;
  plan.model.dropout = true;
  LaunchSpec l;
  l.reference_script = std::string(DSPLAN_SOURCE_DIR) + "/examples/train_gpt.py";
  const Experiment e = make_experiment(plan.candidates.front(), plan, l, d.path());
  EXPECT_EQ(workload_args(e, "a.unfused_gelu, a.make_vocab_size_divisible_by, a.hidden_dropout", d),
            "True 1 0.1\n");
  // A Megatron launch command gets no workload-only flag.
  l.command = {"python3", "pretrain_gpt.py", "--deepspeed_config", "x.json"};
  const Experiment mg = make_experiment(plan.candidates.front(), plan, l, d.path());
  EXPECT_EQ(std::find(mg.argv.begin(), mg.argv.end(), "--unfused-gelu"), mg.argv.end());
}

// Separate Q, K and V linears (Hugging Face's BERT and Llama layout) run as such in the
// reference workload; a plan priced as Megatron, which fuses them, gets no flag.
TEST(Confirm, ReferenceWorkloadRunsThePlansProjectionLayout) {
  ScratchDir d;
  Plan plan = test::tiny_plan();
  plan.model.fused_qkv = false;
  LaunchSpec l;
  l.reference_script = std::string(DSPLAN_SOURCE_DIR) + "/examples/train_gpt.py";
  Candidate cand = plan.candidates.front();
  cand.cfg.framework = Framework::deepspeed;
  const Experiment e = make_experiment(cand, plan, l, d.path());
  EXPECT_EQ(workload_args(e, "a.separate_qkv, a.separate_gate_up", d), "True False\n");
  cand.cfg.framework = Framework::megatron;
  const Experiment mg = make_experiment(cand, plan, l, d.path());
  EXPECT_EQ(std::find(mg.argv.begin(), mg.argv.end(), "--separate-qkv"), mg.argv.end());
}

// RMSNorm runs as the plan priced it: Hugging Face's eager chain for a DDP plan on auto,
// torch.nn.RMSNorm for a fused plan and for Megatron (auto is fused there).
TEST(Confirm, ReferenceWorkloadRunsThePlansRmsNormKernels) {
  ScratchDir d;
  Plan plan = test::tiny_plan();
  plan.model.norm = NormKind::rmsnorm;
  LaunchSpec l;
  l.reference_script = std::string(DSPLAN_SOURCE_DIR) + "/examples/train_gpt.py";
  Candidate cand = plan.candidates.front();
  cand.cfg.framework = Framework::ddp;
  EXPECT_EQ(workload_args(make_experiment(cand, plan, l, d.path()), "a.eager_rmsnorm", d), "True\n");
  cand.cfg.norm_kernel = NormKernel::fused;
  EXPECT_EQ(workload_args(make_experiment(cand, plan, l, d.path()), "a.eager_rmsnorm", d), "False\n");
  cand.cfg.norm_kernel = NormKernel::auto_;
  cand.cfg.framework = Framework::megatron;
  const Experiment mg = make_experiment(cand, plan, l, d.path());
  EXPECT_EQ(std::find(mg.argv.begin(), mg.argv.end(), "--eager-rmsnorm"), mg.argv.end());
}

// A plan priced with DeepSpeed's cpu_checkpointing launches Megatron-DeepSpeed's flags for it,
// and the reference workload accepts them (it recomputes under deepspeed.checkpointing then).
TEST(Confirm, CpuCheckpointingPlansPassDeepSpeedsCheckpointFlags) {
  ScratchDir d;
  Plan plan = test::tiny_plan();
  Candidate cand = plan.candidates.front();
  cand.cfg.framework = Framework::deepspeed;
  cand.cfg.checkpointing = Checkpointing::full;
  cand.cfg.ds_cpu_checkpointing = true;
  LaunchSpec l;
  l.reference_script = std::string(DSPLAN_SOURCE_DIR) + "/examples/train_gpt.py";
  const Experiment e = make_experiment(cand, plan, l, d.path());
  EXPECT_EQ(workload_args(
                e, "a.deepspeed_activation_checkpointing, a.checkpoint_in_cpu, a.partition_activations", d),
            "True True False\n");
}

}  // namespace
}  // namespace dsplan
