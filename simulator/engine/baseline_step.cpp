#include "simulator/engine/baseline_step.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "simulator/engine/simulate.hpp"

namespace stepsim {

Plan unperturbed(const Plan& plan) {
  Plan p = plan;
  p.scenario.stragglers.clear();
  p.scenario.jitter_sigma = 0;
  p.sim.mode = SimMode::Auto;
  return p;
}

double simulate_baseline_step(const Plan& plan) {
  const Plan base = unperturbed(plan);
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("baseline step: pipe failed");
  std::fflush(nullptr);  // the child must not write the parent's buffered output again
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("baseline step: fork failed");
  if (pid == 0) {
    close(fds[0]);
    char buf[64];
    int n = 0;
    try {
      SimOptions opt;
      opt.quiet = true;
      n = std::snprintf(buf, sizeof buf, "%.17g", simulate(base, opt).step_time_s);
    } catch (...) {
      n = 0;
    }
    if (n > 0 && write(fds[1], buf, size_t(n)) != n) n = 0;
    close(fds[1]);
    _exit(n > 0 ? 0 : 1);
  }
  close(fds[1]);
  std::string text;
  char chunk[128];
  for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) > 0;) text.append(chunk, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty())
    throw std::runtime_error("the unperturbed baseline simulation failed");
  return std::stod(text);
}

}  // namespace stepsim
