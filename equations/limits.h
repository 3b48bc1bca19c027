// The limits of the equation language: what the parser and expand() accept, so that every later
// stage (printing, analysis, lowering, the Taylor transform, the compiler) works on input of a
// bounded size and depth. Input beyond a limit is a UserError that names the limit and the column.
#pragma once

#include <cstdint>

namespace jetpde::equations::limits {

// Nesting levels of an expression as parsed: parentheses, calls, signs and powers each open one,
// as do the operands of +, -, * and / (a chain of n terms counts about kChainRun + log2(n)); a
// definition counts with the depth of its body where it is used.
inline constexpr int kMaxDepth = 256;
// Operands of a chain a + b - c ... (or a * b / c ...) combined left to right, as written; longer
// chains are cut into runs of this many, and the runs combined as a balanced tree, so that a sum
// of n terms nests about kChainRun + log2(n) levels, not n. (A run of a product starts at a '*'
// only, so that no vector factor moves into a denominator.) (Expr::str() puts parentheses where a
// run ends, so that printed text parses back to the same tree.)
inline constexpr int kChainRun = 16;
// Nodes of an expression as parsed, definitions inlined (u + 2*v has 5).
inline constexpr std::int64_t kMaxNodes = 100000;
// The total order |α| of any derivative, after nested d() are combined and the chain rule has
// run: d(d(u, x, 40), x, 40) asks for order 80. Measured on a tanh MLP: the Taylor plan and the
// compiler's passes handle order 256 (12 MB of C source), but the values overflow f64 near order
// 170 (∂^k grows like k!) and f32 near 35 (for this network); 64 is far beyond any PDE and well
// inside f64.
inline constexpr int kMaxDerivativeOrder = 64;
// The work of the Taylor plan plan_for() builds (equations/analysis.h): every derivative brings
// all the lower ones it contains, and a product's stream α sums Π_i (α_i + 1) coefficient pairs;
// this bounds their sum over the plan. d(u, x, 64) costs 2,145; a 1000-D Laplacian about 3,000;
// d(u, x, 16, t, 16) 23,409 (289 streams, 145,000 graph nodes and 7 MB of C source on a small
// network); mixed derivatives in many coordinates grow exponentially.
inline constexpr std::int64_t kMaxTaylorWork = 25000;
// Distinct nodes expand() may create for one expression (its core form, shared subexpressions
// counted once): bounds the symbolic work of the chain and product rules.
inline constexpr std::int64_t kMaxCoreNodes = 100000;
// The depth of the core form (derivatives of nested functions deepen it: d(exp(u), x, 30) nests
// over 400 levels). Lowering recurses over it; 512 pass under ASan, 822 overflowed its stack.
inline constexpr int kMaxCoreDepth = 512;

}  // namespace jetpde::equations::limits
