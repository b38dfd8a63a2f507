// kgkit view: the page's script. Reads the JSON in #kgkit-data, draws it with sigma.js
// over a graphology graph, and puts every piece of document text into the page with
// textContent (never innerHTML), so a name or quote is shown as text and runs nothing.
(function () {
  'use strict';
  const marks = { start: performance.now() };
  const D = JSON.parse(document.getElementById('kgkit-data').textContent);
  marks.parsed = performance.now();
  const $ = (id) => document.getElementById(id);

  // Bidi controls in a name would reorder the text around it: show them as visible marks.
  const BIDI = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  const show = (s) => String(s == null ? '' : s).replace(BIDI,
    (c) => '\u27e8U+' + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0') + '\u27e9');

  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === 'text') e.textContent = show(v);
      else if (k === 'class') e.className = v;
      else if (k === 'onclick') e.addEventListener('click', v);
      else e.setAttribute(k, String(v));
    }
    for (const kid of kids) if (kid != null) e.append(typeof kid === 'string' ? show(kid) : kid);
    return e;
  }

  // ------------------------------------------------------------------ colours
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#edc948', '#76b7b2', '#ff9da7',
    '#9c755f', '#e15759', '#bab0ac', '#1f77b4', '#8c564b', '#17becf', '#bcbd22'];
  const typeColour = {};
  D.types.forEach((t, i) => { typeColour[t] = i < PALETTE.length ? PALETTE[i] : `hsl(${(i * 137.5) % 360},55%,50%)`; });
  const DOC_COLOUR = '#333333', ITEM_COLOUR = '#9aa0a6', EDGE_COLOUR = '#c5c9ce';
  const HELD_COLOUR = '#d9534f', REJECTED_COLOUR = '#999999';
  const statusColour = (s, base) => (s === 'held' ? HELD_COLOUR : s === 'rejected' ? REJECTED_COLOUR : base);

  // ------------------------------------------------------------------ the graph
  const nodeById = new Map(D.nodes.map((n) => [n.id, n]));
  const itemById = new Map(D.items.map((it) => [it.id, it]));
  const docNodeId = (i) => 'doc:' + D.documents[i].id;
  const itemsOf = new Map();  // node id -> items that end at it
  const degree = new Map();
  for (const it of D.items) {
    for (const [, n] of it.ends) {
      if (!itemsOf.has(n)) itemsOf.set(n, []);
      itemsOf.get(n).push(it);
      degree.set(n, (degree.get(n) || 0) + 1);
    }
  }
  // Nodes first, links gathered: a graph with no two links between the same two nodes is made
  // a simple graph, which graphology builds and walks a good deal faster than a multigraph.
  const addNodes = [], links = [];
  for (const n of D.nodes) {
    addNodes.push([n.id, { x: n.x, y: n.y, label: show(n.name), color: typeColour[n.type] || '#888',
      size: 3 + Math.min(9, Math.log2(1 + (degree.get(n.id) || 0)) * 1.6), kind: 'entity' }]);
  }
  const known = new Set(D.nodes.map((n) => n.id));
  D.documents.forEach((d, i) => {
    const at = d.node && nodeById.get(d.node);
    addNodes.push([docNodeId(i), { x: at ? at.x + 8 : (i % 40) * 20, y: at ? at.y + 8 : -40 - Math.floor(i / 40) * 20,
      label: show(d.name), color: DOC_COLOUR, size: 6, kind: 'document', doc: i }]);
    if (at) links.push(['docedge:' + i, docNodeId(i), d.node, { kind: 'document', color: '#777', size: 1, type: 'line', label: 'IS' }]);
  });
  for (const it of D.items) {
    if (it.kind === 'edge' || it.kind === 'temporal') {
      const [head, tail] = [it.ends[0] && it.ends[0][1], it.ends[1] && it.ends[1][1]];
      if (!known.has(head) || !known.has(tail)) continue;
      links.push([it.id, head, tail, { kind: 'binary', item: it.id, label: show(it.rel), type: 'arrow',
        size: 1.5, color: statusColour(it.status, EDGE_COLOUR) }]);
    } else {
      addNodes.push([it.id, { x: it.x, y: it.y, label: show(it.rel), size: 2.5, kind: 'item', item: it.id,
        color: statusColour(it.status, ITEM_COLOUR) }]);
      it.ends.forEach(([role, n], k) => {
        if (known.has(n)) links.push([it.id + '|' + k, it.id, n, { kind: 'role', item: it.id,
          label: show(role), type: 'line', size: 1, color: statusColour(it.status, EDGE_COLOUR) }]);
      });
    }
  }
  const pairs = new Set();
  for (const [, s, t] of links) pairs.add(s + '\u0000' + t);
  const graph = pairs.size === links.length ? new graphology.DirectedGraph() : new graphology.MultiDirectedGraph();
  for (const [id, attrs] of addNodes) graph.addNode(id, attrs);
  for (const [key, s, t, attrs] of links) graph.addEdgeWithKey(key, s, t, attrs);

  marks.graph = performance.now();

  // ------------------------------------------------------------------ what is shown
  const state = { view: '', types: new Set([...D.types, 'Document']), relations: new Set(D.relations),
    statuses: new Set(['verified', 'accepted']), doc: -1, focus: null, hops: 0, selected: null };
  let hiddenNodes = new Set(), hiddenEdges = new Set();

  function itemShown(it) {
    return state.statuses.has(it.status) && state.relations.has(it.rel)
      && (!state.view || it.views.includes(state.view)) && (state.doc < 0 || it.docs.includes(state.doc));
  }
  function nodeShown(n) {
    return state.types.has(n.type) && (state.doc < 0 || n.docs.includes(state.doc));
  }

  function neighbourhood(start, hops, shownNode, shownEdge) {
    // Hops count entity to entity: an n-ary item or event in between is passed through.
    const keep = new Set([start]);
    let frontier = [start];
    for (let h = 0; h < hops && frontier.length; h++) {
      const next = [];
      for (const u of frontier) {
        graph.forEachEdge(u, (e, a, s, t) => {
          if (!shownEdge(e)) return;
          const v = s === u ? t : s;
          if (!shownNode(v) || keep.has(v)) return;
          keep.add(v);
          if (graph.getNodeAttribute(v, 'kind') === 'item') {
            graph.forEachEdge(v, (e2, a2, s2, t2) => {
              const w = s2 === v ? t2 : s2;
              if (shownEdge(e2) && shownNode(w) && !keep.has(w)) { keep.add(w); next.push(w); }
            });
          } else next.push(v);
        });
      }
      frontier = next;
    }
    return keep;
  }

  function visibility() {
    const shownNode = new Set(), shownEdge = new Set(), touched = new Set();
    for (const it of D.items) {
      if (!itemShown(it)) continue;
      const ends = it.ends.filter(([, n]) => nodeById.has(n) && nodeShown(nodeById.get(n)));
      if (it.kind === 'edge' || it.kind === 'temporal') {
        if (ends.length === 2 && graph.hasEdge(it.id)) { shownEdge.add(it.id); ends.forEach(([, n]) => touched.add(n)); }
      } else if (ends.length) {
        shownNode.add(it.id);
        it.ends.forEach(([, n], k) => { if (ends.some((e) => e[1] === n)) { shownEdge.add(it.id + '|' + k); touched.add(n); } });
      }
    }
    for (const n of D.nodes) if (nodeShown(n) && (!state.view || touched.has(n.id))) shownNode.add(n.id);
    if (!state.view && state.types.has('Document')) {
      D.documents.forEach((d, i) => {
        if (state.doc >= 0 && state.doc !== i) return;
        shownNode.add(docNodeId(i));
        if (d.node && shownNode.has(d.node)) shownEdge.add('docedge:' + i);
      });
    }
    let keep = null;
    if (state.focus && state.hops > 0 && shownNode.has(state.focus)) {
      keep = neighbourhood(state.focus, state.hops, (v) => shownNode.has(v), (e) => shownEdge.has(e));
    }
    hiddenNodes = new Set(); hiddenEdges = new Set();
    graph.forEachNode((n) => { if (!shownNode.has(n) || (keep && !keep.has(n))) hiddenNodes.add(n); });
    graph.forEachEdge((e, a, s, t) => {
      if (!shownEdge.has(e) || hiddenNodes.has(s) || hiddenNodes.has(t)) hiddenEdges.add(e);
    });
    const drawn = { nodes: graph.order - hiddenNodes.size, edges: graph.size - hiddenEdges.size };
    $('stats').textContent = `${drawn.nodes} nodes, ${drawn.edges} links drawn`;
    $('stats').dataset.nodes = drawn.nodes;
    $('stats').dataset.edges = drawn.edges;
    return drawn;
  }

  function refresh() {
    const drawn = visibility();
    renderer.refresh();
    return drawn;
  }

  // ------------------------------------------------------------------ renderer
  const drawn = visibility();
  const renderer = new Sigma(graph, $('graph'), {
    enableEdgeEvents: graph.size <= 10000,  // edge picking costs every frame: large graphs select through nodes
    renderEdgeLabels: graph.size <= 300,  // more labels than that hide the graph
    defaultEdgeType: 'line',
    labelRenderedSizeThreshold: graph.order > 2000 ? 9 : 5,
    // the page's own font: text in it is already laid out when the first label is drawn
    // (sigma's default, Arial, is looked up and substituted first, seconds in a loaded browser)
    labelFont: getComputedStyle(document.body).fontFamily || 'sans-serif',
    zIndex: true,
    nodeReducer: (n, attrs) => {
      if (hiddenNodes.has(n)) return { ...attrs, hidden: true };
      if (n === state.selected || n === state.focus) return { ...attrs, highlighted: true, zIndex: 2, size: attrs.size + 3 };
      return attrs;
    },
    edgeReducer: (e, attrs) => (hiddenEdges.has(e) ? { ...attrs, hidden: true } : attrs),
  });

  marks.renderer = performance.now();

  // ------------------------------------------------------------------ evidence panel
  const docName = (i) => (i == null || !D.documents[i] ? 'unknown document' : D.documents[i].name);
  const nodeLink = (id) => {
    const n = nodeById.get(id);
    return el('a', { class: 'link name', text: n ? n.name : id, onclick: () => select(id, true) });
  };
  const STATUS_TEXT = { verified: 'verified', accepted: 'accepted by a reviewer', held: 'held back: not in the graph',
    rejected: 'rejected by a reviewer: not in the graph' };
  const badge = (s) => el('span', { class: 'badge ' + s, text: STATUS_TEXT[s] || s });

  function evidenceRow(ev, held) {
    const where = el('div', { class: 'meta' }, `${docName(ev.doc)}${ev.page != null ? ', page ' + ev.page : ''} (${ev.view})`);
    let body;
    if (ev.mark != null) {
      body = el('div', { class: 'passage' }, ev.pre || '', el('mark', { text: ev.mark }), ev.post || '');
    } else {
      body = el('div', { class: 'quote' }, ev.quote ? '\u201c' + ev.quote + '\u201d' : '(no quote kept)');
    }
    return el('div', { class: 'evidence' + (held ? ' held' : '') }, where, body);
  }

  // The evidence (most of a page's bytes) sits after the scripts, so the graph is drawn while
  // the browser still reads it; it is parsed when first asked for, once all of it is read.
  let evidence = null, shown = null, waiting = false;
  const evidenceOf = (id) => {
    if (!evidence) evidence = JSON.parse(document.getElementById('kgkit-evidence').textContent);
    return evidence[id] || [];
  };

  function evidenceList(id, held) {
    if (document.readyState === 'loading') {
      if (!waiting) {
        waiting = true;
        document.addEventListener('DOMContentLoaded', () => { if (shown) shown(); });
      }
      return [el('p', { class: 'hint', id: 'evidence-loading', text: 'Reading the evidence\u2026' })];
    }
    const rows = evidenceOf(id);
    return rows.length ? rows.map((ev) => evidenceRow(ev, held)) : [el('p', { class: 'hint', text: 'No evidence row.' })];
  }

  function itemLine(it) {
    const ends = it.ends.map(([role, n]) => el('span', {}, role + ': ', nodeLink(n), ' '));
    return el('li', {}, el('a', { class: 'link', text: it.rel, onclick: () => showItem(it) }), ' \u2014 ', ...ends);
  }

  function panel(...kids) {
    const p = $('panel');
    p.replaceChildren(...kids.flat().filter((k) => k != null));
    p.scrollTop = 0;
  }

  function showItem(it) {
    shown = () => showItem(it);
    const held = it.status === 'held' || it.status === 'rejected';
    const facts = [`${it.kind}`, it.conf != null ? `confidence ${it.conf}` : null, `views: ${it.views.join(', ')}`,
      `documents: ${it.docs.map(docName).join(', ')}`].filter(Boolean).join(' \u00b7 ');
    const ends = el('ul', {}, ...it.ends.map(([role, n]) => el('li', {}, role + ': ', nodeLink(n))));
    const box = el('div', { class: held ? 'section-held held' : '' },
      el('h3', { text: held ? 'Held-back evidence (not in the graph)' : 'Evidence' }), ...evidenceList(it.id, held));
    panel(el('h2', { class: 'name', text: it.rel }), badge(it.status), el('p', { class: 'meta', text: facts }),
      it.note ? el('p', { class: 'meta', text: it.note }) : null,
      it.reason ? el('p', { class: 'meta', text: 'reason: ' + it.reason }) : null, ends, box);
    $('panel').dataset.selected = it.id;
  }

  function showNode(n) {
    shown = () => showNode(n);
    const facts = [n.type, n.scope ? `scope ${n.scope}` : null, n.value != null ? `value ${JSON.stringify(n.value)}` : null]
      .filter(Boolean).join(' \u00b7 ');
    const items = itemsOf.get(n.id) || [];
    const inGraph = items.filter((it) => it.status === 'verified' || it.status === 'accepted');
    const held = items.filter((it) => it.status === 'held' || it.status === 'rejected');
    const merges = D.merges[n.id] || [];
    panel(el('h2', { class: 'name', text: n.name }), el('p', { class: 'meta', text: facts }),
      n.aliases.length ? el('p', { class: 'meta name', text: 'also: ' + n.aliases.join(' | ') }) : null,
      el('p', { class: 'meta', text: 'documents: ' + n.docs.map(docName).join(', ') }),
      el('h3', { text: `Links in the graph (${inGraph.length})` }), el('ul', {}, ...inGraph.slice(0, 200).map(itemLine)),
      held.length ? el('div', { class: 'section-held' }, el('h3', { text: `Held back for review (${held.length})` }),
        el('ul', {}, ...held.slice(0, 200).map(itemLine))) : null,
      el('h3', { text: 'Mentions' }), ...evidenceList(n.id, false),
      merges.length ? [el('h3', { text: 'Merge log' }), el('ul', { id: 'merges' }, ...merges.map((m) => el('li', {},
        `${m.action}: ${m.node_name || m.node}${m.reason ? ' (' + m.reason + (m.score != null ? ' ' + m.score : '') + ')' : ''}, ${m.who}, ${m.at}`)))] : null);
    $('panel').dataset.selected = n.id;
  }

  function showDocument(i) {
    shown = null;
    const d = D.documents[i];
    panel(el('h2', { class: 'name', text: d.name }), el('p', { class: 'meta name', text: d.title || '' }),
      el('p', { class: 'meta', text: `${d.pages != null ? d.pages + ' pages \u00b7 ' : ''}${d.nodes} nodes \u00b7 ${d.items} items \u00b7 ${d.id}` }),
      d.source ? el('p', { class: 'meta name', text: 'source: ' + d.source }) : null,
      d.node ? el('p', {}, 'is: ', nodeLink(d.node)) : null,
      el('button', { type: 'button', text: 'Show only this document', onclick: () => { $('doc').value = String(i); onDoc(); } }));
    $('panel').dataset.selected = docNodeId(i);
  }

  function select(id, move, redrawn) {
    const before = state.selected;
    state.selected = id;
    const attrs = graph.hasNode(id) ? graph.getNodeAttributes(id) : null;
    if (nodeById.has(id)) showNode(nodeById.get(id));
    else if (itemById.has(id)) showItem(itemById.get(id));
    else if (attrs && attrs.kind === 'document') showDocument(attrs.doc);
    if (move && attrs) {
      const at = renderer.getNodeDisplayData(id);
      if (at) renderer.getCamera().animate({ x: at.x, y: at.y, ratio: Math.min(renderer.getCamera().ratio, 0.35) }, { duration: 300 });
    }
    if (!redrawn) {
      const changed = [before, id].filter((n) => n && graph.hasNode(n));
      renderer.refresh(changed.length ? { partialGraph: { nodes: changed } } : undefined);
    }
  }

  renderer.on('clickNode', ({ node }) => select(node, false));
  renderer.on('clickEdge', ({ edge }) => {
    const attrs = graph.getEdgeAttributes(edge);
    if (attrs.item && itemById.has(attrs.item)) {
      const before = state.selected;
      state.selected = null;
      showItem(itemById.get(attrs.item));
      if (before && graph.hasNode(before)) renderer.refresh({ partialGraph: { nodes: [before] } });
    }
  });

  // ------------------------------------------------------------------ search
  const fold = (s) => String(s).normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
  const index = D.nodes.map((n) => ({ id: n.id, keys: [n.name, ...n.aliases].map(fold) }));
  let results = [];

  function search(text) {
    const q = fold(text.trim());
    if (!q) return [];
    const scored = [];
    for (const entry of index) {
      let best = -1;
      for (const k of entry.keys) {
        const at = k.indexOf(q);
        if (at < 0) continue;
        const s = (k === q ? 3 : at === 0 ? 2 : 1);
        if (s > best) best = s;
      }
      if (best > 0) scored.push([best, entry.id]);
    }
    scored.sort((a, b) => b[0] - a[0] || (degree.get(b[1]) || 0) - (degree.get(a[1]) || 0));
    return scored.slice(0, 20).map((s) => s[1]);
  }

  function showResults() {
    results = search($('search').value);
    const list = $('results');
    list.replaceChildren(...results.map((id, k) => {
      const n = nodeById.get(id);
      const alias = n.aliases.find((a) => fold(a).includes(fold($('search').value.trim())));
      return el('li', { class: k === 0 ? 'active' : '', 'data-id': id, onclick: () => focus(id) },
        el('span', { class: 'swatch', style: 'background:' + (typeColour[n.type] || '#888') }),
        el('span', { class: 'name', text: n.name }), alias && alias !== n.name ? el('span', { class: 'meta', text: ' (' + alias + ')' }) : null,
        el('span', { class: 'meta', text: ' ' + n.type }));
    }));
    list.hidden = results.length === 0;
  }

  function focus(id) {
    state.focus = id;
    $('results').hidden = true;
    if (state.hops === 0 && graph.order > 2000) { state.hops = 1; $('hops').value = '1'; }
    state.selected = id;
    refresh();
    select(id, true, true);
  }

  $('search').addEventListener('input', showResults);
  $('search').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && results.length) focus(results[0]);
    if (e.key === 'Escape') $('results').hidden = true;
  });

  // ------------------------------------------------------------------ controls
  function checkList(ul, values, chosen, label, colour) {
    ul.replaceChildren(...values.map((v) => {
      const box = el('input', { type: 'checkbox', 'data-value': v });
      box.checked = chosen.has(v);
      box.addEventListener('change', () => { if (box.checked) chosen.add(v); else chosen.delete(v); refresh(); });
      return el('li', {}, el('label', {}, box, colour ? el('span', { class: 'swatch', style: 'background:' + colour(v) }) : null, label(v)));
    }));
  }
  const typeCount = {};
  for (const n of D.nodes) typeCount[n.type] = (typeCount[n.type] || 0) + 1;
  checkList($('legend'), [...D.types, 'Document'], state.types,
    (t) => `${t} (${t === 'Document' ? D.documents.length : typeCount[t]})`, (t) => (t === 'Document' ? DOC_COLOUR : typeColour[t]));
  const relCount = {};
  for (const it of D.items) relCount[it.rel] = (relCount[it.rel] || 0) + 1;
  checkList($('relations'), D.relations, state.relations, (r) => `${r} (${relCount[r]})`);
  const statusCount = {};
  for (const it of D.items) statusCount[it.status] = (statusCount[it.status] || 0) + 1;
  checkList($('statuses'), D.statuses, state.statuses, (s) => `${STATUS_TEXT[s]} (${statusCount[s] || 0})`,
    (s) => statusColour(s, s === 'accepted' ? '#58a' : '#5a8'));

  $('view').replaceChildren(el('option', { value: '', text: 'all views' }), ...D.views.map((v) => el('option', { value: v, text: v })));
  $('view').addEventListener('change', () => { state.view = $('view').value; refresh(); });
  $('hops').addEventListener('change', () => { state.hops = Number($('hops').value); refresh(); });
  $('clear').addEventListener('click', () => { state.focus = null; state.selected = null; refresh(); });

  function onDoc() { state.doc = Number($('doc').value); refresh(); }
  $('doc').replaceChildren(el('option', { value: '-1', text: 'all documents' }),
    ...D.documents.map((d, i) => el('option', { value: String(i), text: d.name })));
  $('doc').addEventListener('change', onDoc);
  $('documents').replaceChildren(...D.documents.slice(0, 2000).map((d, i) => el('li', {},
    el('a', { class: 'link name', text: d.name, onclick: () => select(docNodeId(i), true) }),
    el('span', { class: 'meta', text: ` ${d.nodes} nodes, ${d.items} items` }))));
  if (D.review.length) {
    $('review').replaceChildren(...D.review.slice(0, 500).map((r) => el('li', { title: show(r.text) },
      `${r.document}: ${r.reason}${r.decision ? ' [' + r.decision + ']' : ''}`)));
  } else $('review-box').hidden = true;
  $('title').textContent = show(D.meta.title);

  // ------------------------------------------------------------------ layout
  // Positions start where Python put them; ForceAtlas2 refines them in a web worker while
  // the page is already usable, and stops by itself (the Layout button runs it again).
  const FA2 = window.graphologyLayoutForceAtlas2;
  let layout = null, layoutTimer = null;
  function runLayout() {
    if (!FA2 || graph.order < 2) return;
    try {
      if (!layout) {
        const settings = FA2.forceAtlas2.inferSettings(graph);
        layout = new FA2.FA2Layout(graph, { settings: { ...settings, barnesHutOptimize: graph.order > 1000 } });
      }
      layout.start();
      $('layout').textContent = 'Stop layout';
      clearTimeout(layoutTimer);
      layoutTimer = setTimeout(stopLayout, graph.order > 2000 ? 12000 : 5000);
    } catch (err) {
      console.warn('layout unavailable: ' + err.message);
    }
  }
  function stopLayout() {
    if (layout && layout.isRunning()) layout.stop();
    $('layout').textContent = 'Layout';
  }
  $('layout').addEventListener('click', () => (layout && layout.isRunning() ? stopLayout() : runLayout()));

  marks.controls = performance.now();
  window.kgkitViewer = { drawn: () => ({ nodes: Number($('stats').dataset.nodes), edges: Number($('stats').dataset.edges) }),
    marks: {}, search, focus, select, refresh, graph, renderer, layoutRunning: () => !!(layout && layout.isRunning()) };
  document.addEventListener('DOMContentLoaded', () => { window.kgkitViewer.marks.read = performance.now(); });
  requestAnimationFrame(() => {
    document.body.dataset.ready = String(performance.now());
    window.kgkitViewer.ready = true;
    window.kgkitViewer.readyAt = performance.now();
    window.kgkitViewer.firstDrawn = drawn;
    Object.assign(window.kgkitViewer.marks, marks, { drawn: performance.now() });
    runLayout();
  });
})();
