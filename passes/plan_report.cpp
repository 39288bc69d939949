#include "passes/plan_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>

#include "io/guards/guards.h"
#include "io/trace/compile_metrics.h"
#include "passes/recompute.h"
#include "util/format.h"

namespace lathe::passes {

namespace {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// The studio's category colours (views/memory_timeline_view.cpp), in analysis::MemoryCategory order.
constexpr std::array<const char*, analysis::kMemoryCategoryCount> kCategoryColors{
    "#4e79a7", "#9c755f", "#f28e2b", "#e15759", "#bab0ac", "#59a14f", "#edc948", "#b07aa1"};

constexpr double kWidth = 900, kHeight = 280, kLeft = 70, kRight = 45, kTop = 20, kBottom = 40;

std::string svgOpen() {
  return fmt::format(R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" font-family="sans-serif" font-size="11">)svg",
                     kWidth, kHeight, kWidth, kHeight);
}

// Axes with a few labelled ticks; x and y map data to pixels.
template <typename X, typename Y>
std::string axes(double xMin, double xMax, double yMax, const std::string& xLabel, const std::string& yLabel, X x, Y y,
                 const std::function<std::string(double)>& xTick, const std::function<std::string(double)>& yTick) {
  std::string s;
  s += fmt::format(R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333"/>)svg", kLeft, kHeight - kBottom, kWidth - kRight, kHeight - kBottom);
  s += fmt::format(R"svg(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333"/>)svg", kLeft, kTop, kLeft, kHeight - kBottom);
  for (int i = 0; i <= 4; ++i) {
    const double xv = xMin + (xMax - xMin) * i / 4, yv = yMax * i / 4;
    s += fmt::format(R"svg(<text x="{:.1f}" y="{}" text-anchor="middle">{}</text>)svg", x(xv), kHeight - kBottom + 14, escape(xTick(xv)));
    s += fmt::format(R"svg(<text x="{}" y="{:.1f}" text-anchor="end">{}</text>)svg", kLeft - 4, y(yv) + 4, escape(yTick(yv)));
    s += fmt::format(R"svg(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#eee"/>)svg", kLeft + 1, y(yv), kWidth - kRight, y(yv));
  }
  s += fmt::format(R"svg(<text x="{}" y="{}" text-anchor="middle">{}</text>)svg", (kLeft + kWidth - kRight) / 2, kHeight - 6, escape(xLabel));
  s += fmt::format(R"svg(<text x="14" y="{}" text-anchor="middle" transform="rotate(-90 14 {})">{}</text>)svg", (kTop + kHeight - kBottom) / 2,
                   (kTop + kHeight - kBottom) / 2, escape(yLabel));
  return s;
}

// Memory over the planned step, stacked by category, the peak marked.
std::string timelineSvg(const plan::PlanTimeline& t) {
  const size_t steps = t.node.size();
  if (steps == 0) return {};
  const double yMax = std::max<double>(1, static_cast<double>(t.peakBytes)) * 1.1;
  const auto x = [&](double step) { return kLeft + (kWidth - kLeft - kRight) * step / std::max<double>(1, static_cast<double>(steps)); };
  const auto y = [&](double bytes) { return kHeight - kBottom - (kHeight - kTop - kBottom) * bytes / yMax; };
  // At most ~600 columns: the peak of each column's steps, so no spike is lost.
  const size_t stride = std::max<size_t>(1, steps / 600);
  std::string s = svgOpen();
  s += axes(0, static_cast<double>(steps), yMax, "execution step (forward, then backward)", "memory", x, y,
            [](double v) { return fmt::format("{:.0f}", v); }, [](double v) { return formatBytes(static_cast<uint64_t>(v)); });
  std::vector<double> below((steps + stride - 1) / stride + 1, 0);
  for (size_t c = 0; c < plan::kTimelineCategories; ++c) {
    std::vector<double> top = below;
    bool any = false;
    for (size_t k = 0; k * stride < steps; ++k) {
      uint64_t most = 0;
      size_t at = k * stride;
      for (size_t i = k * stride; i < std::min(steps, (k + 1) * stride); ++i) {
        uint64_t total = 0;
        for (size_t d = 0; d <= c; ++d) total += t.bytes[d][i];
        if (total > most) most = total, at = i;
      }
      top[k] = static_cast<double>(most);
      any |= t.bytes[c][at] > 0;
    }
    if (!any) continue;
    std::string points;
    const size_t columns = (steps + stride - 1) / stride;
    for (size_t k = 0; k < columns; ++k) points += fmt::format("{:.1f},{:.1f} ", x(static_cast<double>(k * stride)), y(top[k]));
    for (size_t k = columns; k-- > 0;) points += fmt::format("{:.1f},{:.1f} ", x(static_cast<double>(k * stride)), y(below[k]));
    s += fmt::format(R"svg(<polygon points="{}" fill="{}" stroke="none"><title>{}</title></polygon>)svg", points, kCategoryColors[c],
                     plan::kTimelineCategoryNames[c]);
    below = top;
  }
  const double px = x(t.peakStep);
  s += fmt::format(R"svg(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#c00" stroke-dasharray="4 3"/>)svg", px, kTop, kHeight - kBottom);
  s += fmt::format(R"svg(<text x="{:.1f}" y="{}" fill="#c00" text-anchor="{}">peak {} at {}</text>)svg", px + (px > kWidth * 0.7 ? -4 : 4),
                   kTop + 10, px > kWidth * 0.7 ? "end" : "start", formatBytes(t.peakBytes), escape(t.node[t.peakStep]));
  if (t.backwardStart > 0 && t.backwardStart < steps) {
    const double bx = x(t.backwardStart);
    s += fmt::format(R"svg(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#666" stroke-dasharray="2 3"/><text x="{3:.1f}" y="{4}" fill="#666">backward</text>)svg",
                     bx, kTop, kHeight - kBottom, bx + 3, kHeight - kBottom - 6);
  }
  return s + "</svg>";
}

struct FrontierPicture {
  std::vector<FrontierPoint> points;
  RecomputeEvaluation torch, heuristic;
};

std::string frontierSvg(const FrontierPicture& f, uint64_t planPeak, double planRecompute) {
  double xMax = static_cast<double>(std::max({f.torch.timeline.peakBytes, f.heuristic.timeline.peakBytes, planPeak}));
  double yMax = std::max({f.torch.recomputeSeconds, f.heuristic.recomputeSeconds, planRecompute});
  for (const auto& p : f.points) {
    xMax = std::max(xMax, static_cast<double>(p.peakBytes));
    yMax = std::max(yMax, p.recomputeSeconds);
  }
  double xMin = xMax;
  for (const auto& p : f.points) xMin = std::min(xMin, static_cast<double>(p.peakBytes));
  xMin = std::min({xMin, static_cast<double>(f.torch.timeline.peakBytes), static_cast<double>(f.heuristic.timeline.peakBytes),
                   static_cast<double>(planPeak)});
  const double margin = std::max((xMax - xMin) * 0.08, xMax * 0.01);
  xMin = std::max(0.0, xMin - margin);
  xMax += margin;
  yMax = std::max(yMax * 1.15, 1e-6);
  const auto x = [&](double bytes) { return kLeft + (kWidth - kLeft - kRight) * (bytes - xMin) / (xMax - xMin); };
  const auto y = [&](double seconds) { return kHeight - kBottom - (kHeight - kTop - kBottom) * seconds / yMax; };
  std::string s = svgOpen();
  s += axes(xMin, xMax, yMax, "peak memory of the step", "recompute time", x, y,
            [](double v) { return formatBytes(static_cast<uint64_t>(v)); }, [](double v) { return formatSeconds(v); });
  std::string line;
  for (const auto& p : f.points) line += fmt::format("{:.1f},{:.1f} ", x(static_cast<double>(p.peakBytes)), y(p.recomputeSeconds));
  s += fmt::format(R"svg(<polyline points="{}" fill="none" stroke="#4e79a7" stroke-width="1.5"/>)svg", line);
  for (const auto& p : f.points) {
    s += fmt::format(R"svg(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="#4e79a7"><title>{} · {}</title></circle>)svg",
                     x(static_cast<double>(p.peakBytes)), y(p.recomputeSeconds), formatBytes(p.peakBytes, 4), formatSeconds(p.recomputeSeconds));
  }
  const auto mark = [&](double bytes, double seconds, const char* color, const char* name) {
    s += fmt::format(R"svg(<rect x="{:.1f}" y="{:.1f}" width="8" height="8" fill="{}"><title>{}</title></rect><text x="{:.1f}" y="{:.1f}" fill="{}">{}</text>)svg",
                     x(bytes) - 4, y(seconds) - 4, color, name, x(bytes) + 6, y(seconds) - 6, color, name);
  };
  const auto same = [&](const RecomputeEvaluation& e) {
    return e.timeline.peakBytes == planPeak && std::abs(e.recomputeSeconds - planRecompute) <= 1e-12 + 1e-6 * planRecompute;
  };
  mark(static_cast<double>(f.torch.timeline.peakBytes), f.torch.recomputeSeconds, "#e15759", same(f.torch) ? "torch = this plan" : "torch");
  mark(static_cast<double>(f.heuristic.timeline.peakBytes), f.heuristic.recomputeSeconds, "#f28e2b",
       same(f.heuristic) ? "heuristic = this plan" : "heuristic");
  if (!same(f.torch) && !same(f.heuristic)) mark(static_cast<double>(planPeak), planRecompute, "#59a14f", "this plan");
  return s + "</svg>";
}

std::string compilesSection(const io::TraceLog& log) {
  std::string s = "<h2>Compiles</h2><table><tr><th>compile</th><th>frame</th><th>status</th><th>compile time</th><th>Dynamo</th>"
                  "<th>AOTAutograd</th><th>Inductor</th><th>code generation</th><th>backward at first call</th>"
                  "<th>FX cache hits</th><th>graph breaks</th><th>guards (tree / Dynamo's count)</th><th>recompiled because</th></tr>";
  const auto seconds = [](const std::optional<double>& v) { return v ? formatSeconds(*v) : std::string(); };
  for (const io::TraceCompile& c : log.compiles) {
    const io::CompileMetrics m = io::compileMetrics(c);
    Diagnostics ignored;
    const std::optional<io::GuardTree> tree = io::compileGuards(log, c, ignored);
    const std::optional<double> backward = m.backwardSeconds();
    const io::CacheOutcome fx = m.fxGraph();
    const int64_t hits = fx.hits, lookups = fx.hits + fx.misses;
    std::string reasons;
    for (const std::string& r : c.recompileReasons) reasons += escape(r) + "<br>";
    s += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td>"
                     "<td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{} / {}</td><td>{}</td></tr>",
                     escape(c.id), escape(c.frameName), io::compileStatusName(c.status), seconds(m.totalSeconds), seconds(m.dynamoSeconds),
                     seconds(m.aotAutogradSeconds), seconds(m.inductorSeconds), seconds(m.codegenSeconds), seconds(backward),
                     lookups ? fmt::format("{}/{}", hits, lookups) : "", m.graphBreaks ? std::to_string(*m.graphBreaks) : "",
                     tree ? std::to_string(tree->leafCount()) : "-", c.guardCount ? std::to_string(*c.guardCount) : "-", reasons);
  }
  return s + "</table>";
}

std::string diagnosticsSection(const Diagnostics& diagnostics) {
  std::string s = fmt::format("<h2>Diagnostics ({})</h2>", diagnostics.size());
  if (diagnostics.empty()) return s + "<p>None: everything in the file was read.</p>";
  s += "<table><tr><th>severity</th><th>code</th><th>message</th><th>where</th></tr>";
  size_t shown = 0;
  for (const Diagnostic& d : diagnostics.items()) {
    if (shown++ == 500) break;
    s += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", severityName(d.severity), escape(d.code),
                     escape(d.message), escape(d.where.str()));
  }
  s += "</table>";
  if (diagnostics.size() > 500) s += fmt::format("<p>… {} more (lathe info --diagnostics)</p>", diagnostics.size() - 500);
  return s;
}

std::string planSection(const plan::PlanBundle& bundle, const std::optional<FrontierPicture>& frontier) {
  std::string s = fmt::format("<h2>Plan of {} on {}</h2><p>pipeline <code>{}</code></p><table><tr><th>estimate</th><th>value</th></tr>",
                              escape(bundle.graphId), escape(bundle.hardware.name), escape(bundle.pipeline));
  for (const auto& [name, value] : bundle.estimates) {
    s += fmt::format("<tr><td>{}</td><td class=n>{}</td></tr>", escape(name), formatEstimate(name, value));
  }
  s += "</table><h3>Memory over the step</h3>" + timelineSvg(bundle.timeline) + "<p class=legend>";
  for (size_t c = 0; c < plan::kTimelineCategories; ++c) {
    s += fmt::format(R"svg(<span><i style="background:{}"></i>{} {} at the peak</span>)svg", kCategoryColors[c], plan::kTimelineCategoryNames[c],
                     formatBytes(bundle.timeline.atPeak[c]));
  }
  s += "</p>";
  double planRecompute = 0;
  for (const plan::PlanStep& step : bundle.steps) {
    for (const auto& [name, value] : step.stats)
      if (name == RecomputePass::kRecomputeSeconds.name) planRecompute = value;
  }
  if (frontier) {
    s += "<h3>Recompute frontier</h3><p>Every point is a saved set no other beats on both peak and recompute time "
         "(the budget policy's candidates); torch's, the heuristic's and this plan's sets beside them.</p>" +
         frontierSvg(*frontier, bundle.timeline.peakBytes, planRecompute);
  }
  s += "<h3>Passes</h3>";
  for (const plan::PlanStep& step : bundle.steps) {
    s += fmt::format("<h4><code>{}</code> ({})</h4><table>", escape(step.step), formatSeconds(step.seconds));
    for (const auto& [name, value] : step.stats) s += fmt::format("<tr><td>{}</td><td class=n>{:g}</td></tr>", escape(name), value);
    s += "</table>";
  }
  if (bundle.state.recompute) {
    const plan::RecomputeDecision& r = *bundle.state.recompute;
    s += fmt::format("<h3>Saved for the backward ({} values, policy {}; {} recomputed)</h3><table><tr><th>value</th><th>why kept</th></tr>",
                     r.saved.size(), escape(r.policy), r.recomputed.size());
    for (size_t i = 0; i < r.saved.size() && i < 300; ++i) {
      s += fmt::format("<tr><td><code>{}</code></td><td>{}</td></tr>", escape(bundle.nodeNames[r.saved[i]]),
                       escape(i < r.savedReasons.size() ? toEnglish(r.savedReasons[i]) : ""));
    }
    s += "</table>";
    if (r.saved.size() > 300) s += fmt::format("<p>… {} more (the plan bundle has them all)</p>", r.saved.size() - 300);
  }
  return s;
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}table{border-collapse:collapse;margin:8px 0}"
    "td,th{border:1px solid #ddd;padding:3px 8px;font-size:13px;text-align:left;vertical-align:top}th{background:#f4f4f4}"
    "td.n{text-align:right;white-space:nowrap}code{font-size:12px}.legend span{margin-right:14px;font-size:12px}"
    ".legend i{display:inline-block;width:10px;height:10px;margin-right:4px}h2{border-bottom:1px solid #ccc;padding-bottom:4px}";

}  // namespace

std::string htmlReport(const io::Artifact& artifact, const ReportHeading& heading, const PlanTarget* target,
                       const plan::PlanBundle* bundle, const Progress& progress) {
  std::string html = fmt::format("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Lathe report: {}</title><style>{}</style></head><body>",
                                 escape(heading.title), kStyle);
  html += fmt::format("<h1>Lathe report: {}</h1><p>{}</p>", escape(heading.title), escape(heading.source));
  if (artifact.trace) {
    html += fmt::format("<p>TORCH_TRACE log: {} file(s), {} events, {} compiles, {} graphs</p>", artifact.trace->files.size(),
                        artifact.trace->events.size(), artifact.trace->compiles.size(), artifact.graphs().size());
  }
  if (target && bundle) {
    std::optional<FrontierPicture> frontier;
    if (target->joint().joint) {
      const PassContext context = target->context(progress);
      frontier.emplace();
      frontier->points = budgetFrontier(context);
      frontier->torch =
          evaluateSavedSet(context, torchPolicy(target->graph(), target->joint(), target->inputs(), target->inductorJointPasses()).saved);
      frontier->heuristic = evaluateSavedSet(context, heuristicPolicy(target->graph(), target->joint(), target->ops()).saved);
    }
    if (target->capturedOnCpu()) {
      html += fmt::format("<p><b>Note:</b> captured on the CPU; times and memory are estimated as if it ran on {}.</p>",
                          escape(bundle->hardware.name));
    }
    html += planSection(*bundle, frontier);
  }
  if (artifact.trace) html += compilesSection(*artifact.trace);
  html += diagnosticsSection(artifact.diagnostics());
  html += "<p style=\"color:#888;font-size:12px\">Written by Lathe. Estimates are the planner's; "
          "docs/benchmarks.md has what the GPU measured beside them.</p></body></html>\n";
  return html;
}

}  // namespace lathe::passes
