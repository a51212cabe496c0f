#include <catch2/catch.hpp>

#include "experiments/gnuplot.h"

using namespace perftune;

TEST_CASE("gnuplot_quote escapes quotes and backslashes and writes a newline as gnuplot's escape") {
  const auto [text, quoted] = GENERATE(table<std::string, std::string>({
      {"plain", "\"plain\""},
      {"say \"hi\"", "\"say \\\"hi\\\"\""},
      {"a\\b", "\"a\\\\b\""},
      {"title\nsubtitle", "\"title\\nsubtitle\""},  // one script line, two title lines
  }));
  CAPTURE(text);
  REQUIRE(gnuplot_quote(text) == quoted);
}
