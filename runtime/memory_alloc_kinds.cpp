#include "runtime/memory_alloc_kinds.h"

#include <strings.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <mutex>
#include <vector>

namespace mcrp {
namespace {

// A kind and the restrictors the library supports for it (the side document's names).
struct KnownKind {
  const char* name;
  std::initializer_list<const char*> restrictors;
};
const KnownKind kLibraryKinds[] = {
    {"mpi", {"alloc_mem", "win_allocate", "win_allocate_shared"}},
    {"system", {}},
    {"cuda", {"host", "device", "managed"}},
};

bool same_name(const std::string& a, const char* b) { return strcasecmp(a.c_str(), b) == 0; }

// `list` split at `separator`, each piece without surrounding blanks (empty pieces kept).
std::vector<std::string> split(const std::string& list, char separator) {
  std::vector<std::string> pieces;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(separator, start);
    if (end == std::string::npos) end = list.size();
    const std::size_t first = list.find_first_not_of(" \t", start);
    const std::size_t last = first < end ? list.find_last_not_of(" \t", end - 1) : std::string::npos;
    pieces.push_back(first < end ? list.substr(first, last - first + 1) : std::string());
    start = end + 1;
  }
  return pieces;
}

// The non-empty kinds of a comma-separated list.
std::vector<std::string> kinds_of(const std::string& list) {
  std::vector<std::string> kinds = split(list, ',');
  kinds.erase(std::remove(kinds.begin(), kinds.end(), std::string()), kinds.end());
  return kinds;
}

// "kind[:restrictor...]" where the library knows the kind and every restrictor of it.
bool library_supports(const std::string& kind) {
  const std::vector<std::string> parts = split(kind, ':');
  if (std::find(parts.begin(), parts.end(), std::string()) != parts.end()) return false;  // "cuda:", ":device"
  for (const KnownKind& known : kLibraryKinds) {
    if (!same_name(parts.front(), known.name)) continue;
    return std::all_of(parts.begin() + 1, parts.end(), [&](const std::string& restrictor) {
      return std::any_of(known.restrictors.begin(), known.restrictors.end(),
                         [&](const char* name) { return same_name(restrictor, name); });
    });
  }
  return false;
}

void add_once(std::vector<std::string>& kinds, const std::string& kind) {
  const auto same = [&](const std::string& listed) { return same_name(listed, kind.c_str()); };
  if (std::none_of(kinds.begin(), kinds.end(), same)) kinds.push_back(kind);
}

std::string joined(const std::vector<std::string>& kinds) {
  std::string text;
  for (const std::string& kind : kinds) text += (text.empty() ? "" : ",") + kind;
  return text;
}

// Sessions that asked for kinds. Never destroyed: a session may be finalized from an exit handler
// (mpi4py's), after this library's static destructors.
struct SessionRequests {
  std::mutex lock;
  std::map<MPI_Session, std::string> kinds;
};
SessionRequests& session_requests() {
  static auto* requests = new SessionRequests;
  return *requests;
}

}  // namespace

bool info_value(MPI_Info info, const char* key, std::string* value) {
  // A length of 0 asks for the value's size (its terminator included); MPICH 4.0.2 refuses a null value
  // pointer even then.
  char unused = '\0';
  int length = 0, found = 0;
  if (PMPI_Info_get_string(info, key, &length, &unused, &found) != MPI_SUCCESS || !found) return false;
  std::vector<char> text(static_cast<std::size_t>(length) + 1, '\0');
  if (PMPI_Info_get_string(info, key, &length, text.data(), &found) != MPI_SUCCESS || !found) return false;
  *value = text.data();
  return true;
}

std::string with_library_kinds(const char* listed, const char* requested) {
  std::vector<std::string> kinds = kinds_of(listed != nullptr ? listed : "mpi,system");
  add_once(kinds, "cuda");
  if (requested != nullptr) {
    for (const std::string& kind : kinds_of(requested)) {
      if (library_supports(kind)) add_once(kinds, kind);
    }
  }
  return joined(kinds);
}

int add_library_kinds(MPI_Info info, const char* requested) {
  std::string listed;
  const bool base_answered = info_value(info, kMemoryAllocKindsKey, &listed);
  const std::string kinds = with_library_kinds(base_answered ? listed.c_str() : nullptr, requested);
  return PMPI_Info_set(info, kMemoryAllocKindsKey, kinds.c_str());
}

void remember_session_request(MPI_Session session, MPI_Info info) {
  std::string requested;
  if (info == MPI_INFO_NULL || !info_value(info, kMemoryAllocKindsKey, &requested)) return;
  restore_session_request(session, std::move(requested));
}

void restore_session_request(MPI_Session session, std::string requested) {
  SessionRequests& requests = session_requests();
  const std::lock_guard<std::mutex> hold(requests.lock);
  requests.kinds[session] = std::move(requested);
}

std::string session_request(MPI_Session session) {
  SessionRequests& requests = session_requests();
  const std::lock_guard<std::mutex> hold(requests.lock);
  const auto found = requests.kinds.find(session);
  return found != requests.kinds.end() ? found->second : std::string();
}

std::string take_session_request(MPI_Session session) {
  SessionRequests& requests = session_requests();
  const std::lock_guard<std::mutex> hold(requests.lock);
  const auto found = requests.kinds.find(session);
  if (found == requests.kinds.end()) return std::string();
  std::string requested = std::move(found->second);
  requests.kinds.erase(found);
  return requested;
}

}  // namespace mcrp
