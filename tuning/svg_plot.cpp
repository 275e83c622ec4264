#include "tuning/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

namespace mcrp::tuning {
namespace {

constexpr double kPanelWidth = 640, kPanelHeight = 260, kLeft = 70, kRight = 20, kTop = 30, kBottom = 40;
const char* const kColour[2] = {"#1f77b4", "#d62728"};  // nccl, mpi; inline, rendezvous

// One line of a panel: (bytes, microseconds) points in size order.
struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

// A message-size range [lo, hi) drawn in the colour of series `which`; hi = kUnknownSize: to the edge.
struct Shade {
  std::uint64_t lo = 0, hi = kUnknownSize;
  int which = 0;
};

struct Panel {
  std::string title;
  Series series[2];
  std::vector<Shade> shades;
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

std::string draw_panel(const Panel& p, double y0) {
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (const Series& line : p.series) {
    for (const auto& [bytes, us] : line.points) {
      const double x = std::max(1.0, bytes), y = std::max(us, 1e-3);
      xmin = std::min(xmin, x), xmax = std::max(xmax, x), ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    }
  }
  const LogAxis x{xmin, xmax, kLeft, kPanelWidth - kRight};
  const LogAxis y{ymin, ymax * 1.1, y0 + kPanelHeight - kBottom, y0 + kTop};
  std::string svg;
  // Chosen ranges, shaded behind the lines.
  for (const Shade& shade : p.shades) {
    const double lo = x.at(std::max<double>(xmin, static_cast<double>(shade.lo)));
    const double hi = x.at(shade.hi == kUnknownSize ? xmax : std::min<double>(xmax, static_cast<double>(shade.hi)));
    svg += fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" ", lo, y0 + kTop, std::max(hi - lo, 1.0),
               kPanelHeight - kTop - kBottom) +
           "fill=\"" + kColour[shade.which] + "\" fill-opacity=\"0.06\"/>\n";
  }
  svg += fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n", kLeft,
             y0 + kTop, kPanelWidth - kLeft - kRight, kPanelHeight - kTop - kBottom);
  svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\">", kLeft, y0 + 20) + p.title + "</text>\n";
  svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%.0f B</text>\n", kLeft, y0 + kPanelHeight - 22, xmin);
  svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.0f B</text>\n", kPanelWidth - kRight,
             y0 + kPanelHeight - 22, xmax);
  svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.3g us</text>\n", kLeft - 4, y.at(ymax), ymax);
  svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.3g us</text>\n", kLeft - 4, y.at(ymin), ymin);
  for (int b = 0; b < 2; ++b) {
    std::string points;
    for (const auto& [bytes, us] : p.series[b].points) points += fmt("%.1f,%.1f ", x.at(std::max(1.0, bytes)), y.at(std::max(us, 1e-3)));
    if (points.empty()) continue;
    svg += std::string("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"") + kColour[b] + "\" points=\"" + points + "\"/>\n";
    svg += fmt("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"", kPanelWidth - kRight - 80, y0 + kTop + 14 + 14 * b) +
           kColour[b] + "\">" + p.series[b].name + "</text>\n";
  }
  return svg;
}

// One panel per (collective, communicator size, topology), shaded by the table's ranges.
std::vector<Panel> collective_panels(const std::vector<Measurement>& measurements, const Table& chosen) {
  std::map<std::tuple<int, int, int>, std::vector<const Measurement*>> groups;
  for (const Measurement& m : measurements) {
    groups[std::make_tuple(static_cast<int>(m.kind), m.comm_size, static_cast<int>(m.topology))].push_back(&m);
  }
  std::vector<Panel> panels;
  for (auto& [key, rows] : groups) {
    std::sort(rows.begin(), rows.end(), [](const Measurement* a, const Measurement* b) { return a->bytes < b->bytes; });
    const Measurement& first = *rows.front();
    Panel panel;
    char title[160];
    std::snprintf(title, sizeof title, "%s, %d ranks, %s (latency us vs bytes, log-log; shading = chosen path)",
                  kind_name(first.kind), first.comm_size, topology_name(first.topology));
    panel.title = title;
    panel.series[0].name = backend_name(Backend::nccl);
    panel.series[1].name = backend_name(Backend::mpi);
    Query q{first.kind, 0, first.comm_size, first.topology};
    for (const Measurement* m : rows) {
      panel.series[static_cast<int>(m->backend)].points.emplace_back(static_cast<double>(m->bytes), m->latency_us);
      q.bytes = m->bytes;
      const Decision d = chosen.lookup(q);
      panel.shades.push_back(Shade{d.range_lo, d.range_hi, static_cast<int>(d.backend)});
    }
    panels.push_back(std::move(panel));
  }
  return panels;
}

// The eager limit: inline up to the table's limit, rendezvous above it.
Panel eager_limit_panel(std::vector<EagerMeasurement> rows, const Table& chosen) {
  std::sort(rows.begin(), rows.end(), [](const EagerMeasurement& a, const EagerMeasurement& b) { return a.bytes < b.bytes; });
  Panel panel;
  char title[160];
  std::snprintf(title, sizeof title, "p2p eager limit %llu B, %d ranks, %s (one-way latency us vs bytes, log-log)",
                static_cast<unsigned long long>(chosen.p2p_eager_limit_bytes), rows.front().comm_size,
                topology_name(rows.front().topology));
  panel.title = title;
  for (int p = 0; p < 2; ++p) panel.series[p].name = protocol_name(static_cast<P2pProtocol>(p));
  for (const EagerMeasurement& m : rows) {
    panel.series[static_cast<int>(m.protocol)].points.emplace_back(static_cast<double>(m.bytes), m.latency_us);
  }
  panel.shades = {Shade{0, chosen.p2p_eager_limit_bytes, 0}, Shade{chosen.p2p_eager_limit_bytes, kUnknownSize, 1}};
  return panel;
}

}  // namespace

std::string plot_svg(const std::vector<Measurement>& measurements, const Table& chosen,
                     const std::vector<EagerMeasurement>& p2p) {
  std::vector<Panel> panels = collective_panels(measurements, chosen);
  if (!p2p.empty()) panels.push_back(eager_limit_panel(p2p, chosen));
  const double height = std::max<double>(1, static_cast<double>(panels.size())) * kPanelHeight;
  std::string svg = fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\">\n",
                        kPanelWidth, height);
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  double y0 = 0;
  for (const Panel& panel : panels) {
    svg += draw_panel(panel, y0);
    y0 += kPanelHeight;
  }
  return svg + "</svg>\n";
}

}  // namespace mcrp::tuning
