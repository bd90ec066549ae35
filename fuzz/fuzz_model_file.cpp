// Fuzz target: the model file reader on arbitrary bytes, twice. As they come (the container
// check refuses nearly all of them), and sealed into a valid container with a correct
// checksum, so that the section parser behind the checksum is reached. The only acceptable
// outcomes are a model or an Error naming the input; a model that loads must save and load
// back to the same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "model/model_file.hpp"
#include "util/binary_io.hpp"
#include "util/error.hpp"

using namespace ttlpred;

namespace {
void check(const std::vector<std::uint8_t>& bytes) {
  ModelFile m;
  try {
    m = parse_model_file(bytes, "fuzz.model");
  } catch (const Error& e) {
    if (std::string_view(e.what()).find("fuzz.model") == std::string_view::npos) {
      std::fprintf(stderr, "refusal does not name the file: %s\n", e.what());
      std::abort();
    }
    return;
  }
  // Accepted: what was read must write and read back unchanged.
  const std::vector<std::uint8_t> saved = model_file_bytes(m);
  const std::vector<std::uint8_t> again = model_file_bytes(parse_model_file(saved, "fuzz.model (saved)"));
  if (saved != again) {
    std::fprintf(stderr, "an accepted model does not round-trip\n");
    std::abort();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> bytes(data, data + size);
  check(bytes);
  check(seal_container(std::string_view(kModelFileMagic, 8), kModelFileVersion, bytes));
  return 0;
}
