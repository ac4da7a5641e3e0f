"""The ``kbp-demo`` competition of ``make demo``: spec 002's monthly KBP protocol on
Re-DocRED documents read from ../shared/data/kbp (never copied into the repository):
teams' runs with known errors, relation items judged as they arrive, documents
annotated exhaustively for recall, estimates with intervals on the board."""
