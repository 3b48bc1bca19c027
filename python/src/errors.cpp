// jetpde::UserError becomes jetpde.Error, a subclass of ValueError, with the same message (the
// CLI's: file:line:column, the key path, the column inside an expression).
#include "autodiff/errors.h"
#include "python/src/bindings.h"

namespace jetpde::python {

void define_errors(py::module_& m) {
  py::register_exception<UserError>(m, "Error", PyExc_ValueError);
  m.attr("Error").attr("__doc__") =
      "Bad input to jetpde (a config key, an expression, points of the wrong shape); the message "
      "names what and where, as the jetpde command's does.";
}

}  // namespace jetpde::python
