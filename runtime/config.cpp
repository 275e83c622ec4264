#include "runtime/config.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "env/seconds.h"

namespace mcrp {
namespace {

bool flag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

bool is_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0';
}

// The variable's flag where it is set, else `otherwise`.
bool flag_or(const char* name, bool otherwise) { return is_set(name) ? flag(name) : otherwise; }

Config::ProgressThread progress_thread_setting() {
  const char* value = std::getenv("MCRPMPI_PROGRESS_THREAD");
  const std::string text = value != nullptr ? value : "";
  if (text.empty() || text == "auto") return Config::ProgressThread::automatic;
  if (text == "0") return Config::ProgressThread::off;
  if (text == "1") return Config::ProgressThread::always;
  std::fprintf(stderr, "mcrpmpi: ignoring MCRPMPI_PROGRESS_THREAD=%s (0, 1 or auto); using auto\n", value);
  return Config::ProgressThread::automatic;
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
  c.nccl_inline_launch_asked = is_set("MCRPMPI_NCCL_INLINE_LAUNCH");
  c.nccl_inline_launch = flag_or("MCRPMPI_NCCL_INLINE_LAUNCH", true);
  c.polling_collectives = flag_or("MCRPMPI_POLLING_COLLECTIVES", c.p2p_device_only);
  c.progress_thread = progress_thread_setting();
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

std::string nccl_timeout_text() {
  char text[64];
  std::snprintf(text, sizeof text, "MCRPMPI_NCCL_TIMEOUT=%g s", config().nccl_timeout_s);
  return text;
}

}  // namespace mcrp
