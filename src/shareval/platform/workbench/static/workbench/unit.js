// The workbench's unit page (templates/workbench/unit.html, curate.html): the unit's text
// one page at a time with its annotations and the reference systems' suggestions drawn by
// @recogito/text-annotator (SPANS renderer: no <style> element, so the site's CSP holds),
// a side list, entry search, yes/no questions and keys. Every action is one POST of ops
// with the version the page holds; the server's answer is the new state (views_unit.py).
(() => {
  "use strict";
  const root = document.getElementById("wb");
  const cfg = root.dataset;
  const $ = id => document.getElementById(id);
  const el = (tag, attrs = {}, text = "") => {
    const e = document.createElement(tag);
    Object.entries(attrs).forEach(([k, v]) => e.setAttribute(k, v));
    if (text) e.textContent = text;
    return e;
  };
  const url = (base, params) => {
    const u = new URL(base, location.href);
    Object.entries(params).forEach(([k, v]) => u.searchParams.set(k, v));
    return u.pathname + u.search;
  };
  const ORIGIN = {manual: "manual", suggestion: "accepted suggestion", family: "family copy",
                  import: "imported", curated: "curated"};

  let S = null;                 // the last state the server sent
  let page = Number(cfg.page || 0);
  let cur = null;               // {t: "s"|"a", id}: the current suggestion or annotation
  let choosing = null;          // a new span waiting for its label
  let linking = null;           // the annotation id the search box links
  let blocked = false;          // after a 409 nothing more is sent until a reload
  let queue = Promise.resolve();
  const undo = [], remap = new Map();
  const watchers = [];          // curate.js hears every new state

  // ---- offsets: the server counts code points, the DOM counts UTF-16 units
  let units = null;
  function prepOffsets(t) {
    units = null;
    if (!/[\uD800-\uDBFF]/.test(t)) return;
    units = [0];
    let u = 0;
    for (const ch of t) { u += ch.length; units.push(u); }
  }
  const toUnits = cp => units ? units[Math.min(cp, units.length - 1)] : cp;
  function toCp(u) {
    if (!units) return u;
    let lo = 0, hi = units.length - 1;
    while (lo < hi) { const m = (lo + hi) >> 1; if (units[m] < u) lo = m + 1; else hi = m; }
    return lo;
  }
  const onPage = x => x.begin !== null && x.begin !== undefined &&
    x.begin >= S.unit.page_begin && x.end <= S.unit.page_end;
  const quote = x => onPage(x)
    ? S.unit.text.slice(toUnits(x.begin - S.unit.page_begin), toUnits(x.end - S.unit.page_begin))
    : (x.begin === null || x.begin === undefined ? "" : `(offsets ${x.begin}–${x.end}, another page)`);

  // ---- the text and its highlights
  let annotator = null, shownPage = null;
  const styles = {};
  function styleOf(a) {
    const s = styles[a.id] || {fill: "#3a7bd5", fillOpacity: 0.3};
    const now = cur && a.id === cur.t + cur.id;
    return now ? Object.assign({}, s, {fillOpacity: 0.6, underlineStyle: "solid",
                                       underlineColor: "#1d3557", underlineThickness: 3})
      : s;
  }
  function textBox() {
    if (annotator && shownPage === S.unit.page) return;
    if (annotator) annotator.destroy();
    const old = $("wb-text"), box = el("div", {id: "wb-text", class: "wb-text",
      "aria-label": "the unit's text: select words to mark a span"});
    box.textContent = S.unit.text;
    old.replaceWith(box);
    prepOffsets(S.unit.text);
    annotator = RecogitoJS.createTextAnnotator(box, {renderer: "SPANS", style: styleOf});
    annotator.on("createAnnotation", created);
    annotator.on("clickAnnotation", a => { const [t, id] = [a.id[0], Number(a.id.slice(1))];
      if (id) { setCur({t, id}); } });
    shownPage = S.unit.page;
  }
  function highlight() {
    const list = [];
    const add = (id, x, style) => {
      const b = toUnits(x.begin - S.unit.page_begin), e = toUnits(x.end - S.unit.page_begin);
      styles[id] = style;
      list.push({id, bodies: [], target: {annotation: id,
        selector: [{quote: S.unit.text.slice(b, e), start: b, end: e}]}});
    };
    S.suggestions.filter(x => x.verdict === null && onPage(x)).forEach(x =>
      add("s" + x.id, x, {fill: "#f0a020", fillOpacity: 0.22, underlineStyle: "dashed",
                          underlineColor: "#b86e00", underlineThickness: 2}));
    // a family copy sits on the span it was copied from: underlined, not filled, so the
    // two stay readable where they overlap
    const colour = {manual: "#3a7bd5", suggestion: "#2e9d4f"};
    S.annotations.filter(x => x.kind === "span" && onPage(x)).forEach(x =>
      add("a" + x.id, x, x.origin === "family"
        ? {fill: "#8e5bd1", fillOpacity: 0.08, underlineStyle: "dotted", underlineColor: "#8e5bd1",
           underlineThickness: 2, underlineOffset: 2}
        : {fill: colour[x.origin] || "#6b7785", fillOpacity: 0.3}));
    annotator.setAnnotations(list, true);
  }

  // a selection became a span: trimmed, labelled (asked when the schema has several labels)
  function created(a) {
    annotator.removeAnnotation(a.id);
    window.getSelection().removeAllRanges();
    const sel = a.target.selector[0];
    let b = sel.start, e = sel.end;
    const t = S.unit.text;
    while (b < e && /\s/.test(t[b])) b++;
    while (e > b && /\s/.test(t[e - 1])) e--;
    if (b >= e) return;
    const span = {begin: S.unit.page_begin + toCp(b), end: S.unit.page_begin + toCp(e),
                  quote: t.slice(b, e)};
    const labels = S.schema.labels || [];
    if (labels.length <= 1) return addSpan(span, labels[0] || "");
    choosing = span;
    renderCurrent();
  }
  function addSpan(span, label) {
    choosing = null;
    send([{op: "add", kind: "span", begin: span.begin, end: span.end, label, target: ""}],
         res => [{op: "delete", id: res.created[0]}],
         res => { setCur({t: "a", id: res.created[0]}, false);
                  if (S.schema.link) startLink(res.created[0]); });
  }

  // ---- saving: one request at a time, each with the version the page holds
  const banner = $("wb-banner");
  function say(text, kind = "error", reload = false) {
    banner.hidden = !text;
    banner.className = "msg " + kind;
    banner.textContent = text || "";
    if (reload) {
      const b = el("button", {type: "button", id: "wb-reload"}, "Reload");
      b.onclick = () => location.reload();
      banner.append(" ", b);
    }
  }
  const mapId = id => { while (remap.has(id)) id = remap.get(id); return id; };
  // inverse: the ops that undo this action, or a function of the server's answer
  function send(ops, inverse, then, isUndo = false) {
    queue = queue.then(async () => {
      if (blocked) return;
      $("wb-saving").textContent = "saving…";
      let r;
      try {
        r = await fetch(url(cfg.ops, {page}), {method: "POST", credentials: "same-origin",
          headers: {"Content-Type": "application/json", "X-CSRFToken": cfg.csrf},
          body: JSON.stringify({version: S.version, ops})});
      } catch (err) {
        $("wb-saving").textContent = "";
        return say("Not saved: the server could not be reached. Try again.");
      }
      const body = await r.json().catch(() => ({error: `the server answered ${r.status}`}));
      $("wb-saving").textContent = "";
      if (r.status === 409) {
        blocked = true;
        return say("Your last change was not saved: " + (body.error ||
                   "this unit was saved elsewhere since this page loaded; reload to see it, " +
                   "nothing was overwritten") + ".", "error conflict", true);
      }
      if (!r.ok) return say(`Not saved: ${body.error || r.status}` +
                            (body.field ? ` (${body.field})` : ""));
      say("");
      S = body;
      if (inverse) {
        const inv = typeof inverse === "function" ? inverse(S) : inverse;
        if (isUndo === false) undo.push(inv);
      }
      if (then) then(S);
      render();
    });
    return queue;
  }
  function undoLast() {
    const ops = undo.pop();
    if (!ops) return say("Nothing to undo.", "info");
    if (ops.chain) return send(ops.chain, null, res => send(ops.then(res), null, null, true), true);
    const fixed = ops.map(o => Object.assign({}, o, o.id ? {id: mapId(o.id)} : {},
                                             o.family_of ? {family_of: mapId(o.family_of)} : {}));
    const old = fixed.find(o => (o.op === "add" || o.op === "verdict") && o.was);
    send(fixed.map(o => { const c = Object.assign({}, o); delete c.was; return c; }), null,
         res => { if (old) remap.set(old.was, res.created[fixed.indexOf(old)]); }, true);
  }

  // ---- the side lists
  const sugg = () => S.suggestions;
  // spans and sentence-level links (an answer with a target); yes/no answers are the radios
  const anns = () => S.annotations.filter(x => x.kind === "span" || (x.kind === "answer" && x.target));
  const items = () => [...sugg().map(x => ({t: "s", id: x.id, x})),
                       ...anns().map(x => ({t: "a", id: x.id, x}))];
  const find = c => c && items().find(i => i.t === c.t && i.id === c.id);
  function setCur(c, scroll = true) {
    cur = c;
    render();
    const it = find(c);
    if (!it) return;
    const li = $(`wb-${c.t}-${c.id}`);
    if (li) li.scrollIntoView({block: "nearest"});
    if (scroll && onPage(it.x)) annotator.scrollIntoView(c.t + c.id);
  }
  function move(step) {
    const all = items();
    if (!all.length) return;
    const k = all.findIndex(i => cur && i.t === cur.t && i.id === cur.id);
    setCur(all[(k + step + all.length) % all.length]);
  }
  const nextPending = after => {
    const open = sugg().filter(x => x.verdict === null);
    return open.find(x => x.id !== after) || null;
  };
  function who(x) {
    const title = x.target_title || x.target;
    return [x.label, title ? `→ ${title}` : ""].filter(Boolean).join(" ");
  }
  function row(t, x) {
    const li = el("li", {id: `wb-${t}-${x.id}`, tabindex: "-1"});
    li.classList.toggle("now", !!(cur && cur.t === t && cur.id === x.id));
    const q = quote(x);
    if (q) li.append(el("span", {class: "q"}, `“${q}”`), " ");
    li.append(el("span", {class: "what"}, who(x) || (t === "a" ? "no label" : "")));
    if (t === "s") {
      li.classList.add(x.verdict === true ? "accepted" : x.verdict === false ? "rejected" : "open");
      li.append(" ", el("span", {class: "score"}, `score ${Number(x.score).toFixed(2)}`),
                " ", el("span", {class: "src"}, x.source));
      const acts = el("span", {class: "acts"});
      const yes = el("button", {type: "button", "aria-pressed": String(x.verdict === true)}, "accept");
      const no = el("button", {type: "button", "aria-pressed": String(x.verdict === false)}, "reject");
      yes.onclick = ev => { ev.stopPropagation(); verdict(x, true); };
      no.onclick = ev => { ev.stopPropagation(); verdict(x, false); };
      acts.append(yes, no);
      li.prepend(acts);
    } else {
      li.classList.add("origin-" + x.origin);
      li.append(" ", el("span", {class: "origin"}, ORIGIN[x.origin] || x.origin));
      if (x.note) li.append(el("span", {class: "note"}, x.note));
      const acts = el("span", {class: "acts"});
      if (S.schema.link && x.kind === "span") {
        const l = el("button", {type: "button"}, "link");
        l.onclick = ev => { ev.stopPropagation(); setCur({t, id: x.id}, false); startLink(x.id); };
        acts.append(l);
      }
      const d = el("button", {type: "button"}, "delete");
      d.onclick = ev => { ev.stopPropagation(); remove(x); };
      acts.append(d);
      li.prepend(acts);
    }
    li.onclick = () => setCur({t, id: x.id});
    return li;
  }
  function renderLists() {
    const sl = $("wb-suggestions"), al = $("wb-annotations");
    sl.replaceChildren(...sugg().map(x => row("s", x)));
    al.replaceChildren(...anns().map(x => row("a", x)));
    const open = sugg().filter(x => x.verdict === null).length;
    $("wb-sugg-count").textContent = S.suggestions_on
      ? `${sugg().length} (${open} to decide)` : "off in this project";
    $("wb-ann-count").textContent = String(anns().length);
    $("wb-none-sugg").hidden = sugg().length > 0;
    $("wb-none-ann").hidden = anns().length > 0;
  }
  function renderCurrent() {
    const box = $("wb-current");
    box.replaceChildren();
    if (choosing) {
      box.append(el("p", {}, `Label for “${choosing.quote}”:`));
      (S.schema.labels || []).forEach((lab, k) => {
        const b = el("button", {type: "button", class: "label-choice", "data-label": lab},
                     `${k + 1} ${lab}`);
        b.onclick = () => addSpan(choosing, lab);
        box.append(b, " ");
      });
      box.append(el("p", {class: "hint"}, "Press the number, or Esc to drop the selection."));
      return;
    }
    const it = find(cur);
    if (!it) { box.append(el("p", {class: "hint"}, "Select words in the text to mark a span, or press j for the first item.")); return; }
    const x = it.x;
    box.append(el("p", {class: "q"}, quote(x) ? `“${quote(x)}”` : "the whole unit"),
               el("p", {}, who(x) || "no label"));
    if (it.t === "s") box.append(el("p", {class: "hint"},
      `suggested by ${x.source}, score ${Number(x.score).toFixed(2)}: a accept, r reject`));
    else box.append(el("p", {class: "hint"}, `${ORIGIN[x.origin] || x.origin}${x.note ? " — " + x.note : ""}: ` +
      (S.schema.link ? "l link, " : "") + "Delete removes it"));
  }
  function renderQuestions() {
    const box = $("wb-questions"), qs = S.schema.questions || [];
    box.hidden = !qs.length;
    box.replaceChildren();
    qs.forEach((q, k) => {
      const now = (S.annotations.find(a => a.kind === "answer" && a.label === q.key) || {}).value || "";
      const fs = el("fieldset", {class: "question", "data-key": q.key});
      fs.append(el("legend", {}, q.text));
      for (const [v, word] of [["yes", "Yes"], ["no", "No"]]) {
        const id = `wb-q${k}-${v}`;
        const r = el("input", {type: "radio", name: `q-${q.key}`, id, value: v});
        r.checked = now === v;
        r.onchange = () => answer(q.key, v);
        const lab = el("label", {for: id}, word + (k === 0 ? (v === "yes" ? " (y)" : " (x)") : ""));
        fs.append(r, lab, " ");
      }
      box.append(fs);
    });
  }
  function render() {
    textBox();
    highlight();
    if (cur && !find(cur)) cur = null;
    renderLists();
    renderCurrent();
    renderQuestions();
    const u = S.unit;
    $("wb-page").textContent = `page ${u.page + 1} of ${u.pages}`;
    $("wb-pager").hidden = u.pages <= 1;
    $("wb-prev-page").disabled = u.page <= 0;
    $("wb-next-page").disabled = u.page >= u.pages - 1;
    $("wb-status").textContent = {new: "new", progress: "in progress", done: "done"}[S.status] || S.status;
    $("wb-status").className = "badge st-" + S.status;
    for (const [id, to] of [["wb-prev-unit", S.nav.prev], ["wb-next-unit", S.nav.next]]) {
      $(id).toggleAttribute("disabled", !to);
    }
    watchers.forEach(f => f(S));
  }

  // ---- actions
  function verdict(x, accepted) {
    const before = x.verdict;
    // no op clears a verdict; deleting the annotation an accept made does (service.py),
    // so an undecided suggestion is restored by accept-then-delete
    const drop = res => [{op: "delete", id: res.created[0]}];
    const inverse = before !== null ? [{op: "verdict", suggestion: x.id, accepted: before}]
      : accepted ? drop : {chain: [{op: "verdict", suggestion: x.id, accepted: true}], then: drop};
    send([{op: "verdict", suggestion: x.id, accepted}], inverse,
         () => { const n = nextPending(x.id); if (n) setCur({t: "s", id: n.id}); });
  }
  function remove(x) {
    // undo brings it back as it was: an accepted suggestion by accepting it again, a
    // family copy as a copy of its source, anything else as the same span
    const back = x.suggestion ? {op: "verdict", suggestion: x.suggestion, accepted: true, was: x.id}
      : Object.assign({op: "add", kind: x.kind, begin: x.begin, end: x.end, label: x.label,
                       target: x.target, was: x.id},
                      x.origin === "family" && x.source ? {family_of: x.source} : {});
    send([{op: "delete", id: x.id}], [back]);
  }
  function answer(key, value) {
    const before = (S.annotations.find(a => a.kind === "answer" && a.label === key) || {}).value || "";
    if (before === value) return;
    send([{op: "answer", key, value}], [{op: "answer", key, value: before}]);
  }
  function status(value) {
    const before = S.status === "done" ? "done" : "progress";
    send([{op: "status", value}], [{op: "status", value: before}]);
  }
  function go(to) { if (to) queue.then(() => { location.href = to; }); }
  function turn(step) {
    const k = S.unit.page + step;
    if (k < 0 || k >= S.unit.pages) return;
    load(k);
  }
  async function load(k) {
    const r = await fetch(url(cfg.state, {page: k}), {credentials: "same-origin"});
    if (!r.ok) return say(`The unit could not be loaded (${r.status}).`);
    S = await r.json();
    page = S.unit.page;
    history.replaceState(null, "", url(location.href, {page}));
    render();
    const first = nextPending(null);          // a new page starts at its first open suggestion
    if (first && !find(cur)) setCur({t: "s", id: first.id}, false);
  }

  // ---- linking: search the project's entries (titles, labels, questions)
  const search = $("wb-search"), results = $("wb-results");
  let hits = [], pick = 0, timer = null, asked = 0;
  function startLink(id) {
    linking = id;
    const x = anns().find(a => a.id === id);
    $("wb-linking").textContent = x ? `Link “${quote(x)}” to:` : "";
    search.focus();
    hits = [];
    paintHits();
    if (x) { search.value = quote(x); lookUp(); }       // the words themselves find most entries
  }
  async function lookUp() {
    const n = ++asked;
    const r = await fetch(url(cfg.entries, {q: search.value}), {credentials: "same-origin"});
    if (n !== asked || !r.ok) return;
    hits = (await r.json()).entries || [];
    pick = 0;
    paintHits();
  }
  function paintHits() {
    results.replaceChildren(...hits.map((h, k) => {
      const li = el("li", {id: `wb-hit-${k}`, class: k === pick ? "now" : "", role: "option"});
      li.append(el("span", {class: "what"}, h.title), " ", el("small", {}, h.key +
        (h.family ? ` · family ${h.family}` : "")));
      li.onclick = () => { pick = k; choose(); };
      return li;
    }));
    results.hidden = !hits.length;
    $("wb-no-hits").hidden = !!hits.length || !search.value;
  }
  function choose() {
    const h = hits[pick];
    if (!h) return;
    const id = linking ?? (cur && cur.t === "a" ? cur.id : null);
    const x = anns().find(a => a.id === id && a.kind === "span");
    if (!x && S.schema.link === "vocabulary") {       // SV-Ident: the sentence links a variable
      send([{op: "add", kind: "answer", label: (S.schema.labels || [""])[0], target: h.key}],
           res => [{op: "delete", id: res.created[0]}]);
    } else if (!x) {
      return say("Pick a span first: select words, or move to one with j/k and press l.", "info");
    } else send([{op: "link", id: x.id, target: h.key}], [{op: "link", id: x.id, target: x.target || ""}],
         () => { setCur({t: "a", id: x.id}, false); });
    linking = null;
    $("wb-linking").textContent = "";
    search.value = "";
    hits = [];
    paintHits();
    search.blur();
  }
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(lookUp, 150); });
  search.addEventListener("keydown", ev => {
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      if (!hits.length) return;
      pick = (pick + (ev.key === "ArrowDown" ? 1 : -1) + hits.length) % hits.length;
      paintHits();
      $(`wb-hit-${pick}`).scrollIntoView({block: "nearest"});
    } else if (ev.key === "Enter") { ev.preventDefault(); choose(); }
    else if (ev.key === "Escape") { linking = null; $("wb-linking").textContent = ""; search.blur(); }
  });

  // ---- keys
  const typing = t => t && (t.tagName === "INPUT" && t.type !== "radio" || t.tagName === "TEXTAREA" || t.tagName === "SELECT");
  document.addEventListener("keydown", ev => {
    if (!S || typing(ev.target)) return;
    if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === "z") { ev.preventDefault(); return undoLast(); }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const it = find(cur), k = ev.key;
    if (choosing) {
      const labels = S.schema.labels || [];
      if (/^[1-9]$/.test(k) && labels[Number(k) - 1]) addSpan(choosing, labels[Number(k) - 1]);
      else if (k === "Escape") { choosing = null; renderCurrent(); }
      ev.preventDefault();
      return;
    }
    const acts = {
      "/": () => search.focus(),
      a: () => it && it.t === "s" && verdict(it.x, true),
      r: () => it && it.t === "s" && verdict(it.x, false),
      j: () => move(1), ArrowDown: () => move(1), k: () => move(-1), ArrowUp: () => move(-1),
      l: () => it && it.t === "a" && S.schema.link && startLink(it.id),
      Delete: () => it && it.t === "a" && remove(it.x),
      Backspace: () => it && it.t === "a" && remove(it.x),
      u: undoLast, n: () => go(S.nav.next), p: () => go(S.nav.prev), d: () => status("done"),
      "]": () => turn(1), "[": () => turn(-1),
      y: () => S.schema.questions && S.schema.questions[0] && answer(S.schema.questions[0].key, "yes"),
      x: () => S.schema.questions && S.schema.questions[0] && answer(S.schema.questions[0].key, "no"),
      "?": () => { $("wb-keys").open = !$("wb-keys").open; },
    };
    if (acts[k]) { ev.preventDefault(); acts[k](); }
  });
  $("wb-prev-page").onclick = () => turn(-1);
  $("wb-next-page").onclick = () => turn(1);
  $("wb-prev-unit").onclick = () => go(S.nav.prev);
  $("wb-next-unit").onclick = () => go(S.nav.next);
  $("wb-done").onclick = () => status("done");
  $("wb-undo").onclick = () => undoLast();

  // curate.js works through this: the same saves, undo and state
  window.workbench = {send, watch: f => { watchers.push(f); if (S) f(S); },
                      state: () => S, setCur};
  load(page);
})();
