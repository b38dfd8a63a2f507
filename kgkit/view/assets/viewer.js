// kgkit view: the page's script. Reads the JSON in #kgkit-data, draws it on a 2D canvas
// (draw.js; ForceAtlas2 over graphology refines the layout after), and puts every piece of document text into the page with
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
  // What is drawn, as indexes: node i and link e are rows of typed arrays the renderer reads
  // (kgkit/view/assets/draw.js); ``at`` and ``linkAt`` find them by id.
  const at = new Map(), linkAt = new Map();
  const nodeIds = [], nodeKind = [], nodeRef = [], xs = [], ys = [], sizes = [], nodeColours = [], labels = [];
  const sources = [], targets = [], linkColours = [], arrows = [], linkLabels = [], linkItem = [];
  const colours = [], colourIndex = new Map();
  const colourOf = (c) => {
    if (!colourIndex.has(c)) { colourIndex.set(c, colours.length); colours.push(c); }
    return colourIndex.get(c);
  };
  function addNode(id, x, y, label, colour, size, kind, ref) {
    at.set(id, nodeIds.length);
    nodeIds.push(id); nodeKind.push(kind); nodeRef.push(ref); xs.push(x); ys.push(y); sizes.push(size);
    nodeColours.push(colourOf(colour)); labels.push(label);
  }
  const pendingLinks = [];
  for (const n of D.nodes) {
    addNode(n.id, n.x, n.y, show(n.name), typeColour[n.type] || '#888',
      3 + Math.min(9, Math.log2(1 + (degree.get(n.id) || 0)) * 1.6), 'entity', null);
  }
  D.documents.forEach((d, i) => {
    const node = d.node && nodeById.get(d.node);
    addNode(docNodeId(i), node ? node.x + 8 : (i % 40) * 20, node ? node.y + 8 : -40 - Math.floor(i / 40) * 20,
      show(d.name), DOC_COLOUR, 6, 'document', i);
    if (node) pendingLinks.push(['docedge:' + i, docNodeId(i), d.node, '#777777', 0, 'IS', null]);
  });
  for (const it of D.items) {
    const colour = statusColour(it.status, EDGE_COLOUR);
    if (it.kind === 'edge' || it.kind === 'temporal') {
      const [head, tail] = [it.ends[0] && it.ends[0][1], it.ends[1] && it.ends[1][1]];
      if (nodeById.has(head) && nodeById.has(tail)) pendingLinks.push([it.id, head, tail, colour, 1, show(it.rel), it.id]);
    } else {
      addNode(it.id, it.x, it.y, show(it.rel), statusColour(it.status, ITEM_COLOUR), 2.5, 'item', it.id);
      it.ends.forEach(([role, n], k) => {
        if (nodeById.has(n)) pendingLinks.push([it.id + '|' + k, it.id, n, colour, 0, show(role), it.id]);
      });
    }
  }
  for (const [key, s, t, colour, arrow, label, item] of pendingLinks) {
    linkAt.set(key, sources.length);
    sources.push(at.get(s)); targets.push(at.get(t)); linkColours.push(colourOf(colour)); arrows.push(arrow);
    linkLabels.push(label); linkItem.push(item);
  }
  const N = nodeIds.length, M = sources.length;
  const model = { n: N, m: M, x: Float32Array.from(xs), y: Float32Array.from(ys), size: Float32Array.from(sizes),
    colour: Uint16Array.from(nodeColours), labels, source: Int32Array.from(sources), target: Int32Array.from(targets),
    edgeColour: Uint16Array.from(linkColours), arrow: Uint8Array.from(arrows), edgeLabels: linkLabels, colours,
    nodeHidden: new Uint8Array(N), edgeHidden: new Uint8Array(M), highlighted: new Set() };

  // links of each node (both directions), made at the first neighbourhood focus
  let adjacency = null;
  function incident(u) {
    if (!adjacency) {
      const start = new Int32Array(N + 1), fill = new Int32Array(N), list = new Int32Array(2 * M);
      for (let e = 0; e < M; e++) { start[model.source[e] + 1]++; start[model.target[e] + 1]++; }
      for (let i = 0; i < N; i++) start[i + 1] += start[i];
      for (let e = 0; e < M; e++) {
        for (const v of [model.source[e], model.target[e]]) list[start[v] + fill[v]++] = e;
      }
      adjacency = { start, list };
    }
    return adjacency.list.subarray(adjacency.start[u], adjacency.start[u + 1]);
  }
  const other = (e, u) => (model.source[e] === u ? model.target[e] : model.source[e]);

  marks.graph = performance.now();

  // ------------------------------------------------------------------ what is shown
  const state = { view: '', types: new Set([...D.types, 'Document']), relations: new Set(D.relations),
    statuses: new Set(['verified', 'accepted']), doc: -1, focus: null, hops: 0, selected: null };

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
        for (const e of incident(u)) {
          const v = other(e, u);
          if (!shownEdge[e] || !shownNode[v] || keep.has(v)) continue;
          keep.add(v);
          if (nodeKind[v] !== 'item') { next.push(v); continue; }
          for (const e2 of incident(v)) {
            const w = other(e2, v);
            if (shownEdge[e2] && shownNode[w] && !keep.has(w)) { keep.add(w); next.push(w); }
          }
        }
      }
      frontier = next;
    }
    return keep;
  }

  function visibility() {
    const shownNode = new Uint8Array(N), shownEdge = new Uint8Array(M), touched = new Uint8Array(N);
    for (const it of D.items) {
      if (!itemShown(it)) continue;
      const ends = it.ends.filter(([, n]) => nodeById.has(n) && nodeShown(nodeById.get(n)));
      if (it.kind === 'edge' || it.kind === 'temporal') {
        if (ends.length === 2 && linkAt.has(it.id)) {
          shownEdge[linkAt.get(it.id)] = 1;
          ends.forEach(([, n]) => { touched[at.get(n)] = 1; });
        }
      } else if (ends.length) {
        shownNode[at.get(it.id)] = 1;
        it.ends.forEach(([, n], k) => {
          if (ends.some((e) => e[1] === n)) { shownEdge[linkAt.get(it.id + '|' + k)] = 1; touched[at.get(n)] = 1; }
        });
      }
    }
    for (const n of D.nodes) {
      const i = at.get(n.id);
      if (nodeShown(n) && (!state.view || touched[i])) shownNode[i] = 1;
    }
    if (!state.view && state.types.has('Document')) {
      D.documents.forEach((d, i) => {
        if (state.doc >= 0 && state.doc !== i) return;
        shownNode[at.get(docNodeId(i))] = 1;
        if (d.node && shownNode[at.get(d.node)]) shownEdge[linkAt.get('docedge:' + i)] = 1;
      });
    }
    const focus = state.focus != null ? at.get(state.focus) : undefined;
    const keep = focus != null && state.hops > 0 && shownNode[focus] ? neighbourhood(focus, state.hops, shownNode, shownEdge) : null;
    const drawn = { nodes: 0, edges: 0 };
    for (let i = 0; i < N; i++) {
      model.nodeHidden[i] = !shownNode[i] || (keep && !keep.has(i)) ? 1 : 0;
      drawn.nodes += 1 - model.nodeHidden[i];
    }
    for (let e = 0; e < M; e++) {
      model.edgeHidden[e] = !shownEdge[e] || model.nodeHidden[model.source[e]] || model.nodeHidden[model.target[e]] ? 1 : 0;
      drawn.edges += 1 - model.edgeHidden[e];
    }
    $('stats').textContent = `${drawn.nodes} nodes, ${drawn.edges} links drawn`;
    $('stats').dataset.nodes = drawn.nodes;
    $('stats').dataset.edges = drawn.edges;
    return drawn;
  }

  function highlight() {
    model.highlighted = new Set([state.selected, state.focus].filter((id) => id != null && at.has(id)).map((id) => at.get(id)));
  }

  function refresh() {
    const drawn = visibility();
    highlight();
    renderer.refresh();
    return drawn;
  }

  // ------------------------------------------------------------------ renderer
  const drawn = visibility();
  const renderer = KgkitCanvas($('graph'), model, {
    edgeEvents: true,
    edgeLabels: M <= 300,  // more labels than that hide the graph
    labelThreshold: N > 2000 ? 9 : 5,
    // the page's own font: text in it is already laid out when the first label is drawn
    font: getComputedStyle(document.body).fontFamily || 'sans-serif',
  });
  renderer.draw();

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
    state.selected = id;
    const i = at.get(id);
    if (nodeById.has(id)) showNode(nodeById.get(id));
    else if (itemById.has(id)) showItem(itemById.get(id));
    else if (i != null && nodeKind[i] === 'document') showDocument(nodeRef[i]);
    highlight();
    if (move && i != null) renderer.moveTo(i, 0.35, 300);
    else if (!redrawn) renderer.refresh();
  }

  renderer.on('clickNode', ({ node }) => select(nodeIds[node], false));
  renderer.on('clickEdge', ({ edge }) => {
    const item = linkItem[edge];
    if (item && itemById.has(item)) {
      state.selected = null;
      showItem(itemById.get(item));
      highlight();
      renderer.refresh();
    }
  });

  // ------------------------------------------------------------------ search
  const fold = (s) => String(s).normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
  let index = null;  // names and aliases folded, at the first search
  let results = [];

  function search(text) {
    const q = fold(text.trim());
    if (!q) return [];
    const scored = [];
    if (!index) index = D.nodes.map((n) => ({ id: n.id, keys: [n.name, ...n.aliases].map(fold) }));
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
    if (state.hops === 0 && N > 2000) { state.hops = 1; $('hops').value = '1'; }
    state.selected = id;
    refresh();
    // the whole graph drawn: the camera goes to the node; a neighbourhood: it fills the view
    select(id, state.hops === 0, true);
    if (state.hops > 0) renderer.fitDrawn(300);
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
  $('hops').addEventListener('change', () => {
    state.hops = Number($('hops').value);
    refresh();
    if (state.focus != null && state.hops > 0) renderer.fitDrawn(300);
  });
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
  // the page is already usable, and stops by itself (the Layout button runs it again). Its
  // graphology graph is built after the first frame, a slice at a time between events, so
  // a click or a key never waits behind it.
  const FA2 = window.graphologyLayoutForceAtlas2;
  let layout = null, layoutTimer = null, layoutGraph = null, building = false, wanted = false;
  function buildLayoutGraph(then) {
    if (layoutGraph) return then();
    if (building) return;
    building = true;
    const pairs = new Set();
    let multi = false;
    for (let e = 0; e < M && !multi; e++) {
      const pair = model.source[e] * N + model.target[e];
      if (pairs.has(pair)) multi = true; else pairs.add(pair);
    }
    // a graph with no two links between the same two nodes is built and walked faster as a simple one
    const g = multi ? new graphology.MultiDirectedGraph() : new graphology.DirectedGraph();
    let i = 0, e = 0;
    const slice = () => {
      const until = performance.now() + 10;
      while (i < N && performance.now() < until) {
        for (const end = Math.min(N, i + 500); i < end; i++) g.addNode(i, { x: model.x[i], y: model.y[i] });
      }
      while (i >= N && e < M && performance.now() < until) {
        for (const end = Math.min(M, e + 500); e < end; e++) g.addEdge(model.source[e], model.target[e]);
      }
      if (i < N || e < M) { setTimeout(slice, 0); return; }
      g.on('eachNodeAttributesUpdated', () => {
        g.forEachNode((key, a) => { model.x[key] = a.x; model.y[key] = a.y; });
        renderer.moved();
      });
      layoutGraph = g;
      building = false;
      then();
    };
    slice();
  }
  function runLayout() {
    if (!FA2 || N < 2) return;
    wanted = true;
    $('layout').textContent = 'Stop layout';
    buildLayoutGraph(() => {
      if (!wanted) return;
      try {
        if (!layout) {
          const settings = FA2.forceAtlas2.inferSettings(layoutGraph);
          layout = new FA2.FA2Layout(layoutGraph, { settings: { ...settings, barnesHutOptimize: N > 1000 } });
        }
        layout.start();
        $('layout').textContent = 'Stop layout';
        clearTimeout(layoutTimer);
        layoutTimer = setTimeout(stopLayout, N > 2000 ? 12000 : 5000);
      } catch (err) {
        console.warn('layout unavailable: ' + err.message);
      }
    });
  }
  function stopLayout() {
    wanted = false;
    if (layout && layout.isRunning()) layout.stop();
    $('layout').textContent = 'Layout';
  }
  const layoutRunning = () => wanted && (building || !!(layout && layout.isRunning()));
  $('layout').addEventListener('click', () => (layoutRunning() ? stopLayout() : runLayout()));

  marks.controls = performance.now();
  window.kgkitViewer = { drawn: () => ({ nodes: Number($('stats').dataset.nodes), edges: Number($('stats').dataset.edges) }),
    marks: {}, search, focus, select, refresh, model, renderer,
    // where node ``id`` is drawn, in the graph's pixels (null when it is not a drawn node)
    screenOf: (id) => (at.has(id) ? renderer.screen(at.get(id)) : null),
    layoutRunning };
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
