// Benchmark of real networks' GEMM and convolution shapes on this CPU (not a test): for each shape
// the heuristic schedule, optionally the best schedule after N measurements of one tuning run
// (--budgets 20,200: one run of 200, its best after its first 20 and after all 200),
// Halide's Adams2019 at its best settings (--peers), and the library (torch in its own worker:
// OpenBLAS sgemm for dots, oneDNN for convolutions), all on the backend's threads, timed side by
// side in rounds that alternate; then GFLOP/s, the ratio to the library and the share of the FMA
// peak (offline/calibrate.h), a JSON summary and a bar plot of the ratios.
//   build/bench/kernel_shapes_bench [--only NAME,NAME] [--budgets N,N] [--peers] [--rounds N]
//                                   [--campaign FILE] [--output DIR (default runs/kernel_shapes)] [--retime]
// --retime: a shape whose campaign in DIR/campaigns already holds the largest budget's records is
// not tuned again; its bests are read from those records and timed anew.
// The tuned rows run the campaign FILE (default configs/campaigns/cpu_kernel_shipped.json: the
// shipped model; cpu_matmul_1024.json is the analytical model's) on each shape's kernel. Run from
// the project's root (it reads configs/ and models/).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "autotuner/campaign/campaign.h"
#include "autotuner/campaign/campaign_runner.h"
#include "ir/record_log.h"
#include "experiments/gnuplot.h"
#include "hardware/halide/halide_backend.h"
#include "hardware/halide/halide_schedule.h"
#include "ir/program_json.h"
#include "offline/calibrate.h"

using namespace perftune;

namespace {

// One shape at batch 1, as a network runs it: a dot [M, K] x [K, N], or an NCHW convolution with
// an OIHW kernel (groups = channels: depthwise).
struct KernelShape {
  std::string name, network;
  bool conv = false;
  std::int64_t m = 0, k = 0, n = 0;                                            // dot
  std::int64_t c = 0, h = 0, w = 0, o = 0, window = 1, stride = 1, pad = 0, groups = 1;  // convolution
};

KernelShape dot(std::string name, std::string network, std::int64_t m, std::int64_t k, std::int64_t n) {
  KernelShape s{std::move(name), std::move(network)};
  s.m = m, s.k = k, s.n = n;
  return s;
}

KernelShape conv(std::string name, std::string network, std::int64_t c, std::int64_t hw, std::int64_t o, std::int64_t window,
           std::int64_t stride, std::int64_t groups = 1) {
  KernelShape s{std::move(name), std::move(network), true};
  s.c = c, s.h = hw, s.w = hw, s.o = o, s.window = window, s.stride = stride, s.pad = (window - 1) / 2, s.groups = groups;
  return s;
}

const std::vector<KernelShape>& shapes() {
  static const std::vector<KernelShape> all = {
      dot("matmul_1024", "sgemm", 1024, 1024, 1024),
      dot("bert_qkv", "BERT-base, seq 128", 128, 768, 2304),
      dot("bert_attention_out", "BERT-base, seq 128", 128, 768, 768),
      dot("bert_ffn_up", "BERT-base, seq 128", 128, 768, 3072),
      dot("bert_ffn_down", "BERT-base, seq 128", 128, 3072, 768),
      dot("gpt_mlp_up", "GPT block, seq 64", 64, 256, 1024),
      dot("vit_ffn_up", "ViT-B/16, 197 tokens", 197, 768, 3072),
      conv("resnet_stem_7x7s2", "ResNet", 3, 224, 64, 7, 2),
      conv("resnet18_3x3_56", "ResNet-18 stage 1", 64, 56, 64, 3, 1),
      conv("resnet18_3x3_28", "ResNet-18 stage 2", 128, 28, 128, 3, 1),
      conv("resnet18_3x3_14", "ResNet-18 stage 3", 256, 14, 256, 3, 1),
      conv("resnet18_3x3_7", "ResNet-18 stage 4", 512, 7, 512, 3, 1),
      conv("resnet50_1x1_56_up", "ResNet-50 stage 1", 64, 56, 256, 1, 1),
      conv("resnet50_1x1_56_down", "ResNet-50 stage 1", 256, 56, 64, 1, 1),
      conv("resnet50_1x1_28", "ResNet-50 stage 2", 512, 28, 128, 1, 1),
      conv("resnet50_1x1_14", "ResNet-50 stage 3", 1024, 14, 256, 1, 1),
      conv("resnet50_1x1_7", "ResNet-50 stage 4", 2048, 7, 512, 1, 1),
      conv("mobilenet_v2_dw_112", "MobileNetV2", 32, 112, 32, 3, 1, 32),
      conv("mobilenet_v2_dw_56", "MobileNetV2", 144, 56, 144, 3, 1, 144),
      conv("mobilenet_v2_dw_14", "MobileNetV2", 384, 14, 384, 3, 1, 384),
      conv("mobilenet_v2_pw_112", "MobileNetV2", 32, 112, 16, 1, 1),
      conv("mobilenet_v2_pw_56", "MobileNetV2", 144, 56, 24, 1, 1),
      conv("mobilenet_v2_pw_7", "MobileNetV2", 960, 7, 320, 1, 1),
  };
  return all;
}

std::int64_t out_side(const KernelShape& s, std::int64_t side) { return (side + 2 * s.pad - s.window) / s.stride + 1; }

double flops_of(const KernelShape& s) {
  if (!s.conv) return 2.0 * static_cast<double>(s.m * s.k * s.n);
  return 2.0 * static_cast<double>(s.o * out_side(s, s.h) * out_side(s, s.w)) * static_cast<double>(s.c / s.groups * s.window * s.window);
}

nlohmann::json program_json(const KernelShape& s) {
  using nlohmann::json;
  const auto param = [](const char* name, json shape, int number) {
    return json{{"name", name}, {"opcode", "parameter"}, {"shape", shape}, {"parameter_number", number}};
  };
  json ops;
  if (!s.conv) {
    ops = {param("a", {s.m, s.k}, 0), param("b", {s.k, s.n}, 1),
           {{"name", "y"}, {"opcode", "dot"}, {"shape", {s.m, s.n}}, {"operands", {"a", "b"}},
            {"dot", {{"lhs_contracting", {1}}, {"rhs_contracting", {0}}}}}};
  } else {
    json convolution = {{"input_batch", 0}, {"input_feature", 1}, {"input_spatial", {2, 3}}, {"kernel_input_feature", 1},
                        {"kernel_output_feature", 0}, {"kernel_spatial", {2, 3}}, {"output_batch", 0}, {"output_feature", 1},
                        {"output_spatial", {2, 3}}};
    if (s.groups > 1) convolution["feature_group_count"] = s.groups;
    ops = {param("x", {1, s.c, s.h, s.w}, 0), param("w", {s.o, s.c / s.groups, s.window, s.window}, 1),
           {{"name", "y"}, {"opcode", "convolution"}, {"shape", {1, s.o, out_side(s, s.h), out_side(s, s.w)}}, {"operands", {"x", "w"}},
            {"window", {{"size", {s.window, s.window}}, {"stride", {s.stride, s.stride}}, {"pad_low", {s.pad, s.pad}}, {"pad_high", {s.pad, s.pad}}}},
            {"convolution", convolution}}};
  }
  return {{"format", "perftune-program"}, {"version", 1}, {"name", s.name}, {"root", "y"}, {"ops", ops}};
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

double median(std::vector<double> xs) {
  xs.erase(std::remove_if(xs.begin(), xs.end(), [](double x) { return !std::isfinite(x); }), xs.end());
  std::sort(xs.begin(), xs.end());
  return xs.empty() ? NAN : xs[xs.size() / 2];
}

double seconds_or_nan(const MeasureResult& result) { return result.ok() ? result.seconds : NAN; }

// One run of the template campaign on this shape's kernel for the largest budget (with `retime`, the
// run already in `output` when it holds that many records); the best config after each budget's
// first measurements, read back from the run's record log in its order.
std::vector<Config> tuned_configs(const KernelShape& shape, const std::string& program_file, const std::string& campaign_file,
                                  const std::vector<std::size_t>& budgets, const std::string& output, bool retime) {
  const std::size_t budget = *std::max_element(budgets.begin(), budgets.end());
  const std::string log = output + "/records.jsonl";
  std::vector<Record> records;
  if (retime && std::filesystem::exists(log)) records = RecordLog::load(log).records;
  if (records.size() < budget) {
    nlohmann::json campaign = nlohmann::json::parse(std::ifstream(campaign_file));
    campaign["name"] = shape.name;
    campaign["source"] = {{"program", std::filesystem::absolute(program_file).string()}, {"kernel", "y"}};
    campaign["budget"] = {{"measurements", budget}};
    if (campaign["model"].contains("device"))
      campaign["model"]["device"] = std::filesystem::absolute("configs/hardware/host.json").string();
    CampaignRunOptions options;
    options.output = output;
    options.measure_peers = false;
    std::filesystem::remove_all(output);
    records = RecordLog::load(run_campaign(parse_campaign(campaign, campaign_file), options).tuning->records).records;
  }
  std::vector<Config> best;
  for (std::size_t b : budgets) {
    const Record* fastest = nullptr;
    for (std::size_t i = 0; i < std::min(b, records.size()); ++i)
      if (records[i].result.ok() && (!fastest || records[i].result.seconds < fastest->result.seconds)) fastest = &records[i];
    if (!fastest) throw std::runtime_error(shape.name + ": no schedule of its campaign ran (" + log + ")");
    best.push_back(fastest->config);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> only;
  std::vector<std::size_t> budgets;
  bool peers = false;
  int rounds = 3;
  bool retime = false;
  std::string output = "runs/kernel_shapes";
  std::string campaign_file = "configs/campaigns/cpu_kernel_shipped.json";
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    const bool has_value = a + 1 < argc;
    if (arg == "--only" && has_value) only = split_list(argv[++a]);
    else if (arg == "--budgets" && has_value)
      for (const std::string& b : split_list(argv[++a])) budgets.push_back(std::stoul(b));
    else if (arg == "--peers") peers = true;
    else if (arg == "--rounds" && has_value) rounds = std::max(1, std::atoi(argv[++a]));
    else if (arg == "--output" && has_value) output = argv[++a];
    else if (arg == "--campaign" && has_value) campaign_file = argv[++a];
    else if (arg == "--retime") retime = true;
    else {
      std::fprintf(stderr, "usage: %s [--only NAME,NAME] [--budgets N,N] [--peers] [--rounds N] [--campaign FILE] [--output DIR] [--retime]\n", argv[0]);
      return 2;
    }
  }
  std::filesystem::create_directories(output);
  HalideBackend backend{HalideBackendOptions{}};
  const int threads = backend.options().threads;
  const double peak = measure_fma_flops(static_cast<unsigned>(threads), 0.5);
  std::printf("%s, %d threads, FMA peak %.1f GFLOP/s\n", backend.fingerprint().c_str(), threads, peak / 1e9);
  std::printf("%-22s %8s | %-30s\n", "shape", "GFLOP", "GFLOP/s, x library, share of peak per schedule");
  // The schedules timed per shape, in the order of the plot's bars.
  std::vector<std::string> columns = {"heuristic"};
  for (std::size_t budget : budgets) columns.push_back("tuned_" + std::to_string(budget));
  if (peers) columns.push_back("Adams2019");
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::ostringstream plot_data;
  for (const KernelShape& shape : shapes()) {
    if (!only.empty() && std::find(only.begin(), only.end(), shape.name) == only.end()) continue;
    const std::string program_file = output + "/" + shape.name + ".json";
    std::ofstream(program_file) << program_json(shape).dump(1) << "\n";
    const Program program = load_program_file(program_file);
    const Kernel kernel("y", program);
    const SearchSpace space = halide_schedule_space(kernel);
    std::vector<std::pair<std::string, Config>> schedules = {{columns[0], heuristic_config(space, kernel)}};
    if (!budgets.empty()) {
      const auto tuned = tuned_configs(shape, program_file, campaign_file, budgets, output + "/campaigns/" + shape.name, retime);
      for (std::size_t b = 0; b < budgets.size(); ++b) schedules.emplace_back(columns[1 + b], tuned[b]);
    }
    std::vector<std::vector<double>> times(schedules.size());
    std::vector<double> library;
    for (int r = 0; r < rounds; ++r) {
      for (std::size_t i = 0; i < schedules.size(); ++i)
        times[i].push_back(seconds_or_nan(backend.measure(kernel, space, std::vector<Config>{schedules[i].second})[0]));
      const auto measured = backend.measure_library(kernel);
      library.push_back(measured ? seconds_or_nan(measured->result) : NAN);
    }
    nlohmann::ordered_json row = {{"shape", shape.name}, {"network", shape.network}, {"gflop", flops_of(shape) / 1e9}};
    const double library_s = median(library);
    const auto entry = [&](const std::string& what, double s) {
      const double gflops = flops_of(shape) / s / 1e9;
      row[what] = {{"seconds", s}, {"gflops", gflops}, {"x_library", library_s / s}, {"share_of_peak", gflops * 1e9 / peak}};
      return gflops;
    };
    std::printf("%-22s %8.3f |", shape.name.c_str(), flops_of(shape) / 1e9);
    plot_data << '"' << shape.name << '"';
    for (std::size_t i = 0; i < schedules.size(); ++i) {
      const double s = median(times[i]);
      std::printf(" %s %.1f (%.2fx, %.0f%%)", schedules[i].first.c_str(), entry(schedules[i].first, s), library_s / s,
                  100 * flops_of(shape) / s / peak);
      plot_data << ' ' << library_s / s;
    }
    if (peers) {
      for (const PeerMeasurement& peer : backend.measure_peers(kernel)) {
        if (peer.name != "Adams2019") continue;
        const double s = seconds_or_nan(peer.result);
        std::printf(" Adams2019 %.1f (%.2fx)", entry("adams2019", s), library_s / s);
        row["adams2019"]["settings"] = peer.settings;
        plot_data << ' ' << library_s / s;
      }
    }
    std::printf(" library %.1f\n", entry("library", library_s));
    plot_data << '\n';
    std::fflush(stdout);
    rows.push_back(row);
  }
  nlohmann::ordered_json summary = {{"device", backend.fingerprint()}, {"threads", threads}, {"fma_peak_gflops", peak / 1e9},
                                    {"rounds", rounds}, {"shapes", rows}};
  std::ofstream(output + "/summary.json") << summary.dump(2) << "\n";
  // A bar per schedule and shape: its speed over the library's (1 = the library).
  write_plot_file(output + "/ratios.dat", plot_data.str());
  std::ostringstream plot;
  plot << "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.9 border -1\n"
       << "set ylabel \"speed over the library (x)\"\nset xtics rotate by -45 font \",9\"\nset grid ytics\nset key top right\n"
       << "set yrange [0:*]\nset bmargin 7\nset rmargin 6\n"
       << "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2\n"
       << "set title " << gnuplot_quote("Real networks' shapes, " + std::to_string(threads) + " threads: " + backend.fingerprint()) << "\n"
       << "plot ";
  for (std::size_t c = 0; c < columns.size(); ++c)
    plot << (c > 0 ? ", " : "") << "'ratios.dat' using " << c + 2 << ":xtic(1) title " << gnuplot_quote(columns[c]) << " lc rgb '"
         << plot_color(c) << "'";
  plot << "\n";
  try {
    for (const std::string& image : render_png_and_svg(output, "ratios", plot.str())) std::printf("plot: %s\n", image.c_str());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "no plot: %s\n", error.what());
  }
  std::printf("summary: %s/summary.json\n", output.c_str());
  return 0;
}
