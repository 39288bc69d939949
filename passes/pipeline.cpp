#include "passes/pipeline.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "passes/fusion.h"
#include "passes/offload_pass.h"
#include "passes/plan_target.h"
#include "passes/recompute.h"
#include "passes/split.h"
#include "util/diagnostics.h"

namespace lathe::passes {

namespace {

struct Registry {
  std::vector<std::unique_ptr<Pass>> passes;
  Registry() {
    passes.push_back(std::make_unique<SplitPass>());
    passes.push_back(std::make_unique<FusionPass>());
    passes.push_back(std::make_unique<RecomputePass>());
    passes.push_back(std::make_unique<OffloadPass>());
  }
  static const Registry& get() {
    static const Registry registry;
    return registry;
  }
};

bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

[[noreturn]] void malformed(std::string_view text, size_t pos, std::string_view expected) {
  throw Error(ErrorCode::Usage, "pipeline \"" + std::string(text) + "\": at character " + std::to_string(pos + 1) +
                                    ", expected " + std::string(expected));
}

}  // namespace

std::vector<const Pass*> registeredPasses() {
  std::vector<const Pass*> passes;
  for (const auto& pass : Registry::get().passes) passes.push_back(pass.get());
  return passes;
}

std::vector<std::string_view> passNames() {
  std::vector<std::string_view> names;
  for (const auto& pass : Registry::get().passes) names.push_back(pass->name());
  return names;
}

void checkPipeline(std::span<const PipelineStep> steps, const PlanTarget* target) {
  for (size_t i = 0; i < steps.size(); ++i) {
    const Pass& pass = findPass(steps[i].pass);
    const PassInfo& info = pass.info();
    steps[i].options.check(info.name, info.options);
    pass.checkOptions(steps[i].options);
    for (std::string_view required : info.runsAfter) {
      const bool earlier = std::any_of(steps.begin(), steps.begin() + static_cast<ptrdiff_t>(i),
                                       [&](const PipelineStep& step) { return step.pass == required; });
      if (!earlier) {
        throw Error(ErrorCode::Usage, std::string(info.name) + " needs " + std::string(required) + " before it: put " +
                                          std::string(required) + " before " + std::string(info.name) + " in the pipeline");
      }
    }
    if (info.needsJointGraph && target != nullptr && !target->joint().joint) {
      throw Error(ErrorCode::Usage, std::string(info.name) +
                                        " needs a joint graph (an aot_joint_graph with tangents); this graph has " +
                                        std::to_string(target->joint().tangents.size()) + " tangents and " +
                                        std::to_string(target->graph().size()) + " nodes");
    }
  }
}

const Pass& findPass(std::string_view name) {
  for (const auto& pass : Registry::get().passes) {
    if (pass->name() == name) return *pass;
  }
  std::string known;
  for (std::string_view n : passNames()) known += (known.empty() ? "" : ", ") + std::string(n);
  throw Error(ErrorCode::Usage, "unknown pass '" + std::string(name) + "' (passes: " + known + ")");
}

std::vector<PipelineStep> parsePipeline(std::string_view text) {
  std::vector<PipelineStep> steps;
  size_t pos = 0;
  auto skipSpace = [&] {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  };
  auto word = [&](std::string_view what, bool valueChars) {
    skipSpace();
    const size_t start = pos;
    while (pos < text.size() && (identChar(text[pos]) || (valueChars && (text[pos] == '.' || text[pos] == '/' || text[pos] == '+')))) ++pos;
    if (pos == start) malformed(text, start, what);
    return std::string(text.substr(start, pos - start));
  };
  skipSpace();
  if (pos == text.size()) return steps;
  for (;;) {
    PipelineStep step;
    step.pass = word("a pass name", false);
    const std::vector<std::string_view> names = passNames();
    if (std::find(names.begin(), names.end(), step.pass) == names.end()) {
      std::string known;
      for (std::string_view n : names) known += (known.empty() ? "" : ", ") + std::string(n);
      malformed(text, pos - step.pass.size(), "a pass name (" + known + "), not '" + step.pass + "'");
    }
    skipSpace();
    if (pos < text.size() && text[pos] == '(') {
      ++pos;
      skipSpace();
      while (pos < text.size() && text[pos] != ')') {
        std::string key = word("an option name", false);
        skipSpace();
        if (pos >= text.size() || text[pos] != '=') malformed(text, pos, "'=' after option " + key);
        ++pos;
        std::string value = word("a value for " + key, true);
        if (step.options.values().count(key) != 0) malformed(text, pos, "option " + key + " only once");
        step.options.set(std::move(key), std::move(value));
        skipSpace();
        if (pos < text.size() && text[pos] == ',') {
          ++pos;
          continue;
        }
        if (pos >= text.size() || text[pos] != ')') malformed(text, pos, "',' or ')'");
      }
      if (pos >= text.size()) malformed(text, pos, "')'");
      ++pos;
    }
    steps.push_back(std::move(step));
    skipSpace();
    if (pos == text.size()) break;
    if (text[pos] != ',') malformed(text, pos, "',' between passes");
    ++pos;
  }
  checkPipeline(steps);
  return steps;
}

std::string formatStep(const PipelineStep& step) {
  std::string out = step.pass;
  if (step.options.values().empty()) return out;
  out += '(';
  bool first = true;
  for (const auto& [key, value] : step.options.values()) {
    if (!first) out += ',';
    first = false;
    out += key + "=" + value;
  }
  return out + ')';
}

std::string formatPipeline(std::span<const PipelineStep> steps) {
  std::string out;
  for (const PipelineStep& step : steps) out += (out.empty() ? "" : ",") + formatStep(step);
  return out;
}

PipelineRun runPipeline(const PassContext& context, std::span<const PipelineStep> steps) {
  checkPipeline(steps, &context.target);
  PipelineRun run;
  run.initial = plan::PlanState::empty(context.graph.size());
  for (const PipelineStep& step : steps) {
    context.progress.checkCancelled();
    const Pass& pass = findPass(step.pass);
    appendStep(run, step, [&](const plan::PlanState& before) { return pass.run(context, before, step.options); });
  }
  return run;
}

void appendStep(PipelineRun& run, PipelineStep step,
                const std::function<PassResult(const plan::PlanState& before)>& runPass) {
  const auto start = std::chrono::steady_clock::now();
  PipelineRecord record{std::move(step), runPass(run.finalState()), 0};
  record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.history.push_back(std::move(record));
}

}  // namespace lathe::passes
