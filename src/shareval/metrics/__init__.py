"""Pure numpy metric functions: no I/O, no file formats.

Modules: ``classification``, ``ranking``, ``agreement``, ``significance``.
"""
