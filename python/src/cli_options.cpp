#include "cli_options.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace py = pybind11;

namespace ttlpred::python {
namespace {

// repr() of a float is its shortest round-trip text: the command parses the same double. A
// bool is true/false to a flag and on/off to an option that takes a value (the on|off choices).
std::string option_text(const py::handle& v, bool flag) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? (flag ? "true" : "on") : (flag ? "false" : "off");
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) return py::repr(v).cast<std::string>();
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::string out;
    for (const py::handle item : v) out += (out.empty() ? "" : ",") + option_text(item, flag);
    return out;
  }
  throw py::type_error("cannot pass " + std::string(py::repr(v)) + " as an option value");
}

}  // namespace

void parse_cli_options(CLI::App& cmd, const char* command, const py::dict& options) {
  std::vector<std::string> args;
  for (const auto& [key, value] : options) {
    std::string name = py::str(key);
    for (char& c : name)
      if (c == '_') c = '-';
    const CLI::Option* option = cmd.get_option_no_throw("--" + name);
    if (option == nullptr) {
      std::string known;
      for (const CLI::Option* o : cmd.get_options())
        for (const std::string& l : o->get_lnames())
          if (l != "help") known += (known.empty() ? "" : ", ") + l;
      throw Error("unknown " + std::string(command) + " option '" + std::string(py::str(key)) + "' (options: " + known + ")");
    }
    if (value.is_none()) continue;
    try {
      args.push_back("--" + name + "=" + option_text(value, option->get_expected_min() == 0));
    } catch (const py::type_error& e) {
      throw Error(std::string(command) + " option '" + name + "': " + e.what());
    }
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    cmd.parse(args);
  } catch (const CLI::ParseError& e) {
    throw Error(std::string(command) + ": " + e.what());
  }
}

}  // namespace ttlpred::python
