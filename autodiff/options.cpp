#include "autodiff/options.h"

namespace jetpde::options {

using T = Key::Type;

const Key* Key::child(const std::string& key) const {
  for (const KeyPtr& c : children)
    if (c->name == key) return c.get();
  return nullptr;
}

std::string type_name(T type) {
  switch (type) {
    case T::string:
      return "text";
    case T::integer:
      return "integer";
    case T::number:
      return "number";
    case T::boolean:
      return "true or false";
    case T::choice:
      return "choice";
    case T::numbers:
      return "list of numbers";
    case T::integers:
      return "list of integers";
    case T::strings:
      return "list of texts";
    case T::points:
      return "list of points ([[x, y], ...])";
    case T::table:
      return "mapping of names to values";
    case T::object:
      return "mapping";
    case T::list:
      return "list of mappings";
  }
  return "?";
}

std::string described(const Key& k) {
  std::string out = k.doc;
  if (k.choice_meanings.size() != k.choices.size() || k.choices.empty()) return out;
  out += out.empty() ? "" : " ";
  for (std::size_t i = 0; i < k.choices.size(); ++i)
    out += (i ? "; `" : "`") + k.choices[i] + "`: " + k.choice_meanings[i];
  return out + ".";
}

KeyPtr key(std::string name, T type, std::string default_value, std::string doc) {
  auto k = std::make_shared<Key>();
  k->name = std::move(name);
  k->type = type;
  k->default_value = std::move(default_value);
  k->doc = std::move(doc);
  return k;
}

KeyPtr choice(std::string name, std::vector<std::string> choices, std::string default_value,
              std::string doc) {
  auto k = std::make_shared<Key>(
      *key(std::move(name), T::choice, std::move(default_value), std::move(doc)));
  k->choices = std::move(choices);
  return k;
}

KeyPtr group(std::string name, T type, std::string doc, std::vector<KeyPtr> children) {
  auto k = std::make_shared<Key>(*key(std::move(name), type, "", std::move(doc)));
  k->children = std::move(children);
  return k;
}

// The builders copy: a key may be shared by several mappings (a declaration mounted twice), so
// none is changed in place.
KeyPtr required(KeyPtr k) {
  auto copy = std::make_shared<Key>(*k);
  copy->required = true;
  return copy;
}

KeyPtr required(std::string name, T type, std::string doc) {
  return required(key(std::move(name), type, "", std::move(doc)));
}

KeyPtr optional(KeyPtr k) {
  auto copy = std::make_shared<Key>(*k);
  copy->optional = true;
  return copy;
}

namespace {

KeyPtr bounded(KeyPtr k, std::optional<double> lo, std::optional<double> hi, bool open) {
  auto copy = std::make_shared<Key>(*k);
  copy->min = lo;
  copy->max = hi;
  copy->min_open = open;
  return copy;
}

}  // namespace

KeyPtr at_least(double lo, KeyPtr k) { return bounded(std::move(k), lo, std::nullopt, false); }
KeyPtr above(double lo, KeyPtr k) { return bounded(std::move(k), lo, std::nullopt, true); }
KeyPtr within(double lo, double hi, KeyPtr k) { return bounded(std::move(k), lo, hi, false); }
KeyPtr from_below(double lo, double hi, KeyPtr k) {
  auto copy = std::make_shared<Key>(*bounded(std::move(k), lo, hi, false));
  copy->max_open = true;
  return copy;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string not_one_of(const std::string& name, const std::vector<std::string>& choices) {
  return "'" + name + "' is not one of " + joined(choices);
}

std::vector<KeyPtr> merged(std::vector<KeyPtr> a, const std::vector<KeyPtr>& b) {
  for (const KeyPtr& k : b) {
    bool known = false;
    for (const KeyPtr& have : a) known = known || have->name == k->name;
    if (!known) a.push_back(k);
  }
  return a;
}

}  // namespace jetpde::options
