// The trainable parameters as one flat f64 vector, the form the optimizers work on.
//
//   nn::ParameterLayout layout(net.params());     // names and shapes, in this order
//   Eigen::VectorXd theta = layout.flatten(bindings);
//   bindings = layout.unflatten(theta);            // back to name -> matrix
#pragma once

#include <Eigen/Core>
#include <span>
#include <string>
#include <vector>

#include "autodiff/interpreter.h"
#include "autodiff/ir.h"

namespace jetpde::nn {

class ParameterLayout {
 public:
  struct Entry {
    std::string name;
    Shape shape;
    std::int64_t offset = 0;  // into the flat vector
  };
  ParameterLayout() = default;
  explicit ParameterLayout(std::span<const Var> params);  // UserError on a repeated name
  std::int64_t size() const { return size_; }
  const std::vector<Entry>& entries() const { return entries_; }
  // UserError naming a missing parameter or one of the wrong shape.
  Eigen::VectorXd flatten(const Bindings& values) const;
  Bindings unflatten(const Eigen::VectorXd& theta) const;
  // Writes the parameters of `theta` into `out` (other entries kept).
  void unflatten_into(const Eigen::VectorXd& theta, Bindings& out) const;

 private:
  std::vector<Entry> entries_;
  std::int64_t size_ = 0;
};

}  // namespace jetpde::nn
