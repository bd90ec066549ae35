#pragma once
// Where the service's admin token comes from. A token on the command line (--admin-token) is
// readable by every local user in `ps` and /proc/PID/cmdline, so it can also come from a file
// (--admin-token-file, read once at start) or the environment (TTLPRED_ADMIN_TOKEN, which
// only the process's own user and root can read). docs/service.md, "Admin token".
#include <string>
#include <string_view>
#include <vector>

namespace ttlpred::serve {

inline constexpr const char* kAdminTokenEnv = "TTLPRED_ADMIN_TOKEN";

struct AdminTokenSources {
  std::string flag;       // --admin-token ("" when not given)
  std::string file;       // --admin-token-file ("" when not given)
  const char* env = nullptr;  // getenv(kAdminTokenEnv)
};

struct AdminToken {
  std::string token;                  // "" when none was given
  std::string source;                 // "--admin-token", "--admin-token-file PATH", "TTLPRED_ADMIN_TOKEN", ""
  std::vector<std::string> warnings;  // for stderr at start
};

// At most one of the flag and the file; the environment only when neither is given. The
// file's content without trailing blanks and line breaks is the token. Throws Error naming
// the option (and file) for both options at once, an unreadable or empty file, an empty
// token, or one with control characters or blanks (it must fit an Authorization header).
// Warns when the token came from the command line, or from a file others may read.
AdminToken resolve_admin_token(const AdminTokenSources& sources);

// Whether an Authorization header value is "Bearer <token>", in a time that depends on the
// lengths alone, never on where the first differing byte is: a client timing the answers
// must not learn the token byte by byte.
bool authorization_matches(std::string_view header, std::string_view token);

}  // namespace ttlpred::serve
