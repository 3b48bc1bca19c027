// libFuzzer target: the equation language, from text to a lowered residual graph.
//
// The input is one equation over fields u, v, coordinates x, y and time t, a constant nu, a
// parameter k and a definition f. It is parsed (with its expansion to core form), analysed,
// lowered through a Taylor plan onto a small MLP's graph, and that graph goes through the
// compiler's passes, its lowering to kernels and the memory plan (everything short of emitting
// and compiling C++). A UserError is the expected answer to
// bad input; anything else (another exception, a crash, a sanitizer report, a hang, running out
// of memory) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "autodiff/errors.h"
#include "autodiff/ir.h"
#include "autodiff/taylor.h"
#include "compiler/lower.h"
#include "compiler/module.h"
#include "compiler/pipeline.h"
#include "equations/analysis.h"
#include "equations/context.h"
#include "equations/lower.h"
#include "equations/parser.h"
#include "nn/mlp.h"

using namespace jetpde;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    equations::Context ctx;
    ctx.fields({"u", "v"}).coordinates({"x", "y"}).time("t").constant("nu", 0.01).param("k", 1.0);
    ctx.define("f", "sin(pi*x)*exp(-t)");
    const std::vector<equations::Equation> eqs{equations::parse(text, ctx)};
    equations::analyze(eqs, ctx);

    Graph g(DType::f64);
    nn::Mlp mlp(g, {3, {4}, 2, nn::Activation::tanh, ""});
    const Var xyt = g.input("x", {4, 3});
    const Var normal = g.input("n", {4, 2});
    Taylor taylor(equations::plan_for(eqs, ctx, xyt));
    const std::vector<Var> residuals = equations::lower(
        eqs, ctx, {.coordinates = xyt, .outputs = mlp(xyt), .normal = normal}, taylor);
    compiler::Program program =
        compiler::lower(compiler::optimize(compiler::module_of(residuals), {}));
    compiler::plan_memory(program);
  } catch (const UserError&) {
  }
  return 0;
}
