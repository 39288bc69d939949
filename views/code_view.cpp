#include "views/code_view.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPainter>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <vector>

namespace lathe::views {

namespace {

// Upper bound on highlighted search matches: a one-letter search in a 10 MB output code must not stall.
constexpr int kMaxHighlightedMatches = 2000;

QTextCharFormat colour(const QColor& foreground, bool bold = false, bool italic = false) {
  QTextCharFormat format;
  format.setForeground(foreground);
  if (bold) format.setFontWeight(QFont::Bold);
  format.setFontItalic(italic);
  return format;
}

// Python (Inductor output code, FX text) or C++/CUDA. Triple-quoted strings are highlighted as
// code, not as strings: in output code they hold the generated kernels, which people read.
class CodeHighlighter : public QSyntaxHighlighter {
 public:
  CodeHighlighter(QTextDocument* document, CodeLanguage language) : QSyntaxHighlighter(document), language_(language) {
    const QString keywords =
        language == CodeLanguage::Python
            ? QStringLiteral(
                  "and|as|assert|async|await|break|class|continue|def|del|elif|else|except|finally|for|"
                  "from|global|if|import|in|is|lambda|nonlocal|not|or|pass|raise|return|try|while|with|"
                  "yield|None|True|False|self")
            : QStringLiteral(
                  "auto|bool|break|case|char|class|const|constexpr|continue|default|do|double|else|enum|"
                  "extern|float|for|if|inline|int|long|namespace|return|short|signed|sizeof|static|struct|"
                  "switch|template|typename|union|unsigned|using|void|volatile|while|__global__|__device__|"
                  "__host__|__shared__|__restrict__|__forceinline__|int64_t|int32_t|uint32_t|uint64_t|half|"
                  "bfloat16|nullptr|true|false");
    rules_.push_back(
        {QRegularExpression(QStringLiteral("\\b(%1)\\b").arg(keywords)), colour(QColor(0, 51, 153), true)});
    rules_.push_back({QRegularExpression(QStringLiteral("\\b[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?[fFuUlL]*\\b")),
                      colour(QColor(23, 80, 160))});
    if (language == CodeLanguage::Python) {
      rules_.push_back({QRegularExpression(QStringLiteral("(?<=\\bdef )\\w+")), colour(QColor(0, 110, 110), true)});
      rules_.push_back({QRegularExpression(QStringLiteral("^\\s*@[\\w.]+")), colour(QColor(128, 96, 0))});
      rules_.push_back({QRegularExpression(QStringLiteral("\\btorch\\.ops\\.[\\w.]+")), colour(QColor(120, 40, 140))});
      rules_.push_back({QRegularExpression(QStringLiteral("\\b(tl|triton)\\.\\w+")), colour(QColor(120, 40, 140))});
    } else {
      rules_.push_back({QRegularExpression(QStringLiteral("^\\s*#\\s*\\w+.*")), colour(QColor(128, 96, 0))});
    }
    rules_.push_back({QRegularExpression(QStringLiteral("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'")),
                      colour(QColor(6, 120, 40))});
    comment_ = colour(QColor(110, 110, 110), false, true);
  }

 protected:
  void highlightBlock(const QString& text) override {
    for (const Rule& rule : rules_) {
      for (auto it = rule.pattern.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        setFormat(static_cast<int>(match.capturedStart()), static_cast<int>(match.capturedLength()), rule.format);
      }
    }
    if (language_ == CodeLanguage::Python) {
      if (const qsizetype hash = commentStart(text, QStringLiteral("#")); hash >= 0)
        setFormat(static_cast<int>(hash), static_cast<int>(text.size() - hash), comment_);
      return;
    }
    highlightCppComments(text);
  }

 private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
  };

  // Where a line comment starts, outside quotes; -1 when there is none.
  static qsizetype commentStart(const QString& text, const QString& marker) {
    QChar quote;
    for (qsizetype i = 0; i < text.size(); ++i) {
      const QChar c = text[i];
      if (!quote.isNull()) {
        if (c == QLatin1Char('\\'))
          ++i;
        else if (c == quote)
          quote = QChar();
      } else if (c == QLatin1Char('"') || c == QLatin1Char('\'')) {
        quote = c;
      } else if (text.mid(i, marker.size()) == marker) {
        return i;
      }
    }
    return -1;
  }

  // `//` to the end of the line and `/* ... */` across lines (block state 1 = inside a block comment).
  void highlightCppComments(const QString& text) {
    setCurrentBlockState(0);
    qsizetype start = previousBlockState() == 1 ? 0 : -1;  // start of an open block comment
    qsizetype from = 0;
    while (from < text.size()) {
      if (start < 0) {
        const qsizetype line = text.indexOf(QStringLiteral("//"), from);
        const qsizetype block = text.indexOf(QStringLiteral("/*"), from);
        if (line >= 0 && (block < 0 || line < block)) {
          setFormat(static_cast<int>(line), static_cast<int>(text.size() - line), comment_);
          return;
        }
        if (block < 0) return;
        start = block;
        from = block + 2;
      }
      const qsizetype end = text.indexOf(QStringLiteral("*/"), from);
      if (end < 0) {
        setFormat(static_cast<int>(start), static_cast<int>(text.size() - start), comment_);
        setCurrentBlockState(1);
        return;
      }
      setFormat(static_cast<int>(start), static_cast<int>(end + 2 - start), comment_);
      from = end + 2;
      start = -1;
    }
    if (start >= 0) setCurrentBlockState(1);
  }

  CodeLanguage language_;
  std::vector<Rule> rules_;
  QTextCharFormat comment_;
};

class Gutter : public QWidget {
 public:
  explicit Gutter(CodeEditor* editor) : QWidget(editor), editor_(editor) {}
  [[nodiscard]] QSize sizeHint() const override { return {editor_->gutterWidth(), 0}; }

 protected:
  void paintEvent(QPaintEvent* event) override { editor_->paintGutter(event); }

 private:
  CodeEditor* editor_;
};

bool isNameChar(QChar c) {
  return c.isLetterOrNumber() || c == QLatin1Char('_');
}

}  // namespace

CodeEditor::CodeEditor(QWidget* parent) : QPlainTextEdit(parent), gutter_(new Gutter(this)) {
  setReadOnly(true);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  setFont(mono);
  connect(this, &QPlainTextEdit::blockCountChanged, this, [this] { setViewportMargins(gutterWidth(), 0, 0, 0); });
  connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect& rect, int dy) {
    if (dy != 0)
      gutter_->scroll(0, dy);
    else
      gutter_->update(0, rect.y(), gutter_->width(), rect.height());
  });
  setViewportMargins(gutterWidth(), 0, 0, 0);
}

int CodeEditor::gutterWidth() const {
  int digits = 1;
  for (int lines = std::max(1, blockCount()); lines >= 10; lines /= 10) ++digits;
  return 12 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * std::max(digits, 3);
}

void CodeEditor::resizeEvent(QResizeEvent* event) {
  QPlainTextEdit::resizeEvent(event);
  const QRect area = contentsRect();
  gutter_->setGeometry(QRect(area.left(), area.top(), gutterWidth(), area.height()));
}

void CodeEditor::paintGutter(QPaintEvent* event) {
  QPainter painter(gutter_);
  painter.fillRect(event->rect(), palette().color(QPalette::AlternateBase));
  painter.setPen(palette().color(QPalette::PlaceholderText));
  painter.setFont(font());
  QTextBlock block = firstVisibleBlock();
  int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
  while (block.isValid() && top <= event->rect().bottom()) {
    const int height = qRound(blockBoundingRect(block).height());
    if (block.isVisible() && top + height >= event->rect().top()) {
      painter.drawText(0, top, gutter_->width() - 6, fontMetrics().height(), Qt::AlignRight,
                       QString::number(block.blockNumber() + 1));
    }
    top += height;
    block = block.next();
  }
}

CodeView::CodeView(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel(this)),
      editor_(new CodeEditor(this)),
      findBar_(new QWidget(this)),
      findText_(new QLineEdit(findBar_)),
      findStatus_(new QLabel(findBar_)) {
  setObjectName(QStringLiteral("codeView"));
  editor_->setObjectName(QStringLiteral("codeEditor"));
  title_->setObjectName(QStringLiteral("codeTitle"));
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  findText_->setObjectName(QStringLiteral("codeFind"));
  findText_->setPlaceholderText(tr("Find in code"));
  findText_->setClearButtonEnabled(true);

  auto* previous = new QToolButton(findBar_);
  previous->setText(tr("Previous"));
  auto* next = new QToolButton(findBar_);
  next->setText(tr("Next"));
  auto* close = new QToolButton(findBar_);
  close->setText(tr("Close"));
  auto* findLayout = new QHBoxLayout(findBar_);
  findLayout->setContentsMargins(0, 0, 0, 0);
  findLayout->addWidget(findText_, 1);
  findLayout->addWidget(previous);
  findLayout->addWidget(next);
  findLayout->addWidget(findStatus_);
  findLayout->addWidget(close);
  findBar_->hide();

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 4, 0, 0);
  layout->addWidget(title_);
  layout->addWidget(editor_, 1);
  layout->addWidget(findBar_);

  connect(findText_, &QLineEdit::textChanged, this, [this](const QString& text) {
    highlightMatches(text);
    if (!text.isEmpty()) {
      // Search from the start of the current match so that typing refines it in place.
      QTextCursor cursor = editor_->textCursor();
      cursor.setPosition(cursor.selectionStart());
      editor_->setTextCursor(cursor);
      find(text);
    }
  });
  connect(findText_, &QLineEdit::returnPressed, this, [this] { find(findText_->text()); });
  connect(next, &QToolButton::clicked, this, [this] { find(findText_->text()); });
  connect(previous, &QToolButton::clicked, this, [this] { find(findText_->text(), true); });
  connect(close, &QToolButton::clicked, this, [this] {
    findBar_->hide();
    editor_->setExtraSelections({});
    editor_->setFocus();
  });
  editor_->installEventFilter(this);
  editor_->viewport()->installEventFilter(this);
  findText_->installEventFilter(this);
  clear();
}

void CodeView::setCode(const QString& title, const QString& text, CodeLanguage language,
                       std::vector<CodeGraph> graphs) {
  delete highlighter_;
  highlighter_ = nullptr;
  editor_->setPlainText(text);
  highlighter_ = new CodeHighlighter(editor_->document(), language);
  highlighter_->rehighlight();  // now rather than on the next event-loop turn: the text is on show
  title_->setText(title);
  QStringList ids;
  for (const CodeGraph& graph : graphs) ids << graph.id;
  title_->setToolTip(ids.isEmpty() ? QString()
                                   : tr("Click a node name, or a line naming source nodes, to select that node in %1.")
                                         .arg(ids.join(QStringLiteral(", "))));
  graphs_ = std::move(graphs);
  if (findBar_->isVisible()) highlightMatches(findText_->text());
}

void CodeView::clear() {
  setCode(tr("No code selected: pick a graph or an output code entry in the artifact tree."), {}, CodeLanguage::Python,
          {});
}

QString CodeView::title() const {
  return title_->text();
}

bool CodeView::find(const QString& text, bool backward) {
  if (text.isEmpty()) return false;
  const QTextDocument::FindFlags flags = backward ? QTextDocument::FindBackward : QTextDocument::FindFlags();
  bool found = editor_->find(text, flags);
  if (!found) {  // wrap around
    QTextCursor cursor = editor_->textCursor();
    cursor.movePosition(backward ? QTextCursor::End : QTextCursor::Start);
    editor_->setTextCursor(cursor);
    found = editor_->find(text, flags);
  }
  findStatus_->setText(found ? QString() : tr("Not found"));
  if (found) editor_->centerCursor();
  return found;
}

void CodeView::showFindBar() {
  findBar_->show();
  const QString selected = editor_->textCursor().selectedText();
  if (!selected.isEmpty() && !selected.contains(QChar::ParagraphSeparator)) findText_->setText(selected);
  findText_->setFocus(Qt::ShortcutFocusReason);
  findText_->selectAll();
}

bool CodeView::revealDefinition(const QString& name) {
  const QRegularExpression definition(QStringLiteral("\\b%1: ").arg(QRegularExpression::escape(name)));
  const QTextCursor found = editor_->document()->find(definition);
  if (found.isNull()) return false;
  editor_->setTextCursor(found);
  editor_->centerCursor();
  return true;
}

void CodeView::highlightMatches(const QString& text) {
  QList<QTextEdit::ExtraSelection> selections;
  if (!text.isEmpty()) {
    QTextCharFormat format;
    format.setBackground(QColor(255, 236, 140));
    for (QTextCursor cursor = editor_->document()->find(text);
         !cursor.isNull() && selections.size() < kMaxHighlightedMatches;
         cursor = editor_->document()->find(text, cursor)) {
      selections.append({cursor, format});
    }
  }
  editor_->setExtraSelections(selections);
  findStatus_->setText(text.isEmpty() ? QString() : tr("%n match(es)", nullptr, static_cast<int>(selections.size())));
}

CodeNode CodeView::lookup(const QString& name) const {
  const std::string key = name.toStdString();
  for (const CodeGraph& graph : graphs_) {
    if (!graph.graph) continue;
    if (const ir::NodeId node = graph.graph->find(key); node != ir::kNoNode) return {graph.id, node};
  }
  return {};
}

CodeNode CodeView::nodeAt(int position) const {
  const QTextBlock block = editor_->document()->findBlock(position);
  if (graphs_.empty() || !block.isValid()) return {};
  const QString line = block.text();
  const auto column = static_cast<qsizetype>(position - block.position());

  // The name under the cursor.
  qsizetype start = column, end = column;
  while (start > 0 && isNameChar(line[start - 1])) --start;
  while (end < line.size() && isNameChar(line[end])) ++end;
  if (end > start) {
    if (CodeNode found = lookup(line.mid(start, end - start)); found.node != ir::kNoNode) return found;
  }
  // A source-nodes comment: its last name a graph knows, the node the kernel computes.
  static const QRegularExpression sourceNodes(QStringLiteral("Source Nodes: \\[([^\\]]*)\\]"));
  if (const QRegularExpressionMatch match = sourceNodes.match(line); match.hasMatch()) {
    const QStringList names = match.captured(1).split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (auto name = names.rbegin(); name != names.rend(); ++name) {
      if (CodeNode found = lookup(name->trimmed()); found.node != ir::kNoNode) return found;
    }
  }
  // An FX line defining a node: `name: "f32[...]" = ...` or `name = ...`.
  static const QRegularExpression definition(QStringLiteral("^\\s*(\\w+)\\s*(:|=)"));
  if (const QRegularExpressionMatch match = definition.match(line); match.hasMatch()) return lookup(match.captured(1));
  return {};
}

void CodeView::activate(int position) {
  const CodeNode found = nodeAt(position);
  if (found.node != ir::kNoNode) emit nodeActivated(found.graphId, found.node);
}

bool CodeView::eventFilter(QObject* watched, QEvent* event) {
  // Ctrl+F inside the view searches the code, not the window's node filter.
  if (event->type() == QEvent::ShortcutOverride) {
    auto* key = static_cast<QKeyEvent*>(event);
    if (key->matches(QKeySequence::Find) || (watched == findText_ && key->key() == Qt::Key_Escape)) {
      event->accept();
      return false;
    }
  }
  if (event->type() == QEvent::KeyPress) {
    auto* key = static_cast<QKeyEvent*>(event);
    if (key->matches(QKeySequence::Find)) {
      showFindBar();
      return true;
    }
    if (watched == findText_ && key->key() == Qt::Key_Escape) {
      findBar_->hide();
      editor_->setFocus();
      return true;
    }
    if (watched == findText_ && key->key() == Qt::Key_Return && key->modifiers() & Qt::ShiftModifier) {
      find(findText_->text(), true);
      return true;
    }
  }
  if (watched == editor_->viewport() && event->type() == QEvent::MouseButtonRelease) {
    auto* mouse = static_cast<QMouseEvent*>(event);
    // A drag selects text; only a plain click goes to a node.
    if (mouse->button() == Qt::LeftButton && !editor_->textCursor().hasSelection())
      activate(editor_->cursorForPosition(mouse->position().toPoint()).position());
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace lathe::views
