// The finite-difference pieces of the classical solver that do not need PETSc: the grid over a
// box, 2nd-order accurate difference weights for derivatives of order 1 to 4, and the pointwise
// evaluation of an equation's core form (equations/expand.h) with every derivative node replaced
// by a stencil over grid values.
//
//   classical::Grid grid = ...;                       // one Axis per spatial coordinate
//   classical::StencilEvaluator eval(grid, ctx);
//   double r = eval(equation.core, point);            // point: indices, coordinates, arrays
//
// Weights: central where the stencil fits (3 points for orders 1 and 2, 5 for 3 and 4), else a
// one-sided window of order + 2 points shifted to stay on the grid (2nd order accurate too). On a
// periodic axis the stencil is always central and indices wrap.
#pragma once

#include <string>
#include <vector>

#include "equations/context.h"
#include "equations/expr.h"

namespace jetpde::classical {

// One spatial axis of the grid. Non-periodic: n points from lo to hi, h = (hi - lo) / (n - 1).
// Periodic: n points lo + i h, h = (hi - lo) / n (hi is lo again).
struct Axis {
  double lo = 0, hi = 1, h = 1;
  int n = 2;
  bool periodic = false;
  double coordinate(int i) const { return lo + i * h; }
};

struct Tap {
  int offset;
  double weight;  // 1/h^k included
};

// Weights of the derivative of order k (0..4) at index i of `axis`, 2nd-order accurate. UserError
// when the axis has too few points for the stencil.
std::vector<Tap> difference_taps(const Axis& axis, int k, int i);
// How far (in points) the weights of orders <= k reach from any index of `axis`.
int stencil_reach(const Axis& axis, int k);

// Grid values as an array [z][y][x][dof] (x fastest, fields interleaved) covering the indices
// start .. start + size - 1 per axis; on a periodic axis an index outside is wrapped first (PETSc's
// ghosted arrays already hold the wrapped values; a whole-grid array does not).
struct GridArray {
  const double* data = nullptr;
  int start[3] = {0, 0, 0}, size[3] = {1, 1, 1};
  int period[3] = {0, 0, 0};  // n of a periodic axis, else 0
  int dof = 1;
  double at(int field, const int* index) const {
    long long offset = 0;
    for (int a = 2; a >= 0; --a) {
      int i = index[a];
      if (period[a] && (i < start[a] || i >= start[a] + size[a]))
        i = ((i % period[a]) + period[a]) % period[a];
      offset = offset * size[a] + (i - start[a]);
    }
    return data[offset * dof + field];
  }
};

// Where one residual is evaluated.
struct EvalPoint {
  int index[3] = {0, 0, 0};         // grid indices of the spatial axes (unused ones 0)
  std::vector<double> coordinates;  // by the Context's coordinate index (time included)
  const double* normal = nullptr;   // outward unit normal (spatial), for conditions that use n
  const GridArray* u = nullptr;     // the fields
  const GridArray* udot = nullptr;  // their time derivatives (method of lines), or null
};

class StencilEvaluator {
 public:
  // `axes` are the Context's spatial coordinates in order.
  StencilEvaluator(std::vector<Axis> axes, const equations::Context& ctx);
  // The core form's value at the point. Time derivatives of order 1 read point.udot.
  double operator()(const equations::Expr& core, const EvalPoint& point) const;
  const std::vector<Axis>& axes() const { return axes_; }

 private:
  double derivative(int field, const int* spatial_orders, const EvalPoint& p) const;
  const std::vector<Tap>& taps(int axis, int k, int i) const;

  std::vector<Axis> axes_;
  std::vector<int> spatial_;  // context coordinate index of spatial axis a
  int time_ = -1;
  // taps_[axis][k][i] (a periodic axis: one entry per k)
  std::vector<std::vector<std::vector<std::vector<Tap>>>> taps_;
};

// What an equation needs of the grid, found by walking its core form: the highest derivative
// order per spatial axis, whether it has time derivatives (of order 1, alone: anything else is a
// UserError naming the equation), trainable parameters, the normal.
struct ExprNeeds {
  std::vector<int> max_order;  // per spatial axis
  bool time_derivative = false, mixed = false, normal = false;
  std::vector<std::string> params;
  // Per field (the Context's order): 1 when the expression reads the field's value, 2 when only
  // its derivatives, 0 when not at all.
  std::vector<int> field_use;
  std::vector<int> field_order;  // per field: the highest order of its derivatives (0: none)
};
ExprNeeds expr_needs(const equations::Expr& core, const equations::Context& ctx,
                     const std::string& where);

}  // namespace jetpde::classical
