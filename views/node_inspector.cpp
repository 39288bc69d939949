#include "views/node_inspector.h"

#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>
#include <cmath>

#include "analysis/cost_model.h"
#include "ir/op_info.h"
#include "passes/plan_target.h"
#include "views/formatting.h"

namespace lathe::views {

namespace {

constexpr auto kNodeScheme = "node";
constexpr auto kStageScheme = "stage";
// Counterparts named per graph in "Also in"; more are counted.
constexpr size_t kMaxNamesPerStage = 4;

QString escaped(std::string_view text) {
  return toQString(text).toHtmlEscaped();
}

QString yesNo(bool value) {
  return value ? NodeInspector::tr("yes") : NodeInspector::tr("no");
}

// One "<tr><th>label</th><td>value</td></tr>" row; value is HTML.
QString row(const QString& label, const QString& valueHtml) {
  return QStringLiteral("<tr><th align=left valign=top>%1</th><td>%2</td></tr>").arg(label.toHtmlEscaped(), valueHtml);
}

QString section(const QString& title, const QString& rowsHtml) {
  if (rowsHtml.isEmpty()) return {};
  return QStringLiteral("<h3>%1</h3><table cellspacing=2 cellpadding=2>%2</table>")
      .arg(title.toHtmlEscaped(), rowsHtml);
}

}  // namespace

NodeInspector::NodeInspector(QWidget* parent)
    : QWidget(parent), browser_(new QTextBrowser(this)), profile_(hw::resolveHwProfile(passes::kDefaultHardware)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(browser_);
  browser_->setOpenLinks(false);
  browser_->setObjectName(QStringLiteral("nodeInspectorText"));
  connect(browser_, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    bool ok = false;
    if (url.scheme() == QLatin1String(kStageScheme)) {
      const uint link = url.path().toUInt(&ok);
      if (ok && link < alsoIn_.size()) emit stageNodeActivated(alsoIn_[link].graphId, alsoIn_[link].node);
      return;
    }
    if (url.scheme() != QLatin1String(kNodeScheme) || !graph_) return;
    const uint id = url.path().toUInt(&ok);
    if (ok && id < graph_->size()) emit nodeActivated(static_cast<ir::NodeId>(id));
  });
  clear();
}

void NodeInspector::clear() {
  graph_.reset();
  node_ = ir::kNoNode;
  alsoIn_.clear();
  browser_->setHtml(QStringLiteral("<p><i>%1</i></p>").arg(tr("Select a node to see its details.").toHtmlEscaped()));
}

QString NodeInspector::plainText() const {
  return browser_->toPlainText();
}

QString NodeInspector::nodeLink(ir::NodeId node) const {
  return QStringLiteral("<a href=\"%1:%2\">%3</a>")
      .arg(QLatin1String(kNodeScheme))
      .arg(node)
      .arg(escaped(graph_->name(node)));
}

QString NodeInspector::argHtml(const ir::Arg& arg) const {
  using Kind = ir::Arg::Kind;
  const ir::Graph& g = *graph_;
  auto joined = [&](const QString& open, const QString& close) {
    QStringList items;
    for (size_t i = 0; i < arg.items.size(); ++i) {
      QString item = argHtml(arg.items[i]);
      if (arg.kind == Kind::Dict && i < arg.keys.size()) item = argHtml(arg.keys[i]) + QStringLiteral(": ") + item;
      items << item;
    }
    return open + items.join(QStringLiteral(", ")) + close;
  };
  switch (arg.kind) {
    case Kind::None: return QStringLiteral("None");
    case Kind::Node: return arg.node < g.size() ? nodeLink(arg.node) : QStringLiteral("?");
    case Kind::Int: return QString::number(arg.i);
    case Kind::Float: return QString::number(arg.f, 'g', 8);
    case Kind::Bool: return arg.b ? QStringLiteral("True") : QStringLiteral("False");
    case Kind::String: return QLatin1Char('\'') + escaped(g.str(arg.s)) + QLatin1Char('\'');
    case Kind::DType: return escaped(ir::dtypeTorchName(arg.dtype));
    case Kind::List: return joined(QStringLiteral("["), QStringLiteral("]"));
    case Kind::Tuple: return joined(QStringLiteral("("), QStringLiteral(")"));
    case Kind::Dict: return joined(QStringLiteral("{"), QStringLiteral("}"));
    case Kind::Device:
    case Kind::Layout:
    case Kind::MemoryFormat:
    case Kind::SymExpr:
    case Kind::Raw: return escaped(g.str(arg.s));
  }
  return {};
}

QString NodeInspector::costHtml() const {
  const ir::Node& node = graph_->node(node_);
  if (node.kind == ir::NodeKind::Placeholder || node.kind == ir::NodeKind::Output ||
      node.kind == ir::NodeKind::GetAttr) {
    return {};
  }
  try {
    const analysis::NodeCost cost = analysis::nodeCost(*graph_, node_, profile_);
    if (!cost.kernel) return row(tr("Kernel"), tr("none (no device work)").toHtmlEscaped());
    const bool computeBound = cost.computeSeconds >= cost.memorySeconds;
    QString time = formatSeconds(cost.seconds);
    // Inductor runs a fusion group as one kernel: the plan prices the node with its share of it.
    const NodeTimes* times = shownTimes();
    if (times && std::abs(times->estimated[node_] - cost.seconds) > 1e-9 * cost.seconds)
      time = tr("%1 (its share of a fused kernel; %2 alone)").arg(formatSeconds(times->estimated[node_]), time);
    return row(tr("Time"), time.toHtmlEscaped()) +
           row(tr("Bound by"), (computeBound ? tr("compute") : tr("memory")).toHtmlEscaped()) +
           row(tr("FLOPs"), formatFlops(cost.flops).toHtmlEscaped()) +
           row(tr("Bytes moved"), formatBytes(static_cast<uint64_t>(cost.bytes)).toHtmlEscaped());
  } catch (const Error& error) {
    return row(tr("Cost"), QString::fromUtf8(error.what()).toHtmlEscaped());
  }
}

const NodeTimes* NodeInspector::shownTimes() const {
  return times_ && graph_ && times_->graph == graph_ ? times_.get() : nullptr;
}

QString NodeInspector::measuredHtml() const {
  const NodeTimes* times = shownTimes();
  if (!times || times->measured.empty()) return {};
  const std::optional<double> measured = times->measured[node_];
  const double estimated = times->estimated[node_];
  if (!measured) return row(tr("Measured"), tr("not timed by the profile's run").toHtmlEscaped());
  return row(tr("Measured"), QStringLiteral("<b>%1</b>").arg(formatSeconds(*measured).toHtmlEscaped())) +
         row(tr("Estimated"), formatSeconds(estimated).toHtmlEscaped()) +
         row(tr("Model error"), formatModelError(estimated, *measured).toHtmlEscaped()) +
         row(tr("Measured by"), times->source.toHtmlEscaped());
}

QString NodeInspector::alsoInHtml() const {
  if (alsoIn_.empty()) return {};
  auto link = [](size_t index, const QString& text) {
    return QStringLiteral("<a href=\"%1:%2\">%3</a>")
        .arg(QLatin1String(kStageScheme))
        .arg(index)
        .arg(text.toHtmlEscaped());
  };
  // Per graph, in the compile's order: its linked stage name and the names of its nodes. Stages
  // where the node has the same names share one entry: "forward graph, post-grad graph as mm_3".
  struct Entry {
    QStringList stages;
    QString namesKey, namesHtml;
  };
  std::vector<Entry> entries;
  for (size_t first = 0; first < alsoIn_.size();) {
    size_t end = first;
    QStringList names, links;
    for (; end < alsoIn_.size() && alsoIn_[end].graphId == alsoIn_[first].graphId; ++end) {
      names << alsoIn_[end].nodeName;
      if (links.size() < static_cast<qsizetype>(kMaxNamesPerStage)) links << link(end, alsoIn_[end].nodeName);
    }
    if (end - first > kMaxNamesPerStage)
      links << tr("%n more", nullptr, static_cast<int>(end - first - kMaxNamesPerStage)).toHtmlEscaped();
    const QString key = names.join(QLatin1Char(','));
    const QString stage = link(first, alsoIn_[first].stageName);
    if (!entries.empty() && entries.back().namesKey == key) {
      entries.back().stages << stage;
    } else {
      entries.push_back({{stage}, key, links.join(QStringLiteral(", "))});
    }
    first = end;
  }
  QStringList parts;
  for (const Entry& entry : entries)
    parts << tr("%1 as %2").arg(entry.stages.join(QStringLiteral(", ")), entry.namesHtml);
  return QStringLiteral("<p><b>%1</b> %2</p>").arg(tr("Also in:").toHtmlEscaped(), parts.join(QStringLiteral("; ")));
}

void NodeInspector::setHardware(hw::HwProfile profile) {
  profile_ = std::move(profile);
  if (graph_ && node_ != ir::kNoNode) setNode(graph_, node_, alsoIn_);
}

void NodeInspector::setNodeTimes(std::shared_ptr<const NodeTimes> times) {
  times_ = std::move(times);
  if (graph_ && node_ != ir::kNoNode) setNode(graph_, node_, alsoIn_);
}

void NodeInspector::setNode(std::shared_ptr<const ir::Graph> graph, ir::NodeId node, std::vector<StageLink> alsoIn) {
  if (!graph || node >= graph->size()) {
    clear();
    return;
  }
  graph_ = std::move(graph);
  node_ = node;
  alsoIn_ = std::move(alsoIn);
  const ir::Graph& g = *graph_;
  const ir::Node& n = g.node(node);

  QString html = QStringLiteral("<h2>%1</h2>").arg(escaped(g.name(node))) + alsoInHtml();
  QString general = row(tr("Op"), escaped(ir::nodeKindName(n.kind)));
  if (n.target != 0) general += row(tr("Target"), escaped(g.target(node)));
  if (n.role != ir::Role::Unknown) general += row(tr("Role"), escaped(ir::roleName(n.role)));
  if (n.comment != 0) general += row(tr("Comment"), escaped(g.str(n.comment)));
  if (n.synthetic) general += row(tr("Synthetic"), tr("added by the loader").toHtmlEscaped());
  html += section(tr("Node"), general);

  QString value;
  if (const QString summary = valueSummary(g, node); !summary.isEmpty())
    value += row(tr("Value"), summary.toHtmlEscaped());
  if (n.meta.isTensor()) {
    if (n.meta.hasStrides) {
      QStringList strides;
      for (const ir::SymDim& dim : n.meta.strides) {
        strides << (dim.symbolic() ? escaped(g.str(dim.expr)) : QString::number(dim.value));
      }
      value += row(tr("Strides"), QStringLiteral("[%1]").arg(strides.join(QStringLiteral(", "))));
    }
    if (n.meta.device != 0) value += row(tr("Device"), escaped(g.str(n.meta.device)));
    value += row(tr("Bytes"), formatBytes(n.meta.storageBytes()).toHtmlEscaped());
  }
  html += section(tr("Value"), value);

  if (n.isCall()) {
    const ir::OpInfo& op = ir::lookupOp(g.target(node));
    QString info = row(tr("Category"), opCategoryLabel(op.category).toHtmlEscaped());
    if (!op.name.empty()) info += row(tr("Table entry"), escaped(op.name));
    info += row(tr("Fusible"), yesNo(op.fusible).toHtmlEscaped());
    info += row(tr("Compute sensitive"), yesNo(op.computeSensitive).toHtmlEscaped());
    info += row(tr("Subgraph boundary"), yesNo(op.subgraphBoundary).toHtmlEscaped());
    html += section(tr("Operator"), info);
    html += section(tr("Estimated cost on %1").arg(toQString(profile_.name)), costHtml());
    html += section(tr("Measured beside estimated"), measuredHtml());
  }

  QString args;
  for (size_t i = 0; i < n.args.size(); ++i) args += row(QString::number(i), argHtml(n.args[i]));
  for (const auto& [key, arg] : n.kwargs) args += row(toQString(g.str(key)), argHtml(arg));
  html += section(tr("Arguments"), args);

  QStringList users;
  for (ir::NodeId user : g.users(node)) users << nodeLink(user);
  if (!users.isEmpty()) {
    html += QStringLiteral("<h3>%1</h3><p>%2</p>")
                .arg(tr("Users (%1)").arg(users.size()).toHtmlEscaped(), users.join(QStringLiteral(", ")));
  }

  const ir::Provenance& where = n.provenance;
  QString source;
  if (where.modulePath != 0) source += row(tr("Module"), escaped(g.str(where.modulePath)));
  if (where.file != 0) {
    QString file = QStringLiteral("# File: %1:%2").arg(toQString(g.str(where.file))).arg(where.line);
    if (where.function != 0) file += tr(" in %1").arg(toQString(g.str(where.function)));
    source += row(tr("File"), QStringLiteral("<code>%1</code>").arg(file.toHtmlEscaped()));
  }
  if (where.code != 0) source += row(tr("Code"), QStringLiteral("<code>%1</code>").arg(escaped(g.str(where.code))));
  if (where.annotation != 0) source += row(tr("Annotation"), escaped(g.str(where.annotation)));
  html += section(tr("Provenance"), source);

  browser_->setHtml(html);
}

}  // namespace lathe::views
