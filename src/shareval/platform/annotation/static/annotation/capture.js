// The capture page (annotation/capture.py): a selection in the publication's text
// (mouse, or keys: n/p a data word, Shift+arrows to extend) fills the reference's
// begin/end offsets and shows the selected words; the server derives the name and
// the passage from the offsets. Offsets count code points, as Python's str does.
(() => {
  "use strict";
  const box = document.getElementById("pub-text");
  const form = document.getElementById("ref-form");
  if (!box || !form) return;
  const base = Number(box.dataset.begin);
  const begin = form.querySelector("[name=begin]");
  const end = form.querySelector("[name=end]");
  const shown = document.getElementById("sel-name");
  const kind = form.querySelector("[name=kind]");
  const highlights = window.Highlight && window.CSS && CSS.highlights;
  const points = s => s.length - (s.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g) || []).length;

  // characters of the page's text before (node, offset)
  const offsetOf = (node, off) => {
    const r = document.createRange();
    r.selectNodeContents(box);
    r.setEnd(node, off);
    return points(r.toString());
  };

  // the selection clipped to the text box, or null
  const clipped = () => {
    const sel = window.getSelection();
    if (!sel.rangeCount || sel.isCollapsed) return null;
    const r = sel.getRangeAt(0).cloneRange();
    if (!r.intersectsNode(box)) return null;
    const whole = document.createRange();
    whole.selectNodeContents(box);
    if (r.compareBoundaryPoints(Range.START_TO_START, whole) < 0)
      r.setStart(whole.startContainer, whole.startOffset);
    if (r.compareBoundaryPoints(Range.END_TO_END, whole) > 0)
      r.setEnd(whole.endContainer, whole.endOffset);
    return r.collapsed ? null : r;
  };

  const take = () => {
    const r = clipped();
    if (!r) return;            // a click elsewhere keeps the last selection
    const words = r.toString().replace(/\s+/g, " ").trim();
    if (!words) return;
    begin.value = base + offsetOf(r.startContainer, r.startOffset);
    end.value = base + offsetOf(r.endContainer, r.endOffset);
    shown.textContent = words;
    shown.classList.remove("none");
    if (highlights) CSS.highlights.set("capture-pending", new Highlight(r));
  };
  document.addEventListener("selectionchange", take);

  const clear = () => {
    window.getSelection().removeAllRanges();
    begin.value = end.value = "";
    shown.textContent = "nothing yet: select the data's name in the text";
    shown.classList.add("none");
    if (highlights) CSS.highlights.delete("capture-pending");
  };

  // offsets typed by hand (no pointer, or a correction): the server reads the words
  [begin, end].forEach(x => x.addEventListener("input", () => {
    shown.textContent = `characters ${begin.value}–${end.value}: the words are read ` +
      "from the text when you add the reference";
    if (highlights) CSS.highlights.delete("capture-pending");
  }));

  // n / p: select the next / previous data word after / before the selection
  const jump = forward => {
    const marks = [...box.querySelectorAll("mark.dw")];
    if (!marks.length) return;
    const sel = window.getSelection();
    const here = sel.rangeCount && box.contains(sel.getRangeAt(0).startContainer)
      ? sel.getRangeAt(0) : null;
    const after = m => {
      if (!here) return true;
      const r = document.createRange();
      r.selectNodeContents(m);
      const c = r.compareBoundaryPoints(Range.START_TO_START, here);
      return forward ? c > 0 : c < 0;
    };
    const pick = forward ? marks.find(after) : marks.filter(after).pop();
    if (!pick) return;
    const r = document.createRange();
    r.selectNodeContents(pick);
    sel.removeAllRanges();
    sel.addRange(r);
    take();
    pick.scrollIntoView({block: "nearest"});
  };

  box.addEventListener("keydown", e => {
    const sel = window.getSelection();
    if (e.key === "n" || e.key === "p") {
      e.preventDefault();
      jump(e.key === "n");
    } else if (e.shiftKey && (e.key === "ArrowRight" || e.key === "ArrowLeft") &&
               sel.rangeCount && sel.modify) {
      e.preventDefault();
      sel.modify("extend", e.key === "ArrowRight" ? "forward" : "backward",
                 e.ctrlKey || e.altKey ? "word" : "character");
      take();               // now, not at the next selectionchange: Enter may follow
    } else if (e.key === "Enter" && begin.value && end.value) {
      e.preventDefault();
      kind.focus();
    } else if (e.key === "Escape") {
      clear();
    }
  });
})();
