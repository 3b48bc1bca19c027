// Building expressions: one function per primitive, plus helpers composed from primitives.
//
// These are the functions user code and the transforms call. They apply only the local
// simplifications that keep graphs small and that every later stage relies on (a full slice is the
// operand itself, a broadcast to the operand's own shape is the operand). Algebraic simplification
// belongs to the compiler's passes.
#pragma once

#include <initializer_list>
#include <vector>

#include "autodiff/ir.h"

namespace jetpde {

Var neg(Var a);
Var add(Var a, Var b);
Var sub(Var a, Var b);
Var mul(Var a, Var b);
Var div(Var a, Var b);
Var exp(Var a);
Var log(Var a);
Var sin(Var a);
Var cos(Var a);
Var tanh(Var a);
Var sigmoid(Var a);
Var sqrt(Var a);
Var atan(Var a);
Var pow(Var a, double exponent);  // a^p for a constant p
Var cast(Var a, DType dtype);
// Elementwise: where cond != 0 take a, else b. cond is data: it carries no derivative.
Var select(Var cond, Var a, Var b);

// a[n,k] @ b[k,m]; with transpose flags, op(a) @ op(b).
Var matmul(Var a, Var b, bool transpose_a = false, bool transpose_b = false);
// Broadcasts a [1,c], [n,1] or [1,1] operand to `shape`.
Var broadcast(Var a, Shape shape);
Var slice_cols(Var a, std::int64_t begin, std::int64_t count);
Var slice_rows(Var a, std::int64_t begin, std::int64_t count);
Var concat_cols(std::span<const Var> parts);
Var concat_rows(std::span<const Var> parts);
Var concat_cols(std::initializer_list<Var> parts);
Var concat_rows(std::initializer_list<Var> parts);
Var sum_rows(Var a);   // [n,c] -> [1,c]
Var sum_cols(Var a);   // [n,c] -> [n,1]
Var mean_rows(Var a);  // [n,c] -> [1,c]
Var mean_cols(Var a);  // [n,c] -> [n,1]

// Helpers (not primitives).
Var col(Var a, std::int64_t j);                     // column j as [n,1]
Var scale(Var a, double factor);                    // a * factor (a itself when factor == 1)
Var square(Var a);                                  // a * a
Var sum_all(Var a);                                 // [n,c] -> [1,1]
Var mean_all(Var a);                                // [n,c] -> [1,1]
Var zeros(Graph& graph, Shape shape, DType dtype);  // a broadcast zero of `shape`
// The value of a single-valued constant node ([1,1], or a broadcast of one), if `a` is one.
bool is_scalar_constant(Var a, double* value = nullptr);

inline Var operator-(Var a) { return neg(a); }
inline Var operator+(Var a, Var b) { return add(a, b); }
inline Var operator-(Var a, Var b) { return sub(a, b); }
inline Var operator*(Var a, Var b) { return mul(a, b); }
inline Var operator/(Var a, Var b) { return div(a, b); }
Var operator+(Var a, double b);
Var operator+(double a, Var b);
Var operator-(Var a, double b);
Var operator-(double a, Var b);
Var operator*(Var a, double b);
Var operator*(double a, Var b);
Var operator/(Var a, double b);
Var operator/(double a, Var b);

}  // namespace jetpde
