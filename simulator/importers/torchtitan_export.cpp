// A plan → the torchtitan job TOML that runs it (`stepsim export torchtitan`): the inverse of
// torchtitan_import.cpp. Every key written is one the importer reads (torchtitan_reads_key) or a
// no-cost placeholder; the model is the importer's flavour whose shape is the plan's (each tried
// through the importer itself); degrees named through the alias table the importer maps them with.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "simulator/config/key_aliases.hpp"
#include "simulator/importers/export_text.hpp"
#include "simulator/importers/exporters.hpp"
#include "simulator/importers/importers.hpp"
#include "workloads/layers/framework_split.hpp"
#include "simulator/importers/plan_fields.hpp"
#include "simulator/io/json_text.hpp"
#include "vocabulary/plan_names.hpp"
#include "workloads/layers/layer_partition.hpp"

namespace stepsim::importers {
namespace {

std::string quoted(const std::string& s) { return io::json_text(nlohmann::json(s)); }  // a TOML basic string

class TitanExport {
 public:
  TitanExport(const Plan& plan, const ExportOptions& options) : p_(plan), opt_(options) {}

  std::string run() {
    refuse_by_name();
    model();
    parallelism();
    recompute();
    precision();
    software();
    return text();
  }

 private:
  // section -> (key, TOML value) in the order written
  void put(const std::string& section, const std::string& key, const std::string& value) {
    if (!torchtitan_reads_key(section + "." + key))
      throw std::logic_error(section + "." + key + " is not a key the torchtitan importer reads");
    put_plain(section, key, value);
  }
  void put_plain(const std::string& section, const std::string& key, const std::string& value) {
    auto it = std::find_if(sections_.begin(), sections_.end(), [&](const auto& s) { return s.first == section; });
    if (it == sections_.end()) {
      sections_.push_back({section, {}});
      it = sections_.end() - 1;
    }
    it->second.emplace_back(key, value);
  }
  // A degree through the alias table ("tensor_parallel_degree" is parallel.tp).
  void degree(const std::string& name, int64_t value) {
    const KeyAlias* a = find_alias(name);
    if (a == nullptr || a->tool != "torchtitan")
      throw std::logic_error(name + " has no torchtitan entry in key_aliases.cpp");
    put("parallelism", name, std::to_string(value));
  }
  [[noreturn]] void refuse(const std::string& key, const std::string& value, const std::string& why) const {
    refuse_export(p_, key, value, why);
  }

  void refuse_by_name() {
    if (p_.workload.kind != WorkloadKind::Model)
      refuse("workload.kind", "synthetic", "an abstract pipeline has no model for torchtitan to train; export a model plan");
    const std::string profile = p_.software.profile;
    if (profile != "torchtitan" && profile != "torchtitan-compile")
      refuse("software.profile", profile, "not a torchtitan release; use torchtitan or torchtitan-compile (or export megatron)");
    if (p_.train.adam_moments_dtype != MomentDtype::FP32)
      refuse("train.adam_moments_dtype", "bf16", "torchtitan's AdamW keeps both moments in the parameters' FP32; set "
                                                 "train.adam_moments_dtype=fp32");
    if (p_.model.sliding_window > 0)
      refuse("model.sliding_window", std::to_string(p_.model.sliding_window),
             "torchtitan's model flavors stepsim exports run full causal attention; set model.sliding_window=0");
    if (p_.train.precision == Precision::FP8 && p_.train.low_precision == LowPrecision::Nvfp4)
      refuse("train.precision", "nvfp4", "torchtitan's converters run float8 and mx (MXFP8); use fp8, mxfp8 or bf16");
    if (p_.train.fp8_recipe_applies() && p_.train.fp8_recipe == Fp8Recipe::Delayed)
      refuse("train.fp8_recipe", "delayed", "torchao's float8 scales tensorwise or rowwise, not from an amax history; "
                                            "use tensorwise or blockwise");
    if (p_.train.runs_fp8_attention())
      refuse("train.fp8_attention", "true", "torchtitan runs its attention (SDPA / FlexAttention) in BF16; set "
                                            "train.fp8_attention=false");
    if (p_.software.attention_kernel != AttentionKernel::Flash2)
      refuse("software.attention_kernel", to_string(p_.software.attention_kernel),
             "a torchtitan job cannot choose SDPA's kernel: PyTorch runs FlashAttention-2 unless the job's environment "
             "sets TORCH_CUDNN_SDPA_PREFERRED=1 (or its cuDNN is newer than 9.15), which the TOML does not hold; set "
             "software.attention_kernel=flash2, the kernel the exported job runs");
    if (p_.parallel.fp8_param_gather && !(p_.train.fp8_recipe_applies() && p_.train.fp8_recipe == Fp8Recipe::Tensorwise))
      refuse("parallel.fp8_param_gather", "true", "torchao gathers FP8 weights only with tensorwise FP8 scaling; set "
                                                  "parallel.fp8_param_gather=false or train.fp8_recipe=tensorwise");
    if (p_.parallel.cpu_offload_layers > 0)
      refuse("parallel.cpu_offload_layers", std::to_string(p_.parallel.cpu_offload_layers),
             "torchtitan offloads no layer's activations to host memory; set parallel.cpu_offload_layers=0");
    // In the plan's terms, not the job's (the importer's refusal names a TOML key of a file not written).
    if (p_.parallel.tp_comm_overlap && profile != "torchtitan-compile")
      refuse("parallel.tp_comm_overlap", "true",
             "torchtitan runs async tensor parallelism (enable_async_tensor_parallel) only with torch.compile of the "
             "model; set software.profile=torchtitan-compile, or parallel.tp_comm_overlap=false");
  }

  // The flavour whose shape is the plan's: each of the importer's flavours imported in a minimal
  // job and compared key by key (the model.* keys of launch_fields).
  void model() {
    const auto model_fields = [](const Plan& plan) {
      std::vector<PlanField> out;
      for (auto& f : launch_fields(plan))
        if (f.key.rfind("model.", 0) == 0) out.push_back(std::move(f));
      return out;
    };
    const auto want = model_fields(p_);
    std::string names, nearest;
    size_t fewest = SIZE_MAX;
    PlanField ours, theirs;  // the first difference from the nearest flavour
    for (const auto& [name, flavour] : torchtitan_flavours()) {
      names += (names.empty() ? "" : ", ") + name + " " + flavour;
      const std::string toml = "[model]\nname = " + quoted(name) + "\nflavor = " + quoted(flavour) +
                               "\n[training]\nlocal_batch_size = 1\nseq_len = " + std::to_string(p_.train.seq_len) +
                               "\n[activation_checkpoint]\nmode = \"none\"\n";
      ImportOptions o;
      o.gpus = 1;
      try {
        const ImportedPlan imported = import_torchtitan(toml, "flavour", o);
        const Plan plan = load_plan_from_string(plan_yaml(imported, ""), "flavour");
        const auto have = model_fields(plan);
        if (have == want) {
          put("model", "name", quoted(name));
          put("model", "flavor", quoted(flavour));
          flavour_moe_ = plan.model.is_moe();
          return;
        }
        size_t differ = 0;
        for (size_t k = 0; k < want.size() && k < have.size(); ++k) differ += want[k] == have[k] ? 0 : 1;
        if (differ < fewest && want.size() == have.size())
          for (size_t k = 0; k < want.size(); ++k)
            if (!(want[k] == have[k])) {
              fewest = differ, nearest = name + " " + flavour, ours = want[k], theirs = have[k];
              break;
            }
      } catch (const ConfigError&) {
      }
    }
    const auto shown = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : io::json_text(v); };
    if (nearest.empty())
      refuse("model.name", p_.model.name,
             "no torchtitan flavour has this model's shape; torchtitan names its models by flavour (" + names +
                 "): plan one of those, or export megatron");
    refuse(ours.key, shown(ours.value),
           "no torchtitan flavour has this model's shape (the nearest, " + nearest + ", has " + ours.key + " = " +
               shown(theirs.value) + (fewest > 1 ? " and " + std::to_string(fewest - 1) + " more key(s) apart" : "") +
               "); torchtitan names its models by flavour (" + names + "): plan one of those, or export megatron");
  }

  void parallelism() {
    const ParallelConfig& x = p_.parallel;
    const int64_t dp = p_.dp(), global = p_.train.global_batch;
    const std::string schedule = to_string(x.schedule);
    int64_t rep = 1, shard = dp;
    if (schedule == "fsdp" && x.fsdp_shard_size > 0 && x.fsdp_shard_size != dp * x.cp) {
      if (x.fsdp_shard_size % x.cp != 0 || dp % (x.fsdp_shard_size / x.cp) != 0)
        refuse("parallel.fsdp_shard_size", std::to_string(x.fsdp_shard_size),
               "torchtitan's HSDP shards over data_parallel_shard_degree x CP GPUs, a divisor of the data-parallel "
               "size " + std::to_string(dp) + " times CP " + std::to_string(x.cp) + "; use such a size");
      shard = x.fsdp_shard_size / x.cp, rep = dp / shard;
    }
    degree("data_parallel_replicate_degree", rep);
    degree("data_parallel_shard_degree", shard);
    degree("tensor_parallel_degree", x.tp);
    degree("pipeline_parallel_degree", x.pp);
    degree("context_parallel_degree", x.cp);
    if (x.cp > 1) {
      if (x.cp_comm_type == CpCommType::A2a)
        refuse("parallel.cp_comm_type", "a2a", "torchtitan's context parallelism passes K/V around the ring; set "
                                              "parallel.cp_comm_type=allgather or p2p");
      put("parallelism", "context_parallel_rotate_method",
          x.cp_comm_type == CpCommType::P2p ? "\"alltoall\"" : "\"allgather\"");
    }
    if (flavour_moe_ || x.ep != 1) degree("expert_parallel_degree", x.ep);
    if (flavour_moe_) {
      put("parallelism", "expert_tensor_parallel_degree", std::to_string(x.expert_tp));
      if (x.moe_dispatcher == MoeDispatcher::AllGather)
        refuse("parallel.moe_dispatcher", "allgather", "torchtitan dispatches tokens with all-to-alls (standard) or DeepEP; "
                                                       "set parallel.moe_dispatcher=alltoall or deepep");
      put("parallelism", "expert_parallel_comm_backend",
          x.moe_dispatcher == MoeDispatcher::DeepEP ? "\"" + std::string(to_string(x.moe_flex_backend)) + "\"" : "\"standard\"");
    }
    if (global % dp != 0)
      refuse("train.global_batch", std::to_string(global),
             "torchtitan gives every data-parallel rank local_batch_size sequences, and " + std::to_string(global) +
                 " do not split over " + std::to_string(dp) + "; use a multiple of " + std::to_string(dp));
    const int64_t local = global / dp;
    if (x.pp == 1) {
      // No pipeline: one forward per microbatch of local_batch_size sequences, gradient accumulation
      // over the global batch.
      if (local % x.microbatches != 0)
        refuse("parallel.microbatches", std::to_string(x.microbatches),
               "does not divide the " + std::to_string(local) + " sequences of a data-parallel rank; set parallel.micro_batch_size");
      put("training", "local_batch_size", std::to_string(local / x.microbatches));
      if (x.microbatches > 1) put("training", "global_batch_size", std::to_string(global));
    } else {
      put("training", "local_batch_size", std::to_string(local));
      pipeline(local);
    }
    put("training", "seq_len", std::to_string(p_.train.seq_len));
    if (x.tp_comm_overlap) put("parallelism", "enable_async_tensor_parallel", "true");
  }

  void pipeline(int64_t local) {
    const ParallelConfig& x = p_.parallel;
    const std::string s = to_string(x.schedule);
    static const std::map<std::string, std::pair<const char*, bool>> names = {
        {"1f1b", {"1F1B", false}}, {"gpipe", {"GPipe", false}}, {"interleaved", {"Interleaved1F1B", true}},
        {"zb-v", {"ZBVZeroBubble", true}}, {"dualpipev", {"DualPipeV", true}}};
    const auto it = names.find(s);
    if (it == names.end())
      refuse("schedule", s, "torchtitan's pipeline schedules are 1F1B, GPipe, Interleaved1F1B, ZBVZeroBubble and "
                            "DualPipeV; use schedule=1f1b, gpipe, interleaved, zb-v or dualpipev");
    put("parallelism", "pipeline_parallel_schedule", quoted(it->second.first));
    if (local % x.microbatches != 0)
      refuse("parallel.microbatches", std::to_string(x.microbatches),
             "does not divide the " + std::to_string(local) + " sequences of a data-parallel rank (local_batch_size)");
    put("parallelism", "pipeline_parallel_microbatch_size", std::to_string(local / x.microbatches));
    // The layers of each stage: torchtitan's split with the embedding and the head weighed as
    // first / last_stage_less_layers layers (1 each by default).
    const bool multi = it->second.second;
    const int64_t per_rank = multi ? (s == "interleaved" && x.virtual_stages > 0 ? x.virtual_stages : 2) : 1;
    const int64_t stages = x.pp * per_rank, layers = p_.model.num_hidden_layers;
    std::vector<int64_t> want;
    for (const auto& st : partition_layers(p_)) want.push_back(st.count);
    std::vector<std::pair<int64_t, int64_t>> tries = {{1, 1}};
    for (int64_t f = 0; f <= 16; ++f)
      for (int64_t l = 0; l <= 16; ++l) tries.emplace_back(f, l);
    for (const auto& [f, l] : tries) {
      std::vector<int64_t> split;
      try {
        split = torchtitan_split(stages, layers, f, l);
      } catch (const SplitError&) {
        continue;
      }
      if (split != want) continue;
      // Without pipeline_parallel_layers_per_stage torchtitan runs 1 stage per rank (2 for multi-stage
      // schedules); other counts need the layers per stage that give them.
      if (per_rank != (multi ? 2 : 1)) {
        const int64_t lps = (layers + f + l + stages - 1) / stages;
        if ((layers + f + l + lps - 1) / lps != stages) continue;
        put("parallelism", "pipeline_parallel_layers_per_stage", std::to_string(lps));
      }
      if (f != 1) put("parallelism", "pipeline_parallel_first_stage_less_layers", std::to_string(f));
      if (l != 1) put("parallelism", "pipeline_parallel_last_stage_less_layers", std::to_string(l));
      return;
    }
    std::string counts;
    for (const auto n : want) counts += (counts.empty() ? "" : " ") + std::to_string(n);
    refuse("parallel.stage_layers", "[" + counts + "]",
           "torchtitan splits the layers evenly over its stages, the embedding and head weighed as first / "
           "last_stage_less_layers layers, and no such weights give this split; give parallel.stage_layers torchtitan's "
           "split or leave it out");
  }

  void recompute() {
    const Recompute r = p_.parallel.recompute;
    if (r == Recompute::None || r == Recompute::Full) {
      put("activation_checkpoint", "mode", r == Recompute::None ? "\"none\"" : "\"full\"");
      return;
    }
    if (r == Recompute::TorchtitanOp) {
      put("activation_checkpoint", "mode", "\"selective\"");
      put("activation_checkpoint", "selective_ac_option", "\"op\"");
      return;
    }
    refuse("parallel.recompute", to_string(r),
           "torchtitan checkpoints whole layers (full), per op (torchtitan-op) or nothing; use none, full or torchtitan-op");
  }

  void precision() {
    put("training", "mixed_precision_param", "\"bfloat16\"");
    if (p_.parallel.grad_reduce_dtype == ReduceDtype::BF16) put("training", "mixed_precision_reduce", "\"bfloat16\"");
    put("optimizer", "name", "\"AdamW\"");
    if (p_.train.precision != Precision::FP8) return;
    const bool mx = p_.train.low_precision == LowPrecision::Mxfp8;
    std::string converters = mx ? "\"quantize.linear.mx\"" : "\"quantize.linear.float8\"";
    if (flavour_moe_) converters += mx ? ", \"quantize.grouped_mm.mx\"" : ", \"quantize.grouped_mm.float8\"";
    put("model", "converters", "[" + converters + "]");
    if (!mx)
      put("quantize.linear.float8", "recipe_name", p_.train.fp8_recipe == Fp8Recipe::Tensorwise ? "\"tensorwise\"" : "\"rowwise\"");
    if (p_.parallel.fp8_param_gather) put("quantize.linear.float8", "enable_fsdp_float8_all_gather", "true");
  }

  void software() {
    if (p_.software.profile == "torchtitan-compile") {
      put("compile", "enable", "true");
      put("compile", "components", "[\"model\", \"loss\"]");
    }
  }

  std::string text() const {
    const Plan& p = p_;
    std::string out;
    const auto comment = [&](const std::string& line) { out += "# " + io::printable(line) + "\n"; };
    std::string from = io::printable(p.source);
    for (const auto& o : p.overrides) from += " --set " + io::printable(o);
    comment("torchtitan job of the stepsim plan " + from + ", written by `stepsim export torchtitan`.");
    comment("Run it with torchrun --nnodes " + std::to_string(p.cluster.nodes) + " --nproc_per_node " +
            std::to_string(p.cluster.gpus_per_node) + " (" + std::to_string(p.gpus()) + " " + p.hardware.name + " GPUs).");
    comment("Every key that changes the step's cost is the plan's; the optimizer's rates and the data are placeholders.");
    std::string back = "stepsim import torchtitan THIS_FILE --gpus " + std::to_string(p.gpus()) + " --gpus-per-node " +
                       std::to_string(p.cluster.gpus_per_node);
    if (!opt_.preset.empty()) back += " --hardware " + opt_.preset;
    for (const auto& m : opt_.machine_sets) back += " --set " + m;
    comment("Read back with: " + back + (opt_.preset.empty() ? " (no GPU preset holds this plan's hardware keys)" : ""));
    out += "\n[job]\ndescription = " + quoted(io::printable(p.model.name)) + "\n";
    for (const auto& [section, keys] : sections_) {
      out += "\n[" + section + "]\n";
      for (const auto& [k, v] : keys) out += k + " = " + v + "\n";
      if (section == "optimizer") out += "lr = 3e-4\n";
      if (section == "training") out += "steps = 100\ndataset = \"c4\"\n";
    }
    return out;
  }

  const Plan& p_;
  const ExportOptions& opt_;
  bool flavour_moe_ = false;
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> sections_;
};

}  // namespace

std::string export_torchtitan(const Plan& plan, const ExportOptions& options) { return TitanExport(plan, options).run(); }

}  // namespace stepsim::importers
