#include "serve/admin_token.hpp"

#include <sys/stat.h>

#include "util/error.hpp"
#include "util/file_io.hpp"

namespace ttlpred::serve {
namespace {

void check_token(const std::string& token, const std::string& where) {
  if (token.empty()) throw Error(where + ": the admin token is empty");
  for (unsigned char c : token)
    if (c <= ' ' || c == 0x7f)
      throw Error(where + ": the admin token holds a blank or control character (it is sent as 'Bearer <token>')");
}

}  // namespace

AdminToken resolve_admin_token(const AdminTokenSources& sources) {
  AdminToken out;
  if (!sources.flag.empty() && !sources.file.empty())
    throw Error("--admin-token and --admin-token-file: give one of them, not both");
  if (!sources.file.empty()) {
    const std::vector<std::uint8_t> bytes = read_file_bytes(sources.file);
    std::string token(bytes.begin(), bytes.end());
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' || token.back() == '\t'))
      token.pop_back();
    check_token(token, "--admin-token-file " + sources.file);
    struct stat st {};
    if (::stat(sources.file.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
      out.warnings.push_back("--admin-token-file " + sources.file +
                             ": other users may read it (chmod 600 keeps the token to its owner)");
    out.token = std::move(token);
    out.source = "--admin-token-file " + sources.file;
    return out;
  }
  if (!sources.flag.empty()) {
    check_token(sources.flag, "--admin-token");
    out.token = sources.flag;
    out.source = "--admin-token";
    out.warnings.push_back(std::string("--admin-token is visible to every local user in ps; prefer --admin-token-file or ") +
                           kAdminTokenEnv);
    return out;
  }
  if (sources.env && *sources.env) {
    check_token(sources.env, kAdminTokenEnv);
    out.token = sources.env;
    out.source = kAdminTokenEnv;
  }
  return out;
}

bool authorization_matches(std::string_view header, std::string_view token) {
  constexpr std::string_view kScheme = "Bearer ";
  if (header.size() != kScheme.size() + token.size()) return false;  // the token's length is no secret worth hiding
  unsigned char diff = 0;
  for (std::size_t i = 0; i < kScheme.size(); ++i) diff |= static_cast<unsigned char>(header[i] ^ kScheme[i]);
  for (std::size_t i = 0; i < token.size(); ++i)
    diff |= static_cast<unsigned char>(header[kScheme.size() + i] ^ token[i]);
  // No early exit: every byte is compared, whatever the earlier ones were.
  return diff == 0;
}

}  // namespace ttlpred::serve
