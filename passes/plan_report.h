// One self-contained HTML file to share, as tlparse writes one: what the artifact holds, the plan of
// one graph (its estimates, the memory timeline by category and the recompute frontier as inline
// SVG pictures, the passes' statistics, the saved set with reasons), every compile with its time by
// phase, caches and guards, and the diagnostics. No script, no external file, the same bytes for
// the same inputs. What `lathe report` writes and the studio's File › Export Report… saves.
#pragma once

#include <string>

#include "io/artifact.h"
#include "passes/plan_target.h"
#include "plan/plan_bundle.h"
#include "util/progress.h"

namespace lathe::passes {

struct ReportHeading {
  std::string title;   // heads the page: the file the report is of
  std::string source;  // under it: the capture's path, or "plan bundle of CAPTURE"
};

// `target` and `bundle`: the graph planned and its plan, both or neither (an artifact without
// graphs: a snapshot, a dump whose compiles kept none). The frontier is computed on `target`
// (cancellable through `progress`; Error(Cancelled) then).
[[nodiscard]] std::string htmlReport(const io::Artifact& artifact, const ReportHeading& heading, const PlanTarget* target,
                                     const plan::PlanBundle* bundle, const Progress& progress = {});

}  // namespace lathe::passes
