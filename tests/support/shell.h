// A command run through the shell, as the tests of the jetpde command run it: its exit status
// and everything it printed.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace jetpde::testing {

struct Output {
  int status = -1;   // the exit status; -1 when it did not exit (a signal)
  std::string text;  // stdout, and stderr where the command redirects it (2>&1)
};

inline Output shell(const std::string& command) {
  Output out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.text.append(buf, n);
  const int status = pclose(p);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace jetpde::testing
