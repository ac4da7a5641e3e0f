// Exhaustive relation annotation (the "exhaustive" judging design): pick a subject and an
// object in the document's tokens (click the first and the last word, or drag), pick the
// relation from the inventory, Add; accept or reject each suggestion (mouse or keyboard);
// submit {accepted, rejected, added}. judging/exhaustive_answers.py checks it again.
(() => {
  "use strict";
  const ctx = JSON.parse(document.getElementById("ctx").textContent);
  const D = ctx.document;
  const textBox = document.getElementById("doc-text");
  const panel = document.getElementById("exh-panel");
  const ui = document.getElementById("ui");
  const el = (tag, attrs = {}, text = "") => {
    const e = document.createElement(tag);
    Object.entries(attrs).forEach(([k, v]) => e.setAttribute(k, v));
    if (text) e.textContent = text;
    return e;
  };

  // the text: tokens joined by single spaces, sentences too (formats/kbp.py)
  const toks = [];
  D.sentences.forEach((sent, si) => {
    const s = el("span", {class: "sent"});
    s.append(el("span", {class: "sent-no", "aria-hidden": "true"}, String(si + 1)), " ");
    sent.forEach((t, k) => {
      const start = D.starts[si][k];
      const span = el("span", {class: "tok", "data-i": String(toks.length)}, t);
      toks.push({s: start, e: start + t.length, t, el: span});
      s.append(span, " ");
    });
    textBox.append(s);
  });
  const text = D.sentences.map(s => s.join(" ")).filter(Boolean).join(" ");
  const words = sp => text.slice(sp[0], sp[1]);
  const covered = sp => toks.filter(t => t.s < sp[1] && t.e > sp[0]);
  const mark = (sp, cls) => covered(sp).forEach(t => t.el.classList.add(cls));
  const unmark = cls => textBox.querySelectorAll("." + cls).forEach(x => x.classList.remove(cls));
  const labels = D.relations || {};
  const keyOf = (s, r, o) => `${D.title}|${s[0]}-${s[1]}|${r}|${o[0]}-${o[1]}`;
  const sugg = D.suggestions || [];
  sugg.forEach(g => { mark(g.subject, "pooled"); mark(g.object, "pooled"); });

  // the panel: the picker, the added relations, the suggestions, submit
  panel.append(ui);
  ui.append(el("h3", {}, "Add a relation the document states"));
  const pick = el("div", {class: "exh-pick"});
  const rows = {};
  for (const [role, name] of [["subject", "Subject"], ["object", "Object"]]) {
    const out = el("output", {id: "pick-" + role, class: role === "subject" ? "subj" : "obj"});
    const change = el("button", {type: "button", id: "change-" + role}, "pick again");
    change.onclick = () => { picked[role] = null; setStage(role); };
    pick.append(el("span", {}, name), out, change);
    rows[role] = out;
  }
  ui.append(pick);
  const search = el("input", {id: "rel-search", type: "search", autocomplete: "off",
    placeholder: "type to find the relation", "aria-label": "find a relation"});
  const list = el("select", {id: "rel-list", size: "6", "aria-label": "relations"});
  const inventory = Object.entries(labels).sort((a, b) => a[1].localeCompare(b[1]));
  function fillList() {
    const q = search.value.trim().toLowerCase();
    list.innerHTML = "";
    inventory.filter(([id, lab]) => !q || lab.toLowerCase().includes(q) || id.toLowerCase() === q)
      .forEach(([id, lab]) => list.append(el("option", {value: id}, `${lab} (${id})`)));
    if (list.options.length) list.selectedIndex = 0;
  }
  search.addEventListener("input", fillList);
  search.addEventListener("keydown", ev => {
    if (ev.key === "ArrowDown") { ev.preventDefault(); list.focus(); }
    else if (ev.key === "Enter") { ev.preventDefault(); add(); }
  });
  list.addEventListener("keydown", ev => { if (ev.key === "Enter") { ev.preventDefault(); add(); } });
  list.addEventListener("dblclick", () => add());
  list.addEventListener("change", paintPick);
  const addBtn = el("button", {type: "button", id: "add"}, "Add");
  addBtn.onclick = () => add();
  const status = el("p", {id: "exh-status", role: "status"});
  ui.append(el("label", {for: "rel-search"}, "Relation"), search, list, addBtn, status);

  ui.append(el("h3", {}, "Relations you added"));
  const addedList = el("ol", {class: "exh-list", id: "added"});
  const noneAdded = el("p", {class: "exh-none", id: "none-added"}, "none yet");
  ui.append(addedList, noneAdded);
  ui.append(el("h3", {}, `Suggestions from the systems (${sugg.length})`));
  const suggList = el("ol", {class: "exh-list", id: "suggestions"});
  const tally = el("p", {id: "tally"});
  ui.append(sugg.length ? suggList : el("p", {class: "exh-none"}, "no system found a relation here"), tally);
  const submit = el("button", {type: "button", id: "submit"}, "Submit");
  ui.append(submit);

  // picking mentions
  const picked = {subject: null, object: null};
  let stage = "subject", anchor = null, dragFrom = null;
  function setStage(s) { stage = s; anchor = null; unmark("sel"); paintPick(); }
  function paintPick() {
    unmark("p-subj"); unmark("p-obj");
    for (const role of ["subject", "object"]) {
      const sp = picked[role];
      rows[role].textContent = sp ? `“${words(sp)}”` : (stage === role ? "click its first and last word" : "–");
      rows[role].classList.toggle("now", stage === role);
      if (sp) mark(sp, role === "subject" ? "p-subj" : "p-obj");
    }
    addBtn.disabled = !(picked.subject && picked.object && list.value);
  }
  function showSel(a, b) { unmark("sel"); for (let i = Math.min(a, b); i <= Math.max(a, b); i++) toks[i].el.classList.add("sel"); }
  function commit(a, b) {
    const lo = Math.min(a, b), hi = Math.max(a, b);
    const sp = [toks[lo].s, toks[hi].e];
    unmark("sel"); anchor = null; status.textContent = "";
    if (stage === "relation") stage = "object";        // a new pick replaces the object
    const other = stage === "subject" ? picked.object : picked.subject;
    if (other && other[0] === sp[0] && other[1] === sp[1]) {
      status.textContent = "The subject and the object must be different mentions."; return;
    }
    picked[stage] = sp;
    if (stage === "subject" && !picked.object) stage = "object";
    else { stage = "relation"; search.focus(); }
    paintPick();
  }
  const tokAt = ev => { const t = ev.target.closest && ev.target.closest(".tok"); return t ? Number(t.dataset.i) : null; };
  textBox.addEventListener("mousedown", ev => { const i = tokAt(ev); if (i === null) return; ev.preventDefault(); dragFrom = i; showSel(anchor ?? i, i); });
  textBox.addEventListener("mouseover", ev => { const i = tokAt(ev); if (i !== null && dragFrom !== null) showSel(dragFrom, i); });
  document.addEventListener("mouseup", ev => {
    if (dragFrom === null) return;
    const i = tokAt(ev), from = dragFrom; dragFrom = null;
    if (i === null) { unmark("sel"); return; }
    if (i !== from) return commit(from, i);               // dragged over the mention
    if (anchor === null) { anchor = i; showSel(i, i);       // first word; next click: last word
      status.textContent = "Now click the mention's last word (the same word for a one-word mention)."; return; }
    commit(anchor, i);
  });

  // the added relations
  const added = [];
  function line(s, r, o) { return `“${words(s)}” — ${labels[r] || r} — “${words(o)}”`; }
  function hoverMarks(li, s, o) {
    const on = () => { mark(s, "m-subj"); mark(o, "m-obj"); li.classList.add("hover"); };
    const off = () => { unmark("m-subj"); unmark("m-obj"); li.classList.remove("hover"); };
    li.addEventListener("mouseenter", on); li.addEventListener("mouseleave", off);
    li.addEventListener("focus", () => { on(); covered(s)[0].el.scrollIntoView({block: "nearest"}); });
    li.addEventListener("blur", off);
  }
  function paintAdded() {
    addedList.innerHTML = "";
    added.forEach((a, k) => {
      const li = el("li", {tabindex: "0"});
      const rm = el("button", {type: "button", class: "remove"}, "remove");
      rm.onclick = () => { added.splice(k, 1); unmark("m-subj"); unmark("m-obj"); paintAdded(); };
      const acts = el("span", {class: "acts"});
      acts.append(rm);
      li.append(acts, el("span", {class: "words"}, line(a.subject, a.relation, a.object)));
      hoverMarks(li, a.subject, a.object);
      addedList.append(li);
    });
    noneAdded.hidden = added.length > 0;
  }
  function add() {
    const r = list.value;
    if (!picked.subject || !picked.object) { status.textContent = "Pick the subject and the object in the text first."; return; }
    if (!r) { status.textContent = "Choose a relation from the list."; return; }
    const key = keyOf(picked.subject, r, picked.object);
    const k = sugg.findIndex(g => g.key === key);
    if (k >= 0) { decide(k, "accepted"); status.textContent = `That is suggestion ${k + 1}: accepted.`; }
    else if (added.some(a => keyOf(a.subject, a.relation, a.object) === key)) { status.textContent = "You added that relation already."; return; }
    else { added.push({subject: picked.subject, relation: r, object: picked.object});
      status.textContent = "Added: " + line(picked.subject, r, picked.object); }
    picked.subject = picked.object = null; search.value = ""; fillList(); setStage("subject"); paintAdded();
  }

  // suggestions: accept or reject each, with the mouse or the keyboard
  const decision = sugg.map(() => null);
  const items = sugg.map((g, k) => {
    const li = el("li", {tabindex: "0", id: "suggestion-" + k});
    const yes = el("button", {type: "button", class: "accept", "aria-pressed": "false"}, "accept (a)");
    const no = el("button", {type: "button", class: "reject", "aria-pressed": "false"}, "reject (r)");
    yes.onclick = () => decide(k, "accepted"); no.onclick = () => decide(k, "rejected");
    const acts = el("span", {class: "acts"});
    acts.append(yes, " ", no);
    li.append(acts, el("span", {class: "words"}, line(g.subject, g.relation, g.object)));
    hoverMarks(li, g.subject, g.object);
    li.addEventListener("keydown", ev => {
      if (ev.target !== li) return;
      const key = ev.key.toLowerCase();
      if (key === "a" || key === "y") { ev.preventDefault(); decide(k, "accepted", true); }
      else if (key === "r" || key === "n") { ev.preventDefault(); decide(k, "rejected", true); }
      else if (ev.key === "ArrowDown" && k + 1 < items.length) { ev.preventDefault(); items[k + 1].li.focus(); }
      else if (ev.key === "ArrowUp" && k > 0) { ev.preventDefault(); items[k - 1].li.focus(); }
    });
    suggList.append(li);
    return {li, yes, no};
  });
  function decide(k, what, move = false) {
    decision[k] = what;
    const it = items[k];
    it.li.classList.toggle("accepted", what === "accepted");
    it.li.classList.toggle("rejected", what === "rejected");
    it.yes.setAttribute("aria-pressed", String(what === "accepted"));
    it.no.setAttribute("aria-pressed", String(what === "rejected"));
    if (move) {
      const next = decision.findIndex((d, j) => j > k && d === null);
      (items[next >= 0 ? next : Math.min(k + 1, items.length - 1)]).li.focus();
    }
    paintTally();
  }
  function paintTally() {
    const left = decision.filter(d => d === null).length;
    tally.textContent = sugg.length ? (left ? `${left} of ${sugg.length} suggestions still to accept or reject.` : "Every suggestion is decided.") : "";
    submit.disabled = left > 0;
    submit.title = left ? "accept or reject every suggestion first" : "";
  }
  submit.onclick = () => {
    if (decision.some(d => d === null)) return;
    const answer = {accepted: sugg.filter((g, k) => decision[k] === "accepted").map(g => g.key),
      rejected: sugg.filter((g, k) => decision[k] === "rejected").map(g => g.key),
      added: added.map(a => ({subject: a.subject, relation: a.relation, object: a.object}))};
    document.getElementById("answer").value = JSON.stringify(answer);
    document.getElementById("answer-form").submit();
  };
  document.addEventListener("keydown", ev => {
    if (ev.key === "Escape") { picked.subject = picked.object = null; setStage("subject"); status.textContent = ""; }
  });
  document.getElementById("keys").innerHTML =
    "suggestions: <kbd>↑</kbd>/<kbd>↓</kbd> move · <kbd>a</kbd> accept · <kbd>r</kbd> reject · <kbd>Esc</kbd> clear the picked mentions";
  fillList(); setStage("subject"); paintAdded(); paintTally();
})();
