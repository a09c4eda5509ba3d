// Symmetries of a run: automorphisms of the machine under which the whole simulation maps onto
// itself, so that NPUs in one orbit have the same timeline (data-parallel replicas of one
// program on a network that treats them alike). Simulating one representative per orbit is
// then the full simulation, NPU for NPU (runner/symmetry.h decides when; docs/scale.md).
//
//   NpuSymmetry s(topology);
//   s.AddGenerator(/*dim=*/1, cycles);      // tau on dimension 1's coordinates
//   if (s.IsRep(npu)) ...                   // simulated
//   int rep = s.Rep(7);                     // 7's representative
//   int image = s.ToRep(/*x=*/7, /*z=*/12);  // where the symmetry taking 7 to Rep(7) puts 12
//
// The group is a product of cyclic groups, one per dimension: generator tau_d permutes the
// coordinate values of dimension d (leaving the other coordinates alone), in cycles that all
// have the same length m_d, so it acts freely. An NPU is a representative when each of its
// coordinates is the first of its cycle. Acting coordinate by coordinate, each generator maps
// dimension-ordered routes onto routes; that it also maps links onto links of the same kind is
// what MakeNetworkSymmetry checks per block type (a Switch or FullyConnected dimension takes any
// permutation, a Ring only a rotation, a Mesh none).
#pragma once

#include <string>
#include <vector>

#include "network/network.h"

namespace orrery {

class NpuSymmetry {
 public:
  NpuSymmetry() = default;
  explicit NpuSymmetry(const Topology& topology);

  // tau_d for dimension `dim`: `cycles` lists its cycles of coordinate values, each in the order
  // tau_d visits them (tau_d(c[i]) = c[i + 1], the last back to the first); every value of the
  // dimension in exactly one cycle, all cycles of one length. Replaces an earlier generator of
  // that dimension. An error says what is wrong with the cycles.
  Status AddGenerator(int dim, const std::vector<std::vector<int>>& cycles);
  // Drops dimension `dim`'s generator (when the run finds it does not hold).
  void RemoveGenerator(int dim);

  bool trivial() const;
  int num_npus() const { return num_npus_; }
  int num_dims() const { return static_cast<int>(dims_.size()); }
  // The cycle length of dimension d's generator (1 = none).
  int Period(int dim) const { return dims_[dim].period; }
  // tau_dim applied `k` times to NPU `npu` (k may be negative).
  int Apply(int dim, int k, int npu) const;

  bool IsRep(int npu) const;
  int Rep(int npu) const { return ToRep(npu, npu); }
  // The symmetry g of the group with g(x) = Rep(x), applied to z.
  int ToRep(int x, int z) const;
  // Every representative, ascending.
  std::vector<int> Reps() const;
  // NPUs per orbit: the product of the periods.
  int OrbitSize() const;
  // How many distinct sets the group's symmetries make of `npus` (sorted): the orbit size over
  // those that map it onto itself.
  int ImagesOf(const std::vector<int>& npus) const;
  // "dimension 1 in cycles of 8" for messages.
  std::string Describe() const;

 private:
  struct Dim {
    int npus = 1;
    int stride = 1;
    int period = 1;
    std::vector<int> cycle;                // value -> its cycle
    std::vector<int> pos;                  // value -> its place in the cycle
    std::vector<std::vector<int>> values;  // cycle -> values in order
  };
  int Coord(int npu, int d) const { return (npu / dims_[d].stride) % dims_[d].npus; }

  int num_npus_ = 0;
  std::vector<Dim> dims_;
};

}  // namespace orrery
