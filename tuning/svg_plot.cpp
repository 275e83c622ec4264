#include "tuning/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

namespace mcrp::tuning {
namespace {

constexpr double kPanelWidth = 640, kPanelHeight = 260, kLeft = 70, kRight = 20, kTop = 30, kBottom = 40;
const char* const kColour[2] = {"#1f77b4", "#d62728"};  // nccl, mpi

struct Panel {
  CollKind kind;
  int comm_size;
  Topology topology;
  std::vector<const Measurement*> rows;
};

// Log-scale mapping of [lo, hi] onto [a, b].
struct LogAxis {
  double lo, hi, a, b;
  double at(double v) const {
    const double l = std::log2(std::max(v, lo)), l0 = std::log2(lo), l1 = std::log2(hi);
    return l1 > l0 ? a + (b - a) * (l - l0) / (l1 - l0) : (a + b) / 2;
  }
};

std::string fmt(const char* format, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, a, b, c, d);
  return buf;
}

std::string draw_panel(const Panel& p, double y0, const Table& chosen) {
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (const Measurement* m : p.rows) {
    const double x = std::max<double>(1, static_cast<double>(m->bytes));
    xmin = std::min(xmin, x), xmax = std::max(xmax, x);
    ymin = std::min(ymin, std::max(m->latency_us, 1e-3)), ymax = std::max(ymax, std::max(m->latency_us, 1e-3));
  }
  const LogAxis x{xmin, xmax, kLeft, kPanelWidth - kRight};
  const LogAxis y{ymin, ymax * 1.1, y0 + kPanelHeight - kBottom, y0 + kTop};
  std::string svg;
  // Chosen ranges, shaded behind the lines.
  Query q{p.kind, 0, p.comm_size, p.topology};
  for (const Measurement* m : p.rows) {
    q.bytes = m->bytes;
    const Decision d = chosen.lookup(q);
    const double lo = x.at(std::max<double>(xmin, static_cast<double>(d.range_lo)));
    const double hi = x.at(d.range_hi == kUnknownSize ? xmax : std::min<double>(xmax, static_cast<double>(d.range_hi)));
    svg += fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" ", lo, y0 + kTop, std::max(hi - lo, 1.0),
               kPanelHeight - kTop - kBottom) +
           "fill=\"" + kColour[static_cast<int>(d.backend)] + "\" fill-opacity=\"0.06\"/>\n";
  }
  svg += fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n", kLeft,
             y0 + kTop, kPanelWidth - kLeft - kRight, kPanelHeight - kTop - kBottom);
  char title[160];
  std::snprintf(title, sizeof title, "%s, %d ranks, %s (latency us vs bytes, log-log; shading = chosen path)",
                kind_name(p.kind), p.comm_size, topology_name(p.topology));
  svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\">", kLeft, y0 + 20) + title + "</text>\n";
  svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%.0f B</text>\n", kLeft, y0 + kPanelHeight - 22, xmin);
  svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.0f B</text>\n", kPanelWidth - kRight,
             y0 + kPanelHeight - 22, xmax);
  svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.3g us</text>\n", kLeft - 4, y.at(ymax), ymax);
  svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.3g us</text>\n", kLeft - 4, y.at(ymin), ymin);
  for (int b = 0; b < 2; ++b) {
    std::string points;
    for (const Measurement* m : p.rows) {
      if (static_cast<int>(m->backend) != b) continue;
      points += fmt("%.1f,%.1f ", x.at(std::max<double>(1, static_cast<double>(m->bytes))), y.at(std::max(m->latency_us, 1e-3)));
    }
    if (points.empty()) continue;
    svg += std::string("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"") + kColour[b] + "\" points=\"" + points + "\"/>\n";
    svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"", kPanelWidth - kRight - 60, y0 + kTop + 14 + 14 * b) +
           kColour[b] + "\">" + backend_name(static_cast<Backend>(b)) + "</text>\n";
  }
  return svg;
}

}  // namespace

std::string plot_svg(const std::vector<Measurement>& measurements, const Table& chosen) {
  std::map<std::tuple<int, int, int>, Panel> panels;
  for (const Measurement& m : measurements) {
    auto key = std::make_tuple(static_cast<int>(m.kind), m.comm_size, static_cast<int>(m.topology));
    auto it = panels.try_emplace(key, Panel{m.kind, m.comm_size, m.topology, {}}).first;
    it->second.rows.push_back(&m);
  }
  for (auto& [key, panel] : panels) {
    std::sort(panel.rows.begin(), panel.rows.end(), [](const Measurement* a, const Measurement* b) { return a->bytes < b->bytes; });
  }
  const double height = std::max<double>(1, static_cast<double>(panels.size())) * kPanelHeight;
  std::string svg = fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\">\n",
                        kPanelWidth, height);
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  double y0 = 0;
  for (const auto& [key, panel] : panels) {
    svg += draw_panel(panel, y0, chosen);
    y0 += kPanelHeight;
  }
  return svg + "</svg>\n";
}

}  // namespace mcrp::tuning
