// The net under every importer: load_source checks each corpus's shapes, runtimes, costs and
// configs with the same rules, whatever the format.
#include <catch2/catch.hpp>

#include "ir/corpus.h"
#include "ir/input_error.h"

using namespace perftune;

namespace {

Corpus one_kernel(double seconds, double cost, Config config) {
  Program body("k");
  body.add_op(Op{.name = "x", .opcode = "parameter", .shape = make_shape(ElementType::kF32, {8})});
  MeasuredKernel measured;
  measured.kernel = Kernel("k", std::move(body));
  measured.space = std::make_shared<SearchSpace>(SearchSpace({{"tile", {1, 2, 4}}}));
  measured.measurements.push_back(Measurement{std::move(config), MeasureResult::from_repeats({seconds}, cost)});
  return single_kernel_corpus("test", "k.src", std::move(measured));
}

}  // namespace

TEST_CASE("check_corpus_values rejects what any reader would reject, naming kernel and measurement") {
  CHECK_NOTHROW(check_corpus_values(one_kernel(1e-3, 0.5, Config{{2}})));
  CHECK_THROWS_WITH(check_corpus_values(one_kernel(0.0, 0.5, Config{{2}})), Catch::Contains("k.src: kernel 'k', measurement 0") && Catch::Contains("0 s"));
  CHECK_THROWS_WITH(check_corpus_values(one_kernel(1e-3, 1e300, Config{{2}})), Catch::Contains("more than a week"));
  CHECK_THROWS_WITH(check_corpus_values(one_kernel(1e-3, 0.5, Config{{3}})), Catch::Contains("knob 'tile'"));
  CHECK_THROWS_WITH(check_corpus_values(one_kernel(1e-3, 0.5, Config{{2, 2}})), Catch::Contains("1 knob values"));
  Corpus huge = one_kernel(1e-3, 0.5, Config{{2}});
  Program body("big");
  body.add_op(Op{.name = "x", .opcode = "parameter", .shape = make_shape(ElementType::kF32, {-4})});
  huge.programs.push_back(std::make_shared<Program>(std::move(body)));
  CHECK_THROWS_WITH(check_corpus_values(huge), Catch::Contains("program 'big', op 'x'") && Catch::Contains("not -4"));
}
