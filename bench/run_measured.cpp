// Runs a command and reports its wall time and the CPU time of it and all its children.
// Usage: cws-run CMD [ARGS...]  -> prints "wall <s> cpu <s>" on stderr, exit status of CMD.

#include <chrono>
#include <cstdio>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cws-run CMD [ARGS...]\n");
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[1], argv + 1);
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru); // the child's own CPU plus every child it waited for
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
               + static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  std::fprintf(stderr, "wall %.3f cpu %.3f\n", wall, cpu);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
