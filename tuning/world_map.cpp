#include "tuning/world_map.h"

#include <vector>

namespace mcrp::tuning {
namespace {

struct Member {
  int node;         // the lowest WORLD rank on this process's node
  int cuda_usable;  // 0 or 1
  int nccl_usable;  // 0 or 1
};
constexpr int kMemberInts = sizeof(Member) / sizeof(int);

// One entry per WORLD rank. Written once by learn_world_map (inside MPI_Init, before any other
// thread can call the library), read-only afterwards.
std::vector<Member> g_world;

}  // namespace

int learn_world_map(bool cuda_usable, bool nccl_usable) {
  int world_rank = 0, world_size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm node = MPI_COMM_NULL;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return 0;
  int local_rank = 0;
  Member me{world_rank, cuda_usable ? 1 : 0, nccl_usable ? 1 : 0};
  PMPI_Comm_rank(node, &local_rank);
  PMPI_Allreduce(&world_rank, &me.node, 1, MPI_INT, MPI_MIN, node);
  PMPI_Comm_free(&node);
  std::vector<Member> world(static_cast<std::size_t>(world_size));
  if (PMPI_Allgather(&me, kMemberInts, MPI_INT, world.data(), kMemberInts, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS) {
    g_world = std::move(world);
  }
  return local_rank;
}

CommFacts facts_from_world_map(MPI_Comm comm) {
  if (g_world.empty()) return {};
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  int size = 0;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  PMPI_Group_size(group, &size);
  std::vector<int> ranks(static_cast<std::size_t>(size)), in_world(ranks.size(), MPI_UNDEFINED);
  for (int i = 0; i < size; ++i) ranks[i] = i;
  PMPI_Group_translate_ranks(group, size, ranks.data(), world, in_world.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  CommFacts facts{Topology::single_node, true, true};
  for (int r : in_world) {
    if (r == MPI_UNDEFINED || r < 0 || r >= static_cast<int>(g_world.size())) return {};
    if (g_world[r].node != g_world[in_world[0]].node) facts.topology = Topology::multi_node;
    facts.nccl_everywhere = facts.nccl_everywhere && g_world[r].nccl_usable == 1;
    facts.cuda_everywhere = facts.cuda_everywhere && g_world[r].cuda_usable == 1;
  }
  return facts;
}

}  // namespace mcrp::tuning
