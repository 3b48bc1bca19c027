// Options declared once, next to the struct that holds them (PETSc's PetscOptionsBegin beside
// each object is the model). A module says which keys its options struct takes (name, type,
// default, meaning, range, choices) and how each lands in the struct; the YAML schema
// (io/config_schema.cpp mounts the declarations at their paths), docs/config.md, `--set`, the
// config reader and the Python keyword arguments all come from that one declaration.
//
//   const options::EnumTable<Activation>& activation_names();   // {value, name, meaning} rows
//   activation_names().from_name("relu");  // UserError "unknown activation 'relu' (known: ...)"
//
//   options::Declaration<NetworkSpec> d;
//   d.add(options::at_least(1, options::key("hidden", Key::Type::integers, "[64, 64]", "Widths.")),
//         &NetworkSpec::hidden);                                   // a member of the same kind
//   d.add_choice("activation", &NetworkSpec::activation, activation_names(), "tanh", "...");
//   d.add(options::key("fourier_sigma", Key::Type::number, "1", "..."),
//         [](NetworkSpec& s, const options::Value& v) { s.fourier.sigma = options::as<double>(v);
//         });
//   d.read(spec, values);   // values io read from the resolved YAML mapping (io::read_declared)
//
// This module sits at the bottom of the layering (with errors.h) and knows no YAML: io turns a
// resolved YAML mapping into `Values` (name -> Value), and a declaration sets its struct from them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "autodiff/errors.h"

namespace jetpde::options {

// One key of a config mapping.
struct Key {
  enum class Type {
    string,    // any text (expressions, names, paths)
    integer,   // a whole number
    number,    // a real number
    boolean,   // true / false
    choice,    // one of `choices`
    numbers,   // a list of numbers
    integers,  // a list of whole numbers
    strings,   // a list of texts (a single text counts as a list of one)
    points,    // a list of points, each a list of numbers: [[0, 0], [1, 0]]
    table,     // a mapping name -> number or expression text (constants, parameters)
    object,    // a mapping with the keys `children`
    list       // a list of objects, each with the keys `children`
  };
  std::string name;
  Type type = Type::string;
  std::string default_value;  // YAML text; "" with required = false: absent unless given
  bool required = false;
  bool optional = false;  // an object that is absent unless given (otherwise its defaults apply)
  std::vector<std::string> choices;
  std::vector<std::string> choice_meanings;  // one per choice, from an EnumTable; or none
  // integer, number and their lists: the allowed range, checked where the value is read (every
  // integer also fits an `int` unless `max` says more; `*_open`: strictly above / below).
  std::optional<double> min, max;
  bool min_open = false, max_open = false;
  std::string doc;
  std::vector<std::shared_ptr<const Key>> children;  // object and list

  const Key* child(const std::string& key) const;
};
using KeyPtr = std::shared_ptr<const Key>;

// "text", "integer", "list of numbers", ...: how docs and messages name a type.
std::string type_name(Key::Type type);
// The key's doc, followed by what each choice means when its choices come from an EnumTable
// ("Activation. `tanh`: hyperbolic tangent; `sin`: ..."): docs/config.md's and the Python
// docstrings' text.
std::string described(const Key& k);

// ---- building keys -----------------------------------------------------------------------------

KeyPtr key(std::string name, Key::Type type, std::string default_value, std::string doc);
KeyPtr choice(std::string name, std::vector<std::string> choices, std::string default_value,
              std::string doc);
KeyPtr group(std::string name, Key::Type type, std::string doc, std::vector<KeyPtr> children);
KeyPtr required(KeyPtr k);
KeyPtr required(std::string name, Key::Type type, std::string doc);
KeyPtr optional(KeyPtr k);  // an object absent unless given
// Ranges: at least `lo`; above `lo`; within [lo, hi]; within [lo, hi).
KeyPtr at_least(double lo, KeyPtr k);
KeyPtr above(double lo, KeyPtr k);
KeyPtr within(double lo, double hi, KeyPtr k);
KeyPtr from_below(double lo, double hi, KeyPtr k);

// ---- enum names --------------------------------------------------------------------------------

// One name of an enum value. `alias`: a second name that from_name accepts (not listed).
// `choice` false: a value with a name (name() gives it) that no option may choose, such as a
// value only code sets.
template <class E>
struct EnumName {
  E value;
  const char* name;
  const char* meaning;
  const char* alias = nullptr;
  bool choice = true;
};

// "'x' is not one of a, b, c": the message of a name outside a list of choices (the config's).
std::string not_one_of(const std::string& name, const std::vector<std::string>& choices);
// "a, b, c".
std::string joined(const std::vector<std::string>& names);

// An enum's names, declared once as {value, name, meaning} rows; `what` names the option in
// errors ("activation"). The rows live in a static array of the module that owns the enum.
template <class E>
class EnumTable {
 public:
  constexpr EnumTable(const char* what, std::span<const EnumName<E>> rows)
      : what_(what), rows_(rows) {}

  // The value called `name` (or its alias); UserError "unknown <what> 'name' (known: a, b, c)".
  E from_name(const std::string& name) const {
    for (const EnumName<E>& r : rows_)
      if (r.choice && (name == r.name || (r.alias && name == r.alias))) return r.value;
    throw UserError("unknown " + std::string(what_) + " '" + name + "' (known: " + joined(names()) +
                    ")");
  }
  // The name of `value`; InternalError for a value the table lacks.
  std::string name(E value) const {
    for (const EnumName<E>& r : rows_)
      if (r.value == value) return r.name;
    throw InternalError(std::string("EnumTable(") + what_ + "): a value without a name");
  }
  // The names an option may choose, in the table's order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const EnumName<E>& r : rows_)
      if (r.choice) out.push_back(r.name);
    return out;
  }
  const char* what() const { return what_; }
  std::span<const EnumName<E>> rows() const { return rows_; }

 private:
  const char* what_;
  std::span<const EnumName<E>> rows_;
};

// A choice key whose choices are the table's names.
template <class E>
KeyPtr choice(std::string name, const EnumTable<E>& table, std::string default_value,
              std::string doc) {
  auto k = std::make_shared<Key>(
      *choice(std::move(name), table.names(), std::move(default_value), std::move(doc)));
  for (const EnumName<E>& r : table.rows())
    if (r.choice) k->choice_meanings.push_back(r.meaning);
  return k;
}

// ---- values and declarations -------------------------------------------------------------------

// A value read from a config: what each key type becomes (integers as long long, choices and
// texts as std::string, lists as vectors).
using Value = std::variant<bool, long long, double, std::string, std::vector<double>,
                           std::vector<long long>, std::vector<std::string>>;
using Values = std::map<std::string, Value>;

// `v` as T: int and other integers from an integer, double from a number or an integer, vectors
// element by element; InternalError when the value is of another kind (the schema checked it, so
// a mismatch is a declaration that disagrees with its key's type).
template <class T>
T as(const Value& v) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
    if (const T* x = std::get_if<T>(&v)) return *x;
  } else if constexpr (std::is_integral_v<T>) {
    if (const long long* x = std::get_if<long long>(&v)) return static_cast<T>(*x);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (const double* x = std::get_if<double>(&v)) return static_cast<T>(*x);
    if (const long long* x = std::get_if<long long>(&v)) return static_cast<T>(*x);
  } else if constexpr (std::is_same_v<T, std::vector<double>> ||
                       std::is_same_v<T, std::vector<std::string>>) {
    if (const T* x = std::get_if<T>(&v)) return *x;
  } else if constexpr (std::is_same_v<T, std::vector<int>>) {
    if (const auto* x = std::get_if<std::vector<long long>>(&v)) return T(x->begin(), x->end());
  } else {
    static_assert(sizeof(T) == 0, "options::as: no conversion to this type");
  }
  throw InternalError("options::as: the value is not of the type its declaration reads");
}

// The keys of one options struct S and how each is set on it. A key without a setter is declared
// (schema, docs, Python) but read by its module by hand: one that needs more than its own value
// (a path relative to the config file, a coordinate name checked against the domain).
template <class S>
class Declaration {
 public:
  using Setter = std::function<void(S&, const Value&)>;

  Declaration& add(KeyPtr key, Setter set = {}) {
    entries_.push_back({std::move(key), std::move(set)});
    return *this;
  }
  // The key sets a member of the same kind (int, double, bool, text, list).
  template <class M>
  Declaration& add(KeyPtr key, M S::*member) {
    return add(std::move(key), [member](S& s, const Value& v) { s.*member = as<M>(v); });
  }
  // A choice key of an enum member: choices from the table, the name turned into the value.
  template <class E>
  Declaration& add_choice(std::string name, E S::*member, const EnumTable<E>& table,
                          std::string default_value, std::string doc) {
    return add(choice(std::move(name), table, std::move(default_value), std::move(doc)),
               [member, &table](S& s, const Value& v) {
                 s.*member = table.from_name(as<std::string>(v));
               });
  }

  std::vector<KeyPtr> keys() const {
    std::vector<KeyPtr> out;
    for (const Entry& e : entries_) out.push_back(e.key);
    return out;
  }
  // Each value whose key this declaration sets, set on `s`; other names are left alone (they
  // belong to another declaration of the same mapping, or are read by hand).
  void read(S& s, const Values& values) const {
    for (const Entry& e : entries_) {
      if (!e.set) continue;
      const auto it = values.find(e.key->name);
      if (it != values.end()) e.set(s, it->second);
    }
  }

 private:
  struct Entry {
    KeyPtr key;
    Setter set;
  };
  std::vector<Entry> entries_;
};

// `a` then the keys of `b` whose names `a` lacks (two kinds sharing a mapping: adam and adamw).
std::vector<KeyPtr> merged(std::vector<KeyPtr> a, const std::vector<KeyPtr>& b);

}  // namespace jetpde::options
