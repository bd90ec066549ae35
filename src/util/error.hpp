#pragma once
// Errors that reach the user. Every message names where the problem is (file:line, field)
// so that a person can fix the input without reading our code.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ttlpred {

// A problem the user can fix: bad input, a bad option, a refused model file.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad content in a named file; `line` is 1-based, 0 when the whole file is at fault.
class InputError : public Error {
 public:
  InputError(std::string_view file, std::size_t line, std::string_view message)
      : Error(format(file, line, message)) {}

  static std::string format(std::string_view file, std::size_t line, std::string_view message) {
    std::string s(file);
    if (line > 0) {  // two appends: g++ 12 -O3 warns falsely (-Wrestrict) on ":" + to_string
      s += ':';
      s += std::to_string(line);
    }
    s += ": ";
    s += message;
    return s;
  }
};

}  // namespace ttlpred
