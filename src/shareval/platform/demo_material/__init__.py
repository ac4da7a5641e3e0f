"""The MATERIAL demo competition (``material-demo``) of ``make demo``.

``generate`` writes a synthetic two-language evaluation period (packs, released
data, three teams' runs, simulated judgments); ``bundle`` turns it into the
competition's bundle.yaml; ``server`` loads it and submits the teams' runs as
they were sent during the evaluation week.
"""
