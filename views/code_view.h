// Read-only code: Inductor output code, a graph's FX text, generated CUDA. Line numbers, Python
// and C++/CUDA highlighting, Ctrl+F search within the view, and "go to node": a click on a node
// name, or on a `# Topologically Sorted Source Nodes: [...]` line (its last node: the kernel's
// output), selects that node in the first of the code's graphs that has it. Inductor names source
// nodes after the Dynamo graph where they came from it, after the AOT graph otherwise (backward).
#pragma once

#include <QPlainTextEdit>
#include <QWidget>
#include <memory>
#include <vector>

#include "ir/graph.h"

class QLabel;
class QLineEdit;
class QSyntaxHighlighter;
class QToolButton;

namespace lathe::views {

enum class CodeLanguage { Python, Cpp };

// A graph whose nodes the code names.
struct CodeGraph {
  QString id;
  std::shared_ptr<const ir::Graph> graph;
};

struct CodeNode {
  QString graphId;
  ir::NodeId node = ir::kNoNode;
};

// QPlainTextEdit with a line-number gutter.
class CodeEditor : public QPlainTextEdit {
  Q_OBJECT

 public:
  explicit CodeEditor(QWidget* parent = nullptr);
  [[nodiscard]] int gutterWidth() const;
  void paintGutter(QPaintEvent* event);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  QWidget* gutter_;
};

class CodeView : public QWidget {
  Q_OBJECT

 public:
  explicit CodeView(QWidget* parent = nullptr);

  // graphs: where "go to node" looks names up, in order.
  void setCode(const QString& title, const QString& text, CodeLanguage language, std::vector<CodeGraph> graphs);
  void clear();
  [[nodiscard]] CodeEditor* editor() const { return editor_; }
  [[nodiscard]] QString title() const;

  // Search: selects the next (or previous) match, wrapping around; false when there is none.
  bool find(const QString& text, bool backward = false);
  void showFindBar();
  // Moves to the FX line that defines node `name` (`name: "f32[...]" = ...`) and centres it.
  bool revealDefinition(const QString& name);
  // The node a click at this document position selects; node kNoNode when none.
  [[nodiscard]] CodeNode nodeAt(int position) const;
  // As a click there: emits nodeActivated when the position names a node.
  void activate(int position);

 signals:
  void nodeActivated(const QString& graphId, lathe::ir::NodeId node);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void highlightMatches(const QString& text);
  [[nodiscard]] CodeNode lookup(const QString& name) const;

  QLabel* title_;
  CodeEditor* editor_;
  QSyntaxHighlighter* highlighter_ = nullptr;
  QWidget* findBar_;
  QLineEdit* findText_;
  QLabel* findStatus_;
  std::vector<CodeGraph> graphs_;
};

}  // namespace lathe::views
