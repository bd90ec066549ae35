#pragma once
// The exact arithmetic of an int8-static plan, for checking both sides of the QAT contract
// on any host and any trained model.
//
// An int8 plan (integer dot products, then one float requantization) and the QAT forward
// pass (float products of the same grid values, summed by Eigen/BLAS in whatever order the
// host's kernels use) compute the same real numbers up to float round-off. Round-off only
// matters where a value sits that close to a rounding boundary of the next activation code:
// there the two may pick neighbouring codes, and the difference travels on through the
// later layers. So instead of a tolerance tuned on one host, this emulation computes every
// pre-activation in double, marks each code whose value lies within a rigorous round-off
// bound of a boundary as "either way", and returns every output the network can reach with
// those codes rounded either way. Both the plan and the QAT pass must land (to 1e-4) on
// one of them, row by row; a wrong scale, zero point, fold or rounding rule lands on none.
//
// The round-off bound of a dot product of n terms summed in float in any order is
// gamma_n * sum|terms| with gamma_n = n u / (1 - n u), u = 2^-24 (Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., 3.1). It is taken over the terms of both
// forms, the QAT pass's (s_in (q - zp)) (s_w q_w) and the plan's s_in s_w q q_w and
// s_in s_w zp sum(q_w) (bias fold), plus the folded embedding terms and the bias, with
// eight more roundings for the requantization steps.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "model/model_input.hpp"
#include "model/mlp.hpp"
#include "quant/activation_ranges.hpp"
#include "quant/fake_quant.hpp"

namespace ttlpred::test {

struct Int8Reachable {
  std::vector<std::vector<double>> outputs;  // per row: every reachable standardized output
  std::size_t either_way_codes = 0;          // codes that could round either way, all rows and branches
  std::size_t rows_with_either_way = 0;
  std::size_t rows_truncated = 0;            // rows whose branching passed kMaxLeaves
};

class Int8Emulation {
 public:
  static constexpr std::size_t kMaxLeaves = 1024;

  Int8Emulation(const MlpModel& model, const quant::ActivationRanges& table) : m_(model) {
    const float qmax = table.act_qmax > 0.0f ? table.act_qmax : 255.0f;
    for (const quant::ActivationRange& r : table.layer_inputs) q_.push_back(quant::ActFakeQuant::make(r, qmax));
    // Weights as the plan multiplies them: per output channel, over the quantized inputs
    // (layer 0: the dense columns; its embedding columns stay float and are folded).
    for (std::size_t l = 0; l < m_.layers.size(); ++l) {
      const DenseLayer& d = m_.layers[l];
      const std::uint32_t quantized = l == 0 ? m_.dense_inputs : d.in;
      std::vector<double> w(d.weight.begin(), d.weight.end());
      for (std::uint32_t o = 0; o < d.out; ++o) {
        const float* row = d.weight.data() + std::size_t{o} * d.in;
        const float s = quant::weight_scale(row, quantized);
        for (std::uint32_t k = 0; k < quantized; ++k)
          w[std::size_t{o} * d.in + k] = double{s} * quant::quantize_weight(row[k], s);
      }
      w_.push_back(std::move(w));
    }
  }

  Int8Reachable run(const EncodedBatch& x) const {
    Int8Reachable r;
    r.outputs.resize(x.rows);
    for (std::size_t i = 0; i < x.rows; ++i) {
      // Layer 0's dense inputs: the plan and the QAT pass quantize the same float with the
      // same float operations, so their codes agree exactly.
      const quant::ActFakeQuant& q0 = q_[0];
      std::vector<double> codes(m_.dense_inputs);
      for (std::uint32_t k = 0; k < m_.dense_inputs; ++k) codes[k] = q0.code(x.dense_row(i)[k]);
      std::size_t leaves = 0, either = 0;
      bool truncated = false;
      walk(0, codes, x.cat_row(i), r.outputs[i], leaves, either, truncated);
      r.either_way_codes += either;
      r.rows_with_either_way += either > 0;
      r.rows_truncated += truncated;
    }
    return r;
  }

 private:
  static constexpr double kU = 0x1p-24;

  // Applies layer l to input codes `codes` (plus layer 0's embeddings) and recurses.
  void walk(std::size_t l, const std::vector<double>& codes, const std::uint32_t* cats, std::vector<double>& out,
            std::size_t& leaves, std::size_t& either, bool& truncated) const {
    const DenseLayer& d = m_.layers[l];
    const quant::ActFakeQuant& qi = q_[l];
    const double s_in = qi.scale, zp = qi.zero_point;
    const std::uint32_t quantized = static_cast<std::uint32_t>(codes.size());
    std::vector<double> v(d.out), bound(d.out);
    for (std::uint32_t o = 0; o < d.out; ++o) {
      const double* w = w_[l].data() + std::size_t{o} * d.in;
      double sum = d.bias[o], mag = std::fabs(d.bias[o]);
      for (std::uint32_t k = 0; k < quantized; ++k) {
        sum += s_in * (codes[k] - zp) * w[k];
        mag += s_in * (codes[k] + zp) * std::fabs(w[k]);
      }
      std::uint32_t k = quantized;
      if (l == 0)
        for (std::size_t j = 0; j < m_.embeddings.size(); ++j) {
          const Embedding& e = m_.embeddings[j];
          const std::uint32_t c = cats[j] < e.cardinality ? cats[j] : 0;
          for (std::uint32_t t = 0; t < e.dim; ++t, ++k) {
            const double term = double{e.table[std::size_t{c} * e.dim + t]} * w[k];
            sum += term;
            mag += std::fabs(term);
          }
        }
      const double n = static_cast<double>(d.in) + 8.0;
      v[o] = sum;
      bound[o] = n * kU / (1.0 - n * kU) * mag;
    }
    if (l + 1 == m_.layers.size()) {
      if (leaves < kMaxLeaves) out.push_back(activate(v[0], d.act));
      else truncated = true;
      ++leaves;
      return;
    }
    // Next layer's input codes; those that may round either way branch.
    const quant::ActFakeQuant& qn = q_[l + 1];
    const double inv = qn.inv_scale;
    std::vector<double> next(d.out);
    std::vector<std::uint32_t> open;
    std::vector<double> alt;
    for (std::uint32_t o = 0; o < d.out; ++o) {
      const double t = activate(v[o], d.act) * inv;
      // An activation moves its input by at most its input's error (slope <= 1).
      const double err = bound[o] * inv + 4.0 * kU * (std::fabs(t) + qn.zero_point + 1.0);
      const double lo = std::nearbyint(t - err), hi = std::nearbyint(t + err);
      auto code = [&](double c) { return std::clamp(c + double{qn.zero_point}, 0.0, double{qn.qmax}); };
      next[o] = code(std::nearbyint(t));
      if (lo != hi && code(lo) != code(hi)) {
        open.push_back(o);
        alt.push_back(next[o] == code(lo) ? code(hi) : code(lo));
      }
    }
    either += open.size();
    // Every combination of the open codes (capped: past kMaxLeaves the row is reported).
    const std::size_t combos = open.size() < 20 ? std::size_t{1} << open.size() : kMaxLeaves + 1;
    for (std::size_t mask = 0; mask < combos; ++mask) {
      if (leaves >= kMaxLeaves) {
        truncated = true;
        return;
      }
      std::vector<double> c = next;
      for (std::size_t b = 0; b < open.size() && b < 20; ++b)
        if (mask >> b & 1) c[open[b]] = alt[b];
      walk(l + 1, c, cats, out, leaves, either, truncated);
    }
  }

  const MlpModel& m_;
  std::vector<quant::ActFakeQuant> q_;
  std::vector<std::vector<double>> w_;
};

// Distance from `y` to the nearest reachable output of a row.
inline double distance_to_reachable(double y, const std::vector<double>& reachable) {
  double best = INFINITY;
  for (double r : reachable) best = std::min(best, std::fabs(y - r));
  return best;
}

}  // namespace ttlpred::test
