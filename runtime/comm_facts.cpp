#include "runtime/comm_facts.h"

#include "runtime/comm_attribute.h"

namespace mcrp {
namespace {

int delete_facts(MPI_Comm, int, void* value, void*) {
  delete static_cast<tuning::CommFacts*>(value);
  forget_comm_attributes();
  return MPI_SUCCESS;
}

}  // namespace

tuning::CommFacts comm_facts(MPI_Comm comm) {
  // A duplicate is looked up again (cheap, and its members are the same anyway).
  static const int keyval = new_comm_keyval(delete_facts);
  thread_local CachedCommAttribute cached;
  if (void* value = cached.find(comm, keyval)) return *static_cast<tuning::CommFacts*>(value);
  const tuning::CommFacts facts = tuning::facts_from_world_map(comm);
  PMPI_Comm_set_attr(comm, keyval, new tuning::CommFacts(facts));
  return facts;
}

}  // namespace mcrp
