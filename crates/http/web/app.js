// Sluice's live view: lays the router's configuration graph out with dagre, polls the
// element counters every second, colours each element by its packet rate, outlines it in red
// while it drops, and lists an element's handlers (read and write) when it is clicked.
"use strict";

(() => {
  const POLL_MS = 1000;
  const GRAPH_RETRY_MS = 2000;
  /** Packets per second at which the colour scale reaches its end (log scale from 1). */
  const FULL_SCALE = 1e7;
  const SVG_NS = "http://www.w3.org/2000/svg";
  const PAD_X = 12;
  const PAD_Y = 8;
  const LINE = 16;
  const PORT = 7;
  const PORT_GAP = 14;
  const MIN_WIDTH = 110;
  /** Handlers every element has; the panel lists them after the element's own. */
  const GENERIC_HANDLERS = ["name", "class", "config", "ports", "handlers"];

  const byId = (id) => document.getElementById(id);
  const view = {
    status: byId("status"),
    message: byId("message"),
    canvas: byId("canvas"),
    panel: byId("panel"),
    panelTitle: byId("panel-title"),
    panelMeta: byId("panel-meta"),
    handlers: byId("handlers").tBodies[0],
  };

  const state = {
    token: "",
    /** Bumped on every (re)start so that answers to older requests are ignored. */
    generation: 0,
    svg: null,
    size: { width: 0, height: 0 },
    nodes: new Map(),
    prev: null,
    selected: null,
    panelGeneration: 0,
    scale: 1,
    fitted: true,
    timer: 0,
  };

  /** An API failure; `status` is the HTTP status, or 0 when the router could not be reached. */
  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  /** The token from the page address's fragment, `#token=TOKEN`. */
  function tokenFromHash() {
    const m = /(?:^|&)token=([^&]*)/.exec(location.hash.replace(/^#/, ""));
    if (!m) return "";
    try {
      return decodeURIComponent(m[1]);
    } catch {
      return m[1];
    }
  }

  /** Calls the JSON API; resolves to the parsed answer, rejects with an ApiError. */
  async function api(path, options = {}) {
    const headers = { ...(options.headers || {}) };
    if (state.token) headers.Authorization = "Bearer " + state.token;
    let res;
    let text;
    try {
      res = await fetch(path, { ...options, headers, cache: "no-store" });
      text = await res.text();
    } catch (err) {
      throw new ApiError(0, err.message);
    }
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (!res.ok) {
      const why = body && typeof body.error === "string" ? body.error : text.trim();
      throw new ApiError(res.status, why || res.statusText || "error");
    }
    if (body === null) throw new ApiError(res.status, "the answer is not JSON");
    return body;
  }

  function handlerPath(element, handler) {
    return "api/handlers/" + encodeURIComponent(element) + "/" + encodeURIComponent(handler);
  }

  // ---- Formatting ---------------------------------------------------------------------------

  function siNumber(x) {
    if (x === 0) return "0";
    if (x < 10) return x.toFixed(1);
    if (x < 1000) return String(Math.round(x));
    const units = ["k", "M", "G", "T"];
    let i = -1;
    while (x >= 1000 && i < units.length - 1) {
      x /= 1000;
      i += 1;
    }
    return x.toPrecision(3) + units[i];
  }

  const formatCount = (n) => Number(n).toLocaleString("en-US");
  const formatRate = (r) => (r === null ? "…" : siNumber(r)) + " pkt/s";
  const formatBytes = (r) => (r === null ? "…" : siNumber(r)) + " B/s";

  /** Fill colour for a packet rate: grey when idle, then light blue to green on a log scale. */
  function fillFor(rate) {
    if (!(rate > 0)) return "#e3e6ea";
    const t = Math.min(1, Math.log10(1 + rate) / Math.log10(FULL_SCALE));
    const hue = 205 - 85 * t;
    const light = 88 - 36 * t;
    return `hsl(${hue.toFixed(0)}, 68%, ${light.toFixed(0)}%)`;
  }

  // ---- Messages and status ------------------------------------------------------------------

  function setStatus(text, kind) {
    view.status.textContent = text;
    view.status.className = "status " + (kind || "");
  }

  function showMessage(text, askToken) {
    const parts = [document.createTextNode(text)];
    if (askToken) {
      const form = document.createElement("form");
      const input = document.createElement("input");
      input.type = "password";
      input.placeholder = "token";
      input.setAttribute("aria-label", "API token");
      const button = document.createElement("button");
      button.type = "submit";
      button.textContent = "use token";
      form.append(input, button);
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        location.hash = "token=" + encodeURIComponent(input.value.trim());
      });
      parts.push(form);
    }
    view.message.replaceChildren(...parts);
    view.message.hidden = false;
  }

  function hideMessage() {
    view.message.hidden = true;
  }

  /** Shows what went wrong; returns true when retrying is pointless without a new token. */
  function report(err, what) {
    if (err.status === 401 || err.status === 403) {
      setStatus("not authorised", "error");
      showMessage(
        `Not authorised (${err.status}: ${err.message}). Open this page as …/#token=TOKEN, ` +
          "or enter the token:",
        true,
      );
      return true;
    }
    if (err.status === 0) {
      setStatus("router unreachable", "error");
      showMessage(`The router's API is unreachable (${err.message}); retrying.`);
    } else {
      setStatus(`${what}: error ${err.status}`, "error");
      showMessage(`${what} failed with HTTP ${err.status}: ${err.message}; retrying.`);
    }
    return false;
  }

  // ---- The graph ----------------------------------------------------------------------------

  function svgEl(tag, attrs = {}, parent = null) {
    const el = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    if (parent) parent.appendChild(el);
    return el;
  }

  /** Box size that fits an element's labels (measured in the page's fonts) and its ports. */
  function boxSize(el, measure) {
    const width = (cls, text) => {
      measure.text.setAttribute("class", cls);
      measure.text.textContent = text;
      return measure.text.getComputedTextLength();
    };
    const textWidth = Math.max(
      width("name", el.name),
      width("class", el.class),
      width("rate", "888.8k pkt/s"),
      width("drops", "drops 8,888,888 +888k/s"),
    );
    const ports = Math.max(el.inputs, el.outputs, 1);
    return {
      width: Math.max(MIN_WIDTH, Math.ceil(textWidth) + 2 * PAD_X),
      height: Math.max(2 * PAD_Y + 4 * LINE, ports * PORT_GAP + PAD_Y),
    };
  }

  /** Vertical offset of port `i` of `n` on a box of height `h`. */
  const portY = (i, n, h) => (h * (Math.min(i, n - 1) + 1)) / (n + 1);

  /**
   * A smooth path from an output port (`points[0]`) to an input port (the last point): it
   * leaves and enters horizontally, and rounds the corners of dagre's bend points between.
   */
  function edgePath(points) {
    const start = points[0];
    const end = points[points.length - 1];
    if (points.length <= 3) {
      const dx = Math.max(Math.abs(end.x - start.x) / 2, 30);
      return `M${start.x},${start.y} C${start.x + dx},${start.y} ${end.x - dx},${end.y} ` +
        `${end.x},${end.y}`;
    }
    const stub = 12;
    const pts = [
      start,
      { x: start.x + stub, y: start.y },
      ...points.slice(1, -1),
      { x: end.x - stub, y: end.y },
      end,
    ];
    let d = `M${start.x},${start.y}`;
    for (let i = 1; i < pts.length - 1; i += 1) {
      const c = pts[i];
      const next = pts[i + 1];
      d += ` Q${c.x},${c.y} ${(c.x + next.x) / 2},${(c.y + next.y) / 2}`;
    }
    return d + ` L${end.x},${end.y}`;
  }

  function render(graph) {
    state.nodes.clear();
    state.prev = null;

    const svg = svgEl("svg", { class: "graph", role: "img", "aria-label": "configuration graph" });
    const defs = svgEl("defs", {}, svg);
    const marker = svgEl(
      "marker",
      {
        id: "arrow",
        viewBox: "0 0 10 10",
        refX: 10,
        refY: 5,
        markerWidth: 7,
        markerHeight: 7,
        orient: "auto",
      },
      defs,
    );
    svgEl("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }, marker);
    view.canvas.replaceChildren(svg);

    const measureGroup = svgEl("g", { class: "element" }, svg);
    const measure = { text: svgEl("text", {}, measureGroup) };

    const g = new dagre.graphlib.Graph({ multigraph: true });
    g.setGraph({ rankdir: "LR", nodesep: 22, ranksep: 64, edgesep: 14, marginx: 20, marginy: 20 });
    g.setDefaultEdgeLabel(() => ({}));
    const byName = new Map();
    for (const el of graph.elements) {
      byName.set(el.name, el);
      g.setNode(el.name, boxSize(el, measure));
    }
    graph.connections.forEach((c, i) => {
      if (byName.has(c.from) && byName.has(c.to)) g.setEdge(c.from, c.to, { conn: c }, "c" + i);
    });
    dagre.layout(g);
    measureGroup.remove();

    const edges = svgEl("g", { class: "edges" }, svg);
    for (const e of g.edges()) {
      const { conn, points } = g.edge(e);
      const from = g.node(conn.from);
      const to = g.node(conn.to);
      const outputs = byName.get(conn.from).outputs;
      const inputs = byName.get(conn.to).inputs;
      const start = {
        x: from.x + from.width / 2 + PORT / 2,
        y: from.y - from.height / 2 + portY(conn.from_port, outputs, from.height),
      };
      const end = {
        x: to.x - to.width / 2 - PORT / 2,
        y: to.y - to.height / 2 + portY(conn.to_port, inputs, to.height),
      };
      const path = svgEl("path", {
        class: "edge",
        d: edgePath([start, ...points.slice(1, -1), end]),
        "marker-end": "url(#arrow)",
        "data-from": conn.from,
        "data-to": conn.to,
      }, edges);
      svgEl("title", {}, path).textContent =
        `${conn.from} [${conn.from_port}] -> [${conn.to_port}] ${conn.to}`;
    }

    const nodes = svgEl("g", { class: "elements" }, svg);
    for (const el of graph.elements) {
      const box = g.node(el.name);
      state.nodes.set(el.name, drawNode(nodes, el, box));
    }

    state.svg = svg;
    state.size = { width: g.graph().width || 0, height: g.graph().height || 0 };
    if (state.fitted) fit();
    else applyScale();

    if (state.selected !== null) {
      if (byName.has(state.selected)) select(state.selected);
      else closePanel();
    }
  }

  function drawNode(parent, el, box) {
    const group = svgEl("g", {
      class: "element",
      "data-element": el.name,
      "data-class": el.class,
      tabindex: 0,
      transform: `translate(${box.x - box.width / 2},${box.y - box.height / 2})`,
    }, parent);
    const title = svgEl("title", {}, group);
    title.textContent = `${el.name} :: ${el.class}`;
    const rect = svgEl("rect", {
      class: "box",
      width: box.width,
      height: box.height,
      rx: 6,
      fill: fillFor(0),
    }, group);
    const top = (box.height - 4 * LINE) / 2 + 12;
    const line = (cls, i, text) => {
      const t = svgEl("text", { class: cls, x: PAD_X, y: top + i * LINE }, group);
      t.textContent = text;
      return t;
    };
    line("name", 0, el.name);
    line("class", 1, el.class);
    const rate = line("rate", 2, formatRate(null));
    rate.setAttribute("data-rate", "");
    const drops = line("drops", 3, "drops …");
    drops.setAttribute("data-drops", "");
    for (let i = 0; i < el.inputs; i += 1) {
      svgEl("rect", {
        class: "port input",
        x: -PORT / 2,
        y: portY(i, el.inputs, box.height) - PORT / 2,
        width: PORT,
        height: PORT,
      }, group);
    }
    for (let i = 0; i < el.outputs; i += 1) {
      svgEl("rect", {
        class: "port output",
        x: box.width - PORT / 2,
        y: portY(i, el.outputs, box.height) - PORT / 2,
        width: PORT,
        height: PORT,
      }, group);
    }
    group.addEventListener("click", () => select(el.name));
    group.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        select(el.name);
      }
    });
    return { el, group, rect, rate, drops, title };
  }

  function applyScale() {
    if (!state.svg) return;
    const { width, height } = state.size;
    state.svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    state.svg.setAttribute("width", Math.ceil(width * state.scale));
    state.svg.setAttribute("height", Math.ceil(height * state.scale));
  }

  function fit() {
    const { width, height } = state.size;
    if (width > 0 && height > 0) {
      const room = Math.min(
        (view.canvas.clientWidth - 8) / width,
        (view.canvas.clientHeight - 8) / height,
      );
      state.scale = Math.max(0.6, Math.min(1.25, room));
    }
    state.fitted = true;
    applyScale();
  }

  function zoom(factor) {
    state.scale = Math.max(0.1, Math.min(4, state.scale * factor));
    state.fitted = false;
    applyScale();
  }

  // ---- Live counters ------------------------------------------------------------------------

  /** True when the router's elements differ from the graph shown (after a hot swap). */
  function graphChanged(sample) {
    const now = sample.elements || {};
    for (const name of Object.keys(now)) if (!state.nodes.has(name)) return true;
    if (state.prev) {
      for (const name of Object.keys(state.prev.elements)) if (!(name in now)) return true;
    }
    return false;
  }

  function applyStats(sample) {
    const prev = state.prev;
    const dt = prev ? sample.time - prev.time : 0;
    for (const [name, node] of state.nodes) {
      const cur = sample.elements[name];
      const old = prev && prev.elements[name];
      if (!cur) continue;
      const per = (key) => (old && dt > 0 ? Math.max(0, cur[key] - old[key]) / dt : null);
      const inRate = per("in_packets");
      const outRate = per("out_packets");
      const dropRate = per("drops");
      const rate = inRate === null ? null : Math.max(inRate, outRate);
      node.rate.textContent = formatRate(rate);
      node.rate.setAttribute("data-rate", rate === null ? "" : String(rate));
      node.drops.textContent =
        `drops ${formatCount(cur.drops)}` + (dropRate > 0 ? ` +${siNumber(dropRate)}/s` : "");
      node.drops.setAttribute("data-drops", String(cur.drops));
      node.rect.setAttribute("fill", fillFor(rate));
      node.group.classList.toggle("dropping", dropRate > 0);
      node.group.classList.toggle("has-drops", cur.drops > 0);
      node.title.textContent =
        `${name} :: ${node.el.class}\n` +
        `in: ${formatRate(inRate)}, ${formatBytes(per("in_bytes"))}, ` +
        `${formatCount(cur.in_packets)} packets\n` +
        `out: ${formatRate(outRate)}, ${formatBytes(per("out_bytes"))}, ` +
        `${formatCount(cur.out_packets)} packets\n` +
        `drops: ${formatCount(cur.drops)}`;
    }
    state.prev = sample;
    const time = new Date().toLocaleTimeString();
    const uncounted = sample.counting === false ? " · packets not counted (use --http)" : "";
    setStatus(`live · ${state.nodes.size} elements · updated ${time}${uncounted}`, "ok");
  }

  async function loadGraph(generation) {
    let graph;
    try {
      graph = await api("api/graph");
    } catch (err) {
      if (generation !== state.generation) return;
      if (!report(err, "Reading the graph")) {
        state.timer = setTimeout(() => loadGraph(generation), GRAPH_RETRY_MS);
      }
      return;
    }
    if (generation !== state.generation) return;
    hideMessage();
    render(graph);
    poll(generation);
  }

  async function poll(generation) {
    try {
      const sample = await api("api/stats");
      if (generation !== state.generation) return;
      hideMessage();
      if (graphChanged(sample)) {
        start();
        return;
      }
      applyStats(sample);
    } catch (err) {
      if (generation !== state.generation) return;
      if (report(err, "Reading the counters")) return;
    }
    state.timer = setTimeout(() => poll(generation), POLL_MS);
  }

  function start() {
    state.generation += 1;
    clearTimeout(state.timer);
    state.token = tokenFromHash();
    setStatus("connecting…");
    loadGraph(state.generation);
  }

  // ---- The handler panel --------------------------------------------------------------------

  function closePanel() {
    state.selected = null;
    state.panelGeneration += 1;
    view.panel.hidden = true;
    for (const node of state.nodes.values()) node.group.classList.remove("selected");
    if (state.fitted) fit();
  }

  function select(name) {
    const node = state.nodes.get(name);
    if (!node) return;
    state.selected = name;
    state.panelGeneration += 1;
    for (const [n, other] of state.nodes) other.group.classList.toggle("selected", n === name);
    const el = node.el;
    const wasHidden = view.panel.hidden;
    view.panel.hidden = false;
    view.panel.setAttribute("data-element", name);
    view.panelTitle.textContent = name;

    const meta = [
      ["class", el.class],
      ["config", el.config || "(none)"],
      ["ports", `${el.inputs} in, ${el.outputs} out`],
    ];
    view.panelMeta.replaceChildren(
      ...meta.flatMap(([k, v]) => {
        const dt = document.createElement("dt");
        dt.textContent = k;
        const dd = document.createElement("dd");
        dd.textContent = v;
        return [dt, dd];
      }),
    );
    const generic = (h) => GENERIC_HANDLERS.includes(h.name);
    const ordered = [...el.handlers.filter((h) => !generic(h)), ...el.handlers.filter(generic)];
    view.handlers.replaceChildren(...ordered.map((h) => handlerRow(name, h)));
    readAll();
    if (wasHidden && state.fitted) fit();
  }

  function handlerRow(element, h) {
    const tr = document.createElement("tr");
    tr.setAttribute("data-handler", h.name);
    const th = document.createElement("th");
    th.textContent = h.name;
    const mode = document.createElement("span");
    mode.className = "mode";
    mode.textContent = [h.read && "read", h.write && "write"].filter(Boolean).join(", ");
    th.appendChild(mode);
    const td = document.createElement("td");
    tr.append(th, td);
    const result = document.createElement("div");
    result.className = "result";

    if (h.read) {
      const pre = document.createElement("pre");
      pre.className = "value";
      const again = document.createElement("button");
      again.type = "button";
      again.textContent = "read";
      again.addEventListener("click", () => readInto(element, h.name, pre));
      const line = document.createElement("div");
      line.className = "read-line";
      line.append(pre, again);
      td.appendChild(line);
    }
    if (h.write) {
      const form = document.createElement("form");
      const input = document.createElement("input");
      input.placeholder = "value";
      input.setAttribute("aria-label", `value to write to ${h.name}`);
      const button = document.createElement("button");
      button.type = "submit";
      button.textContent = "write";
      form.append(input, button);
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        write(element, h.name, input.value, result, tr.querySelector("pre.value"));
      });
      td.appendChild(form);
    }
    td.appendChild(result);
    return tr;
  }

  async function readInto(element, handler, pre) {
    const generation = state.panelGeneration;
    pre.classList.remove("error");
    try {
      const answer = await api(handlerPath(element, handler));
      if (generation !== state.panelGeneration) return;
      pre.textContent = answer.value === "" ? "(empty)" : answer.value;
      pre.classList.add("loaded");
    } catch (err) {
      if (generation !== state.panelGeneration) return;
      pre.textContent = err.status ? `error ${err.status}: ${err.message}` : err.message;
      pre.classList.add("error");
    }
  }

  async function write(element, handler, value, result, pre) {
    const generation = state.panelGeneration;
    result.className = "result";
    result.textContent = "writing…";
    try {
      await api(handlerPath(element, handler), { method: "POST", body: value });
      if (generation !== state.panelGeneration) return;
      result.textContent = `written at ${new Date().toLocaleTimeString()}`;
      if (pre) readInto(element, handler, pre);
    } catch (err) {
      if (generation !== state.panelGeneration) return;
      result.className = "result error";
      result.textContent = err.status ? `error ${err.status}: ${err.message}` : err.message;
    }
  }

  function readAll() {
    for (const tr of view.handlers.rows) {
      const pre = tr.querySelector("pre.value");
      if (pre) readInto(state.selected, tr.getAttribute("data-handler"), pre);
    }
  }

  // ---- Start --------------------------------------------------------------------------------

  for (const swatch of document.querySelectorAll(".swatch[data-rate]")) {
    swatch.style.background = fillFor(Number(swatch.getAttribute("data-rate")));
  }
  byId("panel-close").addEventListener("click", closePanel);
  byId("panel-refresh").addEventListener("click", readAll);
  byId("zoom-in").addEventListener("click", () => zoom(1.25));
  byId("zoom-out").addEventListener("click", () => zoom(0.8));
  byId("zoom-fit").addEventListener("click", fit);
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && state.selected !== null) closePanel();
  });
  window.addEventListener("resize", () => state.fitted && fit());
  window.addEventListener("hashchange", start);

  if (typeof dagre === "undefined" || !dagre || typeof dagre.layout !== "function") {
    const why = window.SLUICE_LAYOUT_MISSING || "layout library missing: run scripts/setup.sh";
    setStatus("no layout library", "error");
    showMessage(why);
    return;
  }
  start();
})();
