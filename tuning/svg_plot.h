// An SVG (no dependencies) of the tuning suite's measurements: one panel per (collective,
// communicator size, topology), latency against message size on log-log axes, one line per path,
// with the ranges the table chose shaded in the colour of their path; and one panel for the
// point-to-point eager limit (inline against rendezvous, shaded by the table's limit).
#pragma once
#include <string>
#include <vector>

#include "tuning/measurements.h"
#include "tuning/table.h"

namespace mcrp::tuning {

std::string plot_svg(const std::vector<Measurement>& measurements, const Table& chosen,
                     const std::vector<EagerMeasurement>& p2p = {});

}  // namespace mcrp::tuning
