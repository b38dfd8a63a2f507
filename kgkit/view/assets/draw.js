// kgkit view: the graph drawn on a 2D canvas. Why not WebGL: in a browser without a GPU (a
// server, a VM, a locked-down laptop) WebGL runs in software, and starting it (contexts,
// shader programs, each a round trip to the GPU process) cost seconds before the first frame;
// a 2D canvas draws the same thousands of lines and dots in tens of milliseconds, and starts
// at once. Everything the renderer draws comes from typed arrays the page fills once:
// positions, sizes, colour indexes, the two ends of each link.
(function () {
  'use strict';

  // model: { n, x: Float32Array, y, size, colour: Uint16Array (index into colours), labels: [string],
  //          m, source: Int32Array, target, edgeColour: Uint16Array, arrow: Uint8Array, edgeLabels: [string],
  //          colours: [css], nodeHidden: Uint8Array, edgeHidden: Uint8Array, highlighted: Set of node indexes }
  function Renderer(container, model, options) {
    const opts = Object.assign({ labelThreshold: 5, edgeLabels: false, font: 'sans-serif' }, options || {});
    const canvas = document.createElement('canvas');
    canvas.style.cssText = 'position:absolute;inset:0;width:100%;height:100%;touch-action:none;cursor:grab';
    container.append(canvas);
    const ctx = canvas.getContext('2d', { alpha: false });
    const handlers = { clickNode: [], clickEdge: [], clickStage: [] };
    let width = 0, height = 0, dpr = 1, pending = 0, anim = null;
    const camera = { x: 0, y: 0, ratio: 1 };
    // nodes by size, largest first: their labels win a place on screen before smaller ones'
    let bySize = null;

    // positions -> a unit frame (centre, span), so the camera (in frame units)
    // keeps its meaning while the layout moves and spreads the nodes
    const frame = { cx: 0, cy: 0, span: 1 };
    // the box around the nodes' positions (only the drawn ones: ``drawnOnly``); null for none
    function bounds(drawnOnly) {
      let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      for (let i = 0; i < model.n; i++) {
        if (drawnOnly && model.nodeHidden[i]) continue;
        const x = model.x[i], y = model.y[i];
        if (x < x0) x0 = x; if (x > x1) x1 = x; if (y < y0) y0 = y; if (y > y1) y1 = y;
      }
      return x1 >= x0 ? [x0, x1, y0, y1] : null;
    }
    function reframe() {
      const [x0, x1, y0, y1] = bounds(false) || [0, 0, 0, 0];
      frame.cx = (x0 + x1) / 2; frame.cy = (y0 + y1) / 2; frame.span = Math.max(x1 - x0, y1 - y0, 1e-6);
    }
    const base = () => (Math.min(width, height) || 600) * 0.9;

    function resize() {
      const box = container.getBoundingClientRect();
      dpr = window.devicePixelRatio || 1;
      width = Math.max(1, Math.round(box.width)); height = Math.max(1, Math.round(box.height));
      canvas.width = Math.round(width * dpr); canvas.height = Math.round(height * dpr);
    }

    // graph -> screen: a linear map, redone at every frame from the camera
    function view() {
      const k = base() / camera.ratio, s = k / frame.span;
      return [s, width / 2 - frame.cx * s - camera.x * k, height / 2 - frame.cy * s - camera.y * k];
    }
    const radius = (i) => model.size[i] / Math.sqrt(camera.ratio);

    function drawEdges(s, ox, oy) {
      const { source, target, edgeHidden, nodeHidden, x, y } = model;
      const arrows = model.m - countHidden(edgeHidden) <= 3000;
      ctx.lineWidth = 1;
      ctx.globalAlpha = model.m > 20000 ? 0.5 : 0.8;
      for (const [colour, edges] of runs('edge')) {
        ctx.strokeStyle = model.colours[colour];
        ctx.beginPath();
        for (const e of edges) {
          const a = source[e], b = target[e];
          if (edgeHidden[e] || nodeHidden[a] || nodeHidden[b]) continue;
          const ax = x[a] * s + ox, ay = y[a] * s + oy, bx = x[b] * s + ox, by = y[b] * s + oy;
          if ((ax < 0 && bx < 0) || (ay < 0 && by < 0) || (ax > width && bx > width) || (ay > height && by > height)) continue;
          ctx.moveTo(ax, ay); ctx.lineTo(bx, by);
          if (arrows && model.arrow[e]) arrowHead(ax, ay, bx, by, radius(b));
        }
        ctx.stroke();
      }
      ctx.globalAlpha = 1;
    }

    function arrowHead(ax, ay, bx, by, r) {
      const dx = bx - ax, dy = by - ay, len = Math.hypot(dx, dy);
      if (len < 4 * r + 8) return;
      const ux = dx / len, uy = dy / len, tx = bx - ux * r, ty = by - uy * r, k = 5;
      ctx.moveTo(tx - ux * k - uy * k * 0.6, ty - uy * k + ux * k * 0.6);
      ctx.lineTo(tx, ty);
      ctx.lineTo(tx - ux * k + uy * k * 0.6, ty - uy * k - ux * k * 0.6);
    }

    // elements grouped by colour, so each colour is one path and one fill or stroke
    const grouped = {};
    function runs(what) {
      if (!grouped[what]) {
        const colour = what === 'edge' ? model.edgeColour : model.colour, count = what === 'edge' ? model.m : model.n;
        const by = new Map();
        for (let i = 0; i < count; i++) {
          if (!by.has(colour[i])) by.set(colour[i], []);
          by.get(colour[i]).push(i);
        }
        grouped[what] = [...by.entries()];
      }
      return grouped[what];
    }
    const countHidden = (flags) => { let k = 0; for (let i = 0; i < flags.length; i++) k += flags[i]; return k; };

    function drawNodes(s, ox, oy) {
      const { x, y, nodeHidden } = model;
      for (const [colour, nodes] of runs('node')) {
        ctx.fillStyle = model.colours[colour];
        ctx.beginPath();
        for (const i of nodes) {
          if (nodeHidden[i]) continue;
          const px = x[i] * s + ox, py = y[i] * s + oy, r = radius(i);
          if (px < -r || py < -r || px > width + r || py > height + r) continue;
          if (r < 1.5) { ctx.rect(px - r, py - r, 2 * r, 2 * r); continue; }
          ctx.moveTo(px + r, py);
          ctx.arc(px, py, r, 0, 2 * Math.PI);
        }
        ctx.fill();
      }
    }

    function drawLabels(s, ox, oy) {
      if (!bySize) bySize = Int32Array.from({ length: model.n }, (_, i) => i).sort((a, b) => model.size[b] - model.size[a]);
      ctx.font = `12px ${opts.font}`;
      ctx.fillStyle = '#222';
      ctx.textBaseline = 'middle';
      const taken = new Set(), cw = 120, ch = 16;
      let drawn = 0;
      const place = (i, force) => {
        const px = model.x[i] * s + ox, py = model.y[i] * s + oy, r = radius(i);
        if (px < 0 || py < 0 || px > width || py > height || !model.labels[i]) return;
        const cell = Math.floor((px + r + 3) / cw) + ':' + Math.floor(py / ch);
        if (!force && taken.has(cell)) return;
        taken.add(cell);
        ctx.fillText(model.labels[i], px + r + 3, py);
        drawn++;
      };
      for (const i of model.highlighted) if (!model.nodeHidden[i]) place(i, true);
      for (let k = 0; k < bySize.length && drawn < 300; k++) {
        const i = bySize[k];
        if (model.nodeHidden[i] || model.highlighted.has(i) || radius(i) < opts.labelThreshold) continue;
        place(i, false);
      }
    }

    function drawEdgeLabels(s, ox, oy) {
      ctx.font = `10px ${opts.font}`;
      ctx.fillStyle = '#666';
      ctx.textAlign = 'center';
      for (let e = 0; e < model.m; e++) {
        const a = model.source[e], b = model.target[e];
        if (model.edgeHidden[e] || model.nodeHidden[a] || model.nodeHidden[b] || !model.edgeLabels[e]) continue;
        ctx.fillText(model.edgeLabels[e], (model.x[a] + model.x[b]) / 2 * s + ox, (model.y[a] + model.y[b]) / 2 * s + oy);
      }
      ctx.textAlign = 'start';
    }

    function drawHighlighted(s, ox, oy) {
      for (const i of model.highlighted) {
        if (model.nodeHidden[i]) continue;
        const px = model.x[i] * s + ox, py = model.y[i] * s + oy, r = radius(i) + 3;
        ctx.beginPath();
        ctx.arc(px, py, r, 0, 2 * Math.PI);
        ctx.fillStyle = model.colours[model.colour[i]];
        ctx.fill();
        ctx.lineWidth = 2; ctx.strokeStyle = '#111'; ctx.stroke();
      }
    }

    function draw() {
      pending = 0;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, 0, width, height);
      const [s, ox, oy] = view();
      drawEdges(s, ox, oy);
      drawNodes(s, ox, oy);
      if (opts.edgeLabels) drawEdgeLabels(s, ox, oy);
      drawHighlighted(s, ox, oy);
      drawLabels(s, ox, oy);
      api.frames++;
    }

    const refresh = () => { if (!pending) pending = requestAnimationFrame(draw); };

    // ---------------------------------------------------------------- picking
    function nodeAt(px, py) {
      const [s, ox, oy] = view();
      let best = -1, bestD = Infinity;
      for (let i = 0; i < model.n; i++) {
        if (model.nodeHidden[i]) continue;
        const dx = model.x[i] * s + ox - px, dy = model.y[i] * s + oy - py;
        const d = dx * dx + dy * dy, r = radius(i) + 3;
        if (d <= r * r && d < bestD) { best = i; bestD = d; }
      }
      return best;
    }

    function edgeAt(px, py) {
      const [s, ox, oy] = view();
      let best = -1, bestD = 16;  // within 4 pixels
      for (let e = 0; e < model.m; e++) {
        const a = model.source[e], b = model.target[e];
        if (model.edgeHidden[e] || model.nodeHidden[a] || model.nodeHidden[b]) continue;
        const ax = model.x[a] * s + ox, ay = model.y[a] * s + oy, bx = model.x[b] * s + ox, by = model.y[b] * s + oy;
        const dx = bx - ax, dy = by - ay, len = dx * dx + dy * dy;
        const t = len ? Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / len)) : 0;
        const ex = ax + t * dx - px, ey = ay + t * dy - py, d = ex * ex + ey * ey;
        if (d < bestD) { best = e; bestD = d; }
      }
      return best;
    }

    // ---------------------------------------------------------------- camera
    function animate(to, ms) {
      const from = { ...camera }, t0 = performance.now();
      if (anim) cancelAnimationFrame(anim);
      const step = (now) => {
        const k = Math.min(1, (now - t0) / ms), e = k < 0.5 ? 2 * k * k : 1 - (-2 * k + 2) ** 2 / 2;
        for (const key of ['x', 'y', 'ratio']) if (to[key] != null) camera[key] = from[key] + (to[key] - from[key]) * e;
        draw();
        anim = k < 1 ? requestAnimationFrame(step) : null;
      };
      anim = requestAnimationFrame(step);
    }

    function pointer(ev) {
      const box = canvas.getBoundingClientRect();
      return [ev.clientX - box.left, ev.clientY - box.top];
    }

    let down = null;
    canvas.addEventListener('pointerdown', (ev) => {
      down = { at: pointer(ev), camera: { ...camera }, moved: false };
      canvas.setPointerCapture(ev.pointerId);
    });
    canvas.addEventListener('pointermove', (ev) => {
      if (!down) return;
      const [px, py] = pointer(ev), dx = px - down.at[0], dy = py - down.at[1];
      if (!down.moved && dx * dx + dy * dy < 16) return;
      down.moved = true;
      canvas.style.cursor = 'grabbing';
      const k = camera.ratio / base();
      camera.x = down.camera.x - dx * k; camera.y = down.camera.y - dy * k;
      refresh();
    });
    canvas.addEventListener('pointerup', (ev) => {
      const was = down;
      down = null;
      canvas.style.cursor = 'grab';
      if (!was || was.moved) return;
      const [px, py] = pointer(ev), node = nodeAt(px, py);
      if (node >= 0) return handlers.clickNode.forEach((f) => f({ node }));
      const edge = opts.edgeEvents ? edgeAt(px, py) : -1;
      if (edge >= 0) return handlers.clickEdge.forEach((f) => f({ edge }));
      handlers.clickStage.forEach((f) => f({}));
    });
    canvas.addEventListener('wheel', (ev) => {
      ev.preventDefault();
      const [px, py] = pointer(ev), dx = px - width / 2, dy = py - height / 2;
      const ux = dx * camera.ratio / base() + camera.x, uy = dy * camera.ratio / base() + camera.y;
      camera.ratio = Math.min(20, Math.max(0.002, camera.ratio * Math.exp(ev.deltaY * 0.0015)));
      camera.x = ux - dx * camera.ratio / base(); camera.y = uy - dy * camera.ratio / base();
      refresh();
    }, { passive: false });
    new ResizeObserver(() => { resize(); refresh(); }).observe(container);

    resize();
    reframe();
    const api = {
      frames: 0, camera, refresh, draw, nodeAt, edgeAt,
      // the positions changed (the layout moved them): frame them again, then draw
      moved: () => { reframe(); refresh(); },
      on: (name, f) => { handlers[name].push(f); return api; },
      // where node i is drawn, in the container's pixels
      screen: (i) => { const [s, ox, oy] = view(); return { x: model.x[i] * s + ox, y: model.y[i] * s + oy }; },
      // move the camera to node i, no further out than ``ratio``
      moveTo: (i, ratio, ms) => animate({ x: (model.x[i] - frame.cx) / frame.span, y: (model.y[i] - frame.cy) / frame.span,
        ratio: Math.min(camera.ratio, ratio) }, ms),
      // move the camera so the drawn nodes fill the view (a focus on a neighbourhood: the layout
      // may have spread the whole graph far wider than the few nodes left drawn)
      fitDrawn: (ms) => {
        const box = bounds(true);
        if (!box) return;
        const [x0, x1, y0, y1] = box;
        const span = Math.max(x1 - x0, y1 - y0) / frame.span;
        animate({ x: ((x0 + x1) / 2 - frame.cx) / frame.span, y: ((y0 + y1) / 2 - frame.cy) / frame.span,
          ratio: Math.min(1, Math.max(0.002, span * 1.15)) }, ms);
      },
      // a camera move is under way (whoever reads positions off the screen waits for its end)
      moving: () => anim != null,
    };
    return api;
  }

  window.KgkitCanvas = Renderer;
})();
