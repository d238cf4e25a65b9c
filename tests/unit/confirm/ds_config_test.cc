// ds_config generation, experiment names, the FSDP config, launch commands and command rewriting
// (Megatron flags: megatron_args_test.cc).
#include "confirm/ds_config.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "confirm/command.h"
#include "confirm/fsdp_config.h"
#include "plan_fixtures.h"

namespace dsplan {
namespace {

using test::config;
using test::small_gpt;

TEST(DsConfig, BatchArithmetic) {
  // train_batch = mbs x gas x dp = 4 x 3 x 8 = 96.
  Json ds = make_ds_config(config(1, 4, 3, 8), small_gpt());
  EXPECT_EQ(ds["train_batch_size"], 96);
  EXPECT_EQ(ds["train_micro_batch_size_per_gpu"], 4);
  EXPECT_EQ(ds["gradient_accumulation_steps"], 3);
  // TP and PP do not enter the data-parallel batch: 2 x 1 x 2 = 4 with tp=4, pp=2.
  TrainConfig c = config(0, 2, 1, 2);
  c.tp = 4;
  c.pp = 2;
  EXPECT_EQ(make_ds_config(c, small_gpt())["train_batch_size"], 4);
}

TEST(DsConfig, PrecisionBlocks) {
  TrainConfig c = config(0, 1, 1, 1);
  c.precision = Precision::bf16;
  Json ds = make_ds_config(c, small_gpt());
  EXPECT_TRUE(ds["bf16"]["enabled"].get<bool>());
  EXPECT_FALSE(ds.contains("fp16"));
  c.precision = Precision::fp16;
  ds = make_ds_config(c, small_gpt());
  EXPECT_TRUE(ds["fp16"]["enabled"].get<bool>());
  EXPECT_EQ(ds["fp16"]["loss_scale"], 0);  // dynamic
  EXPECT_FALSE(ds.contains("bf16"));
  c.precision = Precision::fp32;
  ds = make_ds_config(c, small_gpt());
  EXPECT_FALSE(ds.contains("fp16"));
  EXPECT_FALSE(ds.contains("bf16"));
}

TEST(DsConfig, ZeroStagesHaveTheirKeys) {
  for (int stage = 0; stage <= 3; ++stage) {
    Json z = make_ds_config(config(stage, 1, 1, 4), small_gpt())["zero_optimization"];
    EXPECT_EQ(z["stage"], stage);
    EXPECT_EQ(z["reduce_bucket_size"], 500000000);
    // DeepSpeed's default: overlap_comm only at stage 3.
    EXPECT_EQ(z["overlap_comm"].get<bool>(), stage == 3) << stage;
    EXPECT_EQ(z.contains("allgather_bucket_size"), stage == 1 || stage == 2) << stage;
    EXPECT_EQ(z.contains("stage3_prefetch_bucket_size"), stage == 3) << stage;
    EXPECT_EQ(z.contains("stage3_max_live_parameters"), stage == 3) << stage;
    EXPECT_FALSE(z.contains("offload_optimizer"));
  }
  TrainConfig c = config(2, 1, 1, 4);
  c.zero.overlap_comm = 1;
  c.zero.reduce_bucket_elems = 5e7;
  Json z = make_ds_config(c, small_gpt())["zero_optimization"];
  EXPECT_TRUE(z["overlap_comm"].get<bool>());
  EXPECT_EQ(z["reduce_bucket_size"], 50000000);
}

TEST(DsConfig, OffloadBlocksPerStage) {
  TrainConfig c = config(2, 1, 1, 4);
  c.offload = Offload::optimizer;
  Json z = make_ds_config(c, small_gpt())["zero_optimization"];
  EXPECT_EQ(z["offload_optimizer"]["device"].get<std::string>(), "cpu");
  EXPECT_TRUE(z["offload_optimizer"]["pin_memory"].get<bool>());
  EXPECT_FALSE(z.contains("offload_param"));

  c.zero_stage = 3;
  c.offload = Offload::all;
  z = make_ds_config(c, small_gpt())["zero_optimization"];
  EXPECT_EQ(z["offload_optimizer"]["device"].get<std::string>(), "cpu");
  EXPECT_EQ(z["offload_param"]["device"].get<std::string>(), "cpu");

  // Stage 2 cannot offload parameters; stage 0 cannot offload at all; both are noted.
  c.zero_stage = 2;
  z = make_ds_config(c, small_gpt())["zero_optimization"];
  EXPECT_TRUE(z.contains("offload_optimizer"));
  EXPECT_FALSE(z.contains("offload_param"));
  EXPECT_EQ(ds_config_notes(c).size(), 1u);
  c.zero_stage = 0;
  z = make_ds_config(c, small_gpt())["zero_optimization"];
  EXPECT_FALSE(z.contains("offload_optimizer"));
  EXPECT_EQ(ds_config_notes(c).size(), 2u);
}

TEST(DsConfig, ActivationCheckpointing) {
  TrainConfig c = config(1, 1, 1, 2);
  EXPECT_FALSE(make_ds_config(c, small_gpt()).contains("activation_checkpointing"));
  c.checkpointing = Checkpointing::full;
  c.tp = 2;
  c.pp = 4;
  Json ac = make_ds_config(c, small_gpt())["activation_checkpointing"];
  // DeepSpeed's checkpoint options are written as the plan priced them: off unless chosen.
  EXPECT_FALSE(ac["partition_activations"].get<bool>());
  EXPECT_FALSE(ac["cpu_checkpointing"].get<bool>());
  EXPECT_EQ(ac["number_checkpoints"], 3);  // 12 layers / 4 stages
  // DeepSpeed asserts contiguous checkpointing only with partitioned activations.
  EXPECT_FALSE(ac["contiguous_memory_optimization"].get<bool>());
  auto has_arg = [&](const std::string& a) {
    const auto args = megatron_args(c, small_gpt());
    return std::find(args.begin(), args.end(), a) != args.end();
  };
  EXPECT_FALSE(has_arg("--deepspeed-activation-checkpointing"));
  c.ds_partition_activations = true;
  c.ds_cpu_checkpointing = true;
  ac = make_ds_config(c, small_gpt())["activation_checkpointing"];
  EXPECT_TRUE(ac["partition_activations"].get<bool>());
  EXPECT_TRUE(ac["cpu_checkpointing"].get<bool>());
  // Megatron-DeepSpeed's flags override the ds_config keys, so the launch names them.
  EXPECT_TRUE(has_arg("--deepspeed-activation-checkpointing"));
  EXPECT_TRUE(has_arg("--partition-activations"));
  EXPECT_TRUE(has_arg("--checkpoint-in-cpu"));
  // At TP 1 there is nothing to partition.
  c.tp = 1;
  EXPECT_FALSE(
      make_ds_config(c, small_gpt())["activation_checkpointing"]["partition_activations"].get<bool>());
  EXPECT_FALSE(has_arg("--partition-activations"));
}

TEST(DsConfig, Optimizers) {
  TrainConfig c = config(1, 1, 1, 1);
  Json ds = make_ds_config(c, small_gpt());
  EXPECT_EQ(ds["optimizer"]["type"].get<std::string>(), "AdamW");
  EXPECT_DOUBLE_EQ(ds["optimizer"]["params"]["betas"][1].get<double>(), 0.95);
  c.optimizer = Optimizer::sgd;
  EXPECT_EQ(make_ds_config(c, small_gpt())["optimizer"]["type"], "SGD");
  c.optimizer = Optimizer::adam_8bit;
  EXPECT_FALSE(make_ds_config(c, small_gpt()).contains("optimizer"));
  EXPECT_FALSE(ds_config_notes(c).empty());
  EXPECT_EQ(ds["gradient_clipping"], 1.0);
  EXPECT_FALSE(ds["wall_clock_breakdown"].get<bool>());
}

TEST(ExperimentName, AutotunerStyleWithExtensions) {
  TrainConfig c = config(1, 4, 1, 8);
  EXPECT_EQ(experiment_name(c), "z1_tp1_pp1_gas1_tmbspg4");
  c.vpp = 2;
  c.pp = 2;
  c.checkpointing = Checkpointing::full;
  c.flash_attention = true;
  c.sequence_parallel = true;
  c.offload = Offload::optimizer;
  c.precision = Precision::fp16;
  EXPECT_EQ(experiment_name(c), "z1_tp1_pp2_gas1_tmbspg4_vpp2_ckfull_flash_sp_offopt_fp16");
}

TEST(FsdpConfig, ShardingPrecisionAndLaunch) {
  TrainConfig c;
  c.framework = Framework::fsdp;
  c.precision = Precision::bf16;
  c.zero_stage = 3;
  c.dp = 16;
  c.micro_batch = 2;
  c.grad_accum = 4;
  c.checkpointing = Checkpointing::block;
  c.recompute_layers = 8;
  Json j = make_fsdp_config(c);
  EXPECT_EQ(j["sharding_strategy"], "FULL_SHARD");
  EXPECT_EQ(j["mixed_precision"]["param_dtype"], "bfloat16");
  EXPECT_EQ(j["mixed_precision"]["reduce_dtype"], "bfloat16");  // PyTorch's default
  EXPECT_EQ(j["global_batch"], 2 * 4 * 16);
  EXPECT_EQ(j["activation_checkpointing"]["blocks_per_rank"], 8);
  EXPECT_EQ(j["cpu_offload"]["offload_params"], false);
  EXPECT_EQ(j["tensor_parallel_degree"], 1);
  c.fsdp_reduce_fp32 = true;
  c.fsdp_hybrid = true;
  c.offload = Offload::all;
  j = make_fsdp_config(c);
  EXPECT_EQ(j["sharding_strategy"], "HYBRID_SHARD");
  EXPECT_EQ(j["mixed_precision"]["reduce_dtype"], "float32");
  EXPECT_EQ(j["cpu_offload"]["offload_params"], true);
  c.zero_stage = 2;
  EXPECT_EQ(make_fsdp_config(c)["sharding_strategy"], "_HYBRID_SHARD_ZERO2");
  c.fsdp_hybrid = false;
  EXPECT_EQ(make_fsdp_config(c)["sharding_strategy"], "SHARD_GRAD_OP");
  c.zero_stage = 1;
  EXPECT_EQ(make_fsdp_config(c)["sharding_strategy"], "NO_SHARD");
  EXPECT_EQ(make_fsdp_config(c)["zero_redundancy_optimizer"], true);
  // FSDP2 has no sharding strategy: stage 3 reshards after forward, stage 2 does not, and
  // hybrid is a 2-D mesh; MixedPrecisionPolicy has no buffer dtype.
  c.fsdp_version = 2;
  c.zero_stage = 3;
  j = make_fsdp_config(c);
  EXPECT_EQ(j["fsdp_version"], 2);
  EXPECT_FALSE(j.contains("sharding_strategy"));
  EXPECT_FALSE(j["mixed_precision"].contains("buffer_dtype"));
  EXPECT_EQ(j["mixed_precision"]["reduce_dtype"], "float32");
  EXPECT_EQ(j["fully_shard"]["reshard_after_forward"], true);
  EXPECT_EQ(j["fully_shard"]["mesh"], "1-D over the data-parallel ranks");
  c.zero_stage = 2;
  c.fsdp_hybrid = true;
  j = make_fsdp_config(c);
  EXPECT_EQ(j["fully_shard"]["reshard_after_forward"], false);
  EXPECT_EQ(j["fully_shard"]["mesh"], "2-D (replicate across nodes, shard within a node)");
  // 16 GPUs on 8-GPU nodes: two nodes of eight.
  Cluster cl;
  cl.node.gpus_per_node = 8;
  cl.num_gpus = 16;
  EXPECT_EQ(torchrun_launch_command(c, cl, "train.py", "/p/fsdp_config.json"),
            "torchrun --nnodes 2 --nproc_per_node 8 train.py --fsdp_config /p/fsdp_config.json");
}

TEST(LaunchCommand, DeepspeedLauncher) {
  TrainConfig c = config(2, 1, 1, 16);
  Cluster cl;
  cl.node.gpus_per_node = 8;
  cl.num_gpus = 16;
  std::string cmd = deepspeed_launch_command(c, cl, "train.py", {"--lr", "1e-4"}, "/tmp/a b.json");
  // Two hosts: the launcher reads them from a hostfile, which it needs for --num_nodes > 1.
  EXPECT_EQ(cmd,
            "deepspeed --hostfile hostfile --num_nodes 2 --num_gpus 8 train.py --lr 1e-4 --deepspeed "
            "--deepspeed_config '/tmp/a b.json'");
  // An existing --deepspeed PATH is replaced rather than duplicated.
  cmd = deepspeed_launch_command(c, cl, "run_clm.py", {"--deepspeed", "old.json"}, "new.json");
  EXPECT_EQ(cmd, "deepspeed --hostfile hostfile --num_nodes 2 --num_gpus 8 run_clm.py --deepspeed new.json");
  // One host: no hostfile.
  cl.num_gpus = 8;
  c.dp = 8;
  EXPECT_EQ(deepspeed_launch_command(c, cl, "train.py", {}, "d.json"),
            "deepspeed --num_nodes 1 --num_gpus 8 train.py --deepspeed --deepspeed_config d.json");
  // fp32 on TF32 tensor cores: PyTorch's cuBLAS override in the command's environment, and
  // no 16-bit block in the config; a 16-bit plan ignores the flag.
  c.precision = Precision::fp32;
  c.tf32 = true;
  EXPECT_EQ(deepspeed_launch_command(c, cl, "train.py", {}, "d.json"),
            "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 deepspeed --num_nodes 1 --num_gpus 8 train.py --deepspeed "
            "--deepspeed_config d.json");
  EXPECT_EQ(torchrun_launch_command(c, cl, "train.py", "f.json"),
            "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 torchrun --nnodes 1 --nproc_per_node 8 train.py "
            "--fsdp_config f.json");
  EXPECT_NE(megatron_launch_script(c, cl).find("export TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1\n"),
            std::string::npos);
  c.precision = Precision::bf16;
  EXPECT_EQ(tf32_env(c), "");
}

// A GB200 NVL72 node is one NVLink domain of 72 GPUs but 18 hosts of 4: the launcher
// starts 4 processes on each of 144 / 4 = 36 hosts.
TEST(LaunchCommand, LauncherCountsHostsNotNvlinkDomains) {
  TrainConfig c = config(2, 1, 1, 144);  // dp 144: 144 GPUs
  Cluster cl;
  cl.node.gpus_per_node = 72;
  cl.node.gpus_per_host = 4;
  cl.num_gpus = 144;
  EXPECT_EQ(deepspeed_launch_command(c, cl, "train.py", {}, "d.json"),
            "deepspeed --hostfile hostfile --num_nodes 36 --num_gpus 4 train.py --deepspeed "
            "--deepspeed_config d.json");
  EXPECT_EQ(torchrun_launch_command(c, cl, "train.py", "f.json"),
            "torchrun --nnodes 36 --nproc_per_node 4 train.py --fsdp_config f.json");
}

TEST(CommandRewrite, DsConfigPathAndArgMappings) {
  std::vector<std::string> argv = {"python3", "t.py", "--deepspeed", "--deepspeed_config=a.json",
                                   "--per_device_train_batch_size", "8", "--x"};
  EXPECT_EQ(replace_ds_config_path(argv, "b.json"), 1);  // bare --deepspeed is a flag
  EXPECT_EQ(argv[3], "--deepspeed_config=b.json");
  std::map<std::string, std::string> maps = {
      {"train_micro_batch_size_per_gpu", "--per_device_train_batch_size"},
      {"gradient_accumulation_steps", "--gradient_accumulation_steps"},
      {"checkpointing", "--checkpoint-activations"}};
  apply_arg_mappings(argv, maps,
                     {{"train_micro_batch_size_per_gpu", "3"},
                      {"gradient_accumulation_steps", "2"},
                      {"checkpointing", "true"}});
  EXPECT_EQ(shell_join(argv),
            "python3 t.py --deepspeed --deepspeed_config=b.json --per_device_train_batch_size 3 "
            "--x --checkpoint-activations --gradient_accumulation_steps 2");
  apply_arg_mappings(argv, maps, {{"checkpointing", "false"}});
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--checkpoint-activations"), 0);
}

// What DeepSpeed and torch need to run a plan as priced: ZeRO refuses an optimizer outside
// its tested list unless told; plans differing only in context parallelism get different
// folders; FSDP's only offload moves parameters too (CPUOffload(offload_params=True)); a
// Megatron-LM plan launches pretrain_gpt.py with its flags, one hardware queue under TP.
TEST(DsConfig, RunsAsPriced) {
  TrainConfig c = config(1, 1, 1, 8);
  EXPECT_FALSE(make_ds_config(c, small_gpt()).contains("zero_allow_untested_optimizer"));
  c.optimizer = Optimizer::sgd;
  EXPECT_TRUE(make_ds_config(c, small_gpt())["zero_allow_untested_optimizer"].get<bool>());
  const std::string plain = experiment_name(c);
  c.cp = 2;
  EXPECT_EQ(experiment_name(c).find("_cp2"), plain.size() - std::string("_sgd").size());
  c.framework = Framework::fsdp;
  c.offload = Offload::optimizer;
  EXPECT_TRUE(make_fsdp_config(c)["cpu_offload"]["offload_params"].get<bool>());
  TrainConfig meg = config(1, 1, 1, 2);
  meg.framework = Framework::megatron;
  meg.tp = 4;
  Cluster cl;
  cl.node.gpus_per_node = 8;
  cl.num_gpus = 8;
  const std::string sh = megatron_launch_script(meg, cl);
  EXPECT_NE(sh.find("export CUDA_DEVICE_MAX_CONNECTIONS=1\n"), std::string::npos) << sh;
  EXPECT_NE(sh.find("torchrun --nnodes 1 --nproc_per_node 8 pretrain_gpt.py $(cat"), std::string::npos) << sh;
}

}  // namespace
}  // namespace dsplan
