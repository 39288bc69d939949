#include "io/trace/compile_metrics.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace lathe::io {

namespace {

using nlohmann::json;

json parseObject(const std::string& text) {
  if (text.empty()) return json::object();
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_object() ? value : json::object();
}

std::optional<double> seconds(const json& metrics, const char* secondsKey, const char* microsecondsKey = nullptr) {
  if (const auto it = metrics.find(secondsKey); it != metrics.end() && it->is_number()) return it->get<double>();
  if (microsecondsKey) {
    if (const auto it = metrics.find(microsecondsKey); it != metrics.end() && it->is_number()) return it->get<double>() * 1e-6;
  }
  return std::nullopt;
}

int64_t count(const json& metrics, const char* key) {
  const auto it = metrics.find(key);
  return it != metrics.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

CacheOutcome cache(const json& metrics, const std::string& prefix) {
  return {count(metrics, (prefix + "_hit_count").c_str()), count(metrics, (prefix + "_miss_count").c_str())};
}

// `outer` less `inner`, where both are known (never below zero: the metrics round separately).
std::optional<double> share(std::optional<double> outer, std::optional<double> inner) {
  if (!outer) return std::nullopt;
  return inner ? std::max(0.0, *outer - *inner) : outer;
}

}  // namespace

CompileMetrics compileMetrics(const TraceCompile& compile) {
  CompileMetrics m;
  const json metrics = parseObject(compile.metrics);
  m.totalSeconds = seconds(metrics, "entire_frame_compile_time_s");
  const std::optional<double> backend = seconds(metrics, "backend_compile_time_s");
  const std::optional<double> inductor = seconds(metrics, "inductor_compile_time_s");
  m.codegenSeconds = seconds(metrics, "code_gen_time_s");
  m.dynamoSeconds = m.totalSeconds && backend ? share(m.totalSeconds, backend) : std::nullopt;
  m.aotAutogradSeconds = backend && inductor ? share(backend, inductor) : std::nullopt;
  m.inductorSeconds = share(inductor, m.codegenSeconds);
  if (!inductor) m.codegenSeconds.reset();  // a share of nothing known
  m.tritonSeconds = seconds(metrics, "triton_compile_time_s", "triton_compile_time_us");
  m.jointGraphPassSeconds = seconds(metrics, "joint_graph_pass_time_s", "joint_graph_pass_time_us");
  m.preGradPassSeconds = seconds(metrics, "pre_grad_pass_time_s", "pre_grad_pass_time_us");
  m.postGradPassSeconds = seconds(metrics, "post_grad_pass_time_s", "post_grad_pass_time_us");
  m.dynamoBeforeRestartSeconds = seconds(metrics, "dynamo_time_before_restart_s", "dynamo_compile_time_before_restart_us");
  m.fxGraphLocal = cache(metrics, "inductor_fx_local_cache");
  m.fxGraphRemote = cache(metrics, "inductor_fx_remote_cache");
  m.aotAutogradLocal = cache(metrics, "aotautograd_local_cache");
  m.aotAutogradRemote = cache(metrics, "aotautograd_remote_cache");
  if (const auto it = metrics.find("num_graph_breaks"); it != metrics.end() && it->is_number_integer())
    m.graphBreaks = it->get<int64_t>();
  // torch logs the list as JSON text; a list itself is read too.
  json kernels;
  if (const auto it = metrics.find("triton_kernel_compile_times_us"); it != metrics.end()) {
    kernels = it->is_string() ? json::parse(it->get<std::string>(), nullptr, /*allow_exceptions=*/false) : *it;
  }
  if (kernels.is_array()) {
    for (const json& kernel : kernels) {
      if (kernel.is_array() && kernel.size() == 2 && kernel[0].is_string() && kernel[1].is_number())
        m.tritonKernels.emplace_back(kernel[0].get<std::string>(), kernel[1].get<double>() * 1e-6);
    }
    std::stable_sort(m.tritonKernels.begin(), m.tritonKernels.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  const json backward = parseObject(compile.backwardMetrics);
  const std::optional<double> backwardInductor = seconds(backward, "inductor_compile_time_s");
  m.backwardCodegenSeconds = backwardInductor ? seconds(backward, "code_gen_time_s") : std::nullopt;
  m.backwardInductorSeconds = share(backwardInductor, m.backwardCodegenSeconds);
  return m;
}

}  // namespace lathe::io
