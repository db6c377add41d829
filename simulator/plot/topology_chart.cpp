#include "simulator/plot/topology_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "simulator/plot/canvas.hpp"

namespace stepsim::plot {
namespace {

constexpr int kW = 1400;
constexpr double kMargin = 40;

// One colour per rail / plane (NIC index), Okabe-Ito with two darker extras.
constexpr Rgb kRail[] = {{0.00, 0.45, 0.70}, {0.84, 0.37, 0.00}, {0.00, 0.62, 0.45}, {0.80, 0.47, 0.65},
                         {0.34, 0.71, 0.91}, {0.90, 0.62, 0.00}, {0.55, 0.45, 0.10}, {0.35, 0.35, 0.35}};
constexpr Rgb kInk{0.11, 0.14, 0.19}, kMuted{0.36, 0.39, 0.46}, kGpu{0.12, 0.37, 0.66}, kSlow{0.96, 0.84, 0.10},
    kBad{0.80, 0.10, 0.10}, kDomain{0.86, 0.94, 0.88}, kDomainEdge{0.25, 0.60, 0.35}, kSwitch{0.90, 0.91, 0.94};

Rgb rail_colour(int64_t k) { return kRail[size_t(k) % std::size(kRail)]; }

std::string num(double v) { return fmt::format("{:g}", v); }

// What scenario.stragglers does to the fabric, gathered once.
struct Faults {
  std::map<int64_t, std::vector<std::string>> gpu;  // GPU -> what is wrong with it
  std::map<int64_t, bool> nic_down;                 // GPU whose NIC is down
  struct Cable {
    int64_t leaf, spine;
    bool down;
    double GBps;
    std::string window;
  };
  std::vector<Cable> cables;
  std::vector<std::string> lines;  // one sentence per item, for the legend
};

std::string window_of(const Straggler& s) {
  if (s.from_s <= 0 && std::isinf(s.to_s)) return "";
  return fmt::format(" from {} s{}", num(s.from_s), std::isinf(s.to_s) ? std::string() : " to " + num(s.to_s) + " s");
}

Faults faults_of(const PlatformSpec& spec) {
  Faults f;
  const int64_t G = spec.gpus_per_node;
  for (const Straggler& s : spec.stragglers) {
    const std::string when = window_of(s);
    if (s.leaf >= 0) {
      f.cables.push_back({s.leaf, s.spine, s.link_down, s.link_GBps, when});
      f.lines.push_back(fmt::format("cable leaf {} - spine {}: {}{}", s.leaf, s.spine,
                                    s.link_down ? std::string("down") : num(s.link_GBps) + " GB/s", when));
      continue;
    }
    std::vector<std::string> what;
    if (s.clock != 1) what.push_back(fmt::format("clock x{}", num(s.clock)));
    if (s.nic_GBps > 0) what.push_back(fmt::format("NIC {} GB/s", num(s.nic_GBps)));
    if (s.nvlink_GBps > 0) what.push_back(fmt::format("NVLink {} GB/s", num(s.nvlink_GBps)));
    if (s.nic_down) what.push_back(s.via >= 0 ? fmt::format("NIC down (via GPU {})", s.via) : std::string("NIC down"));
    std::string text;
    for (const auto& w : what) text += (text.empty() ? "" : ", ") + w;
    const int64_t first = s.gpu >= 0 ? s.gpu : s.node * G, last = s.gpu >= 0 ? s.gpu : s.node * G + G - 1;
    for (int64_t g = first; g <= last; ++g) {
      for (const auto& w : what) f.gpu[g].push_back(w);
      if (s.nic_down) f.nic_down[g] = true;
    }
    f.lines.push_back(fmt::format("{} {}: {}{}", s.gpu >= 0 ? "GPU" : "node", s.gpu >= 0 ? s.gpu : s.node, text, when));
  }
  return f;
}

std::string subtitle(const PlatformSpec& spec, const FabricShape& f) {
  std::string fabric;
  switch (f.topology) {
    case Topology::Star: fabric = "one non-blocking switch"; break;
    case Topology::FatTree:
      fabric = fmt::format("fat tree{}, {} NICs per leaf, {}:1", f.rail_optimized ? " (rail-optimised)" : "",
                           f.leaf_nics, num(f.oversubscription));
      break;
    case Topology::MultiPlane:
      fabric = fmt::format("multi-plane: {} planes, {} NICs per leaf, {}:1", f.gpus_per_node, f.leaf_nics,
                           num(f.oversubscription));
      break;
  }
  return fmt::format("{} nodes x {} {} = {} GPUs; {}; NVLink domain {} GPUs; NIC {} GB/s, NVLink {} GB/s per GPU "
                     "per direction",
                     f.nodes, f.gpus_per_node, spec.gpu_name, f.gpus(), fabric, f.nvlink_ranks, num(spec.ib_Bps / 1e9),
                     num(spec.nvlink_Bps / 1e9));
}

void box(Canvas& c, double x, double y, double w, double h, Rgb fill, Rgb edge, double edge_w = 1, double radius = 3) {
  cairo_t* cr = c.cr.get();
  const double r = std::min(radius, std::min(w, h) / 2);
  cairo_new_sub_path(cr);
  cairo_arc(cr, x + w - r, y + r, r, -M_PI / 2, 0);
  cairo_arc(cr, x + w - r, y + h - r, r, 0, M_PI / 2);
  cairo_arc(cr, x + r, y + h - r, r, M_PI / 2, M_PI);
  cairo_arc(cr, x + r, y + r, r, M_PI, 3 * M_PI / 2);
  cairo_close_path(cr);
  c.colour(fill);
  cairo_fill_preserve(cr);
  c.colour(edge);
  cairo_set_line_width(cr, edge_w);
  cairo_stroke(cr);
}

void dashed(Canvas& c, bool on) {
  const double d[] = {6, 4};
  cairo_set_dash(c.cr.get(), d, on ? 2 : 0, 0);
}

// The legend and fault list under a picture, from y; returns the y below it.
double legend(Canvas& c, double y, const std::vector<std::pair<Rgb, std::string>>& items, const Faults& faults,
              bool draw) {
  double x = kMargin;
  for (const auto& [colour, label] : items) {
    const double w = 26 + c.text_width(label, 12) + 22;
    if (x + w > kW - kMargin && x > kMargin) x = kMargin, y += 20;
    if (draw) {
      box(c, x, y - 10, 14, 12, colour, colour, 1, 2);
      c.colour(kInk);
      c.text(label, x + 20, y, 12);
    }
    x += w;
  }
  y += 26;
  if (!faults.lines.empty()) {
    if (draw) {
      c.colour(kBad);
      c.text("faults (scenario.stragglers):", kMargin, y, 13);
    }
    y += 18;
    const size_t shown = std::min<size_t>(faults.lines.size(), 12);
    for (size_t i = 0; i < shown; ++i, y += 17)
      if (draw) {
        c.colour(kInk);
        c.text(faults.lines[i], kMargin + 14, y, 12);
      }
    if (faults.lines.size() > shown) {
      if (draw) c.text(fmt::format("... and {} more", faults.lines.size() - shown), kMargin + 14, y, 12);
      y += 17;
    }
  }
  return y;
}

// ---- small clusters: every node, leaf and spine ---------------------------------------------

struct Layout {
  double sq = 12, sq_gap = 3, node_w = 0, node_h = 0, hgap = 14, row_pitch = 0;
  int64_t per_row = 1, rows = 1;
  double y_spine = 0, y_leaf = 0, y_nodes = 0;
};

void draw_full(const PlatformSpec& spec, const FabricShape& f, const std::string& title, const std::string& path) {
  const int64_t G = f.gpus_per_node, N = f.nodes, L = f.leaves(), S = f.spines();
  const int64_t domain_nodes = std::max<int64_t>(1, f.nvlink_ranks / G);
  const bool multi = f.topology == Topology::MultiPlane;
  const Faults faults = faults_of(spec);

  Layout l;
  l.node_w = std::max(64.0, double(G) * (l.sq + l.sq_gap) + l.sq_gap + 10);
  l.node_h = l.sq + 28;
  l.per_row = std::max<int64_t>(1, int64_t((kW - 2 * kMargin + l.hgap) / (l.node_w + l.hgap)));
  if (domain_nodes > 1 && domain_nodes <= l.per_row) l.per_row = l.per_row / domain_nodes * domain_nodes;
  l.per_row = std::min(l.per_row, N);
  l.rows = (N + l.per_row - 1) / l.per_row;
  // Rows as even as the domains allow (16 nodes: 8 + 8, not 9 + 7).
  const int64_t even = (N + l.rows - 1) / l.rows;
  if (domain_nodes <= 1 || even % domain_nodes == 0) l.per_row = even;
  l.row_pitch = l.node_h + 40;
  l.y_spine = 112;
  l.y_leaf = f.has_leaves() ? 222 : 150;
  l.y_nodes = l.y_leaf + 120;
  const double row_w = double(l.per_row) * l.node_w + double(l.per_row - 1) * l.hgap;
  const double x0 = (kW - row_w) / 2;
  const auto node_x = [&](int64_t n) { return x0 + double(n % l.per_row) * (l.node_w + l.hgap); };
  const auto node_y = [&](int64_t n) { return l.y_nodes + double(n / l.per_row) * l.row_pitch; };
  const auto gpu_x = [&](int64_t g) {  // centre of GPU g's square
    return node_x(g / G) + 5 + l.sq_gap + double(g % G) * (l.sq + l.sq_gap) + l.sq / 2;
  };
  const auto gpu_y = [&](int64_t g) { return node_y(g / G) + 8; };  // top of its square

  // Leaves in display order: by plane (multi-plane), else by index.
  std::vector<int64_t> leaf_order;
  if (multi)
    for (int64_t p = 0; p < G; ++p)
      for (int64_t j = p; j < L; j += G) leaf_order.push_back(j);
  else
    for (int64_t j = 0; j < L; ++j) leaf_order.push_back(j);
  const double leaf_gap = L > 24 ? 4 : 10;
  const double leaf_w = L > 0 ? std::min(130.0, (kW - 2 * kMargin - leaf_gap * double(L - 1)) / double(L)) : 0;
  const double leaves_w = double(L) * leaf_w + double(std::max<int64_t>(0, L - 1)) * leaf_gap;
  std::vector<double> leaf_cx(size_t(std::max<int64_t>(L, 0)));
  for (size_t i = 0; i < leaf_order.size(); ++i)
    leaf_cx[size_t(leaf_order[i])] = (kW - leaves_w) / 2 + double(i) * (leaf_w + leaf_gap) + leaf_w / 2;

  // Legend first, to size the image.
  std::vector<std::pair<Rgb, std::string>> items;
  if (f.rails()) {
    for (int64_t k = 0; k < std::min<int64_t>(G, std::size(kRail)); ++k)
      items.emplace_back(rail_colour(k), fmt::format("{} {} (GPU {} of each node)", multi ? "plane" : "rail", k, k));
  } else {
    items.emplace_back(kGpu, "GPU");
  }
  items.emplace_back(kDomain, "NVLink domain");
  bool slow = false, down = !faults.nic_down.empty();
  for (const auto& [g, what] : faults.gpu) slow = slow || what.size() > (faults.nic_down.count(g) ? 1u : 0u);
  for (const auto& cb : faults.cables) (cb.down ? down : slow) = true;
  if (slow) items.emplace_back(kSlow, "slow GPU, NIC, NVLink or cable");
  if (down) items.emplace_back(kBad, "NIC or cable down");
  const double nodes_bottom = l.y_nodes + double(l.rows) * l.row_pitch;
  int height = 0;
  {
    Canvas probe(kW, 1);
    height = int(std::ceil(legend(probe, nodes_bottom + 10, items, faults, false))) + 10;
  }
  Canvas c(kW, height);
  cairo_t* cr = c.cr.get();
  c.colour(kInk);
  c.text(title, kW / 2.0, 34, 20, 0.5);
  c.colour(kMuted);
  c.text(subtitle(spec, f), kW / 2.0, 58, 13, 0.5);

  // NVLink domains behind their nodes (a domain may wrap over rows: one piece per row).
  for (int64_t d = 0; d * domain_nodes < N; ++d) {
    const int64_t first = d * domain_nodes, last = std::min(N, first + domain_nodes) - 1;
    for (int64_t n = first; n <= last;) {
      const int64_t row_end = std::min(last, (n / l.per_row + 1) * l.per_row - 1);
      box(c, node_x(n) - 6, node_y(n) - 6, node_x(row_end) + l.node_w - node_x(n) + 12, l.node_h + 26, kDomain,
          kDomainEdge, 1.2, 6);
      if (n == first && domain_nodes > 1) {
        c.colour(kDomainEdge);
        c.text(fmt::format("NVLink domain {} ({} GPUs)", d, f.nvlink_ranks), node_x(n), node_y(n) + l.node_h + 12, 11);
      }
      n = row_end + 1;
    }
  }

  // NICs to their switch.
  if (!f.has_leaves()) {
    const double sw_w = std::min(700.0, kW - 2 * kMargin);
    box(c, (kW - sw_w) / 2, l.y_leaf - 14, sw_w, 28, kSwitch, kMuted, 1.2, 5);
    c.colour(kInk);
    c.text(fmt::format("non-blocking switch ({} NICs of {} GB/s)", f.gpus(), num(spec.ib_Bps / 1e9)), kW / 2.0,
           l.y_leaf + 5, 13, 0.5);
    for (int64_t g = 0; g < f.gpus(); ++g) {
      const double tx = (kW - sw_w) / 2 + sw_w * (double(g) + 0.5) / double(f.gpus());
      const bool down = faults.nic_down.count(g) > 0;
      c.colour(down ? kBad : kMuted, down ? 1.0 : 0.35);
      dashed(c, down);
      c.line(gpu_x(g), gpu_y(g), tx, l.y_leaf + 14, down ? 1.6 : 0.6);
      dashed(c, false);
    }
  } else {
    for (int64_t g = 0; g < f.gpus(); ++g) {
      const int64_t j = f.leaf_of(g);
      const bool down = faults.nic_down.count(g) > 0;
      const Rgb col = down ? kBad : f.rails() ? rail_colour(g % G) : kMuted;
      c.colour(col, down ? 1.0 : f.rails() ? 0.55 : 0.3);
      dashed(c, down);
      c.line(gpu_x(g), gpu_y(g), leaf_cx[size_t(j)], l.y_leaf + 13, down ? 1.6 : 0.7);
      dashed(c, false);
    }
  }

  // Leaves and spines.
  if (f.has_leaves()) {
    const bool spine_boxes = !multi && S <= 24;
    const double sp_gap = 6;
    const double sp_w = spine_boxes ? std::min(60.0, (kW - 2 * kMargin - sp_gap * double(S - 1)) / double(S)) : 0;
    const double spines_w = double(S) * sp_w + double(S - 1) * sp_gap;
    const auto spine_cx = [&](int64_t s) { return (kW - spines_w) / 2 + double(s) * (sp_w + sp_gap) + sp_w / 2; };
    // Planes (multi-plane) or the one spine layer.
    struct Span { double x0, x1; int64_t plane; };
    std::vector<Span> bars;
    if (multi) {
      for (int64_t p = 0; p < G; ++p) {
        double lo = kW, hi = 0;
        for (int64_t j = p; j < L; j += G) lo = std::min(lo, leaf_cx[size_t(j)] - leaf_w / 2), hi = std::max(hi, leaf_cx[size_t(j)] + leaf_w / 2);
        bars.push_back({lo, hi, p});
      }
    } else if (!spine_boxes) {
      bars.push_back({(kW - leaves_w) / 2, (kW + leaves_w) / 2, -1});
    }
    // Cables: every leaf to every spine of its plane, or one bundle per leaf to the spine bar.
    const auto cable_fault = [&](int64_t j, int64_t s) -> const Faults::Cable* {
      for (const auto& cb : faults.cables)
        if (cb.leaf == j && cb.spine == s) return &cb;
      return nullptr;
    };
    for (int64_t j = 0; j < L; ++j) {
      const double lx = leaf_cx[size_t(j)];
      if (spine_boxes) {
        for (int64_t s = 0; s < S; ++s) {
          const Faults::Cable* cb = cable_fault(j, s);
          c.colour(cb ? (cb->down ? kBad : kSlow) : kMuted, cb ? 1.0 : 0.25);
          dashed(c, cb && cb->down);
          c.line(lx, l.y_leaf - 13, spine_cx(s), l.y_spine + 12, cb ? 2.2 : 0.6);
          dashed(c, false);
        }
      } else {
        c.colour(kMuted, 0.6);
        c.line(lx, l.y_leaf - 13, lx, l.y_spine + 12, std::min(6.0, 1.0 + double(S) / 8));
      }
    }
    if (spine_boxes) {
      for (int64_t s = 0; s < S; ++s) {
        box(c, spine_cx(s) - sp_w / 2, l.y_spine - 12, sp_w, 24, kSwitch, kMuted, 1, 3);
        if (sp_w >= 34) {
          c.colour(kInk);
          c.text(fmt::format("spine {}", s), spine_cx(s), l.y_spine + 4, 10, 0.5);
        }
      }
      c.colour(kMuted);
      c.text(fmt::format("{} spine switches; each leaf has one cable to each", S), kW / 2.0, l.y_spine - 22, 12, 0.5);
    } else {
      for (const Span& b : bars) {
        box(c, b.x0, l.y_spine - 12, b.x1 - b.x0, 24, b.plane >= 0 ? rail_colour(b.plane) : kSwitch, kMuted, 1, 4);
        c.colour(b.plane >= 0 ? Rgb{1, 1, 1} : kInk);
        const std::string label = b.plane >= 0 ? (b.x1 - b.x0 > 120 ? fmt::format("plane {}: {} spines", b.plane, S)
                                                                      : fmt::format("plane {}", b.plane))
                                               : fmt::format("{} spine switches (each leaf: one cable to each)", S);
        c.text(label, (b.x0 + b.x1) / 2, l.y_spine + 4, 11, 0.5);
      }
      // Faulty cables of leaves whose spines are drawn as a bar: marked on the leaf's bundle.
      for (const auto& cb : faults.cables) {
        if (cb.leaf >= L) continue;
        const double lx = leaf_cx[size_t(cb.leaf)];
        c.colour(cb.down ? kBad : kSlow);
        dashed(c, cb.down);
        c.line(lx + 3, l.y_leaf - 13, lx + 3, l.y_spine + 12, 2.2);
        dashed(c, false);
        c.text(fmt::format("spine {}: {}", cb.spine, cb.down ? std::string("down") : num(cb.GBps) + " GB/s"), lx + 8,
               (l.y_leaf + l.y_spine) / 2, 11);
      }
    }
    for (int64_t j = 0; j < L; ++j) {
      const double lx = leaf_cx[size_t(j)];
      const Rgb fill = f.rails() ? rail_colour(j % G) : kSwitch;
      box(c, lx - leaf_w / 2, l.y_leaf - 13, leaf_w, 26, fill, kMuted, 1, 3);
      if (leaf_w >= 44) {
        c.colour(f.rails() ? Rgb{1, 1, 1} : kInk);
        c.text(fmt::format("leaf {}", j), lx, l.y_leaf + 4, 11, 0.5);
      }
    }
    const std::string note =
        fmt::format("each leaf: {} NIC ports down, {} uplinks of {} GB/s ({}:1 oversubscription){}", f.leaf_nics, S,
                    num(spec.ib_Bps / 1e9 * double(f.leaf_nics) / double(S)), num(f.oversubscription),
                    f.rails() ? (multi ? "; NIC k of every node goes to a leaf of plane k" : "; NIC k of every node goes to a leaf of rail k") : "; a leaf holds whole nodes");
    const double nw = c.text_width(note, 12);
    box(c, kW / 2.0 - nw / 2 - 6, l.y_leaf + 22, nw + 12, 17, {1, 1, 1}, {1, 1, 1}, 1, 3);  // over the cables
    c.colour(kMuted);
    c.text(note, kW / 2.0, l.y_leaf + 34, 12, 0.5);
  }

  // Nodes and GPUs.
  for (int64_t n = 0; n < N; ++n) {
    const double x = node_x(n), y = node_y(n);
    box(c, x, y, l.node_w, l.node_h, {1, 1, 1}, kMuted, 1, 4);
    for (int64_t k = 0; k < G; ++k) {
      const int64_t g = n * G + k;
      const auto it = faults.gpu.find(g);
      const Rgb healthy = f.rails() ? rail_colour(k) : kGpu;
      const bool faulty = it != faults.gpu.end();
      const Rgb fill = !faulty ? healthy : faults.nic_down.count(g) ? kBad : kSlow;
      box(c, gpu_x(g) - l.sq / 2, gpu_y(g), l.sq, l.sq, fill, faulty ? kInk : fill, faulty ? 2 : 1, 2);
    }
    c.colour(kInk);
    c.text(fmt::format("node {}", n), x + l.node_w / 2, y + l.node_h - 6, 10, 0.5);
  }
  legend(c, nodes_bottom + 10, items, faults, true);
  (void)cr;
  c.write(path);
}

// ---- large clusters: one of each kind, with counts --------------------------------------------

void draw_summary(const PlatformSpec& spec, const FabricShape& f, const std::string& title, const std::string& path) {
  const int64_t G = f.gpus_per_node, N = f.nodes, L = f.leaves(), S = f.spines();
  const int64_t domain_nodes = std::max<int64_t>(1, f.nvlink_ranks / G);
  const bool multi = f.topology == Topology::MultiPlane;
  const Faults faults = faults_of(spec);
  std::vector<std::pair<Rgb, std::string>> items;
  if (f.rails())
    for (int64_t k = 0; k < std::min<int64_t>(G, std::size(kRail)); ++k)
      items.emplace_back(rail_colour(k), fmt::format("{} {}", multi ? "plane" : "rail", k));
  else
    items.emplace_back(kGpu, "GPU");
  items.emplace_back(kDomain, "NVLink domain");
  const double y_totals = 520;
  int height = 0;
  {
    Canvas probe(kW, 1);
    height = int(std::ceil(legend(probe, y_totals + 130, items, faults, false))) + 10;
  }
  Canvas c(kW, height);
  c.colour(kInk);
  c.text(title, kW / 2.0, 34, 20, 0.5);
  c.colour(kMuted);
  c.text(subtitle(spec, f), kW / 2.0, 58, 13, 0.5);
  c.text("too many switches to draw each one: one of each kind is shown, with how many there are", kW / 2.0, 80, 12, 0.5);

  const double y_spine = 130, y_leaf = 240, y_node = 360;
  // One node in detail, inside its NVLink domain, with "x N".
  const double sq = 16, gap = 4, node_w = double(G) * (sq + gap) + gap + 16, node_h = sq + 34;
  const double nx = kW / 2.0 - node_w / 2;
  box(c, nx - 14, y_node - 14, node_w + 28, node_h + 28, kDomain, kDomainEdge, 1.2, 6);
  c.colour(kDomainEdge);
  c.text(domain_nodes > 1 ? fmt::format("NVLink domain of {} GPUs ({} nodes; one node shown) x {} domains",
                                        f.nvlink_ranks, domain_nodes, (N + domain_nodes - 1) / domain_nodes)
                          : fmt::format("NVLink inside each node of {} GPUs", G),
         kW / 2.0, y_node + node_h + 34, 12, 0.5);
  box(c, nx, y_node, node_w, node_h, {1, 1, 1}, kMuted, 1, 4);
  for (int64_t k = 0; k < G; ++k) {
    const double gx = nx + 8 + gap + double(k) * (sq + gap);
    const Rgb fill = f.rails() ? rail_colour(k) : kGpu;
    box(c, gx, y_node + 8, sq, sq, fill, fill, 1, 2);
  }
  c.colour(kInk);
  c.text(fmt::format("node (x {})", N), nx + node_w / 2, y_node + node_h - 7, 11, 0.5);

  if (!f.has_leaves()) {
    const double sw_w = 640;
    box(c, (kW - sw_w) / 2, y_leaf - 16, sw_w, 32, kSwitch, kMuted, 1.2, 5);
    c.colour(kInk);
    c.text(fmt::format("one non-blocking switch: {} NICs of {} GB/s", f.gpus(), num(spec.ib_Bps / 1e9)), kW / 2.0,
           y_leaf + 5, 13, 0.5);
    for (int64_t k = 0; k < G; ++k) {
      const double gx = nx + 8 + gap + double(k) * (sq + gap) + sq / 2;
      c.colour(kMuted, 0.6);
      c.line(gx, y_node + 8, (kW - sw_w) / 2 + sw_w * (double(k) + 0.5) / double(G), y_leaf + 16, 1);
    }
  } else {
    // Three leaves with "..." between the last two: with rails, the shown node's own leaves (NIC 0,
    // NIC 1 and NIC G-1; the NICs between go to the leaves behind the dots), else leaves 0, 1 and
    // the last (the node's NICs all under leaf 0).
    const int64_t shown = std::min<int64_t>(f.rails() ? G : L, 3);
    const int64_t last = f.rails() ? G - 1 : L - 1;
    const double leaf_w = 150, leaf_gap = 90;
    const double lx0 = kW / 2.0 - (double(shown) * leaf_w + double(shown - 1) * leaf_gap) / 2;
    const auto slot_x = [&](int64_t i) { return lx0 + double(i) * (leaf_w + leaf_gap); };
    for (int64_t i = 0; i < shown; ++i) {
      const int64_t j = i + 1 == shown ? last : i;
      const double x = slot_x(i);
      box(c, x, y_leaf - 16, leaf_w, 32, f.rails() ? rail_colour(j % G) : kSwitch, kMuted, 1, 4);
      c.colour(f.rails() ? Rgb{1, 1, 1} : kInk);
      c.text(f.rails() ? fmt::format("leaf {} ({} {})", j, multi ? "plane" : "rail", j % G) : fmt::format("leaf {}", j),
             x + leaf_w / 2, y_leaf + 5, 12, 0.5);
      if (i + 2 == shown && last > i + 1) {
        c.colour(kMuted);
        c.text("...", x + leaf_w + leaf_gap / 2, y_leaf + 5, 16, 0.5);
      }
      c.colour(kMuted, 0.7);
      c.line(x + leaf_w / 2, y_leaf - 16, x + leaf_w / 2, y_spine + 16, 3);
    }
    for (int64_t k = 0; k < G; ++k) {
      const double gx = nx + 8 + gap + double(k) * (sq + gap) + sq / 2;
      double tx = slot_x(0) + leaf_w / 2;  // plain leaves hold whole nodes
      if (f.rails()) {
        if (k == last && shown > 1) tx = slot_x(shown - 1) + leaf_w / 2;
        else if (k < shown - 1) tx = slot_x(k) + leaf_w / 2;
        else tx = slot_x(shown - 2) + leaf_w + leaf_gap / 2;  // behind the dots
      }
      c.colour(f.rails() ? rail_colour(k) : kMuted, 0.8);
      c.line(gx, y_node + 8, tx, y_leaf + 16, 1.2);
    }
    const double sp_w = 700;
    box(c, (kW - sp_w) / 2, y_spine - 16, sp_w, 32, kSwitch, kMuted, 1.2, 5);
    c.colour(kInk);
    c.text(multi ? fmt::format("spines: {} per plane x {} planes (planes never meet)", S, G)
                 : fmt::format("spines: {} switches, each cabled to every leaf", S),
           kW / 2.0, y_spine + 5, 13, 0.5);
    const std::string note = fmt::format(
        "{} leaves{}: each {} NIC ports down, {} uplinks ({}:1 oversubscription){}", L,
        multi ? fmt::format(" ({} per plane)", L / G) : std::string(), f.leaf_nics, S, num(f.oversubscription),
        f.rails() ? fmt::format("; NIC k of every node on a leaf of {} k", multi ? "plane" : "rail")
                  : std::string("; whole nodes under a leaf"));
    const double nw = c.text_width(note, 12);
    box(c, kW / 2.0 - nw / 2 - 6, y_leaf + 28, nw + 12, 17, {1, 1, 1}, {1, 1, 1}, 1, 3);
    c.colour(kMuted);
    c.text(note, kW / 2.0, y_leaf + 40, 12, 0.5);
  }

  // Totals.
  const double ib = spec.ib_Bps / 1e9;
  std::vector<std::string> totals = {
      fmt::format("{} GPUs in {} nodes, {} NICs; {} NVLink domains of {} GPUs", f.gpus(), N, f.gpus(),
                  (N + domain_nodes - 1) / domain_nodes, f.nvlink_ranks),
      fmt::format("injection bandwidth: {} GB/s per GPU per direction, {:.4g} TB/s in all", num(ib),
                  ib * double(f.gpus()) / 1e3),
      f.has_leaves() ? fmt::format("bisection bandwidth: {} GB/s per GPU ({}:1), {:.4g} TB/s in all; {} leaves, {} leaf-spine cables",
                                   num(ib / f.oversubscription), num(f.oversubscription),
                                   ib / f.oversubscription * double(f.gpus()) / 1e3, L, L * S)
                     : std::string("bisection bandwidth: full (one non-blocking switch)"),
      fmt::format("NVLink: {} GB/s per GPU per direction inside a domain", num(spec.nvlink_Bps / 1e9))};
  double y = y_totals;
  c.colour(kInk);
  c.text("totals", kMargin, y, 14);
  y += 20;
  for (const auto& t : totals) {
    c.colour(kInk);
    c.text(t, kMargin + 14, y, 12.5);
    y += 19;
  }
  legend(c, y_totals + 130, items, faults, true);
  c.write(path);
}

}  // namespace

bool topology_drawn_in_full(const FabricShape& f) { return f.nodes <= 32 && f.leaves() <= 64; }

void write_topology_png(const PlatformSpec& spec, const std::string& title, const std::string& path) {
  const FabricShape f = spec.shape();
  if (topology_drawn_in_full(f)) draw_full(spec, f, title, path);
  else draw_summary(spec, f, title, path);
}

}  // namespace stepsim::plot
