#include "network/symmetry.h"

#include <algorithm>

namespace orrery {

NpuSymmetry::NpuSymmetry(const Topology& topology) : num_npus_(topology.num_npus()) {
  int stride = 1;
  for (const Dimension& d : topology.dims) {
    Dim dim;
    dim.npus = d.npus;
    dim.stride = stride;
    dims_.push_back(dim);
    RemoveGenerator(static_cast<int>(dims_.size()) - 1);
    stride *= d.npus;
  }
}

void NpuSymmetry::RemoveGenerator(int d) {
  Dim& dim = dims_[d];
  dim.period = 1;
  dim.cycle.resize(dim.npus);
  dim.pos.assign(dim.npus, 0);
  dim.values.assign(dim.npus, {});
  for (int v = 0; v < dim.npus; ++v) {
    dim.cycle[v] = v;
    dim.values[v] = {v};
  }
}

Status NpuSymmetry::AddGenerator(int d, const std::vector<std::vector<int>>& cycles) {
  if (d < 0 || d >= num_dims()) {
    return Status::Error("a symmetry of dimension " + std::to_string(d) + " on a network of " +
                         std::to_string(num_dims()) + " dimensions");
  }
  Dim& dim = dims_[d];
  std::vector<int> seen(dim.npus, 0);
  const size_t period = cycles.empty() ? 0 : cycles.front().size();
  for (const std::vector<int>& c : cycles) {
    if (c.size() != period || period == 0) {
      return Status::Error("dimension " + std::to_string(d) +
                           ": a symmetry's cycles must all have one length");
    }
    for (int v : c) {
      if (v < 0 || v >= dim.npus || seen[v]++ != 0) {
        return Status::Error("dimension " + std::to_string(d) +
                             ": a symmetry's cycles must hold every coordinate once");
      }
    }
  }
  if (period * cycles.size() != static_cast<size_t>(dim.npus)) {
    return Status::Error("dimension " + std::to_string(d) +
                         ": a symmetry's cycles must hold every coordinate once");
  }
  dim.period = static_cast<int>(period);
  dim.values = cycles;
  for (size_t k = 0; k < cycles.size(); ++k) {
    for (size_t i = 0; i < cycles[k].size(); ++i) {
      dim.cycle[cycles[k][i]] = static_cast<int>(k);
      dim.pos[cycles[k][i]] = static_cast<int>(i);
    }
  }
  return Status::Ok();
}

bool NpuSymmetry::trivial() const {
  for (const Dim& d : dims_) {
    if (d.period > 1) return false;
  }
  return true;
}

int NpuSymmetry::Apply(int d, int k, int npu) const {
  const Dim& dim = dims_[d];
  if (dim.period == 1) return npu;
  const int v = Coord(npu, d);
  const std::vector<int>& c = dim.values[dim.cycle[v]];
  const int to = c[((dim.pos[v] + k) % dim.period + dim.period) % dim.period];
  return npu + (to - v) * dim.stride;
}

bool NpuSymmetry::IsRep(int npu) const {
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (dims_[d].period > 1 && dims_[d].pos[Coord(npu, static_cast<int>(d))] != 0) return false;
  }
  return true;
}

int NpuSymmetry::ToRep(int x, int z) const {
  for (size_t d = 0; d < dims_.size(); ++d) {
    const Dim& dim = dims_[d];
    if (dim.period == 1) continue;
    const int shift = dim.pos[Coord(x, static_cast<int>(d))];
    if (shift != 0) z = Apply(static_cast<int>(d), -shift, z);
  }
  return z;
}

std::vector<int> NpuSymmetry::Reps() const {
  std::vector<int> out;
  for (int npu = 0; npu < num_npus_; ++npu) {
    if (IsRep(npu)) out.push_back(npu);
  }
  return out;
}

int NpuSymmetry::OrbitSize() const {
  int size = 1;
  for (const Dim& d : dims_) size *= d.period;
  return size;
}

int NpuSymmetry::ImagesOf(const std::vector<int>& npus) const {
  // Every element of the group: a shift per dimension, counted like a mixed-radix number.
  std::vector<int> shift(dims_.size(), 0);
  int fixing = 0;
  for (;;) {
    std::vector<int> image(npus);
    for (int& z : image) {
      for (size_t d = 0; d < dims_.size(); ++d) {
        if (shift[d] != 0) z = Apply(static_cast<int>(d), shift[d], z);
      }
    }
    std::sort(image.begin(), image.end());
    if (image == npus) ++fixing;
    size_t d = 0;
    while (d < dims_.size() && ++shift[d] == dims_[d].period) shift[d++] = 0;
    if (d == dims_.size()) break;
  }
  return OrbitSize() / fixing;
}

std::string NpuSymmetry::Describe() const {
  std::string out;
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (dims_[d].period == 1) continue;
    out += (out.empty() ? "" : ", ") + std::string("dimension ") + std::to_string(d) +
           " in cycles of " + std::to_string(dims_[d].period);
  }
  return out.empty() ? "none" : out;
}

}  // namespace orrery
