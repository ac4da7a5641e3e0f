// The curator's page (curate.html): each annotator's annotations of the unit side by side,
// rows not shared by every annotator highlighted; Take copies one into the curator's gold
// through unit.js's saves (the same ops, with "source" naming the annotation taken).
(() => {
  "use strict";
  const people = JSON.parse(document.getElementById("cur-data").textContent);
  const grid = document.getElementById("cur-grid");
  const el = (tag, attrs = {}, text = "") => {
    const e = document.createElement(tag);
    Object.entries(attrs).forEach(([k, v]) => e.setAttribute(k, v));
    if (text) e.textContent = text;
    return e;
  };
  const key = x => x.kind === "answer" ? `answer|${x.label}|${x.value}`
    : `${x.kind}|${x.begin}|${x.end}|${x.label}|${x.target || ""}`;
  const everyone = new Map();         // key -> how many annotators have it (not rows)
  people.forEach(p => new Set(p.annotations.map(key)).forEach(k => everyone.set(k, (everyone.get(k) || 0) + 1)));
  let rows = [], at = -1;

  function take(x) {
    const wb = window.workbench;
    const op = x.kind === "answer" ? {op: "answer", key: x.label, value: x.value, source: x.id}
      : {op: "add", kind: x.kind, begin: x.begin, end: x.end, label: x.label, target: x.target || "",
         source: x.id};
    const before = x.kind === "answer"
      ? ((wb.state().annotations.find(a => a.kind === "answer" && a.label === x.label) || {}).value || "")
      : null;
    wb.send([op], x.kind === "answer" ? [{op: "answer", key: x.label, value: before}]
      : res => [{op: "delete", id: res.created[0]}]);
  }
  function paint(S) {
    const gold = new Set(S.annotations.map(key));
    grid.replaceChildren();
    rows = [];
    people.forEach(p => {
      const col = el("div", {class: "cur-col card"});
      col.append(el("h3", {}, `${p.user} · ${p.status === "done" ? "done" : p.status === "new" ? "not started" : "in progress"}`));
      const ol = el("ol");
      p.annotations.forEach(x => {
        const shared = everyone.get(key(x)) === people.length;
        const li = el("li", {class: (shared ? "agreed" : "differs") + (gold.has(key(x)) ? " in-gold" : ""),
                             "data-key": key(x)});
        const words = x.kind === "answer" ? `${x.label}: ${x.value}` : `“${x.quote}” ${x.label}` +
          (x.target ? ` → ${x.target_title || x.target}` : "");
        li.append(el("span", {}, words));
        if (!shared) li.append(el("span", {class: "tag"}, `${everyone.get(key(x))} of ${people.length} annotators`));
        if (gold.has(key(x))) li.append(el("span", {class: "tag gold"}, "in the gold"));
        else {
          const b = el("button", {type: "button", class: "take"}, "Take");
          b.onclick = () => take(x);
          li.prepend(b);
        }
        rows.push({li, x});
        ol.append(li);
      });
      if (!p.annotations.length) ol.append(el("li", {class: "hint"}, "nothing marked"));
      col.append(ol);
      grid.append(col);
    });
    mark();
  }
  function mark() { rows.forEach((r, k) => r.li.classList.toggle("now", k === at)); }
  document.addEventListener("keydown", ev => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || /INPUT|TEXTAREA|SELECT/.test(ev.target.tagName)) return;
    const differ = rows.map((r, k) => r.li.classList.contains("differs") ? k : -1).filter(k => k >= 0);
    if (ev.key === "." || ev.key === ",") {
      if (!differ.length) return;
      const k = differ.indexOf(at);
      at = differ[(k + (ev.key === "." ? 1 : -1) + differ.length) % differ.length];
      mark();
      rows[at].li.scrollIntoView({block: "nearest"});
    } else if (ev.key === "t" && rows[at]) take(rows[at].x);
    else return;
    ev.preventDefault();
  });
  const start = () => window.workbench ? window.workbench.watch(paint) : setTimeout(start, 50);
  start();
})();
