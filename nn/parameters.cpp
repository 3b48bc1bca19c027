#include "nn/parameters.h"

#include <unordered_set>

#include "autodiff/errors.h"

namespace jetpde::nn {

ParameterLayout::ParameterLayout(std::span<const Var> params) {
  std::unordered_set<std::string> seen;
  for (const Var& p : params) {
    const std::string& name = p.node().attrs.name;
    if (!seen.insert(name).second)
      throw UserError("parameter layout: parameter '" + name + "' appears twice");
    entries_.push_back({name, p.shape(), size_});
    size_ += p.shape().size();
  }
}

Eigen::VectorXd ParameterLayout::flatten(const Bindings& values) const {
  Eigen::VectorXd theta(size_);
  for (const Entry& e : entries_) {
    const auto it = values.find(e.name);
    if (it == values.end()) throw UserError("parameter '" + e.name + "' has no value");
    if (it->second.rows() != e.shape.rows || it->second.cols() != e.shape.cols)
      throw UserError("parameter '" + e.name + "' should be " + e.shape.str() + ", got [" +
                      std::to_string(it->second.rows()) + "," + std::to_string(it->second.cols()) +
                      "]");
    theta.segment(e.offset, e.shape.size()) = it->second.reshaped().matrix();
  }
  return theta;
}

Bindings ParameterLayout::unflatten(const Eigen::VectorXd& theta) const {
  Bindings out;
  unflatten_into(theta, out);
  return out;
}

void ParameterLayout::unflatten_into(const Eigen::VectorXd& theta, Bindings& out) const {
  if (theta.size() != size_)
    throw UserError("parameter vector has " + std::to_string(theta.size()) +
                    " entries, the layout " + std::to_string(size_));
  for (const Entry& e : entries_)
    out[e.name] =
        theta.segment(e.offset, e.shape.size()).reshaped(e.shape.rows, e.shape.cols).array();
}

}  // namespace jetpde::nn
