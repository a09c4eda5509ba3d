// `orrery --print-config` and `orrery --config`: for the bundled example, ASTRA-sim's compat
// cases (one with a custom collective), a machine profile whose system file names an NCCL model
// and a GPU model, and a custom topology, the printed configuration runs to the same stdout byte
// for byte as the original flags, and printing it again gives the same document (a fixed point).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/test_data.h"
#include "config/test_files.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;

// Runs orrery with `args` in directory `dir` under a 120 s timeout.
CommandOutcome Orrery(const std::string& dir, const std::string& args) {
  const std::string binary = fs::absolute("orrery").string();
  return RunCommand("cd '" + dir + "' && timeout 120 '" + binary + "' " + args);
}

// Runs `args`, prints its configuration, runs the print, prints the print; returns the first
// print for further checks.
std::string ExpectRoundTrip(const std::string& dir, const std::string& args,
                            const std::string& name) {
  const CommandOutcome run = Orrery(dir, args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("sys[0] finished"), std::string::npos) << run.out;
  const CommandOutcome print = Orrery(dir, args + " --print-config");
  EXPECT_EQ(print.exit_code, 0) << print.err;
  EXPECT_EQ(print.out.find("sys[0] finished"), std::string::npos) << "--print-config ran it";
  const std::string printed = fs::absolute(::testing::TempDir() + "/" + name + ".yaml").string();
  std::ofstream(printed, std::ios::binary) << print.out;
  const CommandOutcome rerun = Orrery(dir, "--config=" + printed);
  EXPECT_EQ(rerun.exit_code, 0) << rerun.err << "\nprinted:\n" << print.out;
  EXPECT_EQ(rerun.out, run.out) << "the printed configuration ran differently:\n" << print.out;
  const CommandOutcome again = Orrery(dir, "--config=" + printed + " --print-config");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, print.out) << "printing the printed configuration changed it";
  return print.out;
}

const char* kDpStep =
    "--workload-configuration=examples/dp_step/dp_step "
    "--system-configuration=examples/dp_step/system.json "
    "--network-configuration=examples/dp_step/network.yml ";

TEST(PrintConfig, BundledExampleOnEveryBackend) {
  const std::string dir = fs::current_path().string();
  for (const char* backend : {"analytical-aware", "analytical-unaware", "packet"}) {
    const std::string printed = ExpectRoundTrip(
        dir,
        std::string(kDpStep) +
            "--remote-memory-configuration=examples/dp_step/memory.json --network-backend=" +
            backend,
        std::string("dp_step_") + backend);
    EXPECT_NE(printed.find("network-backend: " + std::string(backend)), std::string::npos);
    EXPECT_NE(printed.find("memory:"), std::string::npos) << printed;
    // System keys the file leaves out are printed with their defaults.
    EXPECT_EQ(ReadWholeFile("examples/dp_step/system.json").find("group-collectives"),
              std::string::npos);
    EXPECT_NE(printed.find("\n  group-collectives: flat\n"), std::string::npos) << printed;
    // So are the network's and the memory's.
    for (const char* line :
         {"\n  lanes: [1, 1]\n", "\n  packet-mtu: 4096\n", "\n  remote-mem-latency: 0\n"}) {
      EXPECT_NE(printed.find(line), std::string::npos) << line << " in\n" << printed;
    }
  }
}

TEST(PrintConfig, FlagsAwayFromTheirDefaults) {
  const std::string printed = ExpectRoundTrip(
      fs::current_path().string(),
      std::string(kDpStep) +
          "--num-queues-per-dim=2 --rendezvous-protocol --compute-scale=0.5 --comm-scale=2 "
          "--npu-compute-scale=3:1.5,4-5:0.8 --injection-scale=2",
      "knobs");
  for (const char* line : {"num-queues-per-dim: [2]", "rendezvous-protocol: true",
                           "compute-scale: 0.5", "npu-compute-scale: 3:1.5,4-5:0.8"}) {
    EXPECT_NE(printed.find(line), std::string::npos) << line << " in\n" << printed;
  }
}

TEST(PrintConfig, CompatCases) {
  const std::string compat = SharedDir("compat");
  ASSERT_FALSE(compat.empty()) << SharedDirMissing("compat");
  const std::string ex = compat + "/astra-sim/examples/";
  ExpectRoundTrip(fs::current_path().string(),
                  "--workload-configuration=" + ex +
                      "workload/microbenchmarks/all_reduce/8npus_1MB/all_reduce "
                      "--system-configuration=" +
                      ex + "system/native_collectives/HGX-H100-validated.json " +
                      "--network-configuration=" + ex +
                      "network/analytical/HGX-H100-validated.yml --network-backend=packet",
                  "hgx_h100");
  // The custom collective names its ETs relative to ASTRA-sim's root, as in the golden case.
  const std::string dir = ::testing::TempDir() + "/astra_root";
  fs::create_directories(dir);
  std::error_code ec;
  fs::create_directory_symlink(compat + "/astra-sim/examples", dir + "/examples", ec);
  ExpectRoundTrip(dir,
                  "--workload-configuration=examples/workload/microbenchmarks/all_reduce/"
                  "8npus_1MB/all_reduce "
                  "--system-configuration=examples/system/custom_collectives/"
                  "custom_collective.json "
                  "--network-configuration=examples/network/analytical/Ring_8npus.yml",
                  "custom_collective");
}

// The profile's system file names nccl.yaml and gpu.yaml relative to itself.
TEST(PrintConfig, MachineProfileWithAnNcclModel) {
  const std::string printed =
      ExpectRoundTrip(fs::current_path().string(),
                      "--workload-configuration=examples/dp_step/dp_step --replicate-trace "
                      "--system-configuration=configs/machines/dgx-a100-hdr/system.yaml "
                      "--network-configuration=configs/machines/dgx-a100-hdr/network.yaml",
                      "dgx_a100_hdr");
  EXPECT_NE(printed.find("\nnccl-model:\n  algorithms:"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("  nccl-model:"), std::string::npos) << "the system key stays";
  // The model's entries with their defaults: LL has no step latencies in the file.
  EXPECT_NE(printed.find("    LL:\n      latency-us: 5.015\n      efficiency: 0.0191\n"
                         "      step-latency-us: 0\n      network-step-latency-us: 0\n"),
            std::string::npos)
      << printed;
  // --nccl-model and --nccl-algorithm on the command line.
  ExpectRoundTrip(fs::current_path().string(),
                  std::string(kDpStep) +
                      "--nccl-model=configs/machines/hgx-h100/nccl.yaml --nccl-algorithm=ring",
                  "nccl_flag");
}

// A dgx machine: its defaults filled in (gpus-per-node, pods), not the keys it would refuse
// (cores with one pod, nics-per-node with a NIC per GPU).
TEST(PrintConfig, DgxMachineWithItsDefaults) {
  const std::string dir = ::testing::TempDir() + "/dgx";
  fs::create_directories(dir);
  std::ofstream(dir + "/network.yml") << "machine: dgx\nnodes: 2\nnvswitch-bandwidth: 450\n"
                                         "nvswitch-latency: 250\nnic-bandwidth: 400\n"
                                         "fabric-latency: 1000\nleaf-radix: 4\nspines: 2\n";
  const std::string runfiles = fs::current_path().string();
  const std::string printed = ExpectRoundTrip(
      dir,
      "--workload-configuration=" + runfiles +
          "/examples/dp_step/dp_step --replicate-trace --system-configuration=" + runfiles +
          "/configs/machines/dgx-a100-hdr/system.yaml --network-configuration=network.yml",
      "dgx");
  for (const char* line : {"\n  gpus-per-node: 8\n", "\n  nic-per-gpu: true\n",
                           "\n  oversubscription: 1\n", "\n  pods: 1\n"}) {
    EXPECT_NE(printed.find(line), std::string::npos) << line << " in\n" << printed;
  }
  for (const char* key : {"cores:", "nics-per-node:", "lanes:", "slow-link-bandwidth-scale:"}) {
    EXPECT_EQ(printed.find(key), std::string::npos) << key << " in\n" << printed;
  }
}

TEST(PrintConfig, CustomTopology) {
  const std::string dir = ::testing::TempDir() + "/custom_topology";
  fs::create_directories(dir + "/net");
  std::ofstream(dir + "/net/ring.topo") << "npus 8\n"
                                           "switch sw0\n"
                                           "link npu0 sw0 100 500\nlink npu1 sw0 100 500\n"
                                           "link npu2 sw0 100 500\nlink npu3 sw0 100 500\n"
                                           "link npu4 sw0 50 500\nlink npu5 sw0 100 500\n"
                                           "link npu6 sw0 100 500\nlink npu7 sw0 100 500\n"
                                           "dims 4 2\n";
  std::ofstream(dir + "/net/network.yml") << "machine: custom\ncustom-file: ring.topo\n";
  const std::string runfiles = fs::current_path().string();
  const std::string printed =
      ExpectRoundTrip(dir,
                      "--workload-configuration=" + runfiles +
                          "/examples/dp_step/dp_step --system-configuration=" + runfiles +
                          "/examples/dp_step/system.json --network-configuration=net/network.yml",
                      "custom_topology");
  EXPECT_NE(printed.find("custom-file: " +
                         fs::absolute(dir + "/net/ring.topo").lexically_normal().string()),
            std::string::npos)
      << printed;
  // A gpu-model relative to the system file is printed absolute (the print checks the machine,
  // not the traces, which have no FLOP counts for the roofline).
  std::ofstream(dir + "/net/system.yaml") << "roofline-enabled: 1\ngpu-model: gpu.yaml\n";
  fs::copy_file(runfiles + "/configs/machines/dgx-a100-hdr/gpu.yaml", dir + "/net/gpu.yaml",
                fs::copy_options::overwrite_existing);
  const CommandOutcome gpu =
      Orrery(dir,
             "--workload-configuration=w --system-configuration=net/system.yaml "
             "--network-configuration=net/network.yml --print-config");
  EXPECT_EQ(gpu.exit_code, 0) << gpu.err;
  EXPECT_NE(
      gpu.out.find("gpu-model: " + fs::absolute(dir + "/net/gpu.yaml").lexically_normal().string()),
      std::string::npos)
      << gpu.out;
}

TEST(PrintConfig, BadPrintedConfigurationsAreNamed) {
  const std::string bad = ::testing::TempDir() + "/bad.yaml";
  std::ofstream(bad) << "flags:\n  comm-scal: 2\nsystm: {}\n";
  const CommandOutcome o = Orrery(fs::current_path().string(), "--config=" + bad);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("unknown section 'systm' (did you mean 'system'?)"), std::string::npos)
      << o.err;
  std::ofstream(bad) << "flags:\n  comm-scal: 2\n";
  const CommandOutcome k = Orrery(fs::current_path().string(), "--config=" + bad);
  EXPECT_EQ(k.exit_code, 1);
  EXPECT_NE(k.err.find(bad + ":2: unknown key 'comm-scal'"), std::string::npos) << k.err;
  EXPECT_NE(k.err.find("comm-scale"), std::string::npos) << k.err;
  // A section and the flag for the same file.
  std::ofstream(bad) << "system: {scheduling-policy: LIFO}\n";
  const CommandOutcome both =
      Orrery(fs::current_path().string(), "--config=" + bad + " " + kDpStep);
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_NE(both.err.find("--system-configuration examples/dp_step/system.json and the 'system' "
                          "section of " +
                          bad + " both give it"),
            std::string::npos)
      << both.err;
}

}  // namespace
}  // namespace orrery
