// What the device-only point-to-point protocol (p2p/engine.h) puts on the wire.
//
// On the user's communicator, with the user's destination and tag, every message is a Header,
// followed by the payload when it is small enough to travel inline; so the base MPI matches
// messages exactly as it would the application's own. Everything else travels as Control messages
// on a private duplicate of the communicator.
#pragma once
#include <cstddef>
#include <cstdint>

namespace mcrp::wire {

inline constexpr std::uint32_t kHeaderMagic = 0x4d435048;  // "MCPH"

enum HeaderFlags : std::uint32_t {
  kInline = 1,  // the payload follows the header
};

struct Header {
  std::uint32_t magic = kHeaderMagic;
  std::uint32_t flags = 0;
  std::uint64_t seq = 0;      // per (sender, destination) on this communicator: probes use it to
                              // keep MPI's non-overtaking order among headers they took out early
  std::uint64_t bytes = 0;    // payload size
  std::uint64_t send_id = 0;  // rendezvous: names the sender's operation in the clear-to-send
};

enum class ControlType : std::uint32_t {
  clear_to_send = 1,  // receiver -> sender: a = send_id, b = transfer index, c = bytes accepted
  propose = 2,        // lower rank -> higher: a = epoch, b = transfers low->high, c = high->low (ends)
  accept = 3,         // a = epoch, b = transfers low->high the group runs (end): the higher rank
                      // has launched the group, which takes every low->high transfer it had
                      // cleared, the proposal's and any whose clear-to-send crossed it
  reject = 4,         // a = epoch: the higher rank is busy; propose again later
};

struct Control {
  ControlType type = ControlType::clear_to_send;
  std::uint32_t reserved = 0;
  std::uint64_t a = 0, b = 0, c = 0;
};

inline constexpr int kControlTag = 1;

}  // namespace mcrp::wire
