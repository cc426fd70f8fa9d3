// frontend/option_rows.cpp — see option_rows.hpp.
#include "frontend/option_rows.hpp"

#include <cstdio>

#include "pipeline/first_run_plan.hpp"
#include "workloads/layer.hpp"

namespace dnntune::frontend {

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

static_assert(rules::batch_per_process.highest == workloads::max_batch, "the batch rule is the workload graph's bound");

namespace option_rows {
const OptionRow version{"--version", "Display program version information and exit"};
const OptionRow model{"--model",   "A built-in network (`dnntune models`) or a network JSON file",
                      "NAME|FILE", nullptr,
                      nullptr,     "; several: a list resnet18,resnet50"};
const OptionRow batch{"--batch",
                      "Batch per process (per GPU on a GPU machine)",
                      "",
                      &rules::batch_per_process,
                      &lists::batches,
                      ": one or a list to choose from (8,16,32 or a range 8..64; at most 16)"};
const OptionRow nodes{"--nodes",
                      "Nodes",
                      "",
                      &rules::nodes,
                      &lists::node_counts,
                      ": a count, a list 1,2,4 or a range 1..64 (powers of two; at most 32 counts)"};
const OptionRow processes_per_node{"--ppn",
                                   "Processes (ranks) per node",
                                   "",
                                   &rules::ranks_or_threads,
                                   &lists::processes_per_node,
                                   ": only these (a list: 2,4), when a launcher or a site rule fixes them"};
const OptionRow threads{"--threads",
                        "Threads per process (train: default one per core the process may use; with --launch, the "
                        "node's cores / --ppn)",
                        "N",
                        &rules::ranks_or_threads,
                        &lists::threads_per_process,
                        ": only these (a list 1,2,4; default: the grid)"};
const OptionRow smt{"--smt", "Place threads on SMT siblings too (hyper-threading on; calibrate: only such settings)"};
const OptionRow no_smt{"--no-smt",
                       "One thread per core only (hyper-threading off): calibrate measures, recommend considers "
                       "only such settings"};
const OptionRow parameter_servers{"--ps",
                                  "Use a parameter server with this many server ranks (default: ring all-reduce)", "",
                                  &rules::ranks_or_threads};
const OptionRow asynchronous{"--async",
                             "Asynchronous parameter server: each worker's gradient is applied at once, without a "
                             "barrier (train records the staleness)"};
const OptionRow fusion_megabytes{"--fusion-mb",
                                 "All-reduce fusion threshold in MiB",
                                 "",
                                 &rules::megabytes,
                                 &lists::fusion_megabytes,
                                 "; the thresholds to consider (a list: 16,25,64; at most 16)"};
const OptionRow gpus{"--gpus",
                     "GPUs per node (a GPU --machine only; default 1)",
                     "",
                     &rules::ranks_or_threads,
                     &lists::gpus_per_node,
                     "; the counts to consider (a list: 1,8; default 1, 2, 4 .. all)"};
const OptionRow precision{
    "--precision",
    "A GPU's arithmetic: fp32 (strict: no TF32), tf32 (TF32 tensor cores: PyTorch's default from "
    "compute capability 8.0 on), bf16 or fp16 (autocast; fp16 with dynamic loss scaling); train: "
    "also auto (PyTorch's default), calibrate: each optionally :contiguous or :channels_last. The "
    "CPU runs fp32",
    "NAME",
    nullptr,
    nullptr,
    "; the ones to consider or time (a list fp32,bf16; default: recommend every one the GPU has, "
    "calibrate PyTorch's on this GPU)"};
const OptionRow memory_format{"--memory-format",
                              "A GPU's memory format: contiguous (NCHW, the default) or channels_last (NHWC weights "
                              "and batch, what tensor cores want)",
                              "NAME",
                              nullptr,
                              nullptr,
                              "; the ones to consider (a list; default both)"};
const OptionRow global_batch{"--global-batch",
                             "Keep this global batch fixed, split evenly over all processes (instead of --batch)", "",
                             &rules::global_batch};
const OptionRow epochs{"--epochs", "time-to-train: epochs", "", &rules::epochs};
const OptionRow dataset_images{"--dataset-images", "time-to-train: images per epoch", "", &rules::dataset_images};
const OptionRow verify{"--verify", "Train the K best candidates for real on this node and recommend the measured best",
                       "K", &rules::ranks_or_threads};
const OptionRow fabric{"--fabric,--network", "Inter-node fabric preset"};
const OptionRow link_gbits{"--link-gbps",
                           "Inter-node link line rate in Gb/s (instead of --fabric; 90% of it is usable)", "GBITS",
                           &rules::link_gbits};
const OptionRow link_latency_us{"--link-latency-us", "Inter-node MPI latency in microseconds (with --link-gbps)",
                                "MICROSECONDS", &rules::link_latency_us};
const OptionRow calibration{
    "--calibration", "A calibration made by `dnntune fit` (this machine's, or the reference for --machine)", "FILE"};
const OptionRow machine{"--machine",
                        "A built-in spec machine (`dnntune machines`) or a profile JSON: predict for it with the "
                        "--calibration's efficiencies carried over (lower confidence); probe prints it; fit: the "
                        "machine the measurements were taken on (default: the directory's machine.json)",
                        "NAME|FILE.json",
                        nullptr,
                        &lists::compared_machines,
                        ": the machines to compare (a list skylake-8180,v100); the first is the baseline"};
const OptionRow backend{"--backend",
                        "The framework you train with: torch (PyTorch) or onednn (TensorFlow/MXNet-style kernels); "
                        "calibrate and fit: also torch-cuda (a CUDA libtorch's GPU)",
                        "NAME",
                        nullptr,
                        nullptr,
                        "; the ones to calibrate (a list onednn,torch, or all)"};
const OptionRow calibration_budget{
    "--calibration-budget",
    "Seconds of the whole first run when this machine's calibration must be made first (default: " +
        number_text(pipeline::default_first_run_seconds) +
        "), the probe included: it measures every distinct layer, trains the network at the base setting, under "
        "each allocator variant and at the settings that separate the top candidates, then more layer passes with "
        "what is left, all shares scaled from this budget; it says at the start what it will measure and about how "
        "long",
    "SECONDS", &rules::first_run_budget};
const OptionRow topology{"--topology",
                         "The node described by this hwloc XML (lstopo --of xml FILE.xml; synthetic: lstopo -i "
                         "\"pack:2 core:28 pu:2\" --of xml): probe describes it, recommend tunes for it (with "
                         "--calibration of a node of that CPU)",
                         "FILE.xml"};
const OptionRow json{"--json", "Print JSON instead of the text report (calibrate: with --report)"};
const OptionRow output{"-o,--output",
                       "Write to FILE instead of standard output (fit: the calibration, for predict, scale and "
                       "recommend, its report still printed; calibrate: the directory for machine.json and "
                       "layers.jsonl, with --report the file for the summary)",
                       "FILE"};
const OptionRow time_limit{
    "--time",
    "SLURM --time: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (default: the predicted time "
    "to train --epochs, +25% and 10 minutes, within the partition's time limit as sinfo says it, else 24 "
    "hours; a longer training is requeued); calibrate --slurm: each job's",
    "[D-]HH:MM:SS"};
const OptionRow partition{"--partition", "SLURM partition (calibrate --slurm: the one whose nodes to calibrate)",
                          "NAME"};
const OptionRow account{"--account", "SLURM account to charge", "NAME"};

// The launch lines and job scripts (recommend) and the ranks train --launch starts.
const OptionRow allocator{
    "--allocator",
    "The memory allocator every rank loads: default, glibc-tuned (freed memory kept), jemalloc "
    "or tcmalloc (LD_PRELOAD of the installed library; `dnntune probe` lists what is installed); "
    "recommend's, predict's and scale's default: the one recommended (predict and scale give the setup's figure "
    "under it). calibrate times the micro-runs under it (records "
    "carry it, fits use the default's only; not with --anchor: anchors train under each allocator "
    "themselves)",
    "NAME"};
const OptionRow openmp{"--openmp",
                       "The OpenMP runtime of your framework, for its variables: gnu (libgomp: Debian's and pip's "
                       "PyTorch), intel (libiomp5) or auto (the one this dnntune's libtorch loaded)"};

// Real training (train, validate) and measuring (calibrate).
const OptionRow iterations{"--iters", "Measured training steps (per run)", "", &rules::steps};
const OptionRow warmup{"--warmup", "Training steps before the measured ones", "", &rules::warmup_steps};
const OptionRow record{"--record",
                       "Append the training runs' timings, as each ends, as measurement records (kind network) to this "
                       "JSON Lines file",
                       "FILE"};
const OptionRow resume{
    "--resume",
    "Go on where an interrupted run stopped: calibrate measures what DIR's plan has not recorded yet; "
    "validate reads back the runs the --record FILE holds (same machine, setting, batch and steps) "
    "instead of training them again"};
const OptionRow quick{"--quick",
                      "A quick run: probe: topology and binding only, nothing measured; validate: resnet18 at batch 8 "
                      "only, 3 measured steps"};
const OptionRow dry_run{"--dry-run",
                        "Print what would run and stop, creating and measuring nothing: calibrate its plan (estimated "
                        "from DIR/machine.json when it exists, else default speeds), train --launch the mpirun line"};

// train
// another meaning: train's batch is checked by the trainer (check_train_options: the message its
// worker ranks give too), so CLI11 takes any integer here.
const OptionRow trainer_batch{"--batch", "Images per process and step", "", &rules::any_integer};
const OptionRow time_limit_seconds{"--time-limit",
                                   "Start no further timed step that would end past SECONDS from the first step on "
                                   "(judged by the last step's length; at least one timed step runs, after all "
                                   "--warmup steps): for a budget, when a setting may be far slower than expected. "
                                   "Not with --ps-servers",
                                   "SECONDS", &rules::seconds};
const OptionRow learning_rate{"--lr", "SGD learning rate", "", &rules::learning_rate};
const OptionRow momentum{"--momentum", "SGD momentum", "", &rules::momentum};
const OptionRow bucket_megabytes{
    "--bucket-mb", "All-reduce: gradient fusion bucket size in MiB (PyTorch DDP's default)", "", &rules::megabytes};
const OptionRow ps_servers{"--ps-servers", "Train through S parameter servers (the last S ranks) instead of all-reduce",
                           "S", &rules::parameter_servers};
const OptionRow device{"--device", "auto (CUDA when libtorch has a GPU), cpu or cuda"};
const OptionRow seed{"--seed", "Seed of the weights and of each rank's synthetic batch", "", &rules::seed};
const OptionRow module_times{"--module-times",
                             "Also time each layer inside the step (forward, and backward through gradient hooks; CPU "
                             "only); --record appends them as kind module records"};
const OptionRow runner{
    "--runner",
    "Who trains: dnntune (the C++ trainer: the network as dnntune's zoo builds it, in libtorch) or "
    "python (torchvision's network trained by PyTorch from Python, DistributedDataParallel over gloo "
    "for several ranks: what users run; $DNNTUNE_PYTHON, else /usr/bin/python3)"};
const OptionRow launch{"--launch",
                       "Compose and run the mpirun line for --ppn ranks per node with --threads cores each (printed on "
                       "standard error)"};
const OptionRow hostfile{"--hostfile", "With --launch: mpirun's host file", "FILE"};

// calibrate
const OptionRow layer{
    "--layer", "Also (or only) calibrate this layer descriptor", "DESCRIPTOR", nullptr, nullptr, "; several: a list"};
const OptionRow pass{
    "--pass", "Only this pass: forward, backward_data, backward_weights, forward_backward (whole networks)",
    "PASS",   nullptr,
    nullptr,  "; several: a list forward,backward_data"};
const OptionRow processes{"--processes",
                          "Numbers of co-running processes",
                          "N",
                          &rules::ranks_or_threads,
                          &lists::co_running_processes,
                          ": only these (a list 1,2; default: the grid)"};
const OptionRow budget{"--budget",
                       "Seconds the whole calibration may take; a grid that does not fit is sampled (see README)",
                       "SECONDS", &rules::calibration_budget};
const OptionRow comm{
    "--comm",
    "Calibrate communication instead, under a launcher (mpirun -np 2 dnntune calibrate --comm -o DIR): "
    "all-reduce and point-to-point over message sizes, fitted to latency + size / bandwidth; records go "
    "to DIR/comm.jsonl"};
const OptionRow comm_max_megabytes{"--comm-max-mb", "With --comm: the largest message, in MiB", "MIB",
                                   &rules::megabytes};
const OptionRow comm_budget{"--comm-budget",
                            "With --comm: seconds for all sweeps together; larger sizes that would not fit are skipped",
                            "SECONDS", &rules::seconds};
const OptionRow anchor{
    "--anchor",
    "Also train each --model at each --batch for real for a few steps in the base setting (records in "
    "DIR/network.jsonl): the fit checks the sum of the layers against it"};
const OptionRow anchor_settings{"--anchor-settings",
                                "Also anchor at these settings, PROCESSESxTHREADS comma-separated (1x1,2x1; SMT off), "
                                "under the default allocator; implies --anchor",
                                "LIST"};
const OptionRow allocator_budget{
    "--allocator-budget",
    "With --anchor: seconds for the anchors under the other allocator variants (glibc-tuned, "
    "jemalloc, tcmalloc); those that do not fit are skipped, and said",
    "SECONDS", &rules::seconds};
const OptionRow repeat_budget{"--repeat-budget",
                              "With --anchor: seconds for the base anchor trained again, each run a process of its "
                              "own: once more by the C++ trainer, then once by PyTorch from Python (torchvision's "
                              "network, what users run), as a first run does with what its stages leave; the fit "
                              "pools the runs. A run that does not fit is skipped, and said (default: none)",
                              "SECONDS", &rules::seconds};
const OptionRow report{
    "--report",
    "Summarise the calibration in DIR: GFLOP/s per layer class against the FMA peak, thread scaling, "
    "contention, sum of layers against whole networks",
    "DIR"};
const OptionRow modules{
    "--modules",
    "With --report: per anchor run and pass, the sum of the isolated micro-runs, the sum of the "
    "layers timed inside the real step, the step, their ratios, and the modules that disagree most"};
const OptionRow slurm{"--slurm",
                      "Calibrate a compute node of --partition through SLURM: one exclusive node probes, measures and "
                      "fits (and two nodes sweep all-reduce when the partition has them); results go to the cache "
                      "(DNNTUNE_CACHE_DIR, on a shared file system), for `recommend --partition P`"};
const OptionRow no_wait{"--no-wait", "--slurm: submit and return; the output says how to pick the result up"};
// The modes the SLURM jobs and the calibration's own worker processes run (hidden: not for users).
const OptionRow slurm_node_job{"--slurm-node-job", ""};
const OptionRow slurm_refit_fabric{"--slurm-refit-fabric", ""};
const OptionRow worker{"--worker", ""};
const OptionRow keep_loading{"--keep-loading", ""};

// fit
const OptionRow bootstrap{"--bootstrap", "Bootstrap replicates behind the uncertainty bands", "",
                          &rules::bootstrap_replicates};

// models show
const OptionRow layers{"--layers", "Also print every layer (the JSON always has them)"};

// recommend
const OptionRow objective{"--objective", "throughput, time-to-train or images-per-node"};
const OptionRow consider_parameter_server{"--consider-ps", "Also consider parameter-server schemes"};
const OptionRow format{"--format", "text, json, slurm (a batch script), mpirun or torchrun (launch lines)"};
const OptionRow explain{"--explain", "Print the whole ranking and every excluded configuration"};
const OptionRow max_minutes{"--max-minutes",
                            "Refuse a search estimated (on this machine, before it starts) to take longer: the "
                            "product of the lists (--nodes, --batch, --fusion-mb) and the network's size",
                            "MINUTES", &rules::search_minutes};

// jobs
const OptionRow jobs_file{"--jobs-file",
                          "The jobs file to list (default: $DNNTUNE_JOB_RECORD, else this machine's in the cache, "
                          "CACHE/jobs/FINGERPRINT.jsonl)",
                          "FILE"};

// scale
const OptionRow plot{"--plot", "Also draw the scaling curve as an SVG file", "FILE.svg"};
}  // namespace option_rows

std::string long_name(const OptionRow& row) {
  const std::string names = row.names;
  const auto comma = names.find(',');
  if (comma == std::string::npos) return names;
  const std::string second = names.substr(comma + 1);
  return second.rfind("--", 0) == 0 && names.rfind("--", 0) != 0 ? second : names.substr(0, comma);
}

std::string long_names(std::initializer_list<const OptionRow*> rows) {
  std::string names;
  std::size_t index = 0;
  for (const OptionRow* row : rows) {
    if (index > 0) names += index + 1 == rows.size() ? " and " : ", ";
    names += long_name(*row);
    ++index;
  }
  return names;
}

}  // namespace dnntune::frontend
