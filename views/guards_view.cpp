#include "views/guards_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTreeView>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <optional>

#include "views/formatting.h"
#include "views/guard_diff_model.h"
#include "views/guard_tree_model.h"

namespace lathe::views {

namespace {

constexpr auto kGuardScheme = "guard";
constexpr auto kCompileScheme = "compile";
// Guard types listed by name in the counts line; the rest are summed as "others".
constexpr size_t kCountedTypes = 8;

std::optional<int32_t> rankOf(const io::TraceCompile& compile) {
  return compile.rank >= 0 ? std::optional(compile.rank) : std::nullopt;
}

QString compileLabel(const io::TraceLog& log, int index) {
  const io::TraceCompile& compile = log.compiles[static_cast<size_t>(index)];
  QString label = toQString(compile.id);
  if (log.multiRank) label = GuardsView::tr("rank %1 · %2").arg(compile.rank).arg(label);
  if (!compile.frameName.empty()) label = GuardsView::tr("%1 · %2").arg(label, toQString(compile.frameName));
  return label;
}

}  // namespace

GuardsView::GuardsView(QWidget* parent)
    : QWidget(parent),
      compileCombo_(new QComboBox(this)),
      search_(new QLineEdit(this)),
      counts_(new QLabel(this)),
      tree_(new QTreeView(this)),
      model_(new GuardTreeModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      bottomTabs_(new QTabWidget(this)),
      reasons_(new QTextBrowser(this)),
      beforeCombo_(new QComboBox(this)),
      afterCombo_(new QComboBox(this)),
      diffSummary_(new QLabel(this)),
      diffTable_(new QTableView(this)),
      diffModel_(new GuardDiffModel(this)) {
  setObjectName(QStringLiteral("guardsView"));
  proxy_->setSourceModel(model_);
  proxy_->setFilterKeyColumn(-1);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  // A match keeps its ancestors, so that it is seen where it sits in the tree.
  proxy_->setRecursiveFilteringEnabled(true);

  compileCombo_->setObjectName(QStringLiteral("guardsCompile"));
  compileCombo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  search_->setObjectName(QStringLiteral("guardsSearch"));
  search_->setPlaceholderText(tr("Filter guards: type, value, code, user code…"));
  search_->setClearButtonEnabled(true);
  search_->setMinimumWidth(280);
  counts_->setObjectName(QStringLiteral("guardCounts"));
  counts_->setWordWrap(true);
  counts_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  tree_->setObjectName(QStringLiteral("guardTree"));
  tree_->setModel(proxy_);
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);
  tree_->setWordWrap(false);
  tree_->header()->setStretchLastSection(false);
  tree_->header()->resizeSection(GuardTreeModel::GuardColumn, 240);
  tree_->header()->resizeSection(GuardTreeModel::CodeColumn, 560);
  tree_->header()->resizeSection(GuardTreeModel::SourceColumn, 260);

  reasons_->setObjectName(QStringLiteral("recompileReasons"));
  reasons_->setOpenLinks(false);
  connect(reasons_, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    bool ok = false;
    const uint value = url.path().toUInt(&ok);
    if (!ok) return;
    if (url.scheme() == QLatin1String(kGuardScheme)) selectGuard(static_cast<uint32_t>(value));
    if (url.scheme() == QLatin1String(kCompileScheme)) showCompile(static_cast<int>(value));
  });

  diffTable_->setObjectName(QStringLiteral("guardDiff"));
  diffTable_->setModel(diffModel_);
  diffTable_->setWordWrap(false);
  diffTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  diffTable_->verticalHeader()->hide();
  diffTable_->verticalHeader()->setDefaultSectionSize(diffTable_->fontMetrics().height() + 6);
  diffTable_->horizontalHeader()->setStretchLastSection(true);
  diffTable_->horizontalHeader()->resizeSection(GuardDiffModel::ChangeColumn, 80);
  diffTable_->horizontalHeader()->resizeSection(GuardDiffModel::TypeColumn, 140);
  diffTable_->horizontalHeader()->resizeSection(GuardDiffModel::PathColumn, 260);
  diffTable_->horizontalHeader()->resizeSection(GuardDiffModel::BeforeColumn, 480);
  beforeCombo_->setObjectName(QStringLiteral("guardDiffBefore"));
  afterCombo_->setObjectName(QStringLiteral("guardDiffAfter"));

  auto* header = new QHBoxLayout;
  header->addWidget(new QLabel(tr("Compile:"), this));
  header->addWidget(compileCombo_);
  header->addStretch(1);
  header->addWidget(search_);

  auto* diffPage = new QWidget(this);
  auto* diffLayout = new QVBoxLayout(diffPage);
  diffLayout->setContentsMargins(0, 4, 0, 0);
  auto* diffHeader = new QHBoxLayout;
  diffHeader->addWidget(new QLabel(tr("Before:"), diffPage));
  diffHeader->addWidget(beforeCombo_);
  diffHeader->addWidget(new QLabel(tr("After:"), diffPage));
  diffHeader->addWidget(afterCombo_);
  diffHeader->addWidget(diffSummary_, 1);
  diffLayout->addLayout(diffHeader);
  diffLayout->addWidget(diffTable_, 1);
  bottomTabs_->setDocumentMode(true);
  bottomTabs_->addTab(reasons_, tr("Recompile reasons"));
  bottomTabs_->addTab(diffPage, tr("Diff of two compiles"));

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(tree_);
  splitter->addWidget(bottomTabs_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 4, 0, 0);
  layout->addLayout(header);
  layout->addWidget(counts_);
  layout->addWidget(splitter, 1);

  connect(compileCombo_, &QComboBox::currentIndexChanged, this, &GuardsView::onCompileChosen);
  connect(beforeCombo_, &QComboBox::currentIndexChanged, this, &GuardsView::onDiffChosen);
  connect(afterCombo_, &QComboBox::currentIndexChanged, this, &GuardsView::onDiffChosen);
  connect(search_, &QLineEdit::textChanged, this, &GuardsView::setFilterText);
  setArtifact(nullptr);
}

GuardsView::~GuardsView() = default;

void GuardsView::setArtifact(std::shared_ptr<const io::Artifact> artifact) {
  artifact_ = std::move(artifact);
  trees_.clear();
  withGuards_.clear();
  const QSignalBlocker blocker(compileCombo_);
  compileCombo_->clear();
  if (artifact_ && artifact_->trace) {
    const io::TraceLog& log = *artifact_->trace;
    for (size_t index = 0; index < log.compiles.size(); ++index) {
      if (log.compiles[index].guardFormat == io::GuardFormat::None) continue;
      withGuards_.push_back(static_cast<int>(index));
      compileCombo_->addItem(compileLabel(log, static_cast<int>(index)), static_cast<int>(index));
    }
  }
  compileCombo_->setEnabled(!withGuards_.empty());
  int first = withGuards_.empty() ? -1 : withGuards_.front();
  for (int compile : withGuards_) {
    if (!reasonsAgainst(compile).empty()) {
      first = compile;
      break;
    }
  }
  if (first < 0) {
    model_->setTree(nullptr);
    diffModel_->setTrees(nullptr, nullptr);
    counts_->setText(artifact_ && artifact_->trace ? tr("No compile of this capture logged its guards.")
                                                   : tr("Guards are recorded in TORCH_TRACE logs and MagiCompiler dumps only."));
    reasons_->clear();
    beforeCombo_->clear();
    afterCombo_->clear();
    diffSummary_->clear();
    return;
  }
  showCompile(first);
  onCompileChosen();  // the combo's signal was blocked
}

bool GuardsView::showCompile(int compile) {
  const int row = compileCombo_->findData(compile);
  if (row < 0) return false;
  compileCombo_->setCurrentIndex(row);
  return true;
}

int GuardsView::shownCompile() const {
  return compileCombo_->currentIndex() < 0 ? -1 : compileCombo_->currentData().toInt();
}

std::shared_ptr<const io::GuardTree> GuardsView::treeOf(int compile) {
  if (!artifact_ || !artifact_->trace || compile < 0) return nullptr;
  if (const auto found = trees_.find(compile); found != trees_.end()) return found->second;
  const io::TraceLog& log = *artifact_->trace;
  const io::TraceCompile& c = log.compiles[static_cast<size_t>(compile)];
  std::shared_ptr<const io::GuardTree> tree;
  Diagnostics ignored;  // the loader already reported damage in this payload
  if (auto parsed = io::compileGuards(log, c, ignored)) tree = std::make_shared<const io::GuardTree>(std::move(*parsed));
  trees_.emplace(compile, tree);
  return tree;
}

std::vector<GuardsView::Reason> GuardsView::reasonsAgainst(int compile) {
  std::vector<Reason> found;
  if (!artifact_ || !artifact_->trace) return found;
  const io::TraceLog& log = *artifact_->trace;
  const io::TraceCompile& failed = log.compiles[static_cast<size_t>(compile)];
  for (size_t later = 0; later < log.compiles.size(); ++later) {
    const io::TraceCompile& c = log.compiles[later];
    if (c.rank != failed.rank) continue;
    for (const std::string& text : c.recompileReasons) {
      Diagnostics ignored;
      for (io::RecompileReason& reason : io::parseRecompileReasons(text, {}, ignored)) {
        if (log.findCompile(reason.compileId, rankOf(c)) != &failed) continue;
        Reason entry{static_cast<int>(later), std::move(reason), {}};
        if (const auto tree = treeOf(compile)) entry.brokenGuards = io::matchRecompileReason(entry.reason, *tree);
        found.push_back(std::move(entry));
      }
    }
  }
  return found;
}

std::vector<int> GuardsView::compilesOfFrame(int compile) const {
  std::vector<int> same;
  const io::TraceLog& log = *artifact_->trace;
  const io::TraceCompile& shown = log.compiles[static_cast<size_t>(compile)];
  for (int other : withGuards_) {
    const io::TraceCompile& c = log.compiles[static_cast<size_t>(other)];
    if (c.rank == shown.rank && c.frameId == shown.frameId && c.compiledAutogradId == shown.compiledAutogradId)
      same.push_back(other);
  }
  return same;
}

void GuardsView::onCompileChosen() {
  const int compile = shownCompile();
  const std::shared_ptr<const io::GuardTree> tree = treeOf(compile);
  const std::vector<Reason> later = compile >= 0 ? reasonsAgainst(compile) : std::vector<Reason>{};
  std::map<uint32_t, QString> broken;
  for (const Reason& reason : later) {
    const QString text = tr("%1: %2").arg(toQString(artifact_->trace->compiles[static_cast<size_t>(reason.compile)].id),
                                          toQString(reason.reason.reason));
    for (uint32_t guard : reason.brokenGuards) {
      QString& joined = broken[guard];
      joined += (joined.isEmpty() ? QString() : QStringLiteral("\n")) + text;
    }
  }
  model_->setTree(tree, std::move(broken));
  tree_->expandToDepth(0);
  for (const auto& [guard, reason] : model_->brokenGuards()) {
    for (uint32_t parent = tree->node(guard).parent; parent != io::kNoGuardNode; parent = tree->node(parent).parent)
      tree_->expand(proxy_->mapFromSource(model_->indexOfGuard(parent)));
  }
  if (!search_->text().isEmpty()) tree_->expandAll();

  if (tree) {
    const std::vector<io::GuardTypeCount> counts = io::countGuardsByType(*tree);
    QStringList parts;
    size_t others = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      if (i < kCountedTypes)
        parts << tr("%1 %2").arg(counts[i].count).arg(toQString(counts[i].type));
      else
        others += counts[i].count;
    }
    if (others > 0) parts << tr("%1 others").arg(others);
    QString text =
        tr("%n guard(s): ", nullptr, static_cast<int>(tree->leafCount())) + parts.join(QStringLiteral(" · "));
    if (const auto latency = tree->latencyMicros()) text += tr("  ·  checked in %1 µs").arg(*latency);
    counts_->setText(text);
  } else {
    counts_->setText(tr("This compile logged no guards."));
  }
  showReasons(compile, later);

  // The diff compares the shown compile with the next one of its frame (or the one before).
  const QSignalBlocker blockBefore(beforeCombo_);
  const QSignalBlocker blockAfter(afterCombo_);
  beforeCombo_->clear();
  afterCombo_->clear();
  if (compile < 0) return;
  const std::vector<int> frame = compilesOfFrame(compile);
  for (int other : frame) {
    beforeCombo_->addItem(compileLabel(*artifact_->trace, other), other);
    afterCombo_->addItem(compileLabel(*artifact_->trace, other), other);
  }
  const auto shownAt = static_cast<int>(std::find(frame.begin(), frame.end(), compile) - frame.begin());
  const int next = shownAt + 1 < static_cast<int>(frame.size()) ? shownAt + 1 : std::max(shownAt - 1, 0);
  beforeCombo_->setCurrentIndex(std::min(shownAt, next));
  afterCombo_->setCurrentIndex(std::max(shownAt, next));
  onDiffChosen();
}

void GuardsView::showReasons(int compile, const std::vector<Reason>& later) {
  if (compile < 0) {
    reasons_->clear();
    return;
  }
  const io::TraceLog& log = *artifact_->trace;
  const io::TraceCompile& shown = log.compiles[static_cast<size_t>(compile)];
  const std::shared_ptr<const io::GuardTree> tree = treeOf(compile);
  QString html;
  if (later.empty()) {
    html += QStringLiteral("<p><i>%1</i></p>")
                .arg(tr("No later compile of this frame failed these guards.").toHtmlEscaped());
  }
  for (const Reason& reason : later) {
    const QString recompiled = toQString(log.compiles[static_cast<size_t>(reason.compile)].id);
    html += QStringLiteral("<p><b>%1</b> %2<br><span style=\"color:#961414\">%3</span></p>")
                .arg(recompiled.toHtmlEscaped(), tr("recompiled because this compile's guards failed:").toHtmlEscaped(),
                     toQString(reason.reason.reason).toHtmlEscaped());
    if (reason.brokenGuards.empty()) {
      html += QStringLiteral("<p><i>%1</i></p>").arg(tr("No guard of this tree matches the reason.").toHtmlEscaped());
      continue;
    }
    html += QStringLiteral("<ul>");
    for (uint32_t guard : reason.brokenGuards) {
      const io::GuardNode& node = tree->node(guard);
      html +=
          QStringLiteral("<li><a href=\"%1:%2\">%3</a> <code>%4</code></li>")
              .arg(QLatin1String(kGuardScheme))
              .arg(guard)
              .arg(toQString(tree->text(node.type)).toHtmlEscaped(), toQString(tree->text(node.code)).toHtmlEscaped());
    }
    html += QStringLiteral("</ul>");
  }
  // Why the shown compile exists: the guards of an earlier compile that failed.
  for (const std::string& text : shown.recompileReasons) {
    Diagnostics ignored;
    for (const io::RecompileReason& reason : io::parseRecompileReasons(text, {}, ignored)) {
      const io::TraceCompile* failed = log.findCompile(reason.compileId, rankOf(shown));
      if (!failed) continue;
      const auto failedIndex = static_cast<int>(failed - log.compiles.data());
      html += QStringLiteral("<p>%1 <a href=\"%2:%3\">%4</a>: %5</p>")
                  .arg(tr("This compile exists because guards of").toHtmlEscaped(), QLatin1String(kCompileScheme))
                  .arg(failedIndex)
                  .arg(toQString(failed->id).toHtmlEscaped(), toQString(reason.reason).toHtmlEscaped());
    }
  }
  reasons_->setHtml(html);
}

void GuardsView::onDiffChosen() {
  const int before = beforeCombo_->currentData().isValid() ? beforeCombo_->currentData().toInt() : -1;
  const int after = afterCombo_->currentData().isValid() ? afterCombo_->currentData().toInt() : -1;
  diffModel_->setTrees(treeOf(before), treeOf(after));
  if (before < 0 || after < 0) {
    diffSummary_->clear();
    return;
  }
  diffSummary_->setText(tr("%1 added · %2 removed · %3 changed · %4 unchanged")
                            .arg(diffModel_->count(io::GuardChange::Added))
                            .arg(diffModel_->count(io::GuardChange::Removed))
                            .arg(diffModel_->count(io::GuardChange::Changed))
                            .arg(diffModel_->diff().unchanged));
}

bool GuardsView::showDiff(int before, int after) {
  const int beforeRow = beforeCombo_->findData(before);
  const int afterRow = afterCombo_->findData(after);
  if (beforeRow < 0 || afterRow < 0) return false;
  {
    const QSignalBlocker blocker(beforeCombo_);
    beforeCombo_->setCurrentIndex(beforeRow);
  }
  afterCombo_->setCurrentIndex(afterRow);
  onDiffChosen();
  bottomTabs_->setCurrentIndex(1);
  return true;
}

void GuardsView::setFilterText(const QString& text) {
  if (search_->text() != text) {
    search_->setText(text);  // comes back here through textChanged
    return;
  }
  proxy_->setFilterFixedString(text);
  if (!text.isEmpty()) tree_->expandAll();
}

void GuardsView::focusSearch() {
  search_->setFocus(Qt::ShortcutFocusReason);
  search_->selectAll();
}

void GuardsView::selectGuard(uint32_t guard) {
  QModelIndex index = proxy_->mapFromSource(model_->indexOfGuard(guard));
  if (!index.isValid()) {  // filtered out: show every guard again
    search_->clear();
    index = proxy_->mapFromSource(model_->indexOfGuard(guard));
  }
  tree_->setCurrentIndex(index);
  tree_->scrollTo(index, QAbstractItemView::PositionAtCenter);
}

QString GuardsView::countsText() const {
  return counts_->text();
}

QString GuardsView::reasonsText() const {
  return reasons_->toPlainText();
}

}  // namespace lathe::views
