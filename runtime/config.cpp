#include "runtime/config.h"

#include <cstdio>
#include <cstdlib>

#include "env/seconds.h"

namespace mcrp {
namespace {

bool flag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

Config read_config() {
  Config c;
  c.debug = flag("MCRPMPI_DEBUG");
  c.stats = flag("MCRPMPI_STATS");
  c.profile = flag("MCRPMPI_PROFILE");
  c.verify = flag("MCRPMPI_VERIFY");
  c.show_base_mpi = flag("MCRPMPI_SHOW_BASE_MPI") || c.debug;
  c.p2p_device_only = flag("MCRPMPI_P2P_DEVICE_ONLY");
  // On unless set to 0: blocking communicators cost what raw NCCL costs (the H200, 2026-11-27).
  const char* inline_launch = std::getenv("MCRPMPI_NCCL_INLINE_LAUNCH");
  c.nccl_inline_launch_asked = inline_launch != nullptr && inline_launch[0] != '\0';
  c.nccl_inline_launch = !c.nccl_inline_launch_asked || flag("MCRPMPI_NCCL_INLINE_LAUNCH");
  const char* polling = std::getenv("MCRPMPI_POLLING_COLLECTIVES");
  c.polling_collectives = polling != nullptr && polling[0] != '\0' ? flag("MCRPMPI_POLLING_COLLECTIVES")
                                                                    : c.p2p_device_only;
  const env::SecondsSetting timeout = env::seconds_from_env("MCRPMPI_NCCL_TIMEOUT");
  if (timeout.seconds) c.nccl_timeout_s = *timeout.seconds;
  if (!timeout.problem.empty()) std::fprintf(stderr, "mcrpmpi: %s; using %g s\n", timeout.problem.c_str(), c.nccl_timeout_s);
  return c;
}

}  // namespace

const Config& config() {
  static const Config instance = read_config();
  return instance;
}

}  // namespace mcrp
