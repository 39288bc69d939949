#include "util/message.h"

#include <gtest/gtest.h>

namespace lathe {
namespace {

TEST(Message, EnglishFillsArgumentsAndThePlural) {
  const Message nodes(LATHE_TEXT_N("test", "%n node(s)"), 1);
  EXPECT_EQ(toEnglish(nodes), "1 node");
  EXPECT_EQ(toEnglish(Message(LATHE_TEXT_N("test", "%n node(s)"), 0)), "0 nodes");
  const Message line(LATHE_TEXT("test", "+ piece %1: %2 (split op %3)"), {"4", nodes, "attn_2"});
  EXPECT_EQ(toEnglish(line), "+ piece 4: 1 node (split op attn_2)");
  // Arguments in any order the translation puts them.
  const Message swapped(LATHE_TEXT("test", "%2 before %1"), {"a", "b"});
  EXPECT_EQ(toEnglish(swapped), "b before a");
}

TEST(Message, PlaceholdersInArgumentsAreLeftAsTheyAre) {
  // A node name or a reason read from a file may hold "%2": it is text, not a placeholder.
  const Message line(LATHE_TEXT("test", "+ saved %1  (%2)"), {"x%2", "100%1 sure"});
  EXPECT_EQ(toEnglish(line), "+ saved x%2  (100%1 sure)");
  // A placeholder without its argument, and a lone %, stay in the text.
  EXPECT_EQ(toEnglish(Message(LATHE_TEXT("test", "%1 of %3 at 50%"), {"a"})), "a of %3 at 50%");
  EXPECT_EQ(toEnglish(Message("shown as is (s) %1")), "shown as is (s) %1");
}

TEST(Message, TranslationReplacesEveryPatternButNotTheValues) {
  const Message line(LATHE_TEXT("test", "+ unit %1: %2"), {"layers.0", Message(LATHE_TEXT_N("test", "%n weight(s)"), 9)});
  const std::string said = fill(line, [](const MessagePattern& pattern, std::optional<int64_t>) {
    return std::string(std::string(pattern.text) == "+ unit %1: %2" ? "+ 单元 %1：%2" : "%n 个权重");
  });
  EXPECT_EQ(said, "+ 单元 layers.0：9 个权重");
}

TEST(Message, EqualByPatternTextNotAddress) {
  const char a[] = "min cut";
  const char b[] = "min cut";
  EXPECT_EQ(Message(MessagePattern{"test", a}, {}), Message(MessagePattern{"test", b}, {}));
  EXPECT_NE(Message(LATHE_TEXT("test", "min cut"), {}), Message("min cut"));  // a pattern is not a value
}

}  // namespace
}  // namespace lathe
