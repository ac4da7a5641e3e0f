"""The judging page's "?" help: what to decide and the keys, per design."""
from __future__ import annotations

from shareval.platform.judging import designs

COMMON = ("You see the content first (a sentence, a publication, a summary, a relation), then "
          "what the systems made of it. Systems are named A, B, ... in an order shuffled per "
          "item: their teams are never shown. Judge only what is on the page; when unsure, "
          "take the reading a careful reader would. Your time per item is recorded; an "
          "assignment left open past the campaign's timeout goes to another judge.")

HELP = {
    designs.SIDE_BY_SIDE: {
        "task": "Compare the systems' outputs for the content shown. Give each system -1 "
                "(wrong or harmful), 0 (neither right nor wrong, or partly right) or +1 "
                "(right and useful). Score each system on its own; several may share a score.",
        "keys": [("1 / 2 / 3", "-1 / 0 / +1 for the highlighted system, then the next"),
                 ("↑ / ↓", "move between systems"), ("Enter", "submit when all are scored"),
                 ("?", "show or hide this help")]},
    designs.CHAIN: {
        "task": "Answer the questions about the output shown, one after the other. A 'no' "
                "usually ends the item (the output is incorrect); some campaigns skip ahead.",
        "keys": [("y", "yes"), ("n", "no"), ("Backspace", "start the questions over"),
                 ("?", "show or hide this help")]},
    designs.RELATED: {
        "task": "Write down each data reference of the publication (a dataset it uses, titled "
                "or not), then tick every system output that refers to the same data. An "
                "output related to no reference counts against its system.",
        "keys": [("a", "type a new reference; Enter adds it"),
                 ("1 … 9", "tick output n for the current reference"),
                 ("Tab", "next reference"), ("s", "submit"), ("?", "show or hide this help")]},
    designs.RELEVANCE: {
        "task": "From the query and the summary alone (you never see the document), decide "
                "whether the document is relevant to the query. Follow the summary's own "
                "instructions when it has some.",
        "keys": [("y", "relevant"), ("n", "not relevant"), ("?", "show or hide this help")]},
    designs.EXHAUSTIVE: {
        "task": "Mark every relation the document states between two of its mentions. Pick the "
                "subject in the text (click its first and its last word, or drag over it), then "
                "the object the same way, then the relation from the list, and Add. The "
                "relations systems found are listed as suggestions: accept each one the text "
                "states (exactly these mentions, this relation) and reject the others. Submit "
                "once every suggestion is decided and nothing is missing.",
        "keys": [("↑ / ↓", "move between suggestions (hovering or focusing one marks its "
                          "mentions in the text)"),
                 ("a / y", "accept the focused suggestion"), ("r / n", "reject it"),
                 ("Esc", "clear the subject and object being picked"),
                 ("?", "show or hide this help")]},
}


def for_design(design: str) -> dict:
    h = HELP.get(design, {"task": "", "keys": []})
    return {"common": COMMON, **h}
