"""Running untrusted code (participants' systems, organizers' scoring programs)
in a bubblewrap sandbox with limits. Pure: no Django; the platform's
``coderuns`` app decides what runs when.

- ``bwrap``: the command line (what the process sees) and ``probe`` (can it run here)
- ``run``: limits, the watchdog, the resulting state and resource use
- ``envs``: per-requirements virtual environments, built inside the sandbox
- ``bundle``: the ``shareval-system.yaml`` manifest, packing and unpacking
- ``workspace``: one code run's folders and the call that runs it
"""
