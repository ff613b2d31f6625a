#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "floe/sql/lexer_internal.h"

namespace floe::sql::internal {
namespace {

std::string FirstLine(const Status& status) {
  const std::string& m = status.message();
  return m.substr(0, m.find('\n'));
}

std::vector<Token> Lex(std::string_view text) {
  SourceText source = SourceText::Verbatim(text);
  auto tokens = Tokenize(source);
  EXPECT_TRUE(tokens.ok()) << tokens.status().ToString();
  return tokens.ok() ? *tokens : std::vector<Token>{};
}

Status LexError(std::string_view text) {
  SourceText source = SourceText::Verbatim(text);
  auto tokens = Tokenize(source);
  EXPECT_FALSE(tokens.ok()) << text;
  return tokens.ok() ? Status::OK() : tokens.status();
}

std::vector<TokenKind> Kinds(const std::vector<Token>& tokens) {
  std::vector<TokenKind> kinds;
  for (const Token& t : tokens) kinds.push_back(t.kind);
  return kinds;
}

TEST(Tokenize, SplitsWordsLiteralsAndPunctuation) {
  auto tokens = Lex("SELECT a_1, `b c`, 'it''s', 12, 1.5, .5, 2e-3 FROM t;");
  using K = TokenKind;
  EXPECT_EQ(Kinds(tokens),
            (std::vector<K>{K::kWord, K::kWord, K::kComma, K::kQuotedWord, K::kComma, K::kString,
                            K::kComma, K::kNumber, K::kComma, K::kNumber, K::kComma, K::kNumber,
                            K::kComma, K::kNumber, K::kWord, K::kWord, K::kSemicolon, K::kEnd}));
  EXPECT_EQ(tokens[1].text, "a_1");
  EXPECT_EQ(tokens[3].text, "b c");
  EXPECT_EQ(tokens[5].text, "it's");
  EXPECT_EQ(tokens[9].text, "1.5");
  EXPECT_EQ(tokens[11].text, ".5");
  EXPECT_EQ(tokens[13].text, "2e-3");
}

TEST(Tokenize, RecognisesEveryOperator) {
  using K = TokenKind;
  EXPECT_EQ(Kinds(Lex("= <> != < <= > >= ( ) , ; . * + -")),
            (std::vector<K>{K::kEq, K::kNe, K::kNe, K::kLt, K::kLe, K::kGt, K::kGe, K::kLParen,
                            K::kRParen, K::kComma, K::kSemicolon, K::kDot, K::kStar, K::kPlus,
                            K::kMinus, K::kEnd}));
  // No spaces needed between operators and operands.
  EXPECT_EQ(Kinds(Lex("a>=-1")),
            (std::vector<K>{K::kWord, K::kGe, K::kMinus, K::kNumber, K::kEnd}));
}

TEST(Tokenize, QuotedIdentifierUnescapesDoubledBackquote) {
  auto tokens = Lex("`we``ird`");
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].kind, TokenKind::kQuotedWord);
  EXPECT_EQ(tokens[0].text, "we`ird");
}

TEST(Tokenize, StringsKeepNewlinesCommentMarkersAndUtf8) {
  auto tokens = Lex("'a -- b /* c */\nd' 'héllo' ''");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].text, "a -- b /* c */\nd");
  EXPECT_EQ(tokens[1].text, "héllo");
  EXPECT_EQ(tokens[2].kind, TokenKind::kString);
  EXPECT_EQ(tokens[2].text, "");
}

TEST(Tokenize, SkipsLineAndBlockComments) {
  auto tokens = Lex("-- leading\nSET /* inline */ x -- trailing\n/* multi\nline */ y");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].text, "SET");
  EXPECT_EQ(tokens[1].text, "x");
  EXPECT_EQ(tokens[2].text, "y");
}

TEST(Tokenize, EndTokenSitsAfterTheLastRealToken) {
  std::string text = "SET x  -- comment\n\n";
  auto tokens = Lex(text);
  ASSERT_EQ(tokens.back().kind, TokenKind::kEnd);
  EXPECT_EQ(tokens.back().offset, 5u);
  EXPECT_EQ(Lex("").size(), 1u);
}

TEST(Tokenize, UnterminatedStringPointsAtItsOpeningQuote) {
  EXPECT_EQ(FirstLine(LexError("SET 'a' = 'b;\n\n")),
            "line 1, column 11: unterminated string literal");
}

TEST(Tokenize, UnterminatedQuotedIdentifier) {
  EXPECT_EQ(FirstLine(LexError("x\n  `abc")), "line 2, column 3: unterminated quoted identifier");
}

TEST(Tokenize, EmptyQuotedIdentifier) {
  EXPECT_EQ(FirstLine(LexError("a ``")), "line 1, column 3: empty quoted identifier ``");
}

TEST(Tokenize, UnterminatedBlockComment) {
  EXPECT_EQ(FirstLine(LexError("a\n b /* no end")), "line 2, column 4: unterminated comment '/*'");
}

TEST(Tokenize, DoubleQuotesExplainTheQuotingRules) {
  EXPECT_EQ(FirstLine(LexError("a = \"x\"")),
            "line 1, column 5: unexpected character '\"': strings take single quotes ('text'), "
            "identifiers backquotes (`name`)");
}

TEST(Tokenize, UnknownCharacters) {
  EXPECT_EQ(FirstLine(LexError("a # b")), "line 1, column 3: unexpected character '#'");
  EXPECT_EQ(FirstLine(LexError("a ! b")),
            "line 1, column 3: unexpected character '!', did you mean '!='?");
  EXPECT_EQ(FirstLine(LexError("a \x01")), "line 1, column 3: unexpected character byte 1");
}

TEST(Tokenize, MalformedNumbers) {
  EXPECT_EQ(FirstLine(LexError("x > 1e")),
            "line 1, column 6: malformed number, expected digits after the exponent");
  EXPECT_EQ(FirstLine(LexError("x > 12abc")),
            "line 1, column 7: malformed number, expected a delimiter after '12'");
}

TEST(SourceText, ErrorShowsTheLineAndACaret) {
  SourceText source = SourceText::Verbatim("first\nab\tcd ef\nlast");
  Status st = source.Error(9, "bad");  // 'c' on line 2
  EXPECT_TRUE(st.IsInvalidArgument());
  EXPECT_EQ(st.message(), "line 2, column 4: bad\n  ab\tcd ef\n    \t^");
}

TEST(SourceText, ColumnsCountUtf8CodePoints) {
  SourceText source = SourceText::Verbatim("'é' x");
  SourcePos pos = source.Locate(5);  // 'x': byte 5, the 5th code point
  EXPECT_EQ(pos.line, 1);
  EXPECT_EQ(pos.column, 5);
  EXPECT_EQ(source.Error(5, "bad").message(), "line 1, column 5: bad\n  'é' x\n      ^");
}

TEST(SourceText, SubstitutesVariablesAndMapsPositionsBack) {
  auto source = SourceText::Make("a ${X} b\n${Y} c", {{"X", "long value"}, {"Y", "1\n2"}});
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ(source->text(), "a long value b\n1\n2 c");
  // 'b' follows the substituted value: its position is the one written.
  SourcePos b = source->Locate(source->text().find('b'));
  EXPECT_EQ(b.line, 1);
  EXPECT_EQ(b.column, 8);
  // 'c' follows a value with a newline: still line 2 of the original.
  SourcePos c = source->Locate(source->text().find('c'));
  EXPECT_EQ(c.line, 2);
  EXPECT_EQ(c.column, 6);
  // Bytes inside a value map to the '$' of the reference, and the message names it.
  SourcePos inside = source->Locate(source->text().find("value"));
  EXPECT_EQ(inside.line, 1);
  EXPECT_EQ(inside.column, 3);
  EXPECT_EQ(FirstLine(source->Error(source->text().find("value"), "bad")),
            "line 1, column 3: bad (in the value of ${X})");
}

TEST(SourceText, SubstitutionIsSinglePass) {
  auto source = SourceText::Make("${A}", {{"A", "${B}"}});
  ASSERT_TRUE(source.ok());
  EXPECT_EQ(source->text(), "${B}");
}

TEST(SourceText, LoneDollarIsKept) {
  auto source = SourceText::Make("a$ $b {c}", {});
  ASSERT_TRUE(source.ok());
  EXPECT_EQ(source->text(), "a$ $b {c}");
}

TEST(SourceText, UndefinedVariableNamesItAndItsPosition) {
  auto source = SourceText::Make("x ${A}\n  'p${MISSING}q'", {{"A", "longer than the name"}});
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(FirstLine(source.status()),
            "line 2, column 5: undefined variable ${MISSING}; define it with --var "
            "MISSING=VALUE or in the environment");
  EXPECT_NE(source.status().message().find("\n    'p${MISSING}q'\n      ^"), std::string::npos)
      << source.status().message();
}

TEST(SourceText, MalformedReferences) {
  const std::string expected =
      ": malformed variable reference, expected ${NAME} with NAME made of letters, digits and "
      "'_'";
  for (const char* text : {"ab ${}", "ab ${1X}", "ab ${X", "ab ${X-Y}"}) {
    auto source = SourceText::Make(text, {{"X", "x"}});
    ASSERT_FALSE(source.ok()) << text;
    EXPECT_EQ(FirstLine(source.status()), "line 1, column 4" + expected) << text;
  }
}

TEST(Keywords, ReservedWordsAreCaseInsensitive) {
  EXPECT_TRUE(IsReservedWord("select"));
  EXPECT_TRUE(IsReservedWord("Where"));
  EXPECT_FALSE(IsReservedWord("key"));
  EXPECT_FALSE(IsReservedWord("timestamp"));
  EXPECT_TRUE(IsPlainIdentifier("event_time"));
  EXPECT_FALSE(IsPlainIdentifier("from"));
  EXPECT_FALSE(IsPlainIdentifier("a b"));
  EXPECT_FALSE(IsPlainIdentifier("1a"));
}

}  // namespace
}  // namespace floe::sql::internal
