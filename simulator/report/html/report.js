// stepsim report: draws the charts of the page from the JSON in #stepsim-data. Plain JavaScript,
// no library; SVG for the charts, a canvas for the timeline (tens of thousands of ops).
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('stepsim-data').textContent);

  // ---- text ----------------------------------------------------------------------------------
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function sec(s) {
    var a = Math.abs(s);
    if (a === 0) return '0 s';
    if (a >= 1) return s.toFixed(3) + ' s';
    if (a >= 1e-3) return (s * 1e3).toFixed(a >= 0.1 ? 1 : 2) + ' ms';
    return (s * 1e6).toFixed(1) + ' \u00b5s';
  }
  function gb(bytes) { return (bytes / 1e9).toFixed(1) + ' GB'; }
  function niceStep(span, target) {
    if (!(span > 0)) return 1;
    var raw = span / target, mag = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  }
  function tickText(v, step) {
    var d = step >= 1 ? 0 : Math.min(6, Math.ceil(-Math.log10(step) - 1e-9));
    return v.toFixed(d);
  }
  function el(id) { return document.getElementById(id); }
  function legend(id, items) {
    var box = el(id);
    if (!box) return;
    box.innerHTML = items.map(function (it) {
      var style = it.hollow ? 'background:#fff;border:2px solid ' + it.color : 'background:' + it.color;
      return '<span><i style="' + style + '"></i>' + esc(it.name) + '</span>';
    }).join('');
  }
  function svg(w, h, body) {
    return '<svg width="' + w + '" height="' + h + '" viewBox="0 0 ' + w + ' ' + h + '" role="img">' + body + '</svg>';
  }
  function rect(x, y, w, h, fill, title, extra) {
    return '<rect x="' + x.toFixed(1) + '" y="' + y.toFixed(1) + '" width="' + Math.max(0, w).toFixed(1) +
      '" height="' + Math.max(0, h).toFixed(1) + '" fill="' + fill + '"' + (extra || '') + '>' +
      (title ? '<title>' + esc(title) + '</title>' : '') + '</rect>';
  }
  function text(x, y, s, anchor, cls, extra) {
    return '<text x="' + x.toFixed(1) + '" y="' + y.toFixed(1) + '"' + (anchor ? ' text-anchor="' + anchor + '"' : '') +
      (cls ? ' class="' + cls + '"' : '') + (extra || '') + '>' + esc(s) + '</text>';
  }
  function line(x0, y0, x1, y1, stroke, extra) {
    return '<line x1="' + x0.toFixed(1) + '" y1="' + y0.toFixed(1) + '" x2="' + x1.toFixed(1) + '" y2="' + y1.toFixed(1) +
      '" stroke="' + stroke + '"' + (extra || '') + '/>';
  }
  function width(id, fallback) {
    var box = el(id);
    var w = box && box.clientWidth ? box.clientWidth : fallback;
    return Math.max(480, Math.min(w, 1400));
  }

  // ---- horizontal stacked bars: the step against the roofline, time per layer ----------------
  // rows: [{label, parts: [values]}], parts: [{name, color}]
  function hbars(id, rows, parts, opts) {
    var box = el(id);
    if (!box || !rows.length) return;
    var W = width(id, 900), left = opts.left || 150, right = 70, bar = opts.bar || 22, gap = opts.gap || 8;
    var top = 8, axisH = 26, H = top + rows.length * (bar + gap) + axisH;
    var max = 0;
    rows.forEach(function (r) {
      var t = r.parts.reduce(function (a, b) { return a + Math.max(0, b); }, 0);
      max = Math.max(max, t);
    });
    if (!(max > 0)) max = 1;
    var step = niceStep(max, 6), hi = Math.ceil(max / step) * step;
    var sx = function (v) { return left + v / hi * (W - left - right); };
    var out = '';
    for (var v = 0; v <= hi + step * 1e-9; v += step) {
      out += line(sx(v), top, sx(v), H - axisH + 4, '#e6e8ee');
      out += text(sx(v), H - 8, tickText(v, step) + (v === 0 ? ' s' : ''), 'middle', 't-muted');
    }
    rows.forEach(function (r, i) {
      var y = top + i * (bar + gap), x = 0, total = 0;
      out += text(left - 8, y + bar / 2 + 4, r.label, 'end');
      r.parts.forEach(function (p, k) {
        if (!(p > 0)) return;
        out += rect(sx(x), y, sx(x + p) - sx(x), bar, parts[k].color, r.label + ': ' + parts[k].name + ' ' + sec(p));
        x += p;
        total += p;
      });
      out += text(sx(x) + 6, y + bar / 2 + 4, sec(total), 'start', 't-muted');
    });
    box.innerHTML = svg(W, H, out);
  }

  // ---- the step against the roofline ----------------------------------------------------------
  function drawStep() {
    var s = data.step;
    if (!s) return;
    var parts = [{ name: 'compute', color: '#0072b2' }, { name: 'exposed communication', color: '#d55e00' },
                 { name: 'bubble', color: '#b8bec9' }];
    var rows = [{ label: 'simulated (mean GPU)', parts: [s.sim.compute_s, s.sim.exposed_s, s.sim.bubble_s] }];
    if (s.critical) {
      rows.push({ label: 'GPU ' + s.critical.gpu + ' (sets the step)',
                  parts: [s.critical.compute_s, s.critical.exposed_s, s.critical.bubble_s] });
    }
    if (s.roofline) {
      rows.push({ label: 'roofline', parts: [s.roofline.compute_s, s.roofline.exposed_s, s.roofline.bubble_s] });
    }
    legend('step-legend', parts);
    hbars('step-chart', rows, parts, { left: 190, bar: 26 });
  }

  // ---- per-rank compute / exposed / bubble ----------------------------------------------------
  function drawRanks() {
    var r = data.ranks;
    if (!r || !r.rows.length) return;
    var cls = r.classes;  // exposed communication by class, stacked inside "exposed"
    var parts = [{ name: 'compute', color: '#0072b2' }];
    cls.forEach(function (c) { parts.push({ name: 'exposed ' + c.name, color: c.color }); });
    parts.push({ name: 'bubble', color: '#b8bec9' });
    legend('ranks-legend', parts);
    var W = width('ranks-chart', 900), left = 60, right = 20, top = 12, bottom = 58;
    var H = 300, n = r.rows.length;
    var max = 0;
    r.rows.forEach(function (row) { max = Math.max(max, row.compute_s + row.exposed_s + row.bubble_s); });
    var step = niceStep(max, 5), hi = Math.ceil(max / step) * step || 1;
    var sy = function (v) { return H - bottom - v / hi * (H - top - bottom); };
    var slot = (W - left - right) / n, bw = Math.max(1, Math.min(46, slot * 0.72));
    var out = '';
    for (var v = 0; v <= hi + step * 1e-9; v += step) {
      out += line(left, sy(v), W - right, sy(v), '#e6e8ee');
      out += text(left - 6, sy(v) + 4, tickText(v, step), 'end', 't-muted');
    }
    out += text(14, (top + H - bottom) / 2, 'seconds', 'middle', 't-muted', ' transform="rotate(-90 14 ' +
      ((top + H - bottom) / 2).toFixed(1) + ')"');
    // Every label gets room for its own text: label every k-th bar.
    var longest = r.rows.reduce(function (m, row) { return Math.max(m, String(row.short).length); }, 1);
    var every = Math.max(1, Math.ceil(n / Math.max(1, Math.floor((W - left - right) / (longest * 7 + 14)))));
    r.rows.forEach(function (row, i) {
      var x = left + i * slot + (slot - bw) / 2, base = 0;
      // Exposed time by class: the classes can overlap (a wait on two at once counts in both), so
      // they are scaled to the exposed total and drawn as its parts.
      var byClass = row.exposed_by_class, sum = byClass.reduce(function (a, b) { return a + b; }, 0);
      var values = [row.compute_s];
      byClass.forEach(function (v) { values.push(sum > 0 ? row.exposed_s * v / sum : 0); });
      if (!(sum > 0) && row.exposed_s > 0) values[1] += row.exposed_s;
      values.push(row.bubble_s);
      var tip = row.label + ': step ' + sec(row.step_s) + ', compute ' + sec(row.compute_s) + ', exposed ' +
        sec(row.exposed_s) + ' (' + cls.map(function (c, k) { return c.name + ' ' + sec(byClass[k]); }).join(', ') +
        '), bubble ' + sec(row.bubble_s);
      values.forEach(function (v, k) {
        if (!(v > 0)) return;
        out += rect(x, sy(base + v), bw, sy(base) - sy(base + v), parts[k].color, tip);
        base += v;
      });
      if (i % every === 0) out += text(x + bw / 2, H - bottom + 16, row.short, 'middle', 't-muted');
    });
    out += text((left + W - right) / 2, H - 12, r.axis, 'middle', 't-muted');
    el('ranks-chart').innerHTML = svg(W, H, out);
  }

  // ---- memory over time against capacity -------------------------------------------------------
  var palette = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#56b4e9', '#e69f00', '#000000', '#8c564b'];
  function drawMemory() {
    var m = data.memory;
    if (!m || !m.series.length) return;
    var W = width('memory-chart', 900), left = 70, right = 20, top = 14, bottom = 44, H = 320;
    var tmax = data.step_s || 1, bmax = m.capacity_bytes;
    m.series.forEach(function (s) { s.bytes.forEach(function (b) { bmax = Math.max(bmax, b); }); });
    var ystep = niceStep(bmax / 1e9, 6), yhi = Math.ceil(bmax / 1e9 / ystep) * ystep;
    var xstep = niceStep(tmax, 8), xhi = tmax;
    var sx = function (t) { return left + t / xhi * (W - left - right); };
    var sy = function (gbv) { return H - bottom - gbv / yhi * (H - top - bottom); };
    var out = '';
    for (var v = 0; v <= yhi + ystep * 1e-9; v += ystep) {
      out += line(left, sy(v), W - right, sy(v), '#e6e8ee');
      out += text(left - 6, sy(v) + 4, tickText(v, ystep), 'end', 't-muted');
    }
    for (var t = 0; t <= xhi + xstep * 1e-9; t += xstep) {
      out += line(sx(t), H - bottom, sx(t), H - bottom + 4, '#888');
      out += text(sx(t), H - bottom + 18, tickText(t, xstep), 'middle', 't-muted');
    }
    out += text((left + W - right) / 2, H - 6, 'time into the step (s)', 'middle', 't-muted');
    out += text(16, (top + H - bottom) / 2, 'GB', 'middle', 't-muted');
    var items = [];
    m.series.forEach(function (s, k) {
      var colour = palette[k % palette.length], d = '';
      for (var i = 0; i < s.t.length; ++i) {
        var x = sx(s.t[i]), y = sy(s.bytes[i] / 1e9);
        // A step function: the level holds until the next sample.
        d += (i === 0 ? 'M' : 'H' + x.toFixed(1) + 'V') + (i === 0 ? x.toFixed(1) + ' ' : '') + y.toFixed(1);
      }
      d += 'H' + sx(tmax).toFixed(1);
      out += '<path d="' + d + '" fill="none" stroke="' + colour + '" stroke-width="1.6"><title>' +
        esc('GPU ' + s.gpu + ': peak ' + gb(s.peak_bytes)) + '</title></path>';
      items.push({ name: 'GPU ' + s.gpu + ' (peak ' + gb(s.peak_bytes) + ')', color: colour });
    });
    var cap = m.capacity_bytes / 1e9;
    out += line(left, sy(cap), W - right, sy(cap), '#b3261e', ' stroke-width="1.8" stroke-dasharray="7 4"');
    out += text(W - right - 4, sy(cap) - 6, 'capacity ' + gb(m.capacity_bytes), 'end', '', ' fill="#b3261e"');
    items.push({ name: 'capacity (hardware.memory_GiB)', color: '#b3261e' });
    legend('memory-legend', items);
    el('memory-chart').innerHTML = svg(W, H, out);
  }

  // ---- where each layer's time goes ------------------------------------------------------------
  function drawLayers() {
    var l = data.layers;
    if (!l || !l.rows.length) return;
    var parts = l.parts;
    legend('layers-legend', parts);
    var rows = l.rows.map(function (r) { return { label: r[0], parts: r.slice(1) }; });
    hbars('layers-chart', rows, parts, { left: 150, bar: rows.length > 40 ? 9 : 15, gap: rows.length > 40 ? 3 : 5 });
  }

  // ---- the waterfall ----------------------------------------------------------------------------
  function drawWaterfall() {
    var w = data.waterfall;
    if (!w || !w.bars.length) return;
    var W = width('waterfall-chart', 900), left = 110, right = 20, top = 16, bottom = 130, H = 420;
    var hi = w.reference > 0 ? w.reference : 0;
    w.bars.forEach(function (b) { hi = Math.max(hi, b.value); });
    var step = niceStep(hi * 1.05, 6), yhi = Math.ceil(hi * 1.05 / step) * step || 1;
    var sy = function (v) { return H - bottom - v / yhi * (H - top - bottom); };
    var out = '';
    for (var v = 0; v <= yhi + step * 1e-9; v += step) {
      out += line(left, sy(v), W - right, sy(v), '#e6e8ee');
      out += text(left - 6, sy(v) + 4, tickText(v, step), 'end', 't-muted');
    }
    out += text(66, (top + H - bottom) / 2, 'step time (s)', 'middle', 't-muted', ' transform="rotate(-90 66 ' +
      ((top + H - bottom) / 2).toFixed(1) + ')"');
    var slot = (W - left - right) / w.bars.length, bw = slot * 0.62, prev = 0;
    w.bars.forEach(function (b, i) {
      var from = b.kind === 'total' ? 0 : prev, x = left + i * slot + (slot - bw) / 2;
      var y0 = sy(Math.max(from, b.value)), y1 = sy(Math.min(from, b.value));
      var colour = b.kind === 'total' ? '#0072b2' : b.kind === 'unexplained' ? '#9a9a9a' :
        b.value >= from ? '#d55e00' : '#009e73';
      out += rect(x, y0, bw, Math.max(1, y1 - y0), colour, b.label + ': ' + sec(b.value - from) + ' -> ' +
        sec(b.value) + (b.how ? ' (' + b.how + ')' : ''));
      if (i + 1 < w.bars.length) out += line(x + bw, sy(b.value), x + slot, sy(b.value), '#777', ' stroke-width="0.8"');
      var delta = b.value - from;
      out += text(x + bw / 2, y0 - 5, b.kind === 'total' ? b.value.toFixed(2) : (delta >= 0 ? '+' : '') + delta.toFixed(2),
        'middle', '', ' font-size="11"');
      var lx = x + bw / 2, ly = H - bottom + 14;
      out += text(lx, ly, b.label, 'end', '', ' transform="rotate(-35 ' + lx.toFixed(1) + ' ' + ly.toFixed(1) + ')"');
      prev = b.value;
    });
    if (w.reference > 0) {
      out += line(left, sy(w.reference), W - right, sy(w.reference), '#b3261e', ' stroke-width="1.6" stroke-dasharray="6 4"');
      out += text(left + 8, sy(w.reference) - 6, w.reference_label, 'start', '', ' fill="#b3261e"');
    }
    el('waterfall-chart').innerHTML = svg(W, H, out);
  }

  // ---- the timeline ----------------------------------------------------------------------------
  // Each row's events are a flat list of 8 integers per event: gap from the previous event's end
  // (ns), duration (ns), category, op kind (-1: merged ops of one category, -2: idle, -3: mixed),
  // phase (idle: the exposed classes' bit mask; mixed: its index in tl.mix, [category, ns, ...]),
  // layer (-1: none), microbatch (-1: none), ops merged.
  function drawTimeline() {
    var tl = data.timeline, canvas = el('timeline');
    if (!tl || !canvas || !tl.rows.length) return;
    var rows = tl.rows.map(function (r) {
      // Events are in start order; streams merged into one row may overlap, so searches use the
      // running maximum of the ends (reach), which never decreases.
      var ev = r.ev, n = ev.length / 8, start = new Float64Array(n), end = new Float64Array(n);
      var reach = new Float64Array(n), t = 0, far = 0;
      for (var i = 0; i < n; ++i) {
        start[i] = t + ev[8 * i];
        end[i] = start[i] + ev[8 * i + 1];
        t = end[i];
        far = Math.max(far, end[i]);
        reach[i] = far;
      }
      return { label: r.label, gpu: r.gpu, first: r.first, ev: ev, start: start, end: end, reach: reach, n: n,
               tall: r.tall };
    });
    var cats = tl.cats, kinds = tl.kinds, classNames = tl.classes, mix = tl.mix || [];
    legend('timeline-legend', cats);
    var dpr = window.devicePixelRatio || 1, labelW = 150, axisH = 24, rowH = 13, tallH = 20, sep = 6;
    var H = axisH + 4;
    rows.forEach(function (r) {
      if (r.first) H += sep;
      r.y = H;
      r.h = r.tall ? tallH : rowH;
      H += r.h + 2;
    });
    H += 6;
    var total = tl.step_ns, view = { a: 0, b: total };
    var W = 0;
    function resize() {
      W = Math.max(480, canvas.parentNode.clientWidth || 900);
      canvas.width = Math.round(W * dpr);
      canvas.height = Math.round(H * dpr);
      canvas.style.height = H + 'px';
    }
    function px(t) { return labelW + (t - view.a) / (view.b - view.a) * (W - labelW - 8); }
    function timeAt(x) { return view.a + (x - labelW) / (W - labelW - 8) * (view.b - view.a); }
    function draw() {
      var g = canvas.getContext('2d');
      g.setTransform(dpr, 0, 0, dpr, 0, 0);
      g.clearRect(0, 0, W, H);
      g.font = '11px system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif';
      // time axis
      var span = (view.b - view.a) / 1e9, step = niceStep(span, Math.max(4, Math.floor((W - labelW) / 110)));
      var first = Math.ceil(view.a / 1e9 / step) * step;
      g.fillStyle = '#5b6475';
      g.textAlign = 'center';
      for (var s = first; s <= view.b / 1e9 + 1e-12; s += step) {
        var x = px(s * 1e9);
        g.fillRect(x, axisH - 6, 1, 6);
        g.fillStyle = '#eceef3';
        g.fillRect(x, axisH, 1, H - axisH);
        g.fillStyle = '#5b6475';
        g.fillText(sec(s), x, axisH - 9);
      }
      g.save();
      g.beginPath();
      g.rect(labelW, axisH, W - labelW, H - axisH);
      g.clip();
      rows.forEach(function (r) {
        var ev = r.ev, lastX = -1, lastCat = -1;
        // first event that ends after the view starts
        var lo = 0, hi = r.n;
        while (lo < hi) {
          var mid = (lo + hi) >> 1;
          if (r.reach[mid] < view.a) lo = mid + 1; else hi = mid;
        }
        for (var i = lo; i < r.n && r.start[i] <= view.b; ++i) {
          var x0 = px(r.start[i]), x1 = px(r.end[i]), cat = ev[8 * i + 2];
          if (x1 - x0 < 1) {
            // Sub-pixel ops: one pixel per column and category is enough.
            if (Math.floor(x0) === lastX && cat === lastCat) continue;
            x1 = x0 + 1;
          }
          lastX = Math.floor(x0);
          lastCat = cat;
          var parts = ev[8 * i + 3] === -3 ? mix[ev[8 * i + 4]] : null, sum = 0, y = r.y;
          for (var p = 1; parts && p < parts.length; p += 2) sum += parts[p];
          if (sum > 0) {
            // A mixed block: one stripe per category, as tall as its share of the block's time.
            for (p = 0; p < parts.length; p += 2) {
              var h = r.h * parts[p + 1] / sum;
              g.fillStyle = cats[parts[p]].color;
              g.fillRect(x0, y, x1 - x0, h);
              y += h;
            }
            continue;
          }
          g.fillStyle = cats[cat].color;
          g.fillRect(x0, r.y, x1 - x0, r.h);
        }
      });
      g.restore();
      // labels
      g.textAlign = 'right';
      rows.forEach(function (r) {
        g.fillStyle = r.first ? '#1d2330' : '#5b6475';
        g.fillText(r.label, labelW - 8, r.y + r.h - 3);
        if (r.first) {
          g.fillStyle = '#d9dde5';
          g.fillRect(0, r.y - sep / 2 - 1, W, 1);
        }
      });
    }
    function find(x, y) {
      for (var k = 0; k < rows.length; ++k) {
        var r = rows[k];
        if (y < r.y || y > r.y + r.h) continue;
        var t = timeAt(x), tol = 2 * (view.b - view.a) / (W - labelW);
        var lo = 0, hi = r.n;
        while (lo < hi) {
          var mid = (lo + hi) >> 1;
          if (r.reach[mid] < t - tol) lo = mid + 1; else hi = mid;
        }
        for (var i = lo; i < r.n && r.start[i] <= t + tol; ++i) {
          if (r.end[i] >= t - tol) return { row: r, i: i };
        }
      }
      return null;
    }
    function describe(hit) {
      var r = hit.row, i = hit.i, ev = r.ev, cat = cats[ev[8 * i + 2]].name, kind = ev[8 * i + 3];
      var phase = ev[8 * i + 4], layer = ev[8 * i + 5], mb = ev[8 * i + 6], count = ev[8 * i + 7], name;
      if (kind === -2) {
        var cls = [];
        classNames.forEach(function (c, b) { if (phase & (1 << b)) cls.push(c); });
        name = cls.length ? 'exposed: waiting for ' + cls.join(' + ') : 'bubble';
      } else if (kind === -1) {
        name = count + ' ' + cat + ' ops (merged)';
      } else if (kind === -3) {
        var parts = mix[phase], sum = 0, shares = [];
        for (var p = 1; p < parts.length; p += 2) sum += parts[p];
        for (p = 0; sum > 0 && p < parts.length; p += 2)
          shares.push(cats[parts[p]].name + ' ' + Math.round(100 * parts[p + 1] / sum) + '%');
        name = count + ' ops merged' + (shares.length ? ' (' + shares.join(', ') + ')' : '');
      } else {
        name = (['', 'F ', 'B ', 'W '][phase] || '') + kinds[kind];
        if (layer >= 0) name += ' L' + layer;
        if (mb >= 0) name += ' mb' + mb;
      }
      return r.label + ' \u2013 ' + name + ': ' + sec((r.end[i] - r.start[i]) / 1e9) + ' at ' + sec(r.start[i] / 1e9);
    }
    var tip = el('tip'), drag = null;
    function zoom(factor, centre) {
      var t = timeAt(centre), a = t - (t - view.a) * factor, b = t + (view.b - t) * factor;
      var minSpan = 1000;  // 1 us
      if (b - a < minSpan) return;
      if (b - a > total) { a = 0; b = total; }
      if (a < 0) { b -= a; a = 0; }
      if (b > total) { a -= b - total; b = total; }
      view.a = Math.max(0, a);
      view.b = Math.min(total, b);
      draw();
    }
    canvas.addEventListener('wheel', function (e) {
      e.preventDefault();
      var rc = canvas.getBoundingClientRect();
      zoom(e.deltaY > 0 ? 1.25 : 0.8, Math.max(labelW, e.clientX - rc.left));
    }, { passive: false });
    canvas.addEventListener('mousedown', function (e) {
      drag = { x: e.clientX, a: view.a, b: view.b };
      canvas.classList.add('dragging');
    });
    window.addEventListener('mouseup', function () {
      drag = null;
      canvas.classList.remove('dragging');
    });
    canvas.addEventListener('mousemove', function (e) {
      var rc = canvas.getBoundingClientRect(), x = e.clientX - rc.left, y = e.clientY - rc.top;
      if (drag) {
        var dt = (e.clientX - drag.x) / (W - labelW - 8) * (drag.b - drag.a), a = drag.a - dt, b = drag.b - dt;
        if (a < 0) { b -= a; a = 0; }
        if (b > total) { a -= b - total; b = total; }
        view.a = a;
        view.b = b;
        draw();
        tip.style.display = 'none';
        return;
      }
      var hit = x > labelW ? find(x, y) : null;
      if (!hit) {
        tip.style.display = 'none';
        return;
      }
      tip.textContent = describe(hit);
      tip.style.display = 'block';
      var left = Math.min(x + 14, W - tip.offsetWidth - 4);
      tip.style.left = Math.max(0, left) + 'px';
      tip.style.top = (y + 16) + 'px';
    });
    canvas.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
    canvas.addEventListener('dblclick', function () {
      view.a = 0;
      view.b = total;
      draw();
    });
    el('tl-reset').addEventListener('click', function () { view.a = 0; view.b = total; draw(); });
    el('tl-in').addEventListener('click', function () { zoom(0.5, (labelW + W) / 2); });
    el('tl-out').addEventListener('click', function () { zoom(2, (labelW + W) / 2); });
    window.addEventListener('resize', function () { resize(); draw(); });
    resize();
    draw();
  }

  var drawn = [];
  [['step', drawStep], ['ranks', drawRanks], ['timeline', drawTimeline], ['memory', drawMemory],
   ['layers', drawLayers], ['waterfall', drawWaterfall]].forEach(function (d) {
    d[1]();
    drawn.push(d[0]);
  });
  document.body.setAttribute('data-drawn', drawn.join(' '));
})();
